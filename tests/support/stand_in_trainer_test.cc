// tests/support/stand_in_trainer_test.cc
//
// rung-stand-in keeps rung-train's contract, launched the way rung-worker launches trainers
// (TrainerProcess): every line decodes with core/records/trainer_records.h and the records come in
// rung-train's order and cadence; SIGTERM -> a published checkpoint and exit 75, and the attempt that
// resumes from it continues with exactly the values of an uninterrupted run; checkpoint retention;
// rung-train's exit codes for bad input; and the loss surface it plays (loss_surface.h) has its
// minimum where the formula puts it, is the same for the same seed, and diverges when asked to.
// Whatever tests or benchmarks rung with the stand-in relies on this.
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/config/lr_schedule.h"
#include "core/config/model_arithmetic.h"
#include "core/config/trial_config.h"
#include "core/records/trainer_records.h"
#include "core/train/checkpoint.h"
#include "tests/support/stand_in_trainer/loss_surface.h"
#include "tests/worker/agent/agent_test_util.h"
#include "worker/agent/trainer_process.h"

namespace rung::stand_in {
namespace {

namespace fs = std::filesystem;
using agent::testing::ScopedEnvironment;
using agent::TrainerExit;
using agent::TrainerLaunch;
using agent::TrainerOutput;
using agent::TrainerProcess;
using agent::testing::ScratchDir;
using nlohmann::json;
using records::CheckpointRecord;
using records::ErrorRecord;
using records::FinalRecord;
using records::PreemptedRecord;
using records::ProvenanceRecord;
using records::StepRecord;
using records::TrainerRecord;
using ::testing::Contains;
using ::testing::HasSubstr;

struct Finished {
  std::vector<TrainerRecord> records;
  std::vector<std::string> stderr_lines;
  TrainerExit exit;

  template <class T>
  std::vector<T> All() const {
    std::vector<T> found;
    for (const TrainerRecord& record : records) {
      if (const T* typed = std::get_if<T>(&record)) found.push_back(*typed);
    }
    return found;
  }
  // The step records this attempt played (not the replayed ones), by step.
  std::map<int64_t, StepRecord> PlayedSteps() const {
    std::map<int64_t, StepRecord> steps;
    for (const StepRecord& step : All<StepRecord>()) {
      if (!step.replayed) steps[step.step] = step;
    }
    return steps;
  }
  std::vector<std::string> Types() const {
    std::vector<std::string> types;
    for (const TrainerRecord& record : records) types.emplace_back(records::RecordType(record));
    return types;
  }
};

void Decode(const std::vector<std::string>& lines, Finished* finished) {
  for (const std::string& line : lines) {
    StatusOr<TrainerRecord> record = records::DecodeRecord(line);
    EXPECT_TRUE(record.ok()) << record.status().ToString() << ": " << line;
    if (record.ok()) finished->records.push_back(*record);
  }
}

// Collects every record line until stdout ends (each must decode); waits for the exit.
Finished RunToEnd(TrainerProcess& trainer, TrainerOutput output = {}) {
  Finished finished;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (trainer.ReadOutput(std::chrono::milliseconds(100), &output)) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "the stand-in's stdout did not end";
      break;
    }
  }
  Decode(output.stdout_lines, &finished);
  finished.stderr_lines = output.stderr_lines;
  std::optional<TrainerExit> exit = trainer.Wait(std::chrono::seconds(30));
  EXPECT_TRUE(exit.has_value()) << "the stand-in did not exit";
  if (exit) finished.exit = *exit;
  return finished;
}

// A small trial: 20 steps of 4 x 32 tokens, a step record every 5 steps, evaluation every 10.
json BaseConfig() {
  return {{"seed", 3},
          {"data", {{"source", "builtin"}, {"seq_len", 32}}},
          {"model", {{"layers", 1}, {"d_model", 32}, {"heads", 2}}},
          {"train",
           {{"steps", 20},
            {"batch_size", 4},
            {"lr", 1e-3},
            {"log_every", 5},
            {"eval_every", 10},
            {"schedule", {{"name", "cosine"}, {"warmup_steps", 2}}}}},
          {"resources", {{"cpus", 1}}}};
}

