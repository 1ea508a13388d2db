// The reproductions of docs/findings.md at the reduced size CI can afford.
//
// Reproduction 1 at reduced size: the cells of
// sweeps/examples/nrw-window.yaml with a 16-wide window, trained for 200 steps instead of 300, for
// fixed RoPE, LeRoPE and NoPE. With one layer and one head of dimension 8, a rotary model retrieves
// the needle (the window is a band of relative distances, which only rotary pairs can express) and
// NoPE stays at chance. The full sweep (window widths 1..512, AdaRoPE too) is the reproduction's
// own command: `rung run sweeps/examples/nrw-window.yaml --workers 2`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/subprocess.h"
#include "sweeps/spec/expansion.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path ScratchDir() { return fs::temp_directory_path() / ("rung_reproduction_quick_" + std::to_string(getpid())); }

// Trains one config with rung-train (extra arguments appended); every record it printed.
std::vector<json> Train(const json& config, const std::string& name, const std::vector<std::string>& extra = {}) {
  const fs::path dir = ScratchDir();
  fs::create_directories(dir);
  const fs::path path = dir / (name + ".json");
  std::ofstream(path) << config.dump();
  SubprocessOptions options;
  options.argv = {RUNG_TRAIN_BINARY, "--threads", "2", "--config", path.string()};
  options.argv.insert(options.argv.end(), extra.begin(), extra.end());
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::Null();
  StatusOr<SubprocessResult> result = Subprocess::Run(options);
  EXPECT_TRUE(result.ok()) << name << ": " << result.status().ToString();
  if (!result.ok()) return {};
  EXPECT_TRUE(result->exit.Succeeded()) << name << ": " << result->exit.Describe();
  std::vector<json> records;
  std::istringstream lines(result->stdout_text);
  for (std::string line; std::getline(lines, line);) {
    json record = json::parse(line, nullptr, false);
    if (record.is_object()) records.push_back(std::move(record));
  }
  return records;
}

json FinalRecord(const std::vector<json>& records) {
  for (const json& record : records) {
    if (record.value("type", "") == "final") return record;
  }
  return json();
}

json TrainToFinalRecord(const json& config, const std::string& name) { return FinalRecord(Train(config, name)); }

TEST(NrwQuickTrainingTest, RotaryModelsRetrieveFromA16WideWindowAndNopeStaysAtChance) {
  StatusOr<ExpandedSweep> sweep = LoadSweepSpec(RUNG_SOURCE_DIR "/sweeps/examples/nrw-window.yaml");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  std::map<std::string, double> accuracy;
  for (const ExpandedTrial& trial : sweep->trials) {
    const std::string variant = trial.config.model.position.variant;
    if (trial.config.data.nrw.window_width != 16 || (variant != "rope" && variant != "lerope" && variant != "nope")) {
      continue;
    }
    json config = trial.config_json;
    config["train"]["steps"] = 200;  // the reduced size (the spec trains 300)
    const json final_record = TrainToFinalRecord(config, variant);
    ASSERT_TRUE(final_record.contains("val_accuracy")) << variant << ": " << final_record.dump();
    accuracy[variant] = final_record["val_accuracy"].get<double>();
  }
  ASSERT_EQ(accuracy.size(), 3u);
  EXPECT_GE(accuracy["rope"], 0.95);
  EXPECT_GE(accuracy["lerope"], 0.95);
  EXPECT_LE(accuracy["nope"], 0.6);  // balanced classes: chance is 0.5
}

// Reproduction 5 (docs/findings.md) at CI size: an AdaRoPE model trained at T = 64, extended to
// T = 256 with its backbone frozen (only its positional parameters train), starting from the
// source's checkpoint folder as the coordinator hands it over (train.init.checkpoint = a folder).
// The loss at the new length falls by well over the noise of a few steps.
TEST(ContextExtensionQuickTrainingTest, PositionalParametersAloneLowerTheLossAtFourTimesTheLength) {
  const json model = {{"layers", 2}, {"d_model", 32}, {"heads", 2}, {"mlp", "gelu"}};
  const json source = {{"data", {{"source", "builtin"}, {"seq_len", 64}}},
                       {"model", model},
                       {"position", {{"variant", "adarope"}}},
                       {"train", {{"steps", 200}, {"batch_size", 16}, {"lr", 3e-3}, {"eval_every", 0}}}};
  const fs::path checkpoints = ScratchDir() / "source_checkpoints";
  fs::remove_all(checkpoints);
  ASSERT_FALSE(FinalRecord(Train(source, "source", {"--checkpoint-dir", checkpoints.string()})).is_null());

  json extension = source;
  extension["data"]["seq_len"] = 256;
  extension["train"] = {{"steps", 60},          {"batch_size", 4},          {"lr", 3e-3},
                        {"eval_every", 0},      {"log_every", 1},           {"freeze_backbone", true},
                        {"init", {{"checkpoint", checkpoints.string()}}}};
  const std::vector<json> records = Train(extension, "extension");
  double before = 0;
  for (const json& record : records) {
    if (record.value("type", "") == "step" && record.value("step", 0) == 1) before = record["train_loss"].get<double>();
  }
  const json final_record = FinalRecord(records);
  ASSERT_FALSE(final_record.is_null());
  ASSERT_GT(before, 0);
  const double after = final_record["val_loss"].get<double>();
  EXPECT_LT(after, before - 0.08) << "loss at T = 256 before the extension " << before << ", after " << after;
  fs::remove_all(ScratchDir());
}

}  // namespace
}  // namespace rung
