// Real training through real rung-train processes on the builtin corpus: learning, checkpoint
// and resume, preemption by signal, non-finite losses. These tests hold the CPU (RUN_SERIAL).
#include <signal.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/common/loopback_port.h"
#include "core/common/subprocess.h"

namespace rung {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string BuiltinCorpus() { return std::string(RUNG_BUILD_DIR) + "/data/builtin/austen.txt"; }

// A running rung-train child with its stdout as a stream of JSON records.
class TrainerProcess {
 public:
  TrainerProcess(const std::string& config_path, const std::vector<std::string>& extra) {
    SubprocessOptions options;
    options.argv = {RUNG_TRAIN_BINARY, "--config", config_path};
    options.argv.insert(options.argv.end(), extra.begin(), extra.end());
    options.stdout_to = Redirect::Pipe();
    StatusOr<std::unique_ptr<Subprocess>> started = Subprocess::Start(options);
    if (!started.ok()) throw std::runtime_error(started.status().ToString());
    process_ = std::move(started).value();
  }
  // Next record, or null at end of output.
  json Next() {
    std::optional<std::string> line = process_->ReadLine(Stream::kStdout, std::chrono::hours(1));
    json record = line ? json::parse(*line) : json(nullptr);
    if (!record.is_null()) records_.push_back(record);
    return record;
  }
  void Signal(int signal) { process_->Signal(signal).IgnoreError(); }  // the test checks the exit
  // Reads the rest of the output and returns the exit code (128 + N when killed by signal N).
  int Finish() {
    while (!Next().is_null()) {
    }
    StatusOr<ExitStatus> exit = process_->Wait();
    return exit.ok() ? exit->ShellCode() : -1;
  }
  const std::vector<json>& records() const { return records_; }

 private:
  std::unique_ptr<Subprocess> process_;  // SIGKILLed and reaped if still running at the end
  std::vector<json> records_;
};

std::string WriteConfig(const std::string& name, const json& config) {
  std::string path = testing::TempDir() + "/" + name + ".json";
  std::ofstream(path) << config.dump(2);
  return path;
}

json TinyTrial(const std::string& variant, int64_t steps) {
  return {{"seed", 1},
          {"data", {{"source", "builtin"}, {"seq_len", 64}}},
          {"model", {{"layers", 2}, {"d_model", 64}, {"heads", 4}}},
          {"position", {{"variant", variant}}},
          {"train",
           {{"steps", steps}, {"batch_size", 16}, {"lr", 3e-3}, {"schedule", {{"name", "cosine"}, {"warmup_steps", 20}}},
            {"eval_every", 50}, {"eval_batches", 8}, {"log_every", 10}}},
          {"resources", {{"cpus", 2}}}};
}

// Records of one type, keyed by step.
// The step records a run trained, by step (`replayed`: only those a resumed run printed again
// from its checkpoint instead).
std::map<int64_t, json> StepRecords(const std::vector<json>& records, bool replayed = false) {
  std::map<int64_t, json> steps;
  for (const json& record : records) {
    if (record.at("type") == "step" && record.value("replayed", false) == replayed) {
      steps[record.at("step").get<int64_t>()] = record;
    }
  }
  return steps;
}

double UnigramEntropyBits(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::vector<double> counts(256, 0.0);
  double total = 0;
  char byte;
  while (stream.get(byte)) {
    counts[static_cast<unsigned char>(byte)] += 1;
    total += 1;
  }
  double entropy = 0;
  for (double count : counts) {
    if (count > 0) entropy -= count / total * std::log2(count / total);
  }
  return entropy;
}

class TrainingTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(BuiltinCorpus())) GTEST_FAIL() << "builtin corpus missing: run `make corpus` (" << BuiltinCorpus() << ")";
  }
};

TEST_F(TrainingTest, EveryVariantLearnsHalfABitPerByteBelowTheUnigramEntropy) {
  const double unigram_bits = UnigramEntropyBits(BuiltinCorpus());
  for (const char* variant : {"nope", "rope", "prope", "lerope", "adarope", "alibi"}) {
    TrainerProcess trainer(WriteConfig(std::string("learn_") + variant, TinyTrial(variant, 300)), {});
    ASSERT_EQ(trainer.Finish(), 0) << variant;
    const json& final_record = trainer.records().back();
    ASSERT_EQ(final_record.at("type"), "final") << variant;
    double val_bits = final_record.at("val_loss").get<double>() / std::log(2.0);
    EXPECT_LE(val_bits, unigram_bits - 0.5) << variant << ": " << val_bits << " bits/byte vs unigram " << unigram_bits;
    EXPECT_EQ(final_record.at("val_loss_per_position").size(), 64u);
  }
}

TEST_F(TrainingTest, FirstRecordStatesProvenance) {
  json config = TinyTrial("lerope", 2);
  config["train"]["diagnostics_renyi_order"] = 3.0;  // E_3 instead of E_2, said in the record
  TrainerProcess trainer(WriteConfig("provenance", config), {});
  ASSERT_EQ(trainer.Finish(), 0);
  const json& first = trainer.records().front();
  EXPECT_EQ(first.at("type"), "provenance");
  for (const char* key : {"commit", "torch_version", "threads", "host", "blas", "config", "data", "parameters",
                          "flops_per_token"}) {
    EXPECT_TRUE(first.contains(key)) << key;
  }
  EXPECT_EQ(first.at("threads"), 2);
  EXPECT_TRUE(first.at("data").contains("sha256"));
  // The end of the run: the attention diagnostics, LeRoPE's band ablation, the final record.
  const json& envelope = trainer.records()[trainer.records().size() - 3];
  ASSERT_EQ(envelope.at("type"), "diagnostics");
  const json& ablation = trainer.records()[trainer.records().size() - 2];
  ASSERT_EQ(ablation.at("kind"), "band_ablation");
  ASSERT_EQ(ablation.at("band_ablation").at("pairs").size(), 8u);
  for (const json& pair : ablation.at("band_ablation").at("pairs")) {
    // Two steps barely move LeRoPE's scales from 0 (RoPE): reverting a pair changes almost nothing.
    EXPECT_LT(std::fabs(pair.at("delta").get<double>()), 0.05) << pair.dump();
    // Zeroing a band removes its logit contribution: a loss beside the trained one, measured.
    EXPECT_TRUE(std::isfinite(pair.at("zeroed_loss").get<double>())) << pair.dump();
    EXPECT_DOUBLE_EQ(pair.at("zeroed_delta").get<double>(),
                     pair.at("zeroed_loss").get<double>() - ablation.at("band_ablation").at("loss").get<double>());
  }
  // The fastest band carries position even after two steps: zeroing it changes the loss.
  EXPECT_GT(std::fabs(ablation.at("band_ablation").at("pairs").at(0).at("zeroed_delta").get<double>()), 1e-4);
  for (const json& pair : ablation.at("band_ablation").at("pairs")) {
  }
  EXPECT_EQ(envelope.at("kind"), "attention");
  EXPECT_EQ(envelope.at("milestone"), "end");
  EXPECT_EQ(envelope.at("step"), 2);
  const json& diagnostics = envelope.at("attention");
  EXPECT_EQ(diagnostics.at("layers").size(), 2u);
  EXPECT_TRUE(diagnostics.at("pooled").contains("xi_lambda"));
  EXPECT_EQ(diagnostics.at("renyi_order"), 3.0);
  // E_3 of the first query position (one visible key) is 1, and never exceeds the keys visible.
  const json& lengths = diagnostics.at("layers")[0].at("heads")[0].at("effective_length_by_position");
  EXPECT_NEAR(lengths[0].get<double>(), 1.0, 1e-5);
  for (size_t i = 0; i < lengths.size(); ++i) EXPECT_LE(lengths[i].get<double>(), i + 1 + 1e-4) << i;
  const json& final_record = trainer.records().back();
  ASSERT_EQ(final_record.at("positional_parameters").size(), 1u);
  EXPECT_EQ(final_record.at("positional_parameters")[0].at("name"), "positional.lerope_log_scale");
  EXPECT_EQ(final_record.at("positional_parameters")[0].at("values").size(), 8u);
}