TrialConfig Parsed(const json& config) {
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  EXPECT_TRUE(trial.ok()) << trial.status().ToString();
  return trial.ok() ? *trial : TrialConfig{};
}

class StandInTrainerTest : public ::testing::Test {
 protected:
  // Writes `config` as the trial's config (JSON, as rung-worker writes it).
  std::string WriteConfig(const json& config, const std::string& name = "trial.json") const {
    const std::string path = scratch_.Path(name);
    std::ofstream(path) << config.dump() << "\n";
    return path;
  }

  TrainerLaunch Launch(const std::string& attempt = "attempt-1", std::vector<std::string> extra = {}) const {
    TrainerLaunch launch;
    launch.trainer_path = RUNG_STAND_IN_BINARY;
    launch.config_path = scratch_.Path("trial.json");
    launch.checkpoint_dir = CheckpointDir(attempt);  // not created: the stand-in does
    launch.resume = "never";
    launch.threads = 2;
    launch.stderr_path = scratch_.Path("trainer.log");
    launch.extra_arguments = std::move(extra);
    return launch;
  }

  std::string CheckpointDir(const std::string& attempt) const { return scratch_.Path("artifacts/0/" + attempt); }

  Finished Run(const TrainerLaunch& launch) const {
    StatusOr<std::unique_ptr<TrainerProcess>> trainer = TrainerProcess::Start(launch);
    EXPECT_TRUE(trainer.ok()) << trainer.status().ToString();
    if (!trainer.ok()) return {};
    return RunToEnd(**trainer);
  }

  // Runs `config` to its end and returns its final validation loss (NaN when it did not finish).
  double FinalValLoss(const json& config) {
    WriteConfig(config);
    const Finished run = Run(Launch());
    EXPECT_EQ(run.exit.ReportedCode(), 0) << config.dump();
    const std::vector<FinalRecord> finals = run.All<FinalRecord>();
    return finals.size() == 1 ? finals[0].val_loss : std::nan("");
  }

  ScratchDir scratch_;
};

