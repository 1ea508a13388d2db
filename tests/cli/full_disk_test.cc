// A full disk under the coordinator and under `rung run`, as a user meets it: the real binaries on a
// small tmpfs in a private mount namespace (tests/support/small_disk). Where the machine refuses one,
// the tests say so and are skipped, never passed.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/small_disk/small_disk.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

fs::path BinaryBeside(const std::string& name) { return fs::path(RUNG_CLI_BINARY).parent_path() / name; }

fs::path Scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// What the script printed after `marker=`: the exit code of the command before it.
std::string ExitAfter(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker + "=");
  if (at == std::string::npos) return "(no " + marker + ")";
  return text.substr(at + marker.size() + 1, text.find('\n', at) - at - marker.size() - 1);
}

TEST(FullDiskTest, ACoordinatorWhoseDatabaseCannotGrowRefusesWritesSaysWhereAndServesReads) {
  const fs::path scratch = Scratch("rung-full-database");
  const std::string disk = (scratch / "disk").string();
  std::ofstream(scratch / "other.yaml") << "name: other\ndata: {source: builtin, seq_len: 32}\n"
                                           "model: {layers: 1, d_model: 16, heads: 2}\ntrain: {steps: 10}\n";
  // The coordinator's database on a 3 MiB disk; the quickstart wants about 20 MiB (a warning); then
  // the disk is filled: writes fail, reads and `rung status` say where; then room again.
  const std::string script = R"sh(
cd "$RUNG_DISK"
"$1" --listen 127.0.0.1:0 --db rung.db --user-token-file "$4/user.token" --worker-token-file "$4/worker.token" \
  > "$4/coordinator.out" 2> "$4/coordinator.err" &
coordinator=$!
for i in $(seq 50); do grep -q 'listening on' "$4/coordinator.out" && break; sleep 0.1; done
export RUNG_COORDINATOR=$(sed -n 's/.*listening on //p' "$4/coordinator.out") RUNG_TOKEN_FILE="$4/user.token"
"$2" submit "$3" > /dev/null; echo "submit_with_room=$?"
dd if=/dev/zero of=filler bs=4k 2> /dev/null
"$2" submit "$4/other.yaml"; echo "submit_on_full=$?"
"$2" pause 1; echo "pause_on_full=$?"
"$2" sweeps; echo "sweeps_on_full=$?"
"$2" status 1 > /dev/null; echo "status_on_full=$?"
rm filler
"$2" status 1 > /dev/null; echo "status_with_room=$?"
"$2" submit "$4/other.yaml" > /dev/null; echo "submit_with_room_again=$?"
kill $coordinator; wait $coordinator
)sh";
  StatusOr<testing::SmallDiskRun> run = testing::RunOnSmallDisk(
      disk, "3m", script,
      {BinaryBeside("rung-coordinator").string(), RUNG_CLI_BINARY,
       std::string(RUNG_SOURCE_DIR) + "/sweeps/examples/quickstart.yaml", scratch.string()},
      std::chrono::minutes(2));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  if (run->refused) GTEST_SKIP() << testing::kSmallDiskRefused << run->refusal;
  const std::string& out = run->result.stdout_text;
  const std::string& err = run->result.stderr_text;
  EXPECT_EQ(ExitAfter(out, "submit_with_room"), "0") << err;
  EXPECT_THAT(err, HasSubstr("warning: disk space: low disk space at " + disk));
  // Writes: exit 1 (RESOURCE_EXHAUSTED: the server's trouble, not the user's input), in the words for it.
  EXPECT_EQ(ExitAfter(out, "submit_on_full"), "1") << err;
  EXPECT_EQ(ExitAfter(out, "pause_on_full"), "1") << err;
  EXPECT_THAT(err, HasSubstr("rung submit: no space left on device at " + disk + " (the database " + disk +
                             "/rung.db cannot grow; reads are still served)"));
  // Reads are served; `rung status` says where the disk is full and exits 1.
  EXPECT_EQ(ExitAfter(out, "sweeps_on_full"), "0") << err;
  EXPECT_THAT(out, HasSubstr("quickstart  ACTIVE"));
  EXPECT_EQ(ExitAfter(out, "status_on_full"), "1") << err;
  EXPECT_THAT(err, HasSubstr("rung status: no space left on device at " + disk + " ("));
  // With room again: nothing to say, and writes go through.
  EXPECT_EQ(ExitAfter(out, "status_with_room"), "0") << err;
  EXPECT_EQ(ExitAfter(out, "submit_with_room_again"), "0") << err;
  fs::remove_all(scratch);
}