// data.cross_doc_mask reaches the model: on documents shorter than a window the first step's loss
// (same seed, same batch, same initial weights) changes with the mask, and the setting is recorded.
TEST_F(TrainingTest, CrossDocumentMaskReachesTheModelAndIsRecorded) {
  const std::string corpus = testing::TempDir() + "/short_documents.txt";
  {
    std::ofstream out(corpus, std::ios::binary);
    for (int document = 0; document < 400; ++document) {
      out << '\f' << "document " << document << ": " << std::string(10 + document % 30, 'a' + document % 26)
          << '\n';
    }
  }
  std::vector<double> first_step_losses;
  for (bool cross_doc_mask : {false, true}) {
    json config = TinyTrial("rope", 2);
    config["data"] = {{"source", "text"}, {"path", corpus}, {"seq_len", 64}, {"cross_doc_mask", cross_doc_mask}};
    config["train"]["log_every"] = 1;
    const std::string name = std::string("cross_doc_mask_") + (cross_doc_mask ? "on" : "off");
    TrainerProcess trainer(WriteConfig(name, config), {});
    ASSERT_EQ(trainer.Finish(), 0) << "cross_doc_mask " << cross_doc_mask;
    EXPECT_EQ(trainer.records().front().at("config").at("data").at("cross_doc_mask"), cross_doc_mask);
    first_step_losses.push_back(StepRecords(trainer.records()).at(1).at("train_loss").get<double>());
  }
  EXPECT_NE(first_step_losses[0], first_step_losses[1]);
}

// Kill (SIGTERM) mid-run, resume from the checkpoint: every later record equals the
// uninterrupted run's, number for number.
TEST_F(TrainingTest, ResumedRunContinuesTheUninterruptedCurveExactly) {
  json config = TinyTrial("adarope", 60);
  config["train"]["log_every"] = 1;
  config["train"]["eval_every"] = 20;
  std::string config_path = WriteConfig("resume", config);

  TrainerProcess reference(config_path, {});
  ASSERT_EQ(reference.Finish(), 0);
  std::map<int64_t, json> expected = StepRecords(reference.records());

  std::string dir = testing::TempDir() + "/resume_ckpt";
  fs::remove_all(dir);
  TrainerProcess first(config_path, {"--checkpoint-dir", dir});
  for (json record = first.Next(); !record.is_null(); record = first.Next()) {
    if (record.at("type") == "step" && record.at("step") == 25) {
      first.Signal(SIGTERM);
      break;
    }
  }
  ASSERT_EQ(first.Finish(), 75);
  const json& preempted = first.records().back();
  ASSERT_EQ(preempted.at("type"), "preempted");
  const int64_t stopped_at = preempted.at("step").get<int64_t>();
  EXPECT_GE(stopped_at, 25);
  EXPECT_LT(stopped_at, 60);

  TrainerProcess second(config_path, {"--checkpoint-dir", dir});
  ASSERT_EQ(second.Finish(), 0);
  EXPECT_EQ(second.records().front().at("start_step"), stopped_at);
  std::map<int64_t, json> resumed = StepRecords(second.records());
  ASSERT_EQ(resumed.begin()->first, stopped_at + 1);
  ASSERT_EQ(resumed.rbegin()->first, 60);
  for (const auto& [step, record] : resumed) {
    for (const char* key : {"train_loss", "grad_norm", "lr", "tokens", "flops"}) {
      EXPECT_EQ(record.at(key), expected.at(step).at(key)) << key << " at step " << step;
    }
    if (record.contains("val_loss")) EXPECT_EQ(record.at("val_loss"), expected.at(step).at("val_loss")) << step;
  }
  EXPECT_EQ(second.records().back().at("val_loss"), reference.records().back().at("val_loss"));
  // The resumed run first printed again every step record of the run so far (its checkpoint
  // remembers them all), identical to the uninterrupted run's.
  std::map<int64_t, json> replayed = StepRecords(second.records(), /*replayed=*/true);
  std::vector<int64_t> replayed_steps, steps_until_the_stop;
  for (const auto& [step, record] : replayed) replayed_steps.push_back(step);
  for (const auto& [step, record] : expected) {
    if (step <= stopped_at) steps_until_the_stop.push_back(step);
  }
  EXPECT_EQ(replayed_steps, steps_until_the_stop);
  for (const auto& [step, record] : replayed) {
    EXPECT_EQ(record.at("train_loss"), expected.at(step).at("train_loss")) << "replayed step " << step;
  }

  // Once more from the final checkpoint (an attempt that ended before it was reported): no steps,
  // the same final record.
  TrainerProcess third(config_path, {"--checkpoint-dir", dir});
  ASSERT_EQ(third.Finish(), 0);
  ASSERT_EQ(third.records().back().at("type"), "final");
  EXPECT_EQ(third.records().back().at("val_loss"), reference.records().back().at("val_loss"));
  EXPECT_TRUE(StepRecords(third.records()).empty());
}

// A checkpoint the release before the record contract wrote (tests/data/compat/protocol-1) still
// resumes: this release continues its curve to the same end as an uninterrupted run of its own.
TEST_F(TrainingTest, ACheckpointOfThePreviousReleaseResumes) {
  const std::string fixture = std::string(RUNG_SOURCE_DIR) + "/tests/data/compat/protocol-1";
  const std::string config_path = fixture + "/lerope-trial.json";
  const std::string dir = testing::TempDir() + "/old_release_ckpt";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fixture + "/ckpt-0000000020.pt", dir + "/ckpt-0000000020.pt");

  TrainerProcess resumed(config_path, {"--checkpoint-dir", dir, "--threads", "1"});
  ASSERT_EQ(resumed.Finish(), 0);
  ASSERT_EQ(resumed.records().front().at("type"), "provenance");
  EXPECT_EQ(resumed.records().front().at("start_step"), 20);
  std::map<int64_t, json> trained = StepRecords(resumed.records());
  ASSERT_FALSE(trained.empty());
  EXPECT_EQ(trained.begin()->first, 25) << "log_every 5 after step 20";
  EXPECT_EQ(trained.rbegin()->first, 30);
  EXPECT_FALSE(StepRecords(resumed.records(), /*replayed=*/true).empty())
      << "the steps the old checkpoint remembered, printed again";

  TrainerProcess fresh(config_path, {"--threads", "1"});
  ASSERT_EQ(fresh.Finish(), 0);
  ASSERT_EQ(resumed.records().back().at("type"), "final");
  // The fixture's first 20 steps ran on another machine, whose BLAS kernels round differently from
  // this one's, so the two runs agree to float rounding, not bit for bit (a wrong step, optimizer
  // state or schedule after a resume moves the loss by orders of magnitude more).
  EXPECT_NEAR(resumed.records().back().at("val_loss").get<double>(),
              fresh.records().back().at("val_loss").get<double>(), 1e-5);
}

TEST_F(TrainingTest, PositionalParametersTrainAloneOrStayFrozen) {
  // Backbone frozen: only the LeRoPE scales move (context-extension style).
  json config = TinyTrial("lerope", 20);
  config["train"]["freeze_backbone"] = true;
  config["train"]["log_every"] = 5;
  TrainerProcess positional_only(WriteConfig("freeze_backbone", config), {});
  ASSERT_EQ(positional_only.Finish(), 0);
  for (const auto& [step, record] : StepRecords(positional_only.records())) {
    EXPECT_EQ(record.at("grad_norm").get<double>(), 0.0) << "backbone has no trained parameter, step " << step;
    EXPECT_GT(record.at("positional_grad_norm").get<double>(), 0.0) << step;
  }
  double moved = 0;
  for (double value : positional_only.records().back().at("positional_parameters")[0].at("values")) moved += std::fabs(value);
  EXPECT_GT(moved, 0.0);

  // Positional parameters frozen: they stay at their initial value (0) while the backbone trains.
  config = TinyTrial("lerope", 20);
  config["position"]["freeze"] = true;
  TrainerProcess backbone_only(WriteConfig("freeze_positional", config), {});
  ASSERT_EQ(backbone_only.Finish(), 0);
  for (double value : backbone_only.records().back().at("positional_parameters")[0].at("values")) EXPECT_EQ(value, 0.0);
  EXPECT_GT(StepRecords(backbone_only.records()).rbegin()->second.at("grad_norm").get<double>(), 0.0);
}