TEST_F(StandInTrainerTest, PrintsProvenanceStepsCheckpointAndFinalInRungTrainsOrderAndCadence) {
  const json config = BaseConfig();
  WriteConfig(config);
  const Finished run = Run(Launch());
  EXPECT_EQ(run.exit.ReportedCode(), 0);
  ASSERT_EQ(run.Types(), (std::vector<std::string>{"provenance", "step", "step", "step", "step", "checkpoint",
                                                   "final"}));
  const TrialConfig trial = Parsed(config);
  const FlopsPerToken flops = CountFlopsPerToken(trial.model);
  const int64_t tokens_per_step = 4 * 32;

  const ProvenanceRecord& provenance = std::get<ProvenanceRecord>(run.records[0]);
  EXPECT_FALSE(provenance.commit.empty());
  EXPECT_FALSE(provenance.host.empty());
  EXPECT_EQ(provenance.threads, 2) << "--threads, as rung-worker passes it";
  EXPECT_EQ(json::parse(provenance.config.text), TrialConfigToJson(trial)) << "the resolved config";
  EXPECT_EQ(json::parse(provenance.parameters.text)["nonembedding"], CountParameters(trial.model).nonembedding());
  EXPECT_EQ(json::parse(provenance.data.text)["loss_surface"], LossSurfaceToJson(LossSurface()));
  EXPECT_DOUBLE_EQ(provenance.flops_per_token.nonembedding, flops.nonembedding);
  EXPECT_EQ(provenance.steps, 20);
  EXPECT_EQ(provenance.tokens_per_step, tokens_per_step);
  EXPECT_EQ(provenance.start_step, 0);
  EXPECT_FALSE(provenance.resumed_from.has_value());
  EXPECT_EQ(provenance.world_size, 1);

  const std::vector<StepRecord> steps = run.All<StepRecord>();
  const TrialCurve curve = CurveForTrial(LossSurface(), trial, 20);
  for (size_t index = 0; index < steps.size(); ++index) {
    const StepRecord& step = steps[index];
    const int64_t expected_step = 5 * static_cast<int64_t>(index + 1);
    EXPECT_EQ(step.step, expected_step);
    EXPECT_EQ(step.tokens, expected_step * tokens_per_step);
    EXPECT_DOUBLE_EQ(step.flops, flops.nonembedding * static_cast<double>(step.tokens));
    EXPECT_DOUBLE_EQ(step.flops_total, flops.total() * static_cast<double>(step.tokens));
    EXPECT_DOUBLE_EQ(step.lr, 1e-3 * LearningRateMultiplier(trial.train.schedule, expected_step - 1, 20));
    EXPECT_TRUE(std::isfinite(step.train_loss));
    EXPECT_NEAR(step.train_loss, curve.ValLoss(expected_step), 0.1) << "the curve plus the seed's noise";
    EXPECT_EQ(step.val_loss.has_value(), expected_step % 10 == 0) << "val_loss on evaluation steps and the last";
    if (step.val_loss) {
      EXPECT_DOUBLE_EQ(*step.val_loss, curve.ValLoss(expected_step));
    }
    EXPECT_FALSE(step.replayed);
  }
  EXPECT_GT(steps.front().train_loss, steps.back().train_loss) << "the loss falls";

  const CheckpointRecord& checkpoint = std::get<CheckpointRecord>(run.records[5]);
  EXPECT_EQ(checkpoint.step, 20);
  EXPECT_EQ(checkpoint.reason, "final");
  EXPECT_EQ(checkpoint.path, CheckpointPath(CheckpointDir("attempt-1"), 20));
  EXPECT_EQ(ListCheckpoints(CheckpointDir("attempt-1")), std::vector<std::string>{checkpoint.path});

  const FinalRecord& final_record = std::get<FinalRecord>(run.records[6]);
  EXPECT_EQ(final_record.step, 20);
  EXPECT_EQ(final_record.tokens, 20 * tokens_per_step);
  EXPECT_EQ(final_record.val_loss, *steps.back().val_loss);
  EXPECT_EQ(final_record.val_loss, curve.final_loss);
  EXPECT_EQ(final_record.train_loss, steps.back().train_loss);
  EXPECT_GT(final_record.peak_rss_bytes, 0);
  EXPECT_THAT(run.stderr_lines, Contains(HasSubstr("loss surface")));
}

