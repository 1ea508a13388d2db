#include "core/probes/indexing_prompts.h"

#include <algorithm>
#include <array>

#include "core/data/sampling.h"

namespace rung {
namespace {

constexpr uint64_t kListDomain = 0x696e646578ULL;   // "index": list l of n values comes from (this, n, l)
constexpr uint64_t kQueryDomain = 0x7175657279ULL;  // "query": its queries from (this, n, l)

}  // namespace

std::vector<int> IndexingList(int64_t list, int64_t elements) {
  CounterRng rng(MixKey(MixKey(kListDomain, static_cast<uint64_t>(elements)), static_cast<uint64_t>(list)));
  std::vector<int> values(static_cast<size_t>(elements));
  for (int& value : values) value = static_cast<int>(rng.Below(kIndexingValues));
  return values;
}

int64_t IndexingIndex(int64_t list, int64_t query, int64_t elements) {
  CounterRng rng(MixKey(MixKey(MixKey(kQueryDomain, static_cast<uint64_t>(elements)), static_cast<uint64_t>(list)),
                        static_cast<uint64_t>(query)));
  return static_cast<int64_t>(rng.Below(static_cast<uint64_t>(elements)));
}

std::string IndexingPromptText(const std::vector<int>& values, int64_t index) {
  std::string text = "arr = [";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(values[i]);
  }
  text += "]\nGiven the above array, don't think and directly answer the corresponding value concisely: arr[";
  text += std::to_string(index);
  text += "] =";
  return text;
}

std::string IndexingAnswerText(int value) { return " " + std::to_string(value); }

double PositionBlindAccuracy(const std::vector<int>& values, int64_t index) {
  std::array<int64_t, kIndexingValues> counts{};
  for (int value : values) ++counts[static_cast<size_t>(value)];
  const int64_t most = *std::max_element(counts.begin(), counts.end());
  const int64_t modes = std::count(counts.begin(), counts.end(), most);
  return counts[static_cast<size_t>(values[static_cast<size_t>(index)])] == most ? 1.0 / static_cast<double>(modes) : 0.0;
}