TEST_F(TrainingTest, EvaluatesBeyondTheTrainingLengthWithEachExtension) {
  json config = TinyTrial("rope", 30);
  config["train"]["extrapolation_multiples"] = {1, 2, 4};
  config["train"]["extrapolation_methods"] = {"none", "pi", "yarn", "dynamic_ntk", "dominant_band"};
  TrainerProcess trainer(WriteConfig("extrapolation", config), {});
  ASSERT_EQ(trainer.Finish(), 0);
  const json& final_record = trainer.records().back();
  const json& results = final_record.at("extrapolation");
  ASSERT_EQ(results.size(), 1u + 5u + 5u);  // at 1x only `none`
  EXPECT_EQ(results[0].at("val_loss"), final_record.at("val_loss"));
  std::set<double> losses_at_2x;
  for (const json& result : results) {
    const int64_t length = result.at("length").get<int64_t>();
    EXPECT_EQ(length, 64 * result.at("multiple").get<int64_t>());
    EXPECT_EQ(result.at("val_loss_per_position").size(), static_cast<size_t>(length));
    EXPECT_TRUE(std::isfinite(result.at("val_loss").get<double>()));
    // The split at the training length: every position holds the same number of targets, so the whole
    // is the length-weighted mean of the two parts.
    const double in_dist = result.at("val_loss_in_dist").get<double>();
    if (result.at("multiple") == 1) {
      EXPECT_FALSE(result.contains("val_loss_extrap"));
      EXPECT_NEAR(in_dist, result.at("val_loss").get<double>(), 1e-9);
      continue;
    }
    const double multiple = result.at("multiple").get<double>();
    const double extrap = result.at("val_loss_extrap").get<double>();
    EXPECT_NEAR((in_dist + (multiple - 1) * extrap) / multiple, result.at("val_loss").get<double>(), 1e-6);
    // Paper 004's back half: the mean over positions >= length / 2 (each holds as many targets).
    double back_half = 0.0;
    for (int64_t position = length / 2; position < length; ++position) {
      back_half += result.at("val_loss_per_position")[position].get<double>();
    }
    EXPECT_NEAR(back_half / static_cast<double>(length - length / 2), result.at("val_loss_back_half").get<double>(), 1e-6);
    if (multiple == 2) losses_at_2x.insert(result.at("val_loss").get<double>());
  }
  EXPECT_EQ(losses_at_2x.size(), 5u) << "each extension changes the 2x loss";
}

// Diagnostics at milestones and the multi-key NIAH grid, in and beyond the training length.
TEST_F(TrainingTest, MeasuresDiagnosticsAtMilestonesAndTheNeedleGrid) {
  json config = TinyTrial("rope", 8);
  config["data"] = {{"source", "niah"}, {"seq_len", 64}, {"niah", {{"max_distractors", 3}}}};
  config["train"]["diagnostics_at"] = {0.5, 1.0};
  config["train"]["diagnostics_sequences"] = 2;
  config["train"]["niah_grid_instances"] = 2;
  config["train"]["extrapolation_multiples"] = {2};
  config["train"]["extrapolation_methods"] = {"none", "pi"};
  config["train"]["diagnostics_multiples"] = {1, 2};  // 1x: nothing new (none) or pi at its factor 1: none
  config["train"]["diagnostics_grid_ratios"] = {0.25, 0.5, 0.75, 1.0};
  TrainerProcess trainer(WriteConfig("milestones", config), {});
  ASSERT_EQ(trainer.Finish(), 0);
  std::map<int64_t, std::string> milestones;
  std::vector<json> beyond;
  const json* grid = nullptr;
  for (const json& record : trainer.records()) {
    if (record.at("type") != "diagnostics") continue;
    if (record.at("kind") == "attention_beyond") {
      beyond.push_back(record);
      continue;
    }
    if (record.at("kind") == "attention") {
      EXPECT_EQ(record.at("attention").at("grid"), json({16, 32, 48, 64})) << "the ratios of T";
      milestones[record.at("step").get<int64_t>()] = record.at("milestone");
      EXPECT_EQ(record.at("attention").at("milestone"), record.at("milestone"));
      EXPECT_TRUE(record.at("attention").at("pooled").contains("xi_lambda"));
      // The default three evaluation batches (of diagnostics_sequences 2 here), resampled per batch.
      EXPECT_EQ(record.at("attention").at("sequences"), 3 * 2);
      EXPECT_EQ(record.at("attention").at("batches"), 3);
      EXPECT_EQ(record.at("attention").at("bootstrap_unit"), "batch");
      EXPECT_EQ(record.at("attention").at("pooled").at("units"), 3 * 2 * 4) << "(batch, layer, head)";
      EXPECT_EQ(record.at("attention").at("pair_profile_reading"), "all_pairs") << "no designated key on niah";
    }
    if (record.at("kind") == "niah_grid") grid = &record;
  }
  EXPECT_EQ(milestones, (std::map<int64_t, std::string>{{4, "frac 0.5"}, {8, "end"}}));
  // Beyond T at the end: 2x with each method, on windows of 128 tokens, the grid the ratios of 128.
  ASSERT_EQ(beyond.size(), 2u);
  for (size_t i = 0; i < beyond.size(); ++i) {
    ASSERT_FALSE(beyond[i].contains("attention")) << "a member of its own";
    const json& attention = beyond[i].at("attention_beyond");
    EXPECT_EQ(beyond[i].at("step"), 8);
    EXPECT_EQ(attention.at("multiple"), 2);
    EXPECT_EQ(attention.at("method"), i == 0 ? "none" : "pi");
    EXPECT_EQ(attention.at("length"), 128);
    EXPECT_EQ(attention.at("grid"), json({32, 64, 96, 128}));
    EXPECT_EQ(attention.at("sequences"), 3 * 2);
    EXPECT_EQ(attention.at("layers")[0].at("heads")[0].at("effective_length_by_position").size(), 128u);
    EXPECT_TRUE(attention.at("pooled").contains("xi_lambda"));
  }
  EXPECT_NE(beyond[0].at("attention_beyond").at("pooled").at("buckets"), beyond[1].at("attention_beyond").at("pooled").at("buckets"))
      << "pi changes the rows";
  ASSERT_NE(grid, nullptr);
  const json& payload = grid->at("niah_grid");
  EXPECT_EQ(payload.at("depths").size(), 11u);
  EXPECT_EQ(payload.at("distractors"), json({0, 1, 2, 3}));
  ASSERT_EQ(payload.at("grids").size(), 3u);  // 1x, then 2x with none and pi
  EXPECT_EQ(payload.at("grids")[0].at("length"), 64);
  EXPECT_EQ(payload.at("grids")[2].at("method"), "pi");
  for (const json& entry : payload.at("grids")) {
    ASSERT_EQ(entry.at("accuracy").size(), 11u);
    for (const json& row : entry.at("accuracy")) {
      ASSERT_EQ(row.size(), 4u);
      for (const json& cell : row) EXPECT_TRUE(cell.get<double>() >= 0.0 && cell.get<double>() <= 1.0);
    }
    EXPECT_DOUBLE_EQ(entry.at("placed")[5][3].get<double>(), 3.0);  // 3 pairs fit in 64 tokens
  }
}

// On NRW the pair-by-distance profile is AdaRoPE's reading: the QUERY against the NEEDLE's key.
TEST_F(TrainingTest, OnNrwThePairProfileReadsTheQueryAgainstTheNeedle) {
  json config = TinyTrial("rope", 4);
  config["data"] = {{"source", "nrw"}, {"seq_len", 64}, {"nrw", {{"window_centre", 16}, {"window_width", 8}}}};
  config["model"] = {{"layers", 1}, {"d_model", 16}, {"heads", 2}};
  config["train"]["diagnostics_sequences"] = 4;
  config["train"]["diagnostics_batches"] = 2;
  config["train"]["eval_batches"] = 1;
  TrainerProcess trainer(WriteConfig("nrw_profile", config), {});
  ASSERT_EQ(trainer.Finish(), 0);
  const json* attention = nullptr;
  for (const json& record : trainer.records()) {
    if (record.at("type") == "diagnostics" && record.at("kind") == "attention") attention = &record.at("attention");
  }
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->at("pair_profile_reading"), "query_key");
  // Eight needles, one pair each: most distance bins hold none (null).
  const json& profile = attention->at("layers")[0].at("heads")[0].at("pair_profile")[0];
  int64_t filled = 0;
  for (const json& bin : profile) filled += bin.is_null() ? 0 : 1;
  EXPECT_GE(filled, 1);
  EXPECT_LE(filled, 8);
  EXPECT_LT(filled, static_cast<int64_t>(profile.size()));
}