TEST_F(StandInTrainerTest, SigtermCheckpointsAndTheResumedAttemptContinuesTheUninterruptedCurve) {
  json config = BaseConfig();
  config["train"]["steps"] = 40;
  config["train"]["log_every"] = 1;
  WriteConfig(config);
  ScopedEnvironment surface("RUNG_STAND_IN_SURFACE", R"({"noise": 0.05})");
  const Finished uninterrupted = Run(Launch("uninterrupted"));
  ASSERT_EQ(uninterrupted.exit.ReportedCode(), 0);
  const std::map<int64_t, StepRecord> expected = uninterrupted.PlayedSteps();
  ASSERT_EQ(expected.size(), 40u);

  StatusOr<std::unique_ptr<TrainerProcess>> trainer =
      TrainerProcess::Start(Launch("attempt-1", {"--lines-per-second", "50"}));
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  TrainerOutput output;
  ASSERT_TRUE(agent::testing::WaitUntil(
      [&] {
        (*trainer)->ReadOutput(std::chrono::milliseconds(10), &output);
        return output.stdout_lines.size() >= 4;  // the provenance and three steps
      },
      std::chrono::seconds(20)));
  ASSERT_TRUE((*trainer)->Signal(SIGTERM).ok());
  const Finished stopped = RunToEnd(**trainer, output);
  EXPECT_EQ(stopped.exit.ReportedCode(), 75);
  ASSERT_GE(stopped.records.size(), 3u);
  const auto* checkpoint = std::get_if<CheckpointRecord>(&stopped.records[stopped.records.size() - 2]);
  const auto* preempted = std::get_if<PreemptedRecord>(&stopped.records.back());
  ASSERT_NE(checkpoint, nullptr);
  ASSERT_NE(preempted, nullptr);
  EXPECT_EQ(checkpoint->reason, "signal");
  EXPECT_EQ(preempted->signal, SIGTERM);
  const int64_t step = preempted->step;
  ASSERT_GE(step, 3);
  ASSERT_LT(step, 40) << "the signal came too late to test a resume";
  const std::string path = CheckpointPath(CheckpointDir("attempt-1"), step);
  EXPECT_EQ(checkpoint->path, path);
  EXPECT_EQ(preempted->checkpoint, path);
  EXPECT_EQ(ListCheckpoints(CheckpointDir("attempt-1")), std::vector<std::string>{path});
  EXPECT_THAT(stopped.stderr_lines, Contains(HasSubstr("preempted")));

  TrainerLaunch resumed = Launch("attempt-2");
  resumed.resume = path;  // as rung-worker resumes: the previous attempt's checkpoint, a new folder
  const Finished next = Run(resumed);
  EXPECT_EQ(next.exit.ReportedCode(), 0);
  const ProvenanceRecord& provenance = std::get<ProvenanceRecord>(next.records.at(0));
  EXPECT_EQ(provenance.start_step, step);
  EXPECT_EQ(provenance.resumed_from, path);
  int64_t replayed = 0;
  for (const StepRecord& record : next.All<StepRecord>()) replayed += record.replayed ? 1 : 0;
  EXPECT_EQ(replayed, step) << "the checkpoint remembers every step record since the start";

  // The two attempts together played exactly the uninterrupted run's values.
  std::map<int64_t, StepRecord> played = stopped.PlayedSteps();
  for (const auto& [at, record] : next.PlayedSteps()) {
    EXPECT_TRUE(played.emplace(at, record).second) << "step " << at << " played twice";
  }
  ASSERT_EQ(played.size(), expected.size());
  for (const auto& [at, record] : expected) {
    const StepRecord& got = played.at(at);
    EXPECT_EQ(got.tokens, record.tokens) << at;
    EXPECT_EQ(got.flops, record.flops) << at;
    EXPECT_EQ(got.lr, record.lr) << at;
    EXPECT_EQ(got.train_loss, record.train_loss) << at;
    EXPECT_EQ(got.val_loss, record.val_loss) << at;
  }
  const FinalRecord expected_final = uninterrupted.All<FinalRecord>().at(0);
  const FinalRecord resumed_final = next.All<FinalRecord>().at(0);
  EXPECT_EQ(resumed_final.val_loss, expected_final.val_loss);
  EXPECT_EQ(resumed_final.train_loss, expected_final.train_loss);
  EXPECT_EQ(resumed_final.tokens, expected_final.tokens);
}

TEST_F(StandInTrainerTest, PeriodicCheckpointsKeepTheNewestTrainKeepCheckpoints) {
  json config = BaseConfig();
  config["train"]["steps"] = 10;
  config["train"]["checkpoint_every"] = 2;
  config["train"]["keep_checkpoints"] = 3;
  WriteConfig(config);
  const Finished run = Run(Launch());
  EXPECT_EQ(run.exit.ReportedCode(), 0);
  std::vector<std::pair<int64_t, std::string>> checkpoints;
  for (const CheckpointRecord& record : run.All<CheckpointRecord>()) checkpoints.emplace_back(record.step, record.reason);
  EXPECT_EQ(checkpoints, (std::vector<std::pair<int64_t, std::string>>{
                             {2, "periodic"}, {4, "periodic"}, {6, "periodic"}, {8, "periodic"}, {10, "final"}}));
  const std::string dir = CheckpointDir("attempt-1");
  EXPECT_EQ(ListCheckpoints(dir), (std::vector<std::string>{CheckpointPath(dir, 6), CheckpointPath(dir, 8),
                                                            CheckpointPath(dir, 10)}));
  const json newest = json::parse(agent::testing::FileText(CheckpointPath(dir, 10)));
  EXPECT_EQ(newest["format"], "rung-stand-in/1");
  EXPECT_EQ(newest["step"], 10);
  size_t checksums = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string extension = entry.path().extension().string();
    EXPECT_TRUE(extension == ".pt" || extension == ".sha256") << "no temporary file left: " << entry.path();
    checksums += extension == ".sha256";
  }
  EXPECT_EQ(checksums, 3u) << "each kept checkpoint has its checksum, and only those";
}

