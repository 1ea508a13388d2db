// core/hf/pre_tokenizer.h
//
// A tokenizer.json's pre-tokenizer: its steps (Split, Digits, ByteLevel, Metaspace) cut one normalized
// segment into the pieces the BPE model encodes one at a time, as Hugging Face tokenizers cuts them:
//   Split      the pattern's matches and the text between them, joined by the behaviour (Removed,
//              Isolated, MergedWithPrevious, MergedWithNext, Contiguous; invert swaps matches and gaps);
//   Digits     each numeric character (general category Nd, Nl, No) alone, or runs of them;
//   ByteLevel  a space before each piece that lacks one (add_prefix_space), GPT-2's pattern split
//              (use_regex), then every byte written as its byte-level character (byte_level_alphabet.h);
//   Metaspace  spaces written as the replacement, which is prepended (always; first: only to the piece
//              the input starts with; never), pieces split before each replacement (split).
// Empty pieces are dropped. Regex patterns are Oniguruma's syntax (the library's engine); they run on
// ICU's engine after one translation: \s and \S become White_Space and its complement, which is what
// Oniguruma's \s means (ICU's own \s leaves out U+000B and U+0085). Both engines match leftmost-first
// with backtracking and read \p{L}, \p{N}, (?i:...) and lookahead alike.
//
// Thread safety: the PreTokenizer is shared; each thread Splits with its own Matchers.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/hf/tokenizer_json.h"

namespace rung::hf {

// One piece of pre-tokenized text. at_input_start: it begins where the input text begins (Metaspace's
// "first" prepends to that piece alone). continues: it goes on from text before it that the caller
// encoded apart (a long document's next piece), so nothing is prepended to it (no Metaspace mark, no
// ByteLevel prefix space).
struct PreToken {
  std::string text;
  bool at_input_start = false;
  bool continues = false;
};

// Oniguruma's pattern as ICU reads it (see the header comment).
std::string TranslateOnigurumaPattern(std::string_view pattern);

class PreTokenizer {
 public:
  // INVALID_ARGUMENT naming `source` and the step for a pattern ICU cannot compile.
  static StatusOr<std::unique_ptr<PreTokenizer>> Create(const std::vector<PreTokenizerStep>& steps,
                                                        const std::string& source);
  ~PreTokenizer();

  // One thread's regex matchers.
  class Matchers;
  std::unique_ptr<Matchers> NewMatchers() const;

  // Replaces *pieces with the pieces of `text` (at_input_start, continues: its first piece's, see
  // PreToken). INTERNAL where ICU fails.
  Status Split(std::string_view text, bool at_input_start, bool continues, Matchers& matchers,
               std::vector<PreToken>* pieces) const;

  // True when it has no step, so a segment is one piece.
  bool empty() const { return steps_.empty(); }

 private:
  struct Step;
  PreTokenizer() = default;
  std::vector<Step> steps_;
};

}  // namespace rung::hf