// Paper 004 reads its checkpoints from iteration 0: `diagnostics_at: [0, 1]` measures the untrained
// model (step 0, "start": the learned beta table is its initial ones) and the end; an attempt resumed
// from a checkpoint does not measure the start again.
TEST_F(TrainingTest, TheStartMilestoneMeasuresTheUntrainedModelOnceAcrossAResume) {
  json config = TinyTrial("rope", 8);
  config["model"] = {{"layers", 1}, {"d_model", 32}, {"heads", 2}};
  config["inverse_temperature"] = {{"form", "learned"}};
  config["train"]["diagnostics_at"] = {0, 1};
  config["train"]["diagnostics_sequences"] = 2;
  config["train"]["diagnostics_beta_trim"] = 2;
  config["train"]["lr"] = 3e-2;
  config["train"]["eval_batches"] = 2;
  const std::string config_path = WriteConfig("start_milestone", config);
  const std::string dir = testing::TempDir() + "/start_milestone_ckpt";
  fs::remove_all(dir);
  auto attention_records = [](const TrainerProcess& trainer) {
    std::map<int64_t, json> by_step;
    for (const json& record : trainer.records()) {
      if (record.at("type") == "diagnostics" && record.at("kind") == "attention") {
        EXPECT_EQ(by_step.count(record.at("step").get<int64_t>()), 0u) << record.at("step");
        by_step[record.at("step").get<int64_t>()] = record;
      }
    }
    return by_step;
  };
  TrainerProcess first(config_path, {"--checkpoint-dir", dir, "--stop-after-step", "4"});
  ASSERT_EQ(first.Finish(), 75);
  std::map<int64_t, json> before = attention_records(first);
  ASSERT_EQ(before.size(), 1u);
  const json& start = before.begin()->second;
  EXPECT_EQ(before.begin()->first, 0);
  EXPECT_EQ(start.at("milestone"), "start");
  const json& initial = start.at("attention").at("inverse_temperature").at("xi_beta_trim");
  EXPECT_EQ(initial.at("points"), 63) << "n = 2..64";
  EXPECT_EQ(initial.at("xi").get<double>(), 0.0) << "beta_n = 1 for every n before training";
  EXPECT_EQ(initial.at("log_a1").get<double>(), 0.0);

  TrainerProcess resumed(config_path, {"--checkpoint-dir", dir});
  ASSERT_EQ(resumed.Finish(), 0);
  std::map<int64_t, json> after = attention_records(resumed);
  ASSERT_EQ(after.size(), 1u) << "the start was measured by the first attempt";
  EXPECT_EQ(after.begin()->first, 8);
  EXPECT_EQ(after.begin()->second.at("milestone"), "end");
  const json& trained = after.begin()->second.at("attention").at("inverse_temperature").at("xi_beta_trim");
  EXPECT_NE(trained.at("log_a1").get<double>(), 0.0) << "eight steps moved the table";
}

// docs/science.md section 13: the learned absolute position table trains with the backbone, is counted
// among the embedding parameters, clamps beyond the training length when told to, and comes back
// from a checkpoint (a run resumed from its final checkpoint ends with the same held-out loss).
TEST_F(TrainingTest, AbsolutePositionTableTrainsAndComesBackFromItsCheckpoint) {
  json config = TinyTrial("absolute", 20);  // a smaller shape than TinyTrial's: a second or two
  config["data"]["seq_len"] = 32;
  config["model"] = {{"layers", 1}, {"d_model", 32}, {"heads", 2}};
  config["position"]["absolute"] = {{"beyond", "clamp"}};
  config["train"]["batch_size"] = 8;
  config["train"]["lr"] = 1e-2;
  config["train"]["schedule"] = {{"name", "cosine"}, {"warmup_steps", 5}};
  config["train"]["log_every"] = 5;
  config["train"]["eval_every"] = 0;
  config["train"]["eval_batches"] = 2;
  config["train"]["diagnostics_sequences"] = 0;
  config["train"]["extrapolation_multiples"] = {1, 2};
  config["resources"]["cpus"] = 1;
  const std::string config_path = WriteConfig("absolute", config);
  const std::string dir = testing::TempDir() + "/absolute_ckpt";
  fs::remove_all(dir);
  TrainerProcess trainer(config_path, {"--checkpoint-dir", dir});
  ASSERT_EQ(trainer.Finish(), 0);
  const json& parameters = trainer.records().front().at("parameters");
  EXPECT_EQ(parameters.at("embedding"), 256 * 32 + 32 * 32) << "token table and position table";
  EXPECT_EQ(parameters.at("positional"), 0);
  std::map<int64_t, json> steps = StepRecords(trainer.records());
  ASSERT_EQ(steps.begin()->first, 5);
  ASSERT_EQ(steps.rbegin()->first, 20);
  const double first = steps.begin()->second.at("train_loss").get<double>();
  const double last = steps.rbegin()->second.at("train_loss").get<double>();
  EXPECT_LT(last, first - 1.0) << "train loss " << first << " at step 5, " << last << " at step 20";
  const json& final_record = trainer.records().back();
  ASSERT_EQ(final_record.at("type"), "final");
  EXPECT_EQ(final_record.value("positional_parameters", json::array()).size(), 0u)
      << "the table is an embedding parameter";
  const json& results = final_record.at("extrapolation");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].at("length"), 64);
  EXPECT_TRUE(std::isfinite(results[1].at("val_loss").get<double>()));

  TrainerProcess again(config_path, {"--checkpoint-dir", dir});
  ASSERT_EQ(again.Finish(), 0);
  EXPECT_TRUE(StepRecords(again.records()).empty());
  ASSERT_EQ(again.records().back().at("type"), "final");
  EXPECT_EQ(again.records().back().at("val_loss"), final_record.at("val_loss"));
  EXPECT_EQ(again.records().back().at("extrapolation"), results);
}

TEST_F(TrainingTest, StartsFromAnotherRunsCheckpoint) {
  const std::string dir = testing::TempDir() + "/init_source";
  fs::remove_all(dir);
  TrainerProcess source(WriteConfig("init_source", TinyTrial("lerope", 40)), {"--checkpoint-dir", dir});
  ASSERT_EQ(source.Finish(), 0);
  std::string checkpoint;
  for (const json& record : source.records()) {
    if (record.at("type") == "checkpoint") checkpoint = record.at("path");
  }
  ASSERT_FALSE(checkpoint.empty());
  const json learned = source.records().back().at("positional_parameters")[0].at("values");

  // Fixed learned frequencies: a fresh backbone with the source's LeRoPE scales, frozen.
  json fixed = TinyTrial("lerope", 10);
  fixed["train"]["init"] = {{"checkpoint", checkpoint}, {"parameters", "positional"}};
  fixed["position"]["freeze"] = true;
  TrainerProcess fixed_run(WriteConfig("init_fixed", fixed), {});
  ASSERT_EQ(fixed_run.Finish(), 0);
  EXPECT_EQ(fixed_run.records().back().at("positional_parameters")[0].at("values"), learned);

  // Context extension: twice the length, backbone frozen, every parameter from the source.
  json extended = TinyTrial("lerope", 5);
  extended["data"]["seq_len"] = 128;
  extended["train"]["log_every"] = 1;
  extended["train"]["init"] = {{"checkpoint", checkpoint}};
  extended["train"]["freeze_backbone"] = true;
  TrainerProcess extension(WriteConfig("init_extend", extended), {});
  ASSERT_EQ(extension.Finish(), 0);
  json fresh_config = extended;
  fresh_config["train"].erase("init");
  TrainerProcess fresh(WriteConfig("init_fresh", fresh_config), {});
  ASSERT_EQ(fresh.Finish(), 0);
  const double extended_loss = StepRecords(extension.records()).at(1).at("train_loss").get<double>();
  const double fresh_loss = StepRecords(fresh.records()).at(1).at("train_loss").get<double>();
  EXPECT_LT(extended_loss, fresh_loss - 0.5) << "the trained backbone was not loaded";

  // A checkpoint of another variant lacks the parameters: a clear error, exit 4.
  json mismatched = TinyTrial("adarope", 5);
  mismatched["train"]["init"] = {{"checkpoint", checkpoint}, {"parameters", "positional"}};
  TrainerProcess wrong(WriteConfig("init_wrong", mismatched), {});
  EXPECT_EQ(wrong.Finish(), 4);
}

// AdaRoPE's head influence at the end of a run, and of an evaluation trial of its checkpoint: the
// evaluation trial's start is the source's (it copied the model whole), so it measures the same deltas.
TEST_F(TrainingTest, AnEvaluationTrialMeasuresItsSourcesHeadInfluence) {
  const std::string dir = testing::TempDir() + "/influence_source";
  fs::remove_all(dir);
  json config = TinyTrial("adarope", 20);
  config["train"]["diagnostics_sequences"] = 2;
  TrainerProcess source(WriteConfig("influence_source", config), {"--checkpoint-dir", dir});
  ASSERT_EQ(source.Finish(), 0);
  std::string checkpoint;
  const json* trained = nullptr;
  for (const json& record : source.records()) {
    if (record.at("type") == "checkpoint") checkpoint = record.at("path");
    if (record.at("type") == "diagnostics" && record.at("kind") == "head_influence") trained = &record;
  }
  ASSERT_FALSE(checkpoint.empty());
  ASSERT_NE(trained, nullptr) << "no head_influence record";
  const json& heads = trained->at("head_influence").at("heads");
  ASSERT_EQ(heads.size(), 2u * 4u);  // TinyTrial: 2 layers of 4 heads
  double largest = 0;
  for (const json& head : heads) largest = std::max(largest, std::fabs(head.at("all").get<double>()));
  EXPECT_GT(largest, 1e-5) << "20 steps moved AdaRoPE's parameters somewhere";

  json evaluation = TinyTrial("adarope", 0);
  evaluation["train"]["diagnostics_sequences"] = 2;
  evaluation["train"]["init"] = {{"checkpoint", checkpoint}};
  TrainerProcess evaluate(WriteConfig("influence_evaluation", evaluation), {});
  ASSERT_EQ(evaluate.Finish(), 0);
  const json* measured = nullptr;
  for (const json& record : evaluate.records()) {
    if (record.at("type") == "diagnostics" && record.at("kind") == "head_influence") measured = &record;
  }
  ASSERT_NE(measured, nullptr);
  ASSERT_EQ(measured->at("head_influence").at("heads").size(), heads.size());
  for (size_t i = 0; i < heads.size(); ++i) {
    EXPECT_NEAR(measured->at("head_influence").at("heads").at(i).at("all").get<double>(), heads.at(i).at("all").get<double>(),
                1e-6)
        << i;
  }
}