TEST_F(StandInTrainerTest, StopAfterStepCheckpointsAndAutoResumesFromTheNewest) {
  json config = BaseConfig();
  config["train"]["steps"] = 10;
  config["train"]["log_every"] = 1;
  WriteConfig(config);
  for (int64_t stop = 1; stop <= 3; ++stop) {
    TrainerLaunch launch = Launch("attempt-1", {"--stop-after-step", std::to_string(stop)});
    launch.resume = "auto";
    const Finished run = Run(launch);
    EXPECT_EQ(run.exit.ReportedCode(), 75);
    ASSERT_FALSE(run.records.empty());
    EXPECT_EQ(std::get<ProvenanceRecord>(run.records.front()).start_step, stop - 1);
    const auto* preempted = std::get_if<PreemptedRecord>(&run.records.back());
    ASSERT_NE(preempted, nullptr);
    EXPECT_EQ(preempted->step, stop);
    EXPECT_EQ(preempted->signal, 0) << "--stop-after-step is no signal";
    EXPECT_EQ(run.All<CheckpointRecord>().back().reason, "stop_after_step");
  }
  const std::string dir = CheckpointDir("attempt-1");
  EXPECT_EQ(ListCheckpoints(dir), (std::vector<std::string>{CheckpointPath(dir, 2), CheckpointPath(dir, 3)}))
      << "train.keep_checkpoints defaults to 2";

  TrainerLaunch rest = Launch();
  rest.resume = "auto";
  const Finished run = Run(rest);
  EXPECT_EQ(run.exit.ReportedCode(), 0);
  EXPECT_EQ(std::get<ProvenanceRecord>(run.records.front()).resumed_from, CheckpointPath(dir, 3));
  EXPECT_EQ(run.PlayedSteps().begin()->first, 4);
  EXPECT_EQ(run.All<FinalRecord>().at(0).step, 10);

  // Resumed from its final checkpoint, it reports the results again, without a training loss.
  const Finished again = Run(rest);
  EXPECT_EQ(again.exit.ReportedCode(), 0);
  EXPECT_TRUE(again.PlayedSteps().empty());
  const FinalRecord final_again = again.All<FinalRecord>().at(0);
  EXPECT_EQ(final_again.val_loss, run.All<FinalRecord>().at(0).val_loss);
  EXPECT_FALSE(final_again.train_loss.has_value());
}

TEST_F(StandInTrainerTest, AutoResumePassesOverATruncatedNewestCheckpointAndSaysSoInItsProvenance) {
  json config = BaseConfig();
  config["train"]["steps"] = 10;
  config["train"]["log_every"] = 1;
  WriteConfig(config);
  for (int64_t stop : {2, 3}) {
    TrainerLaunch launch = Launch("attempt-1", {"--stop-after-step", std::to_string(stop)});
    launch.resume = "auto";
    ASSERT_EQ(Run(launch).exit.ReportedCode(), 75);
  }
  const std::string dir = CheckpointDir("attempt-1");
  fs::resize_file(CheckpointPath(dir, 3), fs::file_size(CheckpointPath(dir, 3)) / 2);

  TrainerLaunch rest = Launch();
  rest.resume = "auto";
  const Finished run = Run(rest);
  EXPECT_EQ(run.exit.ReportedCode(), 0);
  const ProvenanceRecord& provenance = std::get<ProvenanceRecord>(run.records.front());
  EXPECT_EQ(provenance.resumed_from, CheckpointPath(dir, 2));
  EXPECT_EQ(provenance.start_step, 2);
  ASSERT_EQ(provenance.skipped_checkpoints.size(), 1u);
  EXPECT_THAT(provenance.skipped_checkpoints[0], HasSubstr(CheckpointPath(dir, 3) + ": "));
  EXPECT_THAT(provenance.skipped_checkpoints[0], HasSubstr("is damaged"));
  EXPECT_EQ(run.All<FinalRecord>().at(0).step, 10);
}

