// core/probes/probe_template.h
//
// The texts a probe's prompts are made of (core/config/probe_config.h), and the keys and names hidden
// in them. A prompt is
//   [BOS] prefix, filler with the needle (and its distractors) inserted at token boundaries, query
// and its answer follows it. {key} stands for the instance's key, {name} for the instance's name
// (niah, and templates with distractors).
//
// The kinds' own texts:
//   passkey  Mohtashami and Jaggi (2023), "Landmark attention", the pass-key retrieval prompt used
//            since by Position Interpolation, YaRN and LongRoPE:
//              prefix  "There is an important info hidden inside a lot of irrelevant text. Find it and
//                       memorize them. I will quiz you about the important information there."
//              filler  " The grass is green. The sky is blue. The sun is yellow. Here we go. There and
//                       back again." repeated
//              needle  " The pass key is {key}. Remember it. {key} is the pass key."
//              query   " What is the pass key? The pass key is"      answer " {key}"
//   niah     needle in a haystack as RULER words it (Hsieh et al. 2024, niah_multikey), the multi-key
//            form of LeRoPE section 5.2: the filler is the trial's validation text (LeRoPE uses the
//            essays of the original NIAH repository: prepare them as the trial's data, or give
//            `filler: FILE`):
//              prefix  "Some special magic numbers are hidden within the following text. Make sure to
//                       memorize it. I will quiz you about the numbers afterwards."
//              needle  " One of the special magic numbers for {name} is: {key}."
//              query   " What is the special magic number for {name} mentioned in the provided text?
//                       The special magic number for {name} mentioned in the provided text is"
//              answer  " {key}"
// Keys are `key_digits` decimal digits, the first not 0; names are two words from fixed lists joined by
// a hyphen (RULER's are words too), all distinct within an instance. Instance i's key, name and
// distractors are a pure function of i: the same in every cell, for every trial (paired comparisons).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/probe_config.h"

namespace rung {

struct ProbeTexts {
  std::string prefix, filler_text, needle, query, answer;
};

// The kind's texts, with the config's own where it gives them (filler_text for every kind).
ProbeTexts ProbeTextsOf(const ProbeConfig& probe);

// What instance `instance` hides: its key and name, and each distractor's (distinct from it and one another).
struct ProbeInstanceFacts {
  std::string key, name;
  std::vector<std::string> distractor_keys, distractor_names;
};
ProbeInstanceFacts ProbeInstance(const ProbeConfig& probe, int64_t instance);

// `text` with each {key} and {name} replaced.
std::string FillProbeText(const std::string& text, const std::string& key, const std::string& name);

}  // namespace rung
