// tests/worker/agent/attempt_runner_test.cc
//
// One attempt from lease to report, with fake trainers (shell scripts speaking rung-train's protocol,
// real processes on real time) and a real gRPC WorkerService on loopback; the attempt's own times
// (heartbeats, the grace period, backoffs) on a ManualClock: success, heartbeats, crash, CANCEL, a
// trainer that ignores SIGTERM, preemption, fencing, and a coordinator that is away when the attempt
// ends.
#include "proto/config_value.h"
#include "worker/agent/attempt_runner.h"

#include <filesystem>
#include <future>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/worker/agent/agent_test_util.h"

namespace rung::agent {
namespace {

using testing::ScratchDir;
using testing::TestCoordinator;
using ::testing::HasSubstr;
using std::chrono::milliseconds;

// Writes its arguments and OMP_NUM_THREADS beside its config, prints a provenance record, five step
// records, a checkpoint and a final record, and exits 0.
constexpr char kSucceedingTrainer[] = R"(dir=$(dirname "$2")
echo "$@" > "$dir/args.txt"
echo "$OMP_NUM_THREADS" > "$dir/omp.txt"
echo '{"type":"provenance","threads":'"$8"'}'
for i in 1 2 3 4 5; do echo '{"type":"step","step":'$i',"tokens":'$((i*100))',"train_loss":'$i'.5,"lr":0.001}'; done
echo 'rung-train: a stderr line' >&2
mkdir -p "$4" && touch "$4/ckpt-0000000005.pt"  # like rung-train, it creates its checkpoint folder
echo '{"type":"checkpoint","step":5,"path":"'"$4"'/ckpt-0000000005.pt","reason":"final"}'
echo '{"type":"final","step":5,"val_loss":1.25}'
)";

// Trains until SIGTERM, then checkpoints (a record) and exits 75.
constexpr char kStoppableAttemptTrainer[] = R"(dir=$(dirname "$2")
i=0
trap 'touch "$dir/got-sigterm"; echo "{\"type\":\"preempted\",\"step\":$i,\"signal\":15,\"checkpoint\":\"$4/ckpt.pt\"}"; exit 75' TERM
echo '{"type":"provenance"}'
while true; do i=$((i+1)); echo '{"type":"step","step":'$i',"train_loss":1.0}'; sleep 0.02; done
)";

class AttemptRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    coordinator_.set_heartbeat_interval(std::chrono::milliseconds(50));
    Connect(coordinator_.Start());
  }

  void Connect(const std::string& address) {
    client_ = testing::ConnectRegisteredClient(address, "runner-worker", clock_);
    ASSERT_NE(client_, nullptr);
  }

  AttemptOptions Options(const std::string& script) {
    AttemptOptions options;
    options.trainer_path = testing::WriteScript(scratch_.Path("trainer-" + std::to_string(++scripts_) + ".sh"), script);
    options.work_dir = scratch_.Path("work");
    options.heartbeat_interval = milliseconds(50);
    options.stop_grace = std::chrono::seconds(20);
    options.relay.batch_lines = 3;  // batches go when full, or with the report
    options.relay.batch_delay = std::chrono::hours(1);
    options.relay.provenance_delay = std::chrono::hours(1);
    options.relay.retry_backoff = {std::chrono::milliseconds(20), std::chrono::milliseconds(100), 2.0};
    options.report_backoff = {std::chrono::milliseconds(20), std::chrono::milliseconds(100), 2.0};
    return options;
  }

  v1::TrialLease Lease(int64_t trial_id, int cpu_slots = 2) {
    v1::TrialLease lease;
    lease.set_trial_id(trial_id);
    lease.set_attempt(1);
    lease.set_sweep_id(1);
    *lease.mutable_config() = wire::ToConfigObject(nlohmann::json::parse(R"({"seed":1})"));
    lease.set_checkpoint_dir(scratch_.Path("artifacts/t" + std::to_string(trial_id) + "/attempt-1"));
    lease.set_cpu_slots(cpu_slots);
    return lease;
  }

  std::string AttemptDir(int64_t trial_id) { return scratch_.Path("work/trial-" + std::to_string(trial_id) + "/attempt-1"); }

  // Waits until the coordinator has committed a batch of `trial_id` (the trainer runs).
  bool WaitForFirstBatch(int64_t trial_id) {
    return coordinator_.WaitFor([trial_id](const TestCoordinator& c) { return !c.committed_batches(trial_id).empty(); },
                                std::chrono::seconds(20));
  }

  // Runs `runner` on a thread of its own.
  static std::future<AttemptResult> RunAsync(AttemptRunner& runner) {
    return std::async(std::launch::async, [&runner] { return runner.Run(); });
  }

  // The lines of the attempt's records.jsonl, which the runner writes as it reads them.
  size_t RecordedLines(int64_t trial_id) { return testing::ReadLines(AttemptDir(trial_id) + "/records.jsonl").size(); }

  // Waits until the runner has been through its read loop once more since now (it writes the lines
  // of each pass, and the trainer prints all the time): what it does once a pass, it has done since.
  bool AwaitReadLoopPass(int64_t trial_id) {
    for (int pass = 0; pass < 2; ++pass) {
      const size_t seen = RecordedLines(trial_id);
      if (!testing::WaitUntil([&] { return RecordedLines(trial_id) > seen; }, std::chrono::seconds(20))) return false;
    }
    return true;
  }

  ManualClock clock_;
  ScratchDir scratch_;
  TestCoordinator coordinator_;
  std::unique_ptr<CoordinatorClient> client_;
  int scripts_ = 0;
};