TEST_F(StandInTrainerTest, BadInputExitsWithRungTrainsCodes) {
  // A config error: exit 2, the parser's file:line:col on stderr, no records.
  std::ofstream(scratch_.Path("trial.yaml")) << "seed: 1\nmodel:\n  layerz: 2\n";
  TrainerLaunch yaml = Launch();
  yaml.config_path = scratch_.Path("trial.yaml");
  Finished run = Run(yaml);
  EXPECT_EQ(run.exit.ReportedCode(), 2);
  EXPECT_TRUE(run.records.empty());
  EXPECT_THAT(run.stderr_lines, Contains(HasSubstr("trial.yaml:3:3")));
  EXPECT_THAT(run.stderr_lines, Contains(HasSubstr("layerz")));
  std::ofstream(scratch_.Path("trial.yaml")) << "seed: [1\n";
  EXPECT_EQ(Run(yaml).exit.ReportedCode(), 2) << "a syntax error";

  TrainerLaunch missing = Launch();
  missing.config_path = scratch_.Path("no-such.json");
  EXPECT_EQ(Run(missing).exit.ReportedCode(), 4);

  WriteConfig(BaseConfig());
  for (const char* text : {"[1, 2]\n", "PK\x03\x04 not json", "{\"format\": \"rung-stand-in/1\"}\n"}) {
    std::ofstream(scratch_.Path("bad.pt")) << text;
    TrainerLaunch bad_resume = Launch();
    bad_resume.resume = scratch_.Path("bad.pt");
    run = Run(bad_resume);
    EXPECT_EQ(run.exit.ReportedCode(), 4) << text;
    EXPECT_TRUE(run.records.empty()) << text;
  }
  TrainerLaunch gone = Launch();
  gone.resume = scratch_.Path("no-such.pt");
  EXPECT_EQ(Run(gone).exit.ReportedCode(), 4);

  // A checkpoint of another trial (here: another lr) is refused.
  EXPECT_EQ(Run(Launch("other", {"--stop-after-step", "1"})).exit.ReportedCode(), 75);
  json other = BaseConfig();
  other["train"]["lr"] = 2e-3;
  WriteConfig(other);
  TrainerLaunch foreign = Launch();
  foreign.resume = CheckpointPath(CheckpointDir("other"), 1);
  run = Run(foreign);
  EXPECT_EQ(run.exit.ReportedCode(), 4);
  EXPECT_THAT(run.stderr_lines, Contains(HasSubstr("differs at train.lr")));

  WriteConfig(BaseConfig());
  EXPECT_EQ(Run(Launch("a", {"--no-such-option", "1"})).exit.ReportedCode(), 2);
  EXPECT_EQ(Run(Launch("a", {"--steps", "-3"})).exit.ReportedCode(), 2);
  EXPECT_EQ(Run(Launch("a", {"--lines-per-second", "fast"})).exit.ReportedCode(), 2);
  {
    ScopedEnvironment steps("RUNG_STAND_IN_STEPS", "many");
    EXPECT_EQ(Run(Launch()).exit.ReportedCode(), 2);
  }
  {
    ScopedEnvironment surface("RUNG_STAND_IN_SURFACE", R"({"lr_rfe": 1})");
    run = Run(Launch());
    EXPECT_EQ(run.exit.ReportedCode(), 2);
    EXPECT_THAT(run.stderr_lines, Contains(HasSubstr("RUNG_STAND_IN_SURFACE: the loss surface has no parameter 'lr_rfe'")));
  }
  json data_parallel = BaseConfig();
  data_parallel["resources"]["world_size"] = 2;
  WriteConfig(data_parallel);
  EXPECT_EQ(Run(Launch()).exit.ReportedCode(), 2) << "world_size 2 without --rendezvous";
  EXPECT_EQ(Run(Launch("a", {"--rank", "2", "--rendezvous", "127.0.0.1:1"})).exit.ReportedCode(), 2);
}

