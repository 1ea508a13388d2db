#include "core/probes/indexing_prompts.h"

#include <algorithm>

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

StatusOr<IndexingTokens> EncodeIndexingProbe(const ProbeConfig& probe, const ProbeTextEncoder& encode, int64_t context,
                                             const std::string& tokenizer_name) {
  const std::vector<int64_t> counts = IndexingElementCounts(probe);
  const bool defaults = probe.elements.empty();
  const int64_t prompts_per_length = probe.instances * probe.queries;
  // Each prompt, and each prompt with its answer: their difference is the answer's ids in context.
  std::vector<std::string> texts;
  std::vector<int> values;
  for (int64_t elements : counts) {
    // Of the defaults, a length past the context by its list alone is not encoded at all (3 bytes per
    // element bound any tokenizer's count from above only loosely, so this only spares the longest).
    if (defaults && elements > 2 * context) break;
    for (int64_t list = 0; list < probe.instances; ++list) {
      const std::vector<int> arr = IndexingList(list, elements);
      for (int64_t query = 0; query < probe.queries; ++query) {
        const int64_t index = IndexingIndex(list, query, elements);
        const std::string prompt = IndexingPromptText(arr, index);
        const int value = arr[static_cast<size_t>(index)];
        texts.push_back(prompt);
        texts.push_back(prompt + IndexingAnswerText(value));
        values.push_back(value);
      }
    }
  }
  if (texts.empty()) {
    return Status::InvalidArgument("train.probe.elements: no list length of paper 003's (4 to 4096) fits in data.seq_len " +
                                   std::to_string(context));
  }
  // The four answers after the first prompt: what choice scores among.
  for (int v = 0; v < kIndexingValues; ++v) texts.push_back(texts.front() + IndexingAnswerText(v));
  for (int v = 0; v < kIndexingValues; ++v) texts.push_back(IndexingAnswerText(v));
  RUNG_ASSIGN_OR_RETURN(const std::vector<std::vector<int32_t>> ids, encode(texts, false));
  RUNG_ASSIGN_OR_RETURN(const std::vector<int32_t> bos, TemplateLeadingTokens(encode, texts.front(), ids.front()));
  const size_t answers_alone = texts.size() - kIndexingValues;
  IndexingTokens tokens;
  size_t next = 0;
  for (int64_t elements : counts) {
    if (next >= 2 * values.size()) break;
    IndexingLength length;
    length.elements = elements;
    double total = 0;
    for (int64_t p = 0; p < prompts_per_length; ++p, next += 2) {
      IndexingPrompt prompt;
      prompt.value = values[next / 2];
      prompt.tokens = bos;
      prompt.tokens.insert(prompt.tokens.end(), ids[next].begin(), ids[next].end());
      prompt.answer = AnswerIdsAfter(ids[next], ids[next + 1], ids[answers_alone + static_cast<size_t>(prompt.value)]);
      if (prompt.answer.empty()) {
        return Status::InvalidArgument("train.probe: the indexing answer" + IndexingAnswerText(prompt.value) +
                                       " encodes to no tokens with " + tokenizer_name);
      }
      length.longest = std::max<int64_t>(length.longest, static_cast<int64_t>(prompt.tokens.size()));
      total += static_cast<double>(prompt.tokens.size());
      length.prompts.push_back(std::move(prompt));
    }
    length.mean_tokens = total / static_cast<double>(prompts_per_length);
    if (length.longest > context) {
      if (defaults) break;
      return Status::InvalidArgument("train.probe.elements: lists of " + std::to_string(elements) +
                                     " elements make prompts of up to " + std::to_string(length.longest) + " tokens with " +
                                     tokenizer_name + ", more than data.seq_len " + std::to_string(context) +
                                     " (the context the probe is asked within): give shorter lists");
    }
    tokens.lengths.push_back(std::move(length));
  }
  if (tokens.lengths.empty()) {
    return Status::InvalidArgument("train.probe.elements: even lists of 4 elements make prompts longer than data.seq_len " +
                                   std::to_string(context) + " with " + tokenizer_name);
  }
  std::vector<const std::vector<int32_t>*> answers;
  for (const IndexingLength& length : tokens.lengths) {
    for (const IndexingPrompt& prompt : length.prompts) answers.push_back(&prompt.answer);
  }
  tokens.answer_shared = SharedAnswerTokens(answers);
  // Choice: the four answers after the first prompt, told apart by their token after the shared ones.
  const size_t candidates_at = 2 * values.size();
  for (int v = 0; v < kIndexingValues; ++v) {
    const std::vector<int32_t> answer =
        AnswerIdsAfter(ids.front(), ids[candidates_at + static_cast<size_t>(v)], ids[answers_alone + static_cast<size_t>(v)]);
    if (static_cast<int64_t>(answer.size()) <= tokens.answer_shared) break;
    const int32_t token = answer[static_cast<size_t>(tokens.answer_shared)];
    if (std::find(tokens.candidates.begin(), tokens.candidates.end(), token) != tokens.candidates.end()) break;
    tokens.candidates.push_back(token);
  }
  if (static_cast<int>(tokens.candidates.size()) != kIndexingValues) {
    tokens.candidates.clear();
    if (probe.score == "choice") {
      return Status::InvalidArgument("train.probe.score: choice needs the answers 0-3 told apart by one token after the " +
                                     std::to_string(tokens.answer_shared) + " they share, which " + tokenizer_name +
                                     " does not give; use decode");
    }
  }
  return tokens;
}

}  // namespace rung
