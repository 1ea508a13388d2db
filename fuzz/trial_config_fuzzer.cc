// fuzz/trial_config_fuzzer.cc
//
// libFuzzer target: what rung-train does with its --config file before it touches LibTorch
// (worker/train_main.cc): ParseConfigDocument (YAML or JSON, with key locations), then
// TrialConfigFromJson (strict parse, resolve, validate, errors located in the file). A config that
// passes is also printed as --print-config prints it (TrialConfigToJson) and counted as its
// provenance record counts it (parameters and FLOPs per token, core/config/model_arithmetic.h); its
// every real must be a number float32 holds and the printed config must read back.
// Torch-free. Findings in the YAML and config parsing are handed over, not fixed here
// (docs/fuzzing.md).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config_number_range.h"
#include "core/config/model_arithmetic.h"
#include "core/config/trial_config.h"
#include "core/config/yaml_document.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  rung::StatusOr<rung::ConfigDocument> document = rung::ParseConfigDocument(text, "trial.yaml");
  if (!document.ok()) return 0;
  const rung::ConfigDocument& doc = *document;
  rung::StatusOr<rung::TrialConfig> trial =
      rung::TrialConfigFromJson(doc.json, [&](const std::string& path) { return doc.Locate(path); });
  if (!trial.ok()) return 0;
  const nlohmann::json resolved = rung::TrialConfigToJson(*trial);
  resolved.dump(2);
  // Every real of a config that passes is one float32 holds (core/config/config_number_range.h),
  // and what --print-config prints reads back.
  std::vector<const nlohmann::json*> pending = {&resolved};
  while (!pending.empty()) {
    const nlohmann::json* node = pending.back();
    pending.pop_back();
    if (node->is_structured()) {
      for (const nlohmann::json& child : *node) pending.push_back(&child);
    } else if (node->is_number_float() && !rung::ConfigRealRangeProblem(node->get<double>()).empty()) {
      __builtin_trap();
    }
  }
  if (!rung::TrialConfigFromJson(resolved).ok()) __builtin_trap();
  rung::CountParameters(trial->model);
  rung::CountFlopsPerToken(trial->model);
  return 0;
}