TEST_F(StandInTrainerTest, TheFinalLossIsLowestAtTheFormulasOptimalLr) {
  ScopedEnvironment surface("RUNG_STAND_IN_SURFACE", R"({"noise": 0})");
  json config = BaseConfig();
  config["train"]["steps"] = 4;
  const double n = static_cast<double>(CountParameters(Parsed(config).model).nonembedding());
  const double optimum = OptimalLearningRate(LossSurface(), n);
  std::vector<double> losses;
  for (double lr : {optimum / 4, optimum, optimum * 4}) {
    config["train"]["lr"] = lr;
    losses.push_back(FinalValLoss(config));
    EXPECT_DOUBLE_EQ(losses.back(), TargetLoss(LossSurface(), lr, n)) << "lr " << lr;
  }
  EXPECT_LT(losses[1], losses[0]);
  EXPECT_LT(losses[1], losses[2]);
  EXPECT_DOUBLE_EQ(losses[1], LossSurface().floor);

  // A larger model: its optimum lies at a smaller lr, where it beats the smaller model's optimum.
  json large = config;
  large["model"]["d_model"] = 64;
  const double large_n = static_cast<double>(CountParameters(Parsed(large).model).nonembedding());
  const double large_optimum = OptimalLearningRate(LossSurface(), large_n);
  ASSERT_LT(large_optimum, optimum);
  large["train"]["lr"] = large_optimum;
  const double at_its_optimum = FinalValLoss(large);
  large["train"]["lr"] = optimum;
  EXPECT_LT(at_its_optimum, FinalValLoss(large));
}

TEST_F(StandInTrainerTest, TheSameConfigGivesTheSameNumbersAndAnotherSeedOthers) {
  json config = BaseConfig();
  config["train"]["log_every"] = 1;
  WriteConfig(config);
  const Finished first = Run(Launch("first"));
  const Finished second = Run(Launch("second"));
  config["seed"] = 4;
  WriteConfig(config);
  const Finished other_seed = Run(Launch("other-seed"));
  const std::map<int64_t, StepRecord> a = first.PlayedSteps(), b = second.PlayedSteps(), c = other_seed.PlayedSteps();
  ASSERT_EQ(a.size(), 20u);
  ASSERT_EQ(b.size(), 20u);
  ASSERT_EQ(c.size(), 20u);
  int differing = 0;
  for (const auto& [step, record] : a) {
    EXPECT_EQ(b.at(step).train_loss, record.train_loss) << step;
    EXPECT_EQ(b.at(step).val_loss, record.val_loss) << step;
    differing += c.at(step).train_loss != record.train_loss ? 1 : 0;
  }
  EXPECT_EQ(differing, 20);
  EXPECT_EQ(first.All<FinalRecord>().at(0).val_loss, second.All<FinalRecord>().at(0).val_loss);
  EXPECT_NE(first.All<FinalRecord>().at(0).val_loss, other_seed.All<FinalRecord>().at(0).val_loss);
}

TEST_F(StandInTrainerTest, AnLrAboveTheDivergenceThresholdEndsInAnErrorRecordAndExit3) {
  ScopedEnvironment surface("RUNG_STAND_IN_SURFACE", R"({"diverge_above_lr": 0.1, "diverge_at": 0.5})");
  json config = BaseConfig();
  config["train"]["steps"] = 10;
  config["train"]["log_every"] = 1;
  config["train"]["lr"] = 0.5;
  WriteConfig(config);
  const Finished run = Run(Launch());
  EXPECT_EQ(run.exit.ReportedCode(), 3);
  EXPECT_EQ(run.Types(), (std::vector<std::string>{"provenance", "step", "step", "step", "step", "error"}));
  const auto* error = std::get_if<ErrorRecord>(&run.records.back());
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->step, 5);
  EXPECT_THAT(error->reason, HasSubstr("non-finite training loss (nan) at step 5"));
  EXPECT_TRUE(run.All<FinalRecord>().empty());

  config["train"]["lr"] = 0.05;  // below the threshold: finishes
  WriteConfig(config);
  EXPECT_EQ(Run(Launch("below")).exit.ReportedCode(), 0);
}

