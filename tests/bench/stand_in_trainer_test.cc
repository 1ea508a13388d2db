// tests/bench/stand_in_trainer_test.cc
//
// rung-bench-stand-in (freestanding) and rung-bench-stand-in-glibc (the same source on glibc) speak
// rung-train's contract, launched the way rung-worker launches a trainer (TrainerProcess): the record
// lines, SIGTERM -> a published checkpoint and exit 75, resuming from it, checkpoint retention, and
// the exit codes for bad input. The benchmark's figures are only worth something if this holds.
#include <signal.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/train/checkpoint.h"
#include "tests/worker/agent/agent_test_util.h"
#include "worker/agent/trainer_process.h"

namespace rung::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ScratchDir;
using ::testing::HasSubstr;

struct Finished {
  std::vector<json> records;
  std::vector<std::string> stderr_lines;
  TrainerExit exit;
};

// Collects every record line (each must be JSON) until stdout ends; waits for the exit.
Finished RunToEnd(TrainerProcess& trainer) {
  Finished finished;
  TrainerOutput output;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (trainer.ReadOutput(std::chrono::milliseconds(100), &output)) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "the stand-in's stdout did not end";
      break;
    }
  }
  for (const std::string& line : output.stdout_lines) {
    json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(record.is_discarded()) << "not JSON: " << line;
    finished.records.push_back(std::move(record));
  }
  finished.stderr_lines = output.stderr_lines;
  std::optional<TrainerExit> exit = trainer.Wait(std::chrono::seconds(30));
  EXPECT_TRUE(exit.has_value()) << "the stand-in did not exit";
  if (exit) finished.exit = *exit;
  return finished;
}

class StandInTrainerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    config_ = {{"seed", 3}, {"train", {{"lr", 0.001}, {"name", "a \"quoted\" \\ name"}}}, {"list", {1, 2.5, nullptr}}};
    std::ofstream(scratch_.Path("trial.json")) << config_.dump() << "\n";
  }

  TrainerLaunch Launch(std::vector<std::string> extra = {}) const {
    TrainerLaunch launch;
    launch.trainer_path = GetParam();
    launch.config_path = scratch_.Path("trial.json");
    launch.checkpoint_dir = scratch_.Path("artifacts/sweep/0/attempt-1");  // not created: the stand-in does
    launch.resume = "never";
    launch.threads = 2;
    launch.stderr_path = scratch_.Path("trainer.log");
    launch.extra_arguments = std::move(extra);
    return launch;
  }

  Finished Run(const TrainerLaunch& launch) const {
    StatusOr<std::unique_ptr<TrainerProcess>> trainer = TrainerProcess::Start(launch);
    EXPECT_TRUE(trainer.ok()) << trainer.status().ToString();
    if (!trainer.ok()) return {};
    return RunToEnd(**trainer);
  }

  ScratchDir scratch_;
  json config_;
};

TEST_P(StandInTrainerTest, PrintsProvenanceStepsAndFinalLikeRungTrain) {
  const Finished run = Run(Launch({"--steps", "4"}));
  EXPECT_EQ(run.exit.ReportedCode(), 0);
  ASSERT_EQ(run.records.size(), 6u);
  const json& provenance = run.records.front();
  EXPECT_EQ(provenance["type"], "provenance");
  EXPECT_EQ(provenance["config"], config_) << "the config is echoed as read";
  EXPECT_EQ(provenance["threads"], 2);
  EXPECT_EQ(provenance["steps"], 4);
  EXPECT_EQ(provenance["start_step"], 0);
  EXPECT_TRUE(provenance["resumed_from"].is_null());
  EXPECT_TRUE(provenance["commit"].is_string() && !provenance["commit"].get<std::string>().empty());
  EXPECT_TRUE(provenance["host"].is_string());
  for (int64_t step = 1; step <= 4; ++step) {
    const json& record = run.records[static_cast<size_t>(step)];
    EXPECT_EQ(record["type"], "step");
    EXPECT_EQ(record["step"], step);
    EXPECT_EQ(record["tokens"], step * 4096);
    EXPECT_NEAR(record["train_loss"].get<double>(), 5.0 / std::sqrt(static_cast<double>(step)), 1e-8);
    EXPECT_NEAR(record["flops_total"].get<double>(), 6.0e6 * 4096 * static_cast<double>(step), 1.0);
    EXPECT_DOUBLE_EQ(record["lr"].get<double>(), 1e-3);
    for (const char* field : {"flops", "tokens_per_sec", "elapsed_sec"}) {
      EXPECT_TRUE(record[field].is_number()) << field;
    }
    EXPECT_EQ(record.size(), 9u) << "type, step and 7 metric fields: " << record.dump();
  }
  const json& final_record = run.records.back();
  EXPECT_EQ(final_record["type"], "final");
  EXPECT_EQ(final_record["step"], 4);
  EXPECT_NEAR(final_record["val_loss"].get<double>(), 2.5, 1e-9);
  EXPECT_GT(final_record["peak_rss_bytes"].get<int64_t>(), 0);
  EXPECT_FALSE(fs::exists(scratch_.Path("artifacts"))) << "no checkpoint, no folder";
}

