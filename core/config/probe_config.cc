#include "core/config/probe_config.h"

#include "core/config/config_limits.h"

namespace rung {
namespace {

// The indexing probe's own checks: its list lengths and queries; the needle's settings refused.
template <typename Error>
void ValidateIndexingProbe(const ProbeConfig& probe, Error& error) {
  const ProbeConfig defaults;
  if (!probe.lengths.empty()) {
    error("lengths", "an indexing prompt is as long as its list: give the list lengths as elements, not lengths");
  }
  if (probe.depths != defaults.depths) error("depths", "the indexing probe draws its index uniformly; depths do not apply");
  if (probe.key_digits != defaults.key_digits || probe.distractors != defaults.distractors) {
    error(probe.distractors != defaults.distractors ? "distractors" : "key_digits",
          "the indexing probe's key is the index it asks for; key_digits and distractors do not apply");
  }
  if (!probe.filler.empty() || !probe.filler_text.empty()) {
    error(probe.filler.empty() ? "filler_text" : "filler", "the indexing probe's prompt is its list; it has no filler");
  }
  if (!probe.prefix.empty() || !probe.needle.empty() || !probe.query.empty() || !probe.answer.empty()) {
    error("kind", "prefix, needle, query and answer are a template's; the indexing probe has paper 003's prompt");
  }
  if (probe.elements.size() > 64) error("elements", "at most 64 list lengths");
  for (size_t i = 0; i < probe.elements.size(); ++i) {
    const int64_t count = probe.elements[i];
    if (count < 1 || count > kMaxSequenceLength / 2) {
      error("elements", "each list length must lie in [1, " + std::to_string(kMaxSequenceLength / 2) + "], got " +
                            std::to_string(count));
      break;
    }
    if (i > 0 && count <= probe.elements[i - 1]) {
      error("elements", "list lengths ascend, each once (" + std::to_string(count) + " follows " +
                            std::to_string(probe.elements[i - 1]) + ")");
      break;
    }
  }
  if (probe.instances < 1 || probe.instances > 1024) error("instances", "must lie in [1, 1024] (lists per length)");
  if (probe.queries < 1 || probe.queries > 1024) error("queries", "must lie in [1, 1024] (indices asked of each list)");
  if (probe.instances >= 1 && probe.queries >= 1 && probe.instances * probe.queries > kMaxIndexingPromptsPerLength) {
    error("queries", "instances x queries must be at most " + std::to_string(kMaxIndexingPromptsPerLength) +
                         " prompts per list length (the paper asks 100), got " + std::to_string(probe.instances * probe.queries));
  }
}

}  // namespace

std::vector<ProbeSetting> ProbeSettings(const ProbeConfig& probe, int64_t seq_len, const std::vector<std::string>& methods) {
  std::vector<ProbeSetting> settings;
  if (probe.kind == "none" || probe.kind == "indexing") return settings;
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

std::vector<int64_t> IndexingElementCounts(const ProbeConfig& probe) {
  if (!probe.elements.empty()) return probe.elements;
  std::vector<int64_t> counts;
  for (int64_t n = 4; n <= 4096; n *= 2) counts.push_back(n);
  return counts;
}

int64_t EstimatedIndexingPromptTokens(int64_t elements) { return 3 * elements + 110; }

void ValidateProbeConfig(const ProbeConfig& probe, std::vector<ConfigError>* errors) {
  auto error = [&](const std::string& key, const std::string& message) {
    errors->push_back({"train.probe." + key, message});
  };
  if (probe.kind == "none") return;
  if (probe.kind == "indexing") {
    ValidateIndexingProbe(probe, error);
    return;
  }
  if (!probe.elements.empty()) error("elements", "list lengths are the indexing probe's; kind " + probe.kind + " has prompt lengths");
  if (probe.score == "choice") {
    error("score", "choice scores among a fixed set of answers, which only kind indexing has (its values 0-3)");
  }
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
  if (probe.queries != ProbeConfig().queries) error("queries", "queries per list are the indexing probe's");
}

}  // namespace rung
