#include "core/hf/pre_tokenizer.h"

#include <unicode/regex.h>
#include <unicode/uchar.h>
#include <unicode/utext.h>
#include <unicode/utf8.h>

#include "core/hf/byte_level_alphabet.h"

namespace rung::hf {

// How a Split joins its matches and the text between them (the library's SplitDelimiterBehavior).
enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

namespace {

// GPT-2's pattern, which ByteLevel splits with where use_regex holds.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

Behavior BehaviorOf(const std::string& name) {
  if (name == "Removed") return Behavior::kRemoved;
  if (name == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return Behavior::kMergedWithNext;
  if (name == "Contiguous") return Behavior::kContiguous;
  return Behavior::kIsolated;
}

// A stretch of a piece: [begin, end) and whether the pattern matched it.
struct Span {
  size_t begin, end;
  bool match;
};

// Spans that cover a text in order, built from its matches left to right: each match, with the gap
// before it; Finish adds the tail after the last.
class SpanCover {
 public:
  void Match(size_t begin, size_t end) {
    if (last_ < begin) spans_.push_back({last_, begin, false});
    spans_.push_back({begin, end, true});
    last_ = end;
  }
  std::vector<Span> Finish(size_t size) {
    if (last_ < size) spans_.push_back({last_, size, false});
    return std::move(spans_);
  }

 private:
  std::vector<Span> spans_;
  size_t last_ = 0;
};

// The library's SplitDelimiterBehavior applied to spans that cover the text in order.
std::vector<Span> Join(const std::vector<Span>& spans, Behavior behavior) {
  std::vector<Span> out;
  bool previous_match = false;
  switch (behavior) {
    case Behavior::kIsolated:
      return spans;
    case Behavior::kRemoved:
      for (const Span& span : spans) {
        if (!span.match) out.push_back(span);
      }
      return out;
    case Behavior::kMergedWithPrevious:
      for (const Span& span : spans) {
        if (span.match && !previous_match && !out.empty()) {
          out.back().end = span.end;
        } else {
          out.push_back(span);
        }
        previous_match = span.match;
      }
      return out;
    case Behavior::kMergedWithNext:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->match && !previous_match && !out.empty()) {
          out.back().begin = it->begin;
        } else {
          out.push_back(*it);
        }
        previous_match = it->match;
      }
      return std::vector<Span>(out.rbegin(), out.rend());
    case Behavior::kContiguous:
      for (const Span& span : spans) {
        if (span.match == previous_match && !out.empty()) {
          out.back().end = span.end;
        } else {
          out.push_back(span);
        }
        previous_match = span.match;
      }
      return out;
  }
  return out;
}

// Spans of the characters `is_match` selects and the runs between them.
template <typename Predicate>
std::vector<Span> CharacterSpans(std::string_view text, Predicate is_match) {
  SpanCover cover;
  int32_t at = 0;
  const auto length = static_cast<int32_t>(text.size());
  while (at < length) {
    const int32_t begin = at;
    UChar32 c;
    U8_NEXT(text.data(), at, length, c);
    if (is_match(c)) cover.Match(static_cast<size_t>(begin), static_cast<size_t>(at));
  }
  return cover.Finish(text.size());
}

bool IsNumeric(UChar32 c) {
  const int8_t type = u_charType(c);
  return type == U_DECIMAL_DIGIT_NUMBER || type == U_LETTER_NUMBER || type == U_OTHER_NUMBER;
}

}  // namespace

std::string TranslateOnigurumaPattern(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[++i];
      if (next == 's') {
        out += "\\p{White_Space}";
      } else if (next == 'S') {
        out += "\\P{White_Space}";
      } else {
        out += '\\';
        out += next;
      }
      continue;
    }
    out += pattern[i];
  }
  return out;
}

// A step as tokenizer.json gives it, with its pattern compiled.
struct PreTokenizer::Step {
  PreTokenizerStep options;
  std::unique_ptr<icu::RegexPattern> pattern;  // Split, ByteLevel with use_regex
  int matcher = -1;                            // its matcher's index in Matchers
  Behavior behavior = Behavior::kIsolated;     // Split's, read from options.behavior
};

class PreTokenizer::Matchers {
 public:
  Matchers() = default;
  ~Matchers() { utext_close(&text_); }
  std::vector<std::unique_ptr<icu::RegexMatcher>> matchers;
  UText text_ = UTEXT_INITIALIZER;
};

PreTokenizer::~PreTokenizer() = default;

StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizer::Create(const std::vector<PreTokenizerStep>& steps,
                                                             const std::string& source) {
  std::unique_ptr<PreTokenizer> out(new PreTokenizer());
  int matchers = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const PreTokenizerStep& from = steps[i];
    Step step;
    step.options = from;
    step.behavior = BehaviorOf(from.behavior);
    std::string pattern;
    uint32_t flags = 0;
    if (from.kind == PreTokenizerStep::Kind::kSplit) {
      pattern = from.pattern_is_regex ? TranslateOnigurumaPattern(from.pattern) : from.pattern;
      if (!from.pattern_is_regex) flags = UREGEX_LITERAL;
    } else if (from.kind == PreTokenizerStep::Kind::kByteLevel && from.use_regex) {
      pattern = TranslateOnigurumaPattern(kGpt2Pattern);
    }
    if (!pattern.empty()) {
      UErrorCode error = U_ZERO_ERROR;
      UParseError where;
      step.pattern.reset(icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(pattern), flags, where, error));
      if (U_FAILURE(error)) {
        return Status::InvalidArgument(source + ": pre-tokenizer step " + std::to_string(i) + ": pattern " + from.pattern +
                                       " does not compile (" + u_errorName(error) + " at offset " +
                                       std::to_string(where.offset) + ")");
      }
      step.matcher = matchers++;
    }
    out->steps_.push_back(std::move(step));
  }
  return out;
}

