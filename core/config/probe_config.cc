#include "core/config/probe_config.h"

#include "core/config/config_limits.h"

namespace rung {

std::vector<ProbeSetting> ProbeSettings(const ProbeConfig& probe, int64_t seq_len, const std::vector<std::string>& methods) {
  std::vector<ProbeSetting> settings;
  if (probe.kind == "none") return settings;
  const std::vector<int64_t> lengths = probe.lengths.empty() ? std::vector<int64_t>{seq_len} : probe.lengths;
  for (int64_t length : lengths) {
    if (length <= seq_len || methods.empty()) {
      settings.push_back({length, "none"});
      continue;
    }
    for (const std::string& method : methods) settings.push_back({length, method});
  }
  return settings;
}

void ValidateProbeConfig(const ProbeConfig& probe, std::vector<ConfigError>* errors) {
  auto error = [&](const std::string& key, const std::string& message) {
    errors->push_back({"train.probe." + key, message});
  };
  if (probe.kind == "none") return;
  if (probe.lengths.size() > 64) error("lengths", "at most 64 prompt lengths");
  for (int64_t length : probe.lengths) {
    if (length < 8 || length > kMaxSequenceLength) {
      error("lengths", "each prompt length must lie in [8, " + std::to_string(kMaxSequenceLength) + "] tokens, got " +
                           std::to_string(length));
      break;
    }
  }
  if (probe.depths.empty() || probe.depths.size() > 64) error("depths", "give 1 to 64 depths in [0, 1]");
  for (double depth : probe.depths) {
    if (!(depth >= 0.0 && depth <= 1.0)) {
      error("depths", "each depth is a fraction of the filler in [0, 1]");
      break;
    }
  }
  if (probe.instances < 1 || probe.instances > 1024) error("instances", "must lie in [1, 1024] (prompts per cell)");
  if (probe.key_digits < 1 || probe.key_digits > 18) error("key_digits", "must lie in [1, 18]");
  if (probe.distractors < 0 || probe.distractors > 64) error("distractors", "must lie in [0, 64]");
  if (probe.kind == "passkey" && probe.distractors > 0) {
    error("distractors", "passkey hides one key; use kind niah for distractor needles");
  }
  if (probe.kind == "template") {
    if (probe.needle.find("{key}") == std::string::npos) error("needle", "a template's needle must hold {key}");
    if (probe.query.empty()) error("query", "a template needs the query its answer follows");
    if (probe.answer.find("{key}") == std::string::npos) error("answer", "a template's answer must hold {key}");
    if (probe.filler.empty() && probe.filler_text.empty()) {
      error("filler_text", "a template needs filler: filler_text (a segment repeated), or filler: data or a file");
    }
    if (probe.distractors > 0 && probe.needle.find("{name}") == std::string::npos) {
      error("distractors", "distractor needles differ from the needle by {name}, which the needle does not hold");
    }
    if (probe.distractors > 0 && probe.query.find("{name}") == std::string::npos) {
      error("query", "with distractors the query must ask by {name}, or it cannot tell which key it asks for");
    }
  } else if (!probe.prefix.empty() || !probe.needle.empty() || !probe.query.empty() || !probe.answer.empty()) {
    error("kind", "prefix, needle, query and answer are a template's; kind " + probe.kind + " has its own");
  }
}

}  // namespace rung
