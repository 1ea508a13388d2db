// core/probes/indexing_prompts.h
//
// Paper 003's position-identification task (section 5, appendix D.2) as token ids: a list `arr` of
// integers 0-3, written as Python writes it (f"{arr}": "[2, 0, 3, 1]"), in the paper's prompt
//   arr = [2, 0, 3, 1]\nGiven the above array, don't think and directly answer the corresponding value concisely: arr[2] =
// whose answer is " 3". List l of a length and its queries are pure functions of (l, length): values
// and indices uniform, the same for every trial (paired comparisons). Each prompt is encoded whole
// (the paper tokenizes the text; splitting it would change how a tokenizer merges ", 3"), after the
// tokenizer's template tokens (its BOS), as core/probes/probe_prompts.h's prompts are. The answer's
// ids are those its text gets after the prompt's, as there.
//
// Thread safety: pure functions; IndexingTokens is immutable once made.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/config/probe_config.h"
#include "core/probes/probe_prompts.h"

namespace rung {

// The values a list holds and the answers a query can have.
inline constexpr int kIndexingValues = 4;

// List `list` of `elements` values, each uniform in [0, 4).
std::vector<int> IndexingList(int64_t list, int64_t elements);
// The index query `query` of list `list` asks for, uniform in [0, elements).
int64_t IndexingIndex(int64_t list, int64_t query, int64_t elements);
// The paper's prompt for `values` asked at `index`, and the answer's text (" 3").
std::string IndexingPromptText(const std::vector<int>& values, int64_t index);
std::string IndexingAnswerText(int value);

struct IndexingPrompt {
  std::vector<int32_t> tokens;  // template tokens and the prompt
  std::vector<int32_t> answer;  // the answer's ids after it
  int value = 0;                // arr[index]
  double position_blind = 0;    // PositionBlindAccuracy of the list at the index
};

// The accuracy of the best answer that ignores positions: the list's most frequent value (ties split
// evenly), right with probability 1/(number of modes) where arr[index] is one of them. A model that
// answers a uniformly guessed value scores 1/4, one that answers a random element 1/4 + 3/(4n); this
// is the most any answer from the list's values alone can score.
double PositionBlindAccuracy(const std::vector<int>& values, int64_t index);

// The prompts of one list length: list l's queries at [l * queries, (l + 1) * queries).
struct IndexingLength {
  int64_t elements = 0;
  std::vector<IndexingPrompt> prompts;
  int64_t longest = 0;      // the longest prompt's tokens
  double mean_tokens = 0;   // the prompts' mean tokens
};

struct IndexingTokens {
  std::vector<IndexingLength> lengths;  // ascending list length
  // The answer tokens every prompt's answer starts with (" " before the digit in a byte-level
  // tokenizer), at most the shortest answer's length - 1: next_token and choice feed them.
  int64_t answer_shared = 0;
  // For score choice: the token after the shared ones that tells value v's answer apart (candidates[v]),
  // or empty where the four answers do not differ in one token there.
  std::vector<int32_t> candidates;
};

// What an indexing prompt must fit: `context`, the longest prompt (data.seq_len); `positions`, the
// prompt with the answer tokens fed after it (a learned absolute table that refuses more), else
// unbounded.
struct IndexingLimits {
  int64_t context = 0;
  int64_t positions = std::numeric_limits<int64_t>::max();
};

// Encodes the prompts of each of IndexingElementCounts(probe) with `queries` per list, one length at
// a time. A length given in probe.elements whose prompts exceed the limits is an error
// (INVALID_ARGUMENT, naming the length and tokens); the defaults stop at the first that exceeds them
// (INVALID_ARGUMENT where none is left). Errors: also the encoder's; INVALID_ARGUMENT where an answer
// encodes to no ids, or score choice's answers are not told apart by one token after every prompt.
StatusOr<IndexingTokens> EncodeIndexingProbe(const ProbeConfig& probe, const ProbeTextEncoder& encode,
                                             const IndexingLimits& limits, const std::string& tokenizer_name);

}  // namespace rung
