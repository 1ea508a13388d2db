// Reproduction 1 (docs/findings.md) at the reduced size CI can afford: the cells of
// sweeps/examples/nrw-window.yaml with a 16-wide window, trained for 200 steps instead of 300, for
// fixed RoPE, LeRoPE and NoPE. With one layer and one head of dimension 8, a rotary model retrieves
// the needle (the window is a band of relative distances, which only rotary pairs can express) and
// NoPE stays at chance. The full sweep (window widths 1..512, AdaRoPE too) is the reproduction's
// own command: `rung run sweeps/examples/nrw-window.yaml --workers 2`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sweeps/spec/expansion.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Trains one config with rung-train; its final record.
json TrainToFinalRecord(const json& config, const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("rung_nrw_quick_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / (name + ".json");
  std::ofstream(path) << config.dump();
  const std::string command = std::string(RUNG_TRAIN_BINARY) + " --threads 2 --config " + path.string() + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  std::string line;
  json final_record;
  char buffer[1 << 16];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) {
    line += buffer;
    if (line.empty() || line.back() != '\n') continue;
    json record = json::parse(line, nullptr, false);
    if (record.is_object() && record.value("type", "") == "final") final_record = record;
    line.clear();
  }
  const int status = pclose(pipe);
  EXPECT_EQ(WEXITSTATUS(status), 0) << name;
  fs::remove_all(dir);
  return final_record;
}

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

}  // namespace
}  // namespace rung