TEST_F(AttemptRunnerTest, ASucceedingTrainerIsReportedWithEveryRecordOnceAndItsResults) {
  AttemptRunner runner(client_.get(), Lease(11, /*cpu_slots=*/2), Options(kSucceedingTrainer), clock_);
  AttemptResult result = runner.Run();
  ASSERT_EQ(result.fate, AttemptFate::kReported) << result.detail;
  EXPECT_EQ(result.trial_state, v1::TRIAL_STATE_SUCCEEDED);

  ASSERT_EQ(coordinator_.completes().size(), 1u);
  const v1::CompleteRequest complete = coordinator_.completes()[0];
  EXPECT_EQ(complete.outcome(), v1::OUTCOME_SUCCEEDED);
  EXPECT_EQ(complete.exit_code(), 0);

  std::vector<TestCoordinator::Batch> batches = coordinator_.committed_batches(11);
  ASSERT_FALSE(batches.empty());
  EXPECT_EQ(complete.last_batch_sequence(), batches.back().sequence);
  std::vector<v1::TrainerRecord> records;
  std::vector<std::string> stderr_lines;
  std::multiset<int64_t> loss_steps;
  std::optional<double> final_loss;
  for (const TestCoordinator::Batch& batch : batches) {
    const v1::MetricBatch& sent = batch.request.batch();
    stderr_lines.insert(stderr_lines.end(), sent.stderr_lines().begin(), sent.stderr_lines().end());
    for (const v1::StdoutLine& line : sent.stdout()) {
      ASSERT_TRUE(line.has_record()) << "the stand-in prints records alone: " << line.text();
      records.push_back(line.record());
      if (line.record().has_step()) loss_steps.insert(line.record().step().step());
      if (line.record().has_final()) final_loss = line.record().final().val_loss();
    }
  }
  ASSERT_FALSE(records.empty());
  EXPECT_TRUE(records.front().has_provenance());
  EXPECT_EQ(records.front().provenance().threads(), 2);
  EXPECT_EQ(records.size(), 8u) << "every stdout line, a record sent typed";
  EXPECT_EQ(loss_steps, (std::multiset<int64_t>{1, 2, 3, 4, 5})) << "each step record once, typed";
  EXPECT_EQ(final_loss, 1.25) << "the results travel once, in the final record";
  EXPECT_EQ(stderr_lines, std::vector<std::string>{"rung-train: a stderr line"});
  // The attempt's log on the worker holds each line as the trainer printed it, the record it sent.
  const std::vector<std::string> local = testing::ReadLines(AttemptDir(11) + "/records.jsonl");
  ASSERT_EQ(local.size(), records.size());
  for (size_t i = 0; i < local.size(); ++i) {
    StatusOr<records::TrainerRecord> decoded = records::DecodeRecord(local[i]);
    ASSERT_TRUE(decoded.ok()) << local[i];
    EXPECT_EQ(wire::ToProto(*decoded).SerializeAsString(), records[i].SerializeAsString()) << local[i];
  }
  EXPECT_EQ(testing::ReadLines(AttemptDir(11) + "/trainer.log"), stderr_lines);

  // The trainer ran on exactly its slots, in its attempt's own checkpoint folder, from scratch.
  EXPECT_EQ(testing::ReadLines(AttemptDir(11) + "/omp.txt"), std::vector<std::string>{"2"});
  EXPECT_EQ(testing::ReadLines(AttemptDir(11) + "/args.txt"),
            std::vector<std::string>{"--config " + AttemptDir(11) + "/trial.json --checkpoint-dir " +
                                     scratch_.Path("artifacts/t11/attempt-1") + " --resume never --threads 2"});
}