StatusOr<IndexingTokens> EncodeIndexingProbe(const ProbeConfig& probe, const ProbeTextEncoder& encode,
                                             const IndexingLimits& limits, const std::string& tokenizer_name) {
  const bool defaults = probe.elements.empty();
  // The template tokens, and the four answers after the first prompt (what choice scores among).
  const std::string first = IndexingPromptText(IndexingList(0, 4), IndexingIndex(0, 0, 4));
  std::vector<std::string> heads = {first};
  for (int v = 0; v < kIndexingValues; ++v) heads.push_back(first + IndexingAnswerText(v));
  for (int v = 0; v < kIndexingValues; ++v) heads.push_back(IndexingAnswerText(v));
  RUNG_ASSIGN_OR_RETURN(const std::vector<std::vector<int32_t>> head_ids, encode(heads, false));
  RUNG_ASSIGN_OR_RETURN(const std::vector<int32_t> bos, TemplateLeadingTokens(encode, first, head_ids.front()));
  std::vector<std::vector<int32_t>> choices;  // the four answers' ids after the first prompt
  for (int v = 0; v < kIndexingValues; ++v) {
    choices.push_back(AnswerIdsAfter(head_ids.front(), head_ids[1 + static_cast<size_t>(v)],
                                     head_ids[1 + kIndexingValues + static_cast<size_t>(v)]));
  }
  IndexingTokens tokens;
  for (int64_t elements : IndexingElementCounts(probe)) {
    // A list alone longer than the context is refused (given) or ends the defaults before it is encoded:
    // no tokenizer takes less than half a token per element of "d, ".
    if (elements > 2 * limits.context) {
      if (defaults) break;
      return Status::InvalidArgument("train.probe.elements: a list of " + std::to_string(elements) +
                                     " elements cannot fit in data.seq_len " + std::to_string(limits.context) +
                                     " (the context the probe is asked within): give shorter lists");
    }
    // Each prompt, and each prompt with its answer: their difference is the answer's ids in context.
    std::vector<std::string> texts;
    IndexingLength length;
    length.elements = elements;
    for (int64_t list = 0; list < probe.instances; ++list) {
      const std::vector<int> arr = IndexingList(list, elements);
      for (int64_t query = 0; query < probe.queries; ++query) {
        const int64_t index = IndexingIndex(list, query, elements);
        const std::string prompt = IndexingPromptText(arr, index);
        IndexingPrompt entry;
        entry.value = arr[static_cast<size_t>(index)];
        entry.position_blind = PositionBlindAccuracy(arr, index);
        length.prompts.push_back(std::move(entry));
        texts.push_back(prompt);
        texts.push_back(prompt + IndexingAnswerText(length.prompts.back().value));
      }
    }
    RUNG_ASSIGN_OR_RETURN(const std::vector<std::vector<int32_t>> ids, encode(texts, false));
    double total = 0;
    int64_t longest_answer = 0;
    for (size_t p = 0; p < length.prompts.size(); ++p) {
      IndexingPrompt& prompt = length.prompts[p];
      prompt.tokens = bos;
      prompt.tokens.insert(prompt.tokens.end(), ids[2 * p].begin(), ids[2 * p].end());
      prompt.answer = AnswerIdsAfter(ids[2 * p], ids[2 * p + 1],
                                     head_ids[1 + kIndexingValues + static_cast<size_t>(prompt.value)]);
      if (prompt.answer.empty()) {
        return Status::InvalidArgument("train.probe: the indexing answer" + IndexingAnswerText(prompt.value) +
                                       " encodes to no tokens with " + tokenizer_name);
      }
      length.longest = std::max<int64_t>(length.longest, static_cast<int64_t>(prompt.tokens.size()));
      longest_answer = std::max<int64_t>(longest_answer, static_cast<int64_t>(prompt.answer.size()));
      total += static_cast<double>(prompt.tokens.size());
    }
    length.mean_tokens = total / static_cast<double>(length.prompts.size());
    // The prompt within the context; with the answer tokens fed after it (at most the longest answer's
    // but one) within the positions a model has.
    const bool beyond_context = length.longest > limits.context;
    const bool beyond_positions = length.longest > limits.positions - (longest_answer - 1);
    if (beyond_context || beyond_positions) {
      if (defaults) break;
      return Status::InvalidArgument(
          "train.probe.elements: lists of " + std::to_string(elements) + " elements make prompts of up to " +
          std::to_string(length.longest) + " tokens with " + tokenizer_name +
          (beyond_context ? ", more than data.seq_len " + std::to_string(limits.context) + " (the context the probe is asked within)"
                          : " which, with the answer tokens fed after them, need more than the " +
                                std::to_string(limits.positions) + " positions the model has") +
          ": give shorter lists");
    }
    tokens.lengths.push_back(std::move(length));
  }
  if (tokens.lengths.empty()) {
    return Status::InvalidArgument("train.probe: even lists of 4 elements, paper 003's shortest, make prompts longer than data.seq_len " +
                                   std::to_string(limits.context) + " with " + tokenizer_name +
                                   " (or than the model's positions); give train.probe.elements shorter lists");
  }
  // The answer tokens every prompt's answer and each of the four choices start with.
  std::vector<const std::vector<int32_t>*> answers;
  for (const IndexingLength& length : tokens.lengths) {
    for (const IndexingPrompt& prompt : length.prompts) answers.push_back(&prompt.answer);
  }
  for (const std::vector<int32_t>& choice : choices) answers.push_back(&choice);
  tokens.answer_shared = SharedAnswerTokens(answers);
  // Choice: the four answers told apart by their token after the shared ones, the same after every prompt.
  const size_t at = static_cast<size_t>(tokens.answer_shared);
  bool told_apart = true;
  for (const std::vector<int32_t>& choice : choices) {
    told_apart = told_apart && choice.size() > at &&
                 std::find(tokens.candidates.begin(), tokens.candidates.end(), choice[at]) == tokens.candidates.end();
    if (told_apart) tokens.candidates.push_back(choice[at]);
  }
  for (const IndexingLength& length : tokens.lengths) {
    for (const IndexingPrompt& prompt : length.prompts) {
      told_apart = told_apart && prompt.answer.size() > at && prompt.answer[at] == tokens.candidates[static_cast<size_t>(prompt.value)];
    }
  }
  if (!told_apart) {
    tokens.candidates.clear();
    if (probe.score == "choice") {
      return Status::InvalidArgument("train.probe.score: choice needs the answers 0-3 told apart by one token after the " +
                                     std::to_string(tokens.answer_shared) + " they share, the same after every prompt, which " +
                                     tokenizer_name + " does not give; use decode");
    }
  }
  return tokens;
}

}  // namespace rung
