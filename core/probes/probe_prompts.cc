#include "core/probes/probe_prompts.h"

#include <algorithm>
#include <cmath>

#include "core/data/sampling.h"
#include "core/probes/probe_template.h"

namespace rung {
namespace {

constexpr uint64_t kDistractorDomain = 0x64697374ULL;  // "dist"

bool StartsWith(const std::vector<int32_t>& ids, const std::vector<int32_t>& prefix) {
  return ids.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
}

}  // namespace

int64_t ProbeTokens::MinimumLength() const {
  int64_t most = 0;
  for (const ProbeInstanceTokens& instance : instances) {
    int64_t tokens = static_cast<int64_t>(bos.size() + prefix.size() + instance.needle.size() + instance.query.size());
    for (const auto& distractor : instance.distractors) tokens += static_cast<int64_t>(distractor.size());
    most = std::max(most, tokens);
  }
  return most;
}

int64_t ProbeTokens::LongestAnswer() const {
  size_t longest = 0;
  for (const ProbeInstanceTokens& instance : instances) longest = std::max(longest, instance.answer.size());
  return static_cast<int64_t>(longest);
}

std::vector<int32_t> AnswerIdsAfter(const std::vector<int32_t>& prompt, const std::vector<int32_t>& joined,
                                    const std::vector<int32_t>& alone) {
  if (!StartsWith(joined, prompt) || joined.size() <= prompt.size()) return alone;
  return std::vector<int32_t>(joined.begin() + static_cast<std::ptrdiff_t>(prompt.size()), joined.end());
}

StatusOr<std::vector<int32_t>> TemplateLeadingTokens(const ProbeTextEncoder& encode, const std::string& text,
                                                     const std::vector<int32_t>& plain) {
  if (plain.empty()) return std::vector<int32_t>();
  RUNG_ASSIGN_OR_RETURN(const std::vector<std::vector<int32_t>> with_template, encode({text}, true));
  const std::vector<int32_t>& wrapped = with_template[0];
  const auto found = std::search(wrapped.begin(), wrapped.end(), plain.begin(), plain.end());
  if (found == wrapped.end()) return std::vector<int32_t>();
  return std::vector<int32_t>(wrapped.begin(), found);
}

int64_t SharedAnswerTokens(const std::vector<const std::vector<int32_t>*>& answers) {
  if (answers.empty() || answers.front()->empty()) return 0;
  const std::vector<int32_t>& first = *answers.front();
  size_t shared = first.size() - 1;
  for (const std::vector<int32_t>* answer : answers) {
    shared = std::min(shared, answer->empty() ? size_t{0} : answer->size() - 1);
    size_t same = 0;
    while (same < shared && (*answer)[same] == first[same]) ++same;
    shared = same;
  }
  return static_cast<int64_t>(shared);
}

StatusOr<ProbeTokens> EncodeProbe(const ProbeConfig& probe, const ProbeTextEncoder& encode,
                                  const std::string& filler_file_text) {
  const ProbeTexts texts = ProbeTextsOf(probe);
  // One call for every text: prefix, segment, then per instance needle, query, query + answer, answer,
  // and its distractors.
  std::vector<std::string> all = {texts.prefix, filler_file_text.empty() ? texts.filler_text : filler_file_text};
  std::vector<ProbeInstanceFacts> facts;
  for (int64_t i = 0; i < probe.instances; ++i) {
    facts.push_back(ProbeInstance(probe, i));
    const ProbeInstanceFacts& fact = facts.back();
    const std::string query = FillProbeText(texts.query, fact.key, fact.name);
    const std::string answer = FillProbeText(texts.answer, fact.key, fact.name);
    all.push_back(FillProbeText(texts.needle, fact.key, fact.name));
    all.push_back(query);
    all.push_back(query + answer);
    all.push_back(answer);
    for (size_t d = 0; d < fact.distractor_keys.size(); ++d) {
      all.push_back(FillProbeText(texts.needle, fact.distractor_keys[d], fact.distractor_names[d]));
    }
  }
  RUNG_ASSIGN_OR_RETURN(const std::vector<std::vector<int32_t>> ids, encode(all, false));
  ProbeTokens tokens;
  tokens.prefix = ids[0];
  tokens.segment = ids[1];
  tokens.segment_from_file = !filler_file_text.empty();
  // The template's leading tokens: what the first non-empty text gains with special tokens on.
  const size_t first = texts.prefix.empty() ? 3 : 0;  // the first instance's query where there is no prefix
  if (first < all.size()) {
    RUNG_ASSIGN_OR_RETURN(tokens.bos, TemplateLeadingTokens(encode, all[first], ids[first]));
  }
  size_t next = 2;
  for (int64_t i = 0; i < probe.instances; ++i) {
    ProbeInstanceTokens instance;
    instance.needle = ids[next];
    instance.query = ids[next + 1];
    instance.answer = AnswerIdsAfter(instance.query, ids[next + 2], ids[next + 3]);
    next += 4;
    for (size_t d = 0; d < facts[static_cast<size_t>(i)].distractor_keys.size(); ++d) instance.distractors.push_back(ids[next++]);
    instance.distractor_seed = i;
    if (instance.needle.empty() || instance.query.empty() || instance.answer.empty()) {
      return Status::InvalidArgument("train.probe: the " + std::string(instance.needle.empty() ? "needle" : instance.query.empty() ? "query" : "answer") +
                                     " of instance " + std::to_string(i) + " encodes to no tokens");
    }
    tokens.instances.push_back(std::move(instance));
  }
  std::vector<const std::vector<int32_t>*> answers;
  for (const ProbeInstanceTokens& instance : tokens.instances) answers.push_back(&instance.answer);
  tokens.answer_shared = SharedAnswerTokens(answers);
  return tokens;
}

StatusOr<ProbePrompt> BuildProbePrompt(const ProbeTokens& tokens, int64_t length, double depth, int64_t instance,
                                       const ProbeFillerSource& source) {
  const ProbeInstanceTokens& facts = tokens.instances.at(static_cast<size_t>(instance));
  int64_t fixed = static_cast<int64_t>(tokens.bos.size() + tokens.prefix.size() + facts.needle.size() + facts.query.size());
  for (const auto& distractor : facts.distractors) fixed += static_cast<int64_t>(distractor.size());
  if (fixed > length) {
    return Status::InvalidArgument("train.probe.lengths: a prompt of " + std::to_string(length) +
                                   " tokens cannot hold the probe's texts, which need " + std::to_string(tokens.MinimumLength()) +
                                   " tokens before any filler");
  }
  const int64_t filler_count = length - fixed;
  std::vector<int32_t> filler;
  if (!tokens.segment.empty()) {
    const size_t size = tokens.segment.size();
    const size_t start = tokens.segment_from_file ? static_cast<size_t>(MixKey(kDistractorDomain, static_cast<uint64_t>(instance)) % size) : 0;
    filler.reserve(static_cast<size_t>(filler_count));
    for (int64_t t = 0; t < filler_count; ++t) filler.push_back(tokens.segment[(start + static_cast<size_t>(t)) % size]);
  } else {
    filler = source(instance, filler_count);
  }
  // (filler offset, order, ids): the needle at its depth, distractors where the instance's draw puts them.
  struct Insertion {
    int64_t at;
    int order;
    const std::vector<int32_t>* ids;
  };
  std::vector<Insertion> insertions = {
      {static_cast<int64_t>(std::llround(depth * static_cast<double>(filler_count))), 0, &facts.needle}};
  CounterRng rng(MixKey(kDistractorDomain + 1, static_cast<uint64_t>(facts.distractor_seed)));
  for (const auto& distractor : facts.distractors) {
    insertions.push_back({static_cast<int64_t>(rng.Below(static_cast<uint64_t>(filler_count) + 1)), 1, &distractor});
  }
  std::stable_sort(insertions.begin(), insertions.end(),
                   [](const Insertion& a, const Insertion& b) { return a.at != b.at ? a.at < b.at : a.order < b.order; });
  ProbePrompt prompt;
  prompt.tokens.reserve(static_cast<size_t>(length));
  prompt.tokens.insert(prompt.tokens.end(), tokens.bos.begin(), tokens.bos.end());
  prompt.tokens.insert(prompt.tokens.end(), tokens.prefix.begin(), tokens.prefix.end());
  int64_t taken = 0;
  for (const Insertion& insertion : insertions) {
    prompt.tokens.insert(prompt.tokens.end(), filler.begin() + taken, filler.begin() + insertion.at);
    taken = insertion.at;
    if (insertion.order == 0) prompt.needle_start = static_cast<int64_t>(prompt.tokens.size());
    prompt.tokens.insert(prompt.tokens.end(), insertion.ids->begin(), insertion.ids->end());
  }
  prompt.tokens.insert(prompt.tokens.end(), filler.begin() + taken, filler.end());
  prompt.tokens.insert(prompt.tokens.end(), facts.query.begin(), facts.query.end());
  prompt.answer = facts.answer;
  return prompt;
}

}  // namespace rung