TEST_F(AttemptRunnerTest, HeartbeatsGoOneAnIntervalFromTheStartAndNoneBefore) {
  // 50 ms heartbeats: none before the interval, then one per interval; a trainer that ends sooner
  // is reported before any heartbeat is due.
  constexpr char kQuick[] = R"(echo '{"type":"provenance"}'
echo '{"type":"final","step":1,"val_loss":1.0}'
)";
  AttemptRunner quick(client_.get(), Lease(21), Options(kQuick), clock_);
  ASSERT_EQ(quick.Run().fate, AttemptFate::kReported);
  EXPECT_EQ(coordinator_.heartbeats(21), 0);

  const Clock::TimePoint start = clock_.Now();
  AttemptRunner slow(client_.get(), Lease(22), Options(kStoppableAttemptTrainer), clock_);
  std::future<AttemptResult> result = RunAsync(slow);
  ASSERT_TRUE(clock_.AwaitWaiter(start + milliseconds(50))) << "it sleeps until the first heartbeat is due";
  clock_.Advance(milliseconds(49));
  ASSERT_TRUE(clock_.AwaitWaiter(start + milliseconds(50)));
  EXPECT_EQ(coordinator_.heartbeats(22), 0) << "none before the interval";
  clock_.Advance(milliseconds(1));
  ASSERT_TRUE(coordinator_.WaitFor([](const TestCoordinator& c) { return c.heartbeats(22) == 1; },
                                   std::chrono::seconds(10)));
  ASSERT_TRUE(clock_.AwaitWaiter(start + milliseconds(100))) << "the next one an interval after it";
  clock_.Advance(milliseconds(49));
  ASSERT_TRUE(clock_.AwaitWaiter(start + milliseconds(100)));
  EXPECT_EQ(coordinator_.heartbeats(22), 1);
  clock_.Advance(milliseconds(1));
  ASSERT_TRUE(coordinator_.WaitFor([](const TestCoordinator& c) { return c.heartbeats(22) == 2; },
                                   std::chrono::seconds(10)));
  slow.Preempt("test over");
  ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(result.get().fate, AttemptFate::kReported);
}

TEST_F(AttemptRunnerTest, ACrashFailsTheAttemptWithTheEndOfItsStderr) {
  AttemptRunner runner(client_.get(), Lease(12),
                       Options("echo '{\"type\":\"provenance\"}'\necho 'loading shard 3' >&2\n"
                               "echo 'Segmentation fault in matmul' >&2\nkill -SEGV $$\n"),
                       clock_);
  AttemptResult result = runner.Run();
  ASSERT_EQ(result.fate, AttemptFate::kReported) << result.detail;
  ASSERT_EQ(coordinator_.completes().size(), 1u);
  const v1::CompleteRequest complete = coordinator_.completes()[0];
  EXPECT_EQ(complete.outcome(), v1::OUTCOME_FAILED);
  EXPECT_EQ(complete.exit_code(), -11);
  EXPECT_THAT(complete.reason(), HasSubstr("crashed"));
  EXPECT_THAT(complete.reason(), HasSubstr("loading shard 3 | Segmentation fault in matmul"));
}

TEST_F(AttemptRunnerTest, AnErrorRecordIsTheReasonOfAFailure) {
  AttemptRunner runner(client_.get(), Lease(13),
                       Options("echo '{\"type\":\"error\",\"step\":4,\"reason\":\"non-finite gradient norm at step 4\"}'\n"
                               "exit 3\n"),
                       clock_);
  ASSERT_EQ(runner.Run().fate, AttemptFate::kReported);
  ASSERT_EQ(coordinator_.completes().size(), 1u);
  EXPECT_EQ(coordinator_.completes()[0].outcome(), v1::OUTCOME_FAILED);
  EXPECT_EQ(coordinator_.completes()[0].exit_code(), 3);
  EXPECT_THAT(coordinator_.completes()[0].reason(), HasSubstr("non-finite gradient norm at step 4"));
}