// train.steps 0 with train.init.checkpoint: the trial evaluates the checkpoint's model and does not
// train. Its final record is the source's own final evaluation (same model, same held-out batches),
// its diagnostics are measured once, at its end, and it counts no training tokens or FLOPs.
TEST_F(TrainingTest, AnEvaluationTrialReportsItsCheckpointsOwnFinalLossWithoutTraining) {
  const std::string dir = testing::TempDir() + "/evaluate_source";
  fs::remove_all(dir);
  TrainerProcess source(WriteConfig("evaluate_source", TinyTrial("rope", 30)), {"--checkpoint-dir", dir});
  ASSERT_EQ(source.Finish(), 0);
  std::string checkpoint;
  for (const json& record : source.records()) {
    if (record.at("type") == "checkpoint") checkpoint = record.at("path");
  }
  ASSERT_FALSE(checkpoint.empty());
  const json& source_final = source.records().back();
  ASSERT_EQ(source_final.at("type"), "final");

  json evaluation = TinyTrial("rope", 0);
  evaluation["train"]["init"] = {{"checkpoint", checkpoint}};
  TrainerProcess evaluate(WriteConfig("evaluate_only", evaluation), {});
  ASSERT_EQ(evaluate.Finish(), 0);
  const json& final_record = evaluate.records().back();
  ASSERT_EQ(final_record.at("type"), "final");
  EXPECT_EQ(final_record.at("step"), 0);
  EXPECT_EQ(final_record.at("tokens"), 0);
  EXPECT_EQ(final_record.at("flops"), 0.0);
  EXPECT_NEAR(final_record.at("val_loss").get<double>(), source_final.at("val_loss").get<double>(), 1e-6);
  EXPECT_TRUE(StepRecords(evaluate.records()).empty());
  int diagnostics = 0;
  for (const json& record : evaluate.records()) diagnostics += record.at("type") == "diagnostics" ? 1 : 0;
  EXPECT_GE(diagnostics, 1);

  // Without a model to start from, steps 0 is bad config naming what would make it one.
  TrainerProcess untrained(WriteConfig("evaluate_nothing", TinyTrial("rope", 0)), {});
  EXPECT_EQ(untrained.Finish(), 2);
}

// `count` raw uint16 token ids below `vocab` from a fixed LCG, written to a temporary file; its path.
std::string WriteRandomTokens(const std::string& name, int count, uint32_t vocab) {
  const std::string path = testing::TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  uint32_t state = 7;
  for (int i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    const uint16_t id = static_cast<uint16_t>((state >> 16) % vocab);
    out.write(reinterpret_cast<const char*>(&id), sizeof id);
  }
  return path;
}

// rung eval's JSON report of `arguments` (rung-model eval).
json RungEval(const std::vector<std::string>& arguments) {
  SubprocessOptions options;
  options.argv = {RUNG_MODEL_BINARY, "eval", "--format", "json", "--threads", "1"};
  options.argv.insert(options.argv.end(), arguments.begin(), arguments.end());
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::Pipe();
  StatusOr<SubprocessResult> result = Subprocess::Run(options);
  if (!result.ok() || result->exit.code != 0) {
    ADD_FAILURE() << "rung-model eval failed: " << (result.ok() ? result->stderr_text : result.status().ToString());
    return json::object();
  }
  return json::parse(result->stdout_text);
}

// An evaluation trial of a Hugging Face folder scores the windows rung eval scores: consecutive windows
// of the validation tokens, eval_batches x batch_size of them at the training length and as many per
// batch as fit a batch's tokens beyond it, without a BOS. Their losses agree, with and without YaRN.
TEST_F(TrainingTest, AnEvaluationTrialOfAHuggingFaceFolderScoresWhatRungEvalScores) {
  const std::string folder = std::string(RUNG_SOURCE_DIR) + "/tests/cli/fixture/hf-tiny";
  const std::string tokens = WriteRandomTokens("hf_tiny_eval_tokens.bin", 600, 40);
  json trial = {{"seed", 1},
                {"data", {{"source", "shards"}, {"path", tokens}, {"val_path", tokens}, {"vocab_size", 40},
                          {"format", "raw16"}, {"seq_len", 8}}},
                // The model and position blocks are the folder's (train.init.model: checkpoint).
                {"train", {{"steps", 0}, {"batch_size", 4}, {"eval_batches", 3},
                           {"init", {{"checkpoint", folder}, {"model", "checkpoint"}}},
                           {"extrapolation_multiples", {4}}, {"extrapolation_methods", {"none", "yarn"}},
                           {"extrapolation_yarn_c", 0.2}, {"diagnostics_sequences", 0},
                           // The folder's own tokenizer.json encodes the probe (through rung-data encode).
                           {"probe", {{"kind", "passkey"}, {"lengths", {256}}, {"depths", {0.5}}, {"instances", 2}}}}},
                {"resources", {{"cpus", 1}}}};
  TrainerProcess evaluate(WriteConfig("hf_evaluation", trial), {});
  ASSERT_EQ(evaluate.Finish(), 0);
  const json& final_record = evaluate.records().back();
  ASSERT_EQ(final_record.at("type"), "final");
  EXPECT_EQ(final_record.at("tokens"), 0);

  const json at_length = RungEval({"--model", folder, "--tokens", tokens, "--seq-len", "8", "--bos", "no",
                                   "--extension", "none", "--max-windows", "12"});
  EXPECT_EQ(at_length.value("windows", 0), 12);
  EXPECT_NEAR(final_record.at("val_loss").get<double>(), at_length.value("mean_loss", 0.0), 1e-5);
  ASSERT_EQ(final_record.at("extrapolation").size(), 2u);
  for (const json& entry : final_record.at("extrapolation")) {
    const std::string method = entry.at("method");
    // 4x: one sequence per batch (batch_size / 4), three batches.
    const json beyond = RungEval({"--model", folder, "--tokens", tokens, "--seq-len", "32", "--bos", "no",
                                  "--extension", method, "--factor", "4", "--original-length", "8", "--yarn-c", "0.2",
                                  "--max-windows", "3"});
    EXPECT_NEAR(entry.at("val_loss").get<double>(), beyond.value("mean_loss", 0.0), 1e-5) << method;
  }
  // The probe beyond the training length: once per extension method, its cells in the final record.
  ASSERT_EQ(final_record.at("probe").size(), 2u);
  EXPECT_EQ(final_record.at("probe")[0].at("method"), "none");
  EXPECT_EQ(final_record.at("probe")[1].at("method"), "yarn");
  for (const json& cell : final_record.at("probe")) {
    EXPECT_EQ(cell.at("probe"), "passkey");
    EXPECT_EQ(cell.at("length"), 256);
    EXPECT_EQ(cell.at("instances"), 2);
    EXPECT_EQ(cell.at("tokenizer"), folder);  // the folder's own tokenizer.json encoded the prompts
    EXPECT_GE(cell.at("accuracy").get<double>(), 0.0);
    EXPECT_LE(cell.at("accuracy").get<double>(), 1.0);
  }
}

