// core/probes/probe_prompts.h
//
// A probe's prompts as token ids (core/probes/probe_template.h says what they hold). The texts are
// encoded once, each on its own (ProbeTokens); a prompt of a given length is then assembled from ids:
//   [BOS] prefix | filler with the needle and its distractors inserted | query       -> answer
// The filler is cut to make the prompt exactly `length` tokens; the needle starts after
// round(depth x F) of the F filler tokens, each distractor after a uniformly drawn count (a pure
// function of the instance); insertions fall between filler tokens.
// The answer's ids are those the query's continuation gets when query and answer are encoded together
// (where the query's own ids are a prefix of those; else the answer's alone), so a tokenizer that
// merges across the boundary is scored on what it would produce.
//
// Thread safety: immutable after EncodeProbe; BuildProbePrompt is reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/config/probe_config.h"

namespace rung {

// Encodes texts: each text's ids alone, or with the tokenizer's template tokens (its BOS) where
// `special_tokens`. An empty text has no ids.
using ProbeTextEncoder =
    std::function<StatusOr<std::vector<std::vector<int32_t>>>(const std::vector<std::string>& texts, bool special_tokens)>;

// `count` filler tokens for `instance` (the trial's validation data, a file's tokens).
using ProbeFillerSource = std::function<std::vector<int32_t>(int64_t instance, int64_t count)>;

struct ProbeInstanceTokens {
  std::vector<int32_t> needle, query, answer;
  std::vector<std::vector<int32_t>> distractors;
  int64_t distractor_seed = 0;
};

struct ProbeTokens {
  std::vector<int32_t> bos;      // the template tokens the tokenizer puts first (its BOS), or none
  std::vector<int32_t> prefix;
  std::vector<int32_t> segment;  // the repeated filler segment; empty where the filler comes from a source
  bool segment_from_file = false;  // a file's text: each instance starts reading it at its own offset
  std::vector<ProbeInstanceTokens> instances;
  // How many leading answer tokens every instance shares (" " before the digits, in most tokenizers),
  // at most the shortest answer's length - 1: next-token scoring feeds them and scores the token after.
  int64_t answer_shared = 0;
  // The fewest tokens a prompt of each instance needs (no filler), the most over instances.
  int64_t MinimumLength() const;
  // The longest answer's token count.
  int64_t LongestAnswer() const;
};

struct ProbePrompt {
  std::vector<int32_t> tokens;  // exactly the length asked for
  std::vector<int32_t> answer;
  int64_t needle_start = 0;     // index of the needle's first token in `tokens`
};

// The template tokens a tokenizer puts before `text` (its BOS): what its ids with special tokens hold
// before `plain`, its ids without; none where `plain` is empty or not among them.
StatusOr<std::vector<int32_t>> TemplateLeadingTokens(const ProbeTextEncoder& encode, const std::string& text,
                                                     const std::vector<int32_t>& plain);

// An answer's ids in context: what `joined` (the prompt's text with the answer's, encoded) holds after
// `prompt` (the prompt's ids) where those are its prefix, else `alone` (the answer's text encoded alone).
std::vector<int32_t> AnswerIdsAfter(const std::vector<int32_t>& prompt, const std::vector<int32_t>& joined,
                                    const std::vector<int32_t>& alone);

// How many leading tokens all of `answers` share, at most the shortest's length - 1.
int64_t SharedAnswerTokens(const std::vector<const std::vector<int32_t>*>& answers);

// Encodes the probe's texts. `filler_file_text`: the text of `filler` where it names a file (tokenized
// as one text and used in place of the segment), else empty. Errors: the encoder's; INVALID_ARGUMENT
// where a needle, query or answer encodes to no ids.
StatusOr<ProbeTokens> EncodeProbe(const ProbeConfig& probe, const ProbeTextEncoder& encode,
                                  const std::string& filler_file_text);

// The prompt of `instance` at `length` tokens with the needle at `depth`. `source` gives the filler
// where ProbeTokens has no segment (REQUIRES: then given). INVALID_ARGUMENT where the length cannot
// hold the prompt without filler.
StatusOr<ProbePrompt> BuildProbePrompt(const ProbeTokens& tokens, int64_t length, double depth, int64_t instance,
                                       const ProbeFillerSource& source);

}  // namespace rung