TEST(FullDiskTest, RungRunStopsWithinSecondsPausesTheSweepAndTheSameCommandResumesIt) {
  if (!fs::exists(BinaryBeside("rung-train"))) GTEST_SKIP() << "rung-train is not built (no LibTorch)";
  const fs::path scratch = Scratch("rung-full-run");
  const std::string disk = (scratch / "disk").string();
  // Two trials whose checkpoints (about 1.6 MB each, two kept) do not fit on 3 MiB beside the database.
  std::ofstream(scratch / "spec.yaml") << "name: full-disk\nmetric: {name: val_loss, goal: minimize}\n"
                                          "data: {source: builtin, seq_len: 64}\n"
                                          "model: {layers: 2, d_model: 64, heads: 2}\n"
                                          "train: {steps: 30, batch_size: 8, checkpoint_every: 5, eval_every: 0, "
                                          "log_every: 5}\n"
                                          "resources: {cpus: 1}\nsweep: {seed: [1, 2]}\n";
  const std::string script = R"sh(
started=$(date +%s)
"$1" run "$2" --workers 1 --lease-seconds 3 --dir "$RUNG_DISK/run"; echo "first=$?"
echo "first_seconds=$(( $(date +%s) - started ))"
echo "first_leases=$(grep -c 'leased trial' "$RUNG_DISK/run/worker-0.log")"
"$1" serve "$RUNG_DISK/run" > "$3/serve.out" 2>&1 &
serve=$!
for i in $(seq 100); do grep -q '^export RUNG_TOKEN_FILE' "$3/serve.out" && break; sleep 0.1; done
eval "$(grep '^export' "$3/serve.out")"
"$1" status 1 > /dev/null; echo "status_after_stop=$?"
kill $serve; wait $serve
mount -o remount,size=64m "$RUNG_DISK"
"$1" run "$2" --workers 1 --lease-seconds 3 --dir "$RUNG_DISK/run"; echo "second=$?"
)sh";
  StatusOr<testing::SmallDiskRun> run = testing::RunOnSmallDisk(
      disk, "3m", script, {RUNG_CLI_BINARY, (scratch / "spec.yaml").string(), scratch.string()},
      std::chrono::minutes(4));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  if (run->refused) GTEST_SKIP() << testing::kSmallDiskRefused << run->refusal;
  const std::string& out = run->result.stdout_text;
  const std::string& err = run->result.stderr_text;
  EXPECT_THAT(err, HasSubstr("warning: disk space: low disk space at " + disk + "/run"));
  EXPECT_EQ(ExitAfter(out, "first"), "1") << out << err;
  // Where: the run's folder, or the checkpoint folder a trial's attempt ended on (named with the trial).
  EXPECT_THAT(err, HasSubstr("no space left on device at " + disk + "/run"));
  EXPECT_THAT(err, HasSubstr("the sweep is paused; free space there and run the same command again"));
  EXPECT_LE(std::stoi(ExitAfter(out, "first_seconds")), 60) << "the stop must come within seconds";
  // The worker stops leasing on a full disk: each trial leased at most twice (its first attempt, and
  // one the worker had taken before it knew), not handed back and leased again in a loop.
  EXPECT_LE(std::stoi(ExitAfter(out, "first_leases")), 4) << out;
  // `rung status` of the stopped run (rung serve) says why it is paused, in the same words, and exits 1.
  EXPECT_EQ(ExitAfter(out, "status_after_stop"), "1") << err;
  EXPECT_THAT(err, HasSubstr("rung status: sweep 1 is paused: "));
  EXPECT_THAT(err, HasSubstr("[paused by rung run for a full disk]"));
  EXPECT_EQ(ExitAfter(out, "second"), "0") << out << err;
  EXPECT_THAT(out, HasSubstr("rung run: sweep 1 was paused for a full disk: resumed"));
  EXPECT_THAT(out, HasSubstr("rung run: sweep SUCCEEDED"));
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace rung