// The same for a checkpoint rung-train wrote: an evaluation trial of it and rung eval of it score the
// same windows alike.
TEST_F(TrainingTest, AnEvaluationTrialOfARungCheckpointScoresWhatRungEvalScores) {
  const std::string tokens = WriteRandomTokens("rung_eval_tokens.bin", 3000, 64);
  const std::string dir = testing::TempDir() + "/rung_eval_source";
  fs::remove_all(dir);
  json trial = {{"seed", 3},
                {"data", {{"source", "shards"}, {"path", tokens}, {"val_path", tokens}, {"vocab_size", 64},
                          {"format", "raw16"}, {"seq_len", 16}}},
                {"model", {{"layers", 2}, {"d_model", 32}, {"heads", 2}}},
                {"position", {{"variant", "lerope"}}},
                {"train", {{"steps", 5}, {"batch_size", 4}, {"eval_batches", 2}, {"diagnostics_sequences", 0}}},
                {"resources", {{"cpus", 1}}}};
  TrainerProcess source(WriteConfig("rung_eval_source", trial), {"--checkpoint-dir", dir});
  ASSERT_EQ(source.Finish(), 0);
  trial["train"]["steps"] = 0;
  trial["train"]["init"] = {{"checkpoint", dir}};
  trial["train"]["extrapolation_multiples"] = {2};
  trial["train"]["extrapolation_methods"] = {"none", "pi"};
  TrainerProcess evaluate(WriteConfig("rung_eval_trial", trial), {});
  ASSERT_EQ(evaluate.Finish(), 0);
  const json& final_record = evaluate.records().back();
  ASSERT_EQ(final_record.at("type"), "final");
  const json at_length = RungEval({"--model", dir, "--tokens", tokens, "--seq-len", "16", "--bos", "no",
                                   "--extension", "none", "--max-windows", "8"});
  EXPECT_NEAR(final_record.at("val_loss").get<double>(), at_length.value("mean_loss", 0.0), 1e-5);
  for (const json& entry : final_record.at("extrapolation")) {
    const std::string method = entry.at("method");
    const json beyond = RungEval({"--model", dir, "--tokens", tokens, "--seq-len", "32", "--bos", "no",
                                  "--extension", method, "--factor", "2", "--original-length", "16",
                                  "--max-windows", "4"});
    EXPECT_NEAR(entry.at("val_loss").get<double>(), beyond.value("mean_loss", 0.0), 1e-5) << method;
  }
}

// A RoPE checkpoint started as LeRoPE or AdaRoPE (a variant changed at initialisation) evaluates to the
// RoPE model's own loss, and its provenance says what it was converted from.
TEST_F(TrainingTest, ARopeCheckpointStartedAsAnotherVariantEvaluatesToItsOwnLoss) {
  const std::string dir = testing::TempDir() + "/convert_source";
  fs::remove_all(dir);
  json source_config = TinyTrial("rope", 20);
  source_config["train"]["diagnostics_sequences"] = 0;
  TrainerProcess source(WriteConfig("convert_source", source_config), {"--checkpoint-dir", dir});
  ASSERT_EQ(source.Finish(), 0);
  const double rope_loss = source.records().back().at("val_loss").get<double>();
  for (const char* variant : {"lerope", "adarope"}) {
    json converted = source_config;
    converted["position"]["variant"] = variant;
    converted["train"]["steps"] = 0;
    converted["train"]["init"] = {{"checkpoint", dir}};
    TrainerProcess evaluate(WriteConfig(std::string("convert_") + variant, converted), {});
    ASSERT_EQ(evaluate.Finish(), 0) << variant;
    EXPECT_NEAR(evaluate.records().back().at("val_loss").get<double>(), rope_loss, 1e-5) << variant;
    EXPECT_EQ(evaluate.records().front().at("type"), "provenance");
    EXPECT_EQ(evaluate.records().front().value("converted_from", std::string()), "rope") << variant;
  }
}

// A LoRA trial (a RoPE checkpoint started as AdaRoPE, adapters on every projection, dropout drawing
// from the generator) resumes from a signal on the uninterrupted curve exactly; read as a model, its
// checkpoint is its backbone with the adapters merged: an evaluation trial without adapters, and rung
// eval, score the loss the LoRA trial reported.
TEST_F(TrainingTest, ALoraTrialResumesExactlyAndItsCheckpointEvaluatesWithTheAdaptersMerged) {
  const std::string source_dir = testing::TempDir() + "/lora_source";
  fs::remove_all(source_dir);
  json source = TinyTrial("rope", 20);
  source["train"]["diagnostics_sequences"] = 0;
  TrainerProcess rope(WriteConfig("lora_source", source), {"--checkpoint-dir", source_dir});
  ASSERT_EQ(rope.Finish(), 0);

  json config = source;
  config["position"]["variant"] = "adarope";
  config["train"]["steps"] = 30;
  config["train"]["log_every"] = 1;
  config["train"]["eval_every"] = 10;
  config["train"]["init"] = {{"checkpoint", source_dir}};
  config["train"]["lora"] = {{"rank", 4}, {"alpha", 8}, {"dropout", 0.1},
                             {"targets", {"q", "k", "v", "o", "up", "down"}}};
  const std::string config_path = WriteConfig("lora_trial", config);
  TrainerProcess reference(config_path, {});
  ASSERT_EQ(reference.Finish(), 0);
  const std::map<int64_t, json> expected = StepRecords(reference.records());
  ASSERT_EQ(expected.size(), 30u);
  for (const auto& [step, record] : expected) {
    EXPECT_GT(record.at("grad_norm").get<double>(), 0.0) << "the adapters' gradient, step " << step;
  }
  EXPECT_LT(expected.at(30).at("val_loss").get<double>(), rope.records().back().at("val_loss").get<double>() - 0.01)
      << "30 steps of adapters and AdaRoPE's parameters did not lower the RoPE model's loss";

  const std::string dir = testing::TempDir() + "/lora_ckpt";
  fs::remove_all(dir);
  TrainerProcess first(config_path, {"--checkpoint-dir", dir});
  for (json record = first.Next(); !record.is_null(); record = first.Next()) {
    if (record.at("type") == "step" && record.at("step") == 12) {
      first.Signal(SIGTERM);
      break;
    }
  }
  ASSERT_EQ(first.Finish(), 75);
  TrainerProcess second(config_path, {"--checkpoint-dir", dir});
  ASSERT_EQ(second.Finish(), 0);
  const std::map<int64_t, json> resumed = StepRecords(second.records());
  ASSERT_FALSE(resumed.empty());
  ASSERT_EQ(resumed.rbegin()->first, 30);
  for (const auto& [step, record] : resumed) {
    for (const char* key : {"train_loss", "grad_norm", "positional_grad_norm"}) {
      EXPECT_EQ(record.at(key), expected.at(step).at(key)) << key << " at step " << step;
    }
  }
  const double lora_loss = second.records().back().at("val_loss").get<double>();
  EXPECT_EQ(lora_loss, reference.records().back().at("val_loss").get<double>());

  json merged = config;
  merged["train"].erase("lora");
  merged["train"]["steps"] = 0;
  merged["train"]["init"] = {{"checkpoint", dir}};
  TrainerProcess evaluate(WriteConfig("lora_merged", merged), {});
  ASSERT_EQ(evaluate.Finish(), 0);
  EXPECT_NEAR(evaluate.records().back().at("val_loss").get<double>(), lora_loss, 1e-5);
}

