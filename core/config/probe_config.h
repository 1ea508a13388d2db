// core/config/probe_config.h
//
// A probe (the `train.probe` block): prompts built from a template, each with a key hidden at a depth
// of a filler context, asked for at the end and scored by what the model predicts (docs/science.md
// section "Probes"). A trial runs at most one probe, at the end of the run (an evaluation trial runs it
// on the model it starts from). Plain data, torch-free.
//
// Kinds and their templates (core/probes/probe_template.h holds the texts):
//   passkey   the pass-key retrieval of Mohtashami and Jaggi (2023): a key of `key_digits` digits
//             hidden in repeated filler sentences, asked for as "The pass key is";
//   niah      needle in a haystack (LeRoPE section 5.2, RULER's wording): "One of the special magic
//             numbers for NAME is: KEY." hidden in filler text with `distractors` other name-number
//             pairs, asked for by name;
//   template  the user's own `prefix`, `needle`, `query`, `answer` texts (with {key} and {name}),
//             filler `filler_text` repeated or a filler file;
//   indexing  paper 003's position-identification task (section 5, appendix D.2): a Python list of
//             `elements` integers in 0-3 written as f"{arr}", and "Given the above array, don't think
//             and directly answer the corresponding value concisely: arr[{key}] =" for a uniformly
//             drawn index; `instances` lists per length, `queries` indices per list. Its axis is the
//             list length, not the prompt's tokens: each prompt is encoded whole, within data.seq_len
//             (the context the model claims), and `lengths`, `depths` and the needle's settings do not
//             apply (core/probes/indexing_prompts.h).
// Filler: `filler` "" = the kind's own (passkey, template: filler_text repeated; niah: the trial's
// validation data), "data" = the trial's validation tokens, or a path to a UTF-8 text file, tokenized
// with the probe's tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/config_error.h"

namespace rung {

struct ProbeConfig {
  std::string kind = "none";             // none (no probe) | passkey | niah | template | indexing
  // Prompt lengths in tokens, the answer not counted; empty = data.seq_len.
  std::vector<int64_t> lengths;
  // Where the needle starts, as a fraction of the filler before it (0: right after the prefix, 1: right
  // before the query).
  std::vector<double> depths = {0.0, 0.25, 0.5, 0.75, 1.0};
  int64_t instances = 8;                 // prompts per (length, depth) cell, each with its own key
  int64_t key_digits = 5;                // the key: this many decimal digits, the first not 0
  int64_t distractors = 0;               // other (name, key) needles (niah, template with {name})
  // decode: greedy decode of the answer, exact match | next_token | choice (indexing: the argmax of the
  // next-token logits among the four answers' tokens, so every model answers a value)
  std::string score = "decode";
  // The tokenizer the texts are encoded with: a tokenizer file or model folder (rung-data encode's
  // --tokenizer); "" = train.init.checkpoint where it is a model folder, else data.path where it is a
  // prepared folder, else bytes for the byte-level sources.
  std::string tokenizer;
  std::string filler;                    // "" | data | a text file (see above)
  std::string filler_text;               // "" = the kind's; the segment repeated as filler
  std::string prefix, needle, query, answer;  // template: "" = the kind's (required for template)
  // indexing: the list lengths (elements, ascending), empty = the powers of 2 from 4 to 4096 whose
  // prompts fit in data.seq_len (appendix D.2's range); and the queries (indices) asked of each list (D.2:
  // 10), instances x queries at most kMaxIndexingPromptsPerLength.
  std::vector<int64_t> elements;
  int64_t queries = 10;
};

// The most prompts an indexing probe asks per list length (instances x queries): every prompt's text is
// held while its length is encoded.
inline constexpr int64_t kMaxIndexingPromptsPerLength = 16384;

// The list lengths an indexing probe tries: `elements`, or appendix D.2's powers of 2 from 4 to 4096.
std::vector<int64_t> IndexingElementCounts(const ProbeConfig& probe);

// An indexing prompt's tokens estimated before any tokenizer runs (3 per element, paper 003 appendix
// D.2, and about 110 for the text around the list, as bytes): what cost estimates use.
int64_t EstimatedIndexingPromptTokens(int64_t elements);

// One (prompt length, length extension) a probe is scored at.
struct ProbeSetting {
  int64_t length = 0;
  std::string method;  // "none", or a length-extension method (core/config/length_extension_method.h)
};

// The settings of a trial's probe: each of probe.lengths (data.seq_len where it gives none); within the
// training length `seq_len` with method none, beyond it with each of `methods` (train.
// extrapolation_methods). Indexing probes have none (their prompts' lengths are known once encoded;
// core/train/probe_evaluation.h).
std::vector<ProbeSetting> ProbeSettings(const ProbeConfig& probe, int64_t seq_len, const std::vector<std::string>& methods);

void ValidateProbeConfig(const ProbeConfig& probe, std::vector<ConfigError>* errors);

}  // namespace rung