TEST_F(AttemptRunnerTest, ATrainerThatCannotStartFailsTheAttempt) {
  AttemptOptions options = Options("exit 0\n");
  options.trainer_path = scratch_.Path("missing-rung-train");
  AttemptRunner runner(client_.get(), Lease(14), options, clock_);
  ASSERT_EQ(runner.Run().fate, AttemptFate::kReported);
  ASSERT_EQ(coordinator_.completes().size(), 1u);
  EXPECT_EQ(coordinator_.completes()[0].outcome(), v1::OUTCOME_FAILED);
  EXPECT_THAT(coordinator_.completes()[0].reason(), HasSubstr("cannot start rung-train"));
}

TEST_F(AttemptRunnerTest, CancelStopsTheTrainerAndReportsNothing) {
  AttemptRunner runner(client_.get(), Lease(15), Options(kStoppableAttemptTrainer), clock_);
  std::future<AttemptResult> result = RunAsync(runner);
  ASSERT_TRUE(WaitForFirstBatch(15));
  coordinator_.CancelTrial(15, "cancelled by user:alice");
  ASSERT_TRUE(testing::AdvanceUntil(
      clock_, [&] { return result.wait_for(milliseconds(0)) == std::future_status::ready; }, milliseconds(25)))
      << "the next heartbeat hears CANCEL";
  AttemptResult ended = result.get();
  EXPECT_EQ(ended.fate, AttemptFate::kCancelled);
  EXPECT_EQ(ended.detail, "cancelled by user:alice");
  EXPECT_TRUE(std::filesystem::exists(AttemptDir(15) + "/got-sigterm"));
  EXPECT_TRUE(coordinator_.completes().empty());
}

TEST_F(AttemptRunnerTest, ATrainerThatIgnoresSigtermIsKilledWhenTheGracePeriodIsOver) {
  // SIGTERM only leaves a file: the trainer prints on, so the runner passes its read loop all along.
  AttemptOptions options = Options(R"(trap 'touch "$(dirname "$2")/got-sigterm"' TERM
echo '{"type":"provenance"}'
while true; do echo '{"type":"step","step":1,"train_loss":1.0}'; sleep 0.02; done
)");
  options.stop_grace = milliseconds(200);
  const Clock::TimePoint start = clock_.Now();
  AttemptRunner runner(client_.get(), Lease(16), options, clock_);
  std::future<AttemptResult> result = RunAsync(runner);
  ASSERT_TRUE(WaitForFirstBatch(16));
  coordinator_.CancelTrial(16, "cancelled");
  ASSERT_TRUE(clock_.AwaitWaiter(start + milliseconds(50)));
  clock_.Advance(milliseconds(50));  // the first heartbeat hears CANCEL: SIGKILL due at start + 250 ms
  ASSERT_TRUE(testing::WaitUntil([&] { return std::filesystem::exists(AttemptDir(16) + "/got-sigterm"); },
                                 std::chrono::seconds(20)));
  clock_.Advance(milliseconds(199));
  ASSERT_TRUE(AwaitReadLoopPass(16));
  EXPECT_EQ(result.wait_for(milliseconds(0)), std::future_status::timeout) << "not killed within the grace period";
  clock_.Advance(milliseconds(1));
  ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "the trainer was not killed";
  EXPECT_EQ(result.get().fate, AttemptFate::kCancelled);
}

TEST_F(AttemptRunnerTest, PreemptionCheckpointsAndReportsPreempted) {
  AttemptRunner runner(client_.get(), Lease(17), Options(kStoppableAttemptTrainer), clock_);
  std::future<AttemptResult> result = RunAsync(runner);
  ASSERT_TRUE(WaitForFirstBatch(17));
  runner.Preempt("worker shutting down (SIGTERM)");
  ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  AttemptResult ended = result.get();
  ASSERT_EQ(ended.fate, AttemptFate::kReported) << ended.detail;
  ASSERT_EQ(coordinator_.completes().size(), 1u);
  const v1::CompleteRequest complete = coordinator_.completes()[0];
  EXPECT_EQ(complete.outcome(), v1::OUTCOME_PREEMPTED);
  EXPECT_EQ(complete.exit_code(), 75);
  EXPECT_THAT(complete.reason(), HasSubstr("worker shutting down (SIGTERM); checkpointed at step"));
}