// Continued pretraining of a Hugging Face folder on text its own tokenizer prepares (rung-data prepare
// --tokenizer FOLDER): its backbone trained, frozen with AdaRoPE's parameters trained (a variant changed
// at initialisation), or frozen with adapters; each lowers the folder's own loss on that text (a random
// backbone frozen, AdaRoPE's parameters by little).
TEST_F(TrainingTest, AHuggingFaceFolderContinuesTrainingOnTextItsOwnTokenizerPrepares) {
  const std::string rung_data = std::string(RUNG_BUILD_DIR) + "/bin/rung-data";
  if (!fs::exists(rung_data)) GTEST_SKIP() << "rung-data is not built here (it needs SentencePiece)";
  const std::string folder = std::string(RUNG_SOURCE_DIR) + "/tests/cli/fixture/hf-tiny";
  const std::string prepared = testing::TempDir() + "/hf_tiny_prepared";
  fs::remove_all(prepared);
  SubprocessOptions prepare;
  prepare.argv = {rung_data, "prepare", "--tokenizer", folder, "--input", BuiltinCorpus(), "--out", prepared,
                  "--split-on", "\\n\\n", "--threads", "1"};
  prepare.stdout_to = Redirect::Pipe();
  prepare.stderr_to = Redirect::Pipe();
  StatusOr<SubprocessResult> prepared_result = Subprocess::Run(prepare);
  ASSERT_TRUE(prepared_result.ok() && prepared_result->exit.code == 0)
      << (prepared_result.ok() ? prepared_result->stderr_text : prepared_result.status().ToString());

  json trial = {{"seed", 2},
                {"data", {{"source", "shards"}, {"path", prepared}, {"seq_len", 16}}},
                {"train", {{"steps", 0}, {"batch_size", 8}, {"eval_batches", 4}, {"lr", 1e-2},
                           {"schedule", {{"name", "constant"}, {"warmup_steps", 0}}}, {"diagnostics_sequences", 0},
                           {"init", {{"checkpoint", folder}, {"model", "checkpoint"}}}}},
                {"resources", {{"cpus", 1}}}};
  TrainerProcess before(WriteConfig("hf_continue_before", trial), {});
  ASSERT_EQ(before.Finish(), 0);
  const double folder_loss = before.records().back().at("val_loss").get<double>();

  struct Case {
    const char* name;
    json train, position;
  };
  const std::vector<Case> cases = {
      {"backbone", json::object(), json::object()},
      {"frozen_adarope", {{"freeze_backbone", true}}, {{"variant", "adarope"}}},
      {"lora", {{"lora", {{"rank", 2}, {"targets", {"q", "v", "gate", "up", "down"}}}}}, json::object()},
  };
  for (const Case& c : cases) {
    json run = trial;
    run["train"]["steps"] = 40;
    run["train"].update(c.train);
    if (!c.position.empty()) run["position"] = c.position;
    const std::string dir = testing::TempDir() + "/hf_continue_" + c.name;
    fs::remove_all(dir);
    TrainerProcess trained(WriteConfig(std::string("hf_continue_") + c.name, run), {"--checkpoint-dir", dir});
    ASSERT_EQ(trained.Finish(), 0) << c.name;
    const json& provenance = trained.records().front();
    EXPECT_EQ(provenance.at("type"), "provenance");
    if (std::string(c.name) == "frozen_adarope") EXPECT_EQ(provenance.value("converted_from", std::string()), "rope");
    // The fixture's backbone is random: AdaRoPE's parameters alone can only lower its loss a little.
    const bool frozen = std::string(c.name) == "frozen_adarope";
    EXPECT_LT(trained.records().back().at("val_loss").get<double>(), folder_loss - (frozen ? 0.0 : 0.01))
        << c.name << " from " << folder_loss;
    const std::map<int64_t, json> steps = StepRecords(trained.records());
    ASSERT_FALSE(steps.empty());
    EXPECT_GT(steps.rbegin()->second.at(frozen ? "positional_grad_norm" : "grad_norm").get<double>(), 0.0) << c.name;
    if (std::string(c.name) != "lora") continue;
    // Exported as a Hugging Face folder, the LoRA trial's checkpoint is its backbone with the adapters
    // merged: that folder scores the loss the trial reported.
    const std::string exported = testing::TempDir() + "/hf_continue_lora_export";
    fs::remove_all(exported);
    SubprocessOptions export_options;
    export_options.argv = {RUNG_MODEL_BINARY, "export-hf", "--model", dir, "--out", exported};
    export_options.stdout_to = Redirect::Pipe();
    export_options.stderr_to = Redirect::Pipe();
    StatusOr<SubprocessResult> export_result = Subprocess::Run(export_options);
    ASSERT_TRUE(export_result.ok() && export_result->exit.code == 0)
        << (export_result.ok() ? export_result->stderr_text : export_result.status().ToString());
    json again = trial;
    again["train"]["init"]["checkpoint"] = exported;
    TrainerProcess evaluate(WriteConfig("hf_continue_lora_export", again), {});
    ASSERT_EQ(evaluate.Finish(), 0);
    EXPECT_NEAR(evaluate.records().back().at("val_loss").get<double>(),
                trained.records().back().at("val_loss").get<double>(), 1e-5);
  }
}

// AdaRoPE context extension (section 3.4): from a source trained at 32 tokens to 64, the frequencies
// and tau start from YaRN's schedule, gamma at 0, with L_ref the source's length.
TEST_F(TrainingTest, AdaRopeContextExtensionStartsFromYarnsSchedule) {
  const std::string dir = testing::TempDir() + "/adarope_source";
  fs::remove_all(dir);
  json source_config = TinyTrial("adarope", 20);
  source_config["data"]["seq_len"] = 32;
  source_config["position"]["adarope"] = {{"l_ref", 16}};
  TrainerProcess source(WriteConfig("adarope_source", source_config), {"--checkpoint-dir", dir});
  ASSERT_EQ(source.Finish(), 0);
  auto parameter = [](const json& final_record, const std::string& name) {
    for (const json& tensor : final_record.at("positional_parameters")) {
      if (tensor.at("name") == name) return tensor.at("values");
    }
    return json();
  };
  const json trained_tau = parameter(source.records().back(), "positional.adascale_tau");
  const json trained_gamma = parameter(source.records().back(), "positional.adascale_gamma");
  ASSERT_FALSE(trained_tau.empty());
  double largest_gamma = 0;
  for (const json& value : trained_gamma) largest_gamma = std::max(largest_gamma, std::fabs(value.get<double>()));
  ASSERT_GT(largest_gamma, 0.0) << "the source trained gamma away from 0";

  json extended = TinyTrial("adarope", 1);
  extended["data"]["seq_len"] = 64;
  extended["position"]["adarope"] = {{"l_ref", 32}};
  extended["train"]["lr"] = 1e-12;  // one step that moves nothing measurable
  extended["train"]["init"] = {{"checkpoint", dir}, {"adarope_start", "yarn"}};
  TrainerProcess extension(WriteConfig("adarope_extend", extended), {});
  ASSERT_EQ(extension.Finish(), 0);
  const double factor = std::pow(0.1 * std::log(2.0) + 1.0, 2.0);
  const json tau = parameter(extension.records().back(), "positional.adascale_tau");
  ASSERT_EQ(tau.size(), trained_tau.size());
  for (size_t i = 0; i < tau.size(); ++i) EXPECT_NEAR(tau[i].get<double>(), 1.0 / factor, 1e-5) << i;
  for (const json& value : parameter(extension.records().back(), "positional.adascale_gamma")) {
    EXPECT_NEAR(value.get<double>(), 0.0, 1e-6);
  }
  // L_ref must be the source's length.
  extended["position"]["adarope"] = {{"l_ref", 64}};
  TrainerProcess wrong(WriteConfig("adarope_extend_wrong", extended), {});
  EXPECT_EQ(wrong.Finish(), 4);
}

TEST_F(TrainingTest, NonFiniteLossFailsTheRunAtOnceWithStepAndReason) {
  json config = TinyTrial("rope", 50);
  config["train"]["lr"] = 1e30;
  config["train"]["schedule"]["warmup_steps"] = 0;
  config["train"]["clip"] = 0.0;
  TrainerProcess trainer(WriteConfig("nan", config), {});
  EXPECT_EQ(trainer.Finish(), 3);
  const json& last = trainer.records().back();
  ASSERT_EQ(last.at("type"), "error");
  EXPECT_LT(last.at("step").get<int64_t>(), 10);
  EXPECT_NE(last.at("reason").get<std::string>().find("non-finite"), std::string::npos);
}

// Arguments that make a rung-train process rank `rank` of a data-parallel trial meeting at `port`.
std::vector<std::string> RankArguments(int rank, int port, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--rank", std::to_string(rank), "--rendezvous", "127.0.0.1:" + std::to_string(port)};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

json DataParallelTrial(int64_t world_size, int64_t steps) {
  json config = TinyTrial("adarope", steps);
  config["train"]["log_every"] = 1;
  config["train"]["eval_every"] = 10;
  config["train"]["eval_batches"] = 2;
  config["train"]["diagnostics_sequences"] = 0;
  config["resources"] = {{"cpus", 1}, {"world_size", world_size}};
  return config;
}

// Two ranks that each take half of every batch of 16 sequences follow the curve of one process
// that takes all 16: the same math, up to float summation order.
TEST_F(TrainingTest, TwoRanksFollowTheOneRankLossCurveOnTheSameGlobalBatch) {
  TrainerProcess single(WriteConfig("dp_single", DataParallelTrial(1, 20)), {});
  ASSERT_EQ(single.Finish(), 0);
  std::map<int64_t, json> expected = StepRecords(single.records());

  StatusOr<int> port = FreeLoopbackPort();
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  const std::string config_path = WriteConfig("dp_two", DataParallelTrial(2, 20));
  TrainerProcess rank0(config_path, RankArguments(0, *port));
  TrainerProcess rank1(config_path, RankArguments(1, *port));
  ASSERT_EQ(rank1.Finish(), 0);
  ASSERT_EQ(rank0.Finish(), 0);
  EXPECT_TRUE(rank1.records().empty()) << "only rank 0 prints records";
  EXPECT_EQ(rank0.records().front().at("world_size"), 2);
  EXPECT_EQ(rank0.records().front().at("tokens_per_step"), single.records().front().at("tokens_per_step"));
  std::map<int64_t, json> actual = StepRecords(rank0.records());
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [step, record] : expected) {
    for (const char* key : {"train_loss", "grad_norm", "positional_grad_norm"}) {
      const double want = record.at(key).get<double>();
      EXPECT_NEAR(actual.at(step).at(key).get<double>(), want, 1e-4 * std::max(1.0, std::fabs(want)))
          << key << " at step " << step;
    }
    EXPECT_EQ(actual.at(step).at("tokens"), record.at("tokens")) << step;
    if (record.contains("val_loss")) {
      EXPECT_NEAR(actual.at(step).at("val_loss").get<double>(), record.at("val_loss").get<double>(), 1e-4) << step;
    }
  }
  ASSERT_EQ(rank0.records().back().at("type"), "final");
  EXPECT_NEAR(rank0.records().back().at("val_loss").get<double>(), single.records().back().at("val_loss").get<double>(),
              1e-4);
}