TEST_F(StandInTrainerTest, StepsAndPacingComeFromTheEnvironmentOrTheirFlags) {
  WriteConfig(BaseConfig());
  {
    ScopedEnvironment steps("RUNG_STAND_IN_STEPS", "7");
    Finished run = Run(Launch("env"));
    EXPECT_EQ(run.exit.ReportedCode(), 0);
    EXPECT_EQ(std::get<ProvenanceRecord>(run.records.at(0)).steps, 7);
    EXPECT_EQ(run.All<FinalRecord>().at(0).step, 7);
    run = Run(Launch("flag", {"--steps", "3"}));
    EXPECT_EQ(run.All<FinalRecord>().at(0).step, 3) << "the flag wins";
  }
  // 6 step records at most 50 a second: at least 5 gaps of 20 ms.
  ScopedEnvironment pace("RUNG_STAND_IN_LINES_PER_SECOND", "50");
  json config = BaseConfig();
  config["train"]["steps"] = 6;
  config["train"]["log_every"] = 1;
  WriteConfig(config);
  const auto start = std::chrono::steady_clock::now();
  const Finished run = Run(Launch("paced"));
  EXPECT_EQ(run.exit.ReportedCode(), 0);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(95));
}

TEST_F(StandInTrainerTest, SecondsSpreadTheStepRecordsOverTheRun) {
  json config = BaseConfig();
  config["train"]["steps"] = 4;
  config["train"]["log_every"] = 1;
  WriteConfig(config);
  // 4 steps over at least 0.2 s: step s no sooner than 0.05 s x s after the start.
  const Finished run = Run(Launch("flag", {"--seconds", "0.2"}));
  ASSERT_EQ(run.exit.ReportedCode(), 0);
  const std::vector<StepRecord> steps = run.All<StepRecord>();
  ASSERT_EQ(steps.size(), 4u);
  for (const StepRecord& step : steps) EXPECT_GE(step.elapsed_sec, 0.05 * static_cast<double>(step.step)) << step.step;
  EXPECT_GE(run.All<FinalRecord>().at(0).wall_sec, 0.2);

  ScopedEnvironment seconds("RUNG_STAND_IN_SECONDS", "0.1");
  const Finished from_environment = Run(Launch("env"));
  ASSERT_EQ(from_environment.exit.ReportedCode(), 0);
  EXPECT_GE(from_environment.All<FinalRecord>().at(0).wall_sec, 0.1);
  EXPECT_EQ(Run(Launch("bad", {"--seconds", "-1"})).exit.ReportedCode(), 2);
}

TEST_F(StandInTrainerTest, OnlyRankZeroOfADataParallelTrialReportsAndCheckpoints) {
  json config = BaseConfig();
  config["resources"]["world_size"] = 2;
  WriteConfig(config);
  const Finished rank1 = Run(Launch("rank-1", {"--rank", "1", "--rendezvous", "127.0.0.1:29500"}));
  EXPECT_EQ(rank1.exit.ReportedCode(), 0);
  EXPECT_TRUE(rank1.records.empty());
  EXPECT_FALSE(fs::exists(CheckpointDir("rank-1")));
  const Finished rank0 = Run(Launch("rank-0", {"--rank", "0", "--rendezvous", "127.0.0.1:29500"}));
  EXPECT_EQ(rank0.exit.ReportedCode(), 0);
  EXPECT_EQ(std::get<ProvenanceRecord>(rank0.records.at(0)).world_size, 2);
  EXPECT_EQ(rank0.All<FinalRecord>().size(), 1u);
}

}  // namespace
}  // namespace rung::stand_in