TEST_F(AttemptRunnerTest, APreemptionBeforeTheTrainerStartsIsReportedAtOnce) {
  AttemptRunner runner(client_.get(), Lease(18), Options(kStoppableAttemptTrainer), clock_);
  runner.Preempt("worker shutting down (SIGTERM)");
  ASSERT_EQ(runner.Run().fate, AttemptFate::kReported);
  ASSERT_EQ(coordinator_.completes().size(), 1u);
  EXPECT_EQ(coordinator_.completes()[0].outcome(), v1::OUTCOME_PREEMPTED);
  EXPECT_THAT(coordinator_.completes()[0].reason(), HasSubstr("before rung-train started"));
}

TEST_F(AttemptRunnerTest, AFencedAttemptStopsItsTrainerAndReportsNothingMore) {
  AttemptRunner runner(client_.get(), Lease(19), Options(kStoppableAttemptTrainer), clock_);
  std::future<AttemptResult> result = RunAsync(runner);
  ASSERT_TRUE(WaitForFirstBatch(19));
  coordinator_.FenceTrial(19);
  ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(result.get().fate, AttemptFate::kFenced);
  EXPECT_TRUE(std::filesystem::exists(AttemptDir(19) + "/got-sigterm"));
  EXPECT_TRUE(coordinator_.completes().empty());
}

TEST_F(AttemptRunnerTest, TrainsOnWhileTheCoordinatorIsAwayAndReportsWhenItReturns) {
  const int port = coordinator_.port();
  coordinator_.Stop();
  AttemptRunner runner(client_.get(), Lease(20), Options(kSucceedingTrainer), clock_);
  std::future<AttemptResult> result = RunAsync(runner);
  // The trainer runs to its end with nobody listening.
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        std::vector<std::string> lines = testing::ReadLines(AttemptDir(20) + "/records.jsonl");
        return !lines.empty() && lines.back().find("\"final\"") != std::string::npos;
      },
      std::chrono::seconds(20)));
  EXPECT_EQ(result.wait_for(milliseconds(0)), std::future_status::timeout) << "still waiting to report";
  coordinator_.Start(port);
  ASSERT_TRUE(testing::AdvanceUntil(clock_, [&] { return result.wait_for(milliseconds(0)) == std::future_status::ready; }))
      << "the relay and the report retry as their backoffs pass";
  AttemptResult ended = result.get();
  ASSERT_EQ(ended.fate, AttemptFate::kReported) << ended.detail;
  ASSERT_EQ(coordinator_.completes().size(), 1u);
  EXPECT_EQ(coordinator_.completes()[0].outcome(), v1::OUTCOME_SUCCEEDED);
  size_t records = 0;
  for (const TestCoordinator::Batch& batch : coordinator_.committed_batches(20)) {
    records += batch.request.batch().stdout_size();
  }
  EXPECT_EQ(records, 8u);
}

TEST(CpuSlotsOfTest, TheLeaseSays) {
  v1::TrialLease lease;
  *lease.mutable_config() = wire::ToConfigObject(nlohmann::json::parse(R"({"resources":{"cpus":3}})"));
  lease.set_cpu_slots(2);
  EXPECT_EQ(CpuSlotsOf(lease), 2) << "the lease's typed field, never the config";
  lease.set_cpu_slots(0);
  EXPECT_EQ(CpuSlotsOf(lease), 1);
}

TEST(LocalRanksOfTest, AnOrdinaryLeaseRunsEveryRankAGangLeaseOne) {
  v1::TrialLease lease;
  EXPECT_EQ(LocalRanksOf(lease), 1);
  lease.set_world_size(4);
  EXPECT_EQ(LocalRanksOf(lease), 4);
  lease.set_rendezvous("node1:29500");
  lease.set_rank(2);
  EXPECT_EQ(LocalRanksOf(lease), 1);
}

}  // namespace
}  // namespace rung::agent