// The same on a task with a loss mask (only answer positions count) and two micro-batches a step.
TEST_F(TrainingTest, TwoRanksFollowTheOneRankCurveOnAMaskedTaskWithGradientAccumulation) {
  std::vector<std::map<int64_t, json>> curves;
  std::vector<double> final_losses;
  for (int64_t world_size : {1, 2}) {
    json config = DataParallelTrial(world_size, 12);
    config["data"] = {{"source", "position_index"}, {"seq_len", 64}};
    config["train"]["grad_accum"] = 2;
    config["train"]["batch_size"] = 8;
    const std::string path = WriteConfig("dp_masked_" + std::to_string(world_size), config);
    StatusOr<int> port = FreeLoopbackPort();
    ASSERT_TRUE(port.ok());
    std::vector<std::unique_ptr<TrainerProcess>> ranks;
    for (int rank = 0; rank < world_size; ++rank) {
      ranks.push_back(std::make_unique<TrainerProcess>(
          path, world_size == 1 ? std::vector<std::string>{} : RankArguments(rank, *port)));
    }
    for (int rank = world_size - 1; rank >= 0; --rank) ASSERT_EQ(ranks[rank]->Finish(), 0) << "rank " << rank;
    ASSERT_EQ(ranks[0]->records().back().at("type"), "final");
    EXPECT_TRUE(ranks[0]->records().back().contains("val_accuracy"));
    curves.push_back(StepRecords(ranks[0]->records()));
    final_losses.push_back(ranks[0]->records().back().at("val_loss").get<double>());
  }
  ASSERT_EQ(curves[0].size(), curves[1].size());
  for (const auto& [step, record] : curves[0]) {
    const double want = record.at("train_loss").get<double>();
    EXPECT_NEAR(curves[1].at(step).at("train_loss").get<double>(), want, 1e-4 * std::max(1.0, std::fabs(want))) << step;
  }
  EXPECT_NEAR(final_losses[1], final_losses[0], 1e-4);
}

// SIGTERM to one rank stops both at the same step: rank 0 checkpoints, both exit 75, and the two
// ranks resumed from that checkpoint finish the uninterrupted two-rank curve.
TEST_F(TrainingTest, SignalToOneRankStopsEveryRankAndTheGangResumesTheCurve) {
  const std::string config_path = WriteConfig("dp_resume", DataParallelTrial(2, 40));
  StatusOr<int> port = FreeLoopbackPort();
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  TrainerProcess reference0(config_path, RankArguments(0, *port));
  TrainerProcess reference1(config_path, RankArguments(1, *port));
  ASSERT_EQ(reference1.Finish(), 0);
  ASSERT_EQ(reference0.Finish(), 0);
  std::map<int64_t, json> expected = StepRecords(reference0.records());

  const std::string dir = testing::TempDir() + "/dp_resume_ckpt";
  fs::remove_all(dir);
  port = FreeLoopbackPort();
  ASSERT_TRUE(port.ok());
  TrainerProcess first0(config_path, RankArguments(0, *port, {"--checkpoint-dir", dir}));
  TrainerProcess first1(config_path, RankArguments(1, *port));
  for (json record = first0.Next(); !record.is_null(); record = first0.Next()) {
    if (record.at("type") == "step" && record.at("step") == 15) {
      first1.Signal(SIGTERM);  // the rank that prints nothing
      break;
    }
  }
  ASSERT_EQ(first0.Finish(), 75);
  ASSERT_EQ(first1.Finish(), 75);
  const json& preempted = first0.records().back();
  ASSERT_EQ(preempted.at("type"), "preempted");
  const int64_t stopped_at = preempted.at("step").get<int64_t>();
  EXPECT_GE(stopped_at, 15);
  EXPECT_LT(stopped_at, 40);
  EXPECT_TRUE(first1.records().empty());

  port = FreeLoopbackPort();
  ASSERT_TRUE(port.ok());
  TrainerProcess second0(config_path, RankArguments(0, *port, {"--checkpoint-dir", dir}));
  TrainerProcess second1(config_path, RankArguments(1, *port));  // no checkpoint folder: rank 0 hands it the state
  ASSERT_EQ(second1.Finish(), 0);
  ASSERT_EQ(second0.Finish(), 0);
  EXPECT_EQ(second0.records().front().at("start_step"), stopped_at);
  std::map<int64_t, json> resumed = StepRecords(second0.records());
  ASSERT_EQ(resumed.begin()->first, stopped_at + 1);
  ASSERT_EQ(resumed.rbegin()->first, 40);
  for (const auto& [step, record] : resumed) {
    for (const char* key : {"train_loss", "grad_norm", "lr", "tokens"}) {
      EXPECT_EQ(record.at(key), expected.at(step).at(key)) << key << " at step " << step;
    }
  }
  EXPECT_EQ(second0.records().back().at("val_loss"), reference0.records().back().at("val_loss"));
}

// A rank whose peer dies mid-run fails (Gloo sees the connection close) instead of waiting for it.
TEST_F(TrainingTest, ARankWhosePeerDiesFailsInsteadOfWaitingForIt) {
  const std::string config_path = WriteConfig("dp_peer_dies", DataParallelTrial(2, 2000));
  StatusOr<int> port = FreeLoopbackPort();
  ASSERT_TRUE(port.ok());
  TrainerProcess rank0(config_path, RankArguments(0, *port));
  TrainerProcess rank1(config_path, RankArguments(1, *port));
  for (json record = rank0.Next(); !record.is_null(); record = rank0.Next()) {
    if (record.at("type") == "step" && record.at("step") == 5) {
      rank1.Signal(SIGKILL);
      break;
    }
  }
  EXPECT_EQ(rank1.Finish(), 128 + SIGKILL);
  EXPECT_EQ(rank0.Finish(), 1);
  EXPECT_NE(rank0.records().back().at("type"), "final");
}

// A data-parallel trial needs every rank's --rank and rank 0's --rendezvous (exit 2, before any
// training); a world that does not divide the batch is a config error.
TEST_F(TrainingTest, DataParallelRanksNeedTheirRendezvousAndAnEvenShare) {
  json config = DataParallelTrial(2, 5);
  TrainerProcess no_rendezvous(WriteConfig("dp_no_rendezvous", config), {});
  EXPECT_EQ(no_rendezvous.Finish(), 2);
  TrainerProcess outside(WriteConfig("dp_outside", config), RankArguments(2, 1));
  EXPECT_EQ(outside.Finish(), 2);
  config["resources"]["world_size"] = 3;  // 16 sequences do not split three ways
  TrainerProcess uneven(WriteConfig("dp_uneven", config), RankArguments(0, 1));
  EXPECT_EQ(uneven.Finish(), 2);
}

TEST_F(TrainingTest, BadConfigExitsWithCodeTwoAndNamesTheKey) {
  json config = TinyTrial("rope", 5);
  config["model"]["heads"] = 5;
  std::string path = WriteConfig("bad", config);
  SubprocessOptions options;
  options.argv = {RUNG_TRAIN_BINARY, "--config", path};
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::ToStdout();
  StatusOr<SubprocessResult> result = Subprocess::Run(options, std::chrono::minutes(5));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->exit.code, 2);
  const std::string& output = result->stdout_text;
  EXPECT_NE(output.find("model.heads"), std::string::npos) << output;

  // Evaluation beyond the absolute position table under `refuse`: named by both keys, before training.
  config = TinyTrial("absolute", 5);
  config["train"]["extrapolation_multiples"] = {1, 2};
  options.argv = {RUNG_TRAIN_BINARY, "--config", WriteConfig("bad_absolute", config)};
  result = Subprocess::Run(options, std::chrono::minutes(5));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->exit.code, 2);
  EXPECT_NE(result->stdout_text.find("train.extrapolation_multiples"), std::string::npos) << result->stdout_text;
  EXPECT_NE(result->stdout_text.find("position.absolute.beyond"), std::string::npos) << result->stdout_text;
}

}  // namespace
}  // namespace rung