std::unique_ptr<PreTokenizer::Matchers> PreTokenizer::NewMatchers() const {
  auto out = std::make_unique<Matchers>();
  for (const Step& step : steps_) {
    if (!step.pattern) continue;
    UErrorCode error = U_ZERO_ERROR;
    out->matchers.emplace_back(step.pattern->matcher(error));
    // No cap on the backtracking stack (ICU's default is 8 MB; the library's Oniguruma has none), so
    // a long word under a pattern that backtracks per character is encoded, not refused.
    if (out->matchers.back()) out->matchers.back()->setStackLimit(0, error);
  }
  return out;
}

Status PreTokenizer::Split(std::string_view text, bool at_input_start, bool continues, Matchers& matchers,
                           std::vector<PreToken>* pieces) const {
  pieces->clear();
  if (text.empty()) return Status::Ok();
  pieces->push_back(PreToken{std::string(text), at_input_start, continues});
  std::vector<PreToken> next;
  for (const Step& step : steps_) {
    next.clear();
    for (PreToken& piece : *pieces) {
      std::vector<Span> spans;
      switch (step.options.kind) {
        case PreTokenizerStep::Kind::kByteLevel:
          if (step.options.add_prefix_space && !piece.continues && piece.text[0] != ' ') piece.text.insert(0, 1, ' ');
          [[fallthrough]];
        case PreTokenizerStep::Kind::kSplit: {
          if (!step.pattern) {
            spans.push_back({0, piece.text.size(), false});
            break;
          }
          UErrorCode error = U_ZERO_ERROR;
          utext_openUTF8(&matchers.text_, piece.text.data(), static_cast<int64_t>(piece.text.size()), &error);
          icu::RegexMatcher& matcher = *matchers.matchers[static_cast<size_t>(step.matcher)];
          matcher.reset(&matchers.text_);
          SpanCover cover;
          while (U_SUCCESS(error) && matcher.find(error)) {
            cover.Match(static_cast<size_t>(matcher.start64(error)), static_cast<size_t>(matcher.end64(error)));
          }
          if (U_FAILURE(error)) return Status::Internal(std::string("pre-tokenizer regex failed: ") + u_errorName(error));
          spans = cover.Finish(piece.text.size());
          if (step.options.kind == PreTokenizerStep::Kind::kSplit) {
            if (step.options.invert) {
              for (Span& span : spans) span.match = !span.match;
            }
            spans = Join(spans, step.behavior);
          }
          break;
        }
        case PreTokenizerStep::Kind::kDigits:
          spans = Join(CharacterSpans(piece.text, IsNumeric),
                       step.options.individual_digits ? Behavior::kIsolated : Behavior::kContiguous);
          break;
        case PreTokenizerStep::Kind::kMetaspace: {
          std::string replaced;
          replaced.reserve(piece.text.size() + step.options.replacement.size());
          for (const char c : piece.text) {
            if (c == ' ') {
              replaced += step.options.replacement;
            } else {
              replaced += c;
            }
          }
          const bool prepend = !piece.continues && (step.options.prepend_scheme == "always" ||
                                                    (step.options.prepend_scheme == "first" && piece.at_input_start));
          if (prepend && replaced.compare(0, step.options.replacement.size(), step.options.replacement) != 0) {
            replaced.insert(0, step.options.replacement);
          }
          piece.text.swap(replaced);
          if (!step.options.split) {
            spans.push_back({0, piece.text.size(), false});
            break;
          }
          SpanCover cover;
          for (size_t found = piece.text.find(step.options.replacement); found != std::string::npos;
               found = piece.text.find(step.options.replacement, found + step.options.replacement.size())) {
            cover.Match(found, found + step.options.replacement.size());
          }
          spans = Join(cover.Finish(piece.text.size()), Behavior::kMergedWithNext);
          break;
        }
      }
      for (const Span& span : spans) {
        if (span.begin == span.end) continue;
        const bool first = span.begin == 0;
        next.push_back(PreToken{piece.text.substr(span.begin, span.end - span.begin), piece.at_input_start && first,
                                piece.continues && first});
      }
    }
    pieces->swap(next);
    if (step.options.kind == PreTokenizerStep::Kind::kByteLevel) {
      const auto& characters = ByteLevelCharacters();
      for (PreToken& piece : *pieces) {
        std::string mapped;
        mapped.reserve(piece.text.size() * 2);
        for (const char c : piece.text) mapped += characters[static_cast<unsigned char>(c)];
        piece.text.swap(mapped);
      }
    }
  }
  return Status::Ok();
}

}  // namespace rung::hf