TEST_P(StandInTrainerTest, CheckpointsOnSigtermAndTheNextAttemptResumesFromIt) {
  StatusOr<std::unique_ptr<TrainerProcess>> trainer =
      TrainerProcess::Start(Launch({"--steps", "100000", "--lines-per-second", "200"}));
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  TrainerOutput output;
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        (*trainer)->ReadOutput(std::chrono::milliseconds(10), &output);
        return output.stdout_lines.size() >= 3;  // the provenance and two steps
      },
      std::chrono::seconds(30)));
  ASSERT_TRUE((*trainer)->Signal(SIGTERM).ok());
  Finished stopped = RunToEnd(**trainer);
  EXPECT_EQ(stopped.exit.ReportedCode(), 75);
  ASSERT_GE(stopped.records.size(), 2u);
  const json& checkpoint = stopped.records[stopped.records.size() - 2];
  const json& preempted = stopped.records.back();
  EXPECT_EQ(checkpoint["type"], "checkpoint");
  EXPECT_EQ(checkpoint["reason"], "signal");
  EXPECT_EQ(preempted["type"], "preempted");
  EXPECT_EQ(preempted["signal"], SIGTERM);
  const int64_t step = preempted["step"];
  EXPECT_GE(step, 1);
  const std::string path = CheckpointPath(Launch().checkpoint_dir, step);
  EXPECT_EQ(checkpoint["path"], path);
  EXPECT_EQ(preempted["checkpoint"], path);
  EXPECT_EQ(ListCheckpoints(Launch().checkpoint_dir), std::vector<std::string>{path});
  EXPECT_THAT(stopped.stderr_lines, ::testing::Contains(HasSubstr("preempted")));

  TrainerLaunch resumed = Launch({"--steps", std::to_string(step + 2)});
  resumed.checkpoint_dir = scratch_.Path("artifacts/sweep/0/attempt-2");
  resumed.resume = path;
  const Finished next = Run(resumed);
  EXPECT_EQ(next.exit.ReportedCode(), 0);
  ASSERT_EQ(next.records.size(), 4u);
  EXPECT_EQ(next.records[0]["start_step"], step);
  EXPECT_EQ(next.records[0]["resumed_from"], path);
  EXPECT_EQ(next.records[1]["step"], step + 1) << "the steps continue from the checkpoint";
  EXPECT_EQ(next.records[3]["step"], step + 2);
}

TEST_P(StandInTrainerTest, StopAfterStepKeepsTheNewestTwoCheckpointsAndAutoResumesFromTheNewest) {
  for (int64_t stop = 1; stop <= 3; ++stop) {
    const Finished run = Run(Launch({"--steps", "10", "--resume", "auto", "--stop-after-step", std::to_string(stop)}));
    EXPECT_EQ(run.exit.ReportedCode(), 75);
    ASSERT_FALSE(run.records.empty());
    EXPECT_EQ(run.records.front()["start_step"], stop - 1);
    EXPECT_EQ(run.records.back()["step"], stop);
  }
  const std::string dir = Launch().checkpoint_dir;
  EXPECT_EQ(ListCheckpoints(dir), (std::vector<std::string>{CheckpointPath(dir, 2), CheckpointPath(dir, 3)}));
  EXPECT_THAT(testing::FileText(CheckpointPath(dir, 3)), HasSubstr("\"step\":3"));
}

TEST_P(StandInTrainerTest, BadInputExitsWithRungTrainsCodes) {
  std::ofstream(scratch_.Path("trial.json")) << "{\"seed\": 3,\n";  // cut short
  Finished run = Run(Launch());
  EXPECT_EQ(run.exit.ReportedCode(), 2);
  EXPECT_TRUE(run.records.empty());
  EXPECT_THAT(run.stderr_lines, ::testing::Contains(HasSubstr("is not JSON")));

  TrainerLaunch missing = Launch();
  missing.config_path = scratch_.Path("no-such.json");
  EXPECT_EQ(Run(missing).exit.ReportedCode(), 4);

  std::ofstream(scratch_.Path("trial.json")) << "{}\n";
  std::ofstream(scratch_.Path("not-a-checkpoint.pt")) << "[1, 2]\n";
  TrainerLaunch bad_resume = Launch();
  bad_resume.resume = scratch_.Path("not-a-checkpoint.pt");
  EXPECT_EQ(Run(bad_resume).exit.ReportedCode(), 4);

  EXPECT_EQ(Run(Launch({"--no-such-option", "1"})).exit.ReportedCode(), 2);
  EXPECT_EQ(Run(Launch({"--steps", "-3"})).exit.ReportedCode(), 2);
  EXPECT_EQ(Run(Launch({"--lines-per-second", "fast"})).exit.ReportedCode(), 2);
}

INSTANTIATE_TEST_SUITE_P(BothBuilds, StandInTrainerTest,
                         ::testing::Values(std::string(RUNG_STAND_IN_BINARY), std::string(RUNG_STAND_IN_GLIBC_BINARY)),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.index == 0 ? std::string("Freestanding") : std::string("Glibc");
                         });

}  // namespace
}  // namespace rung::agent
