// core/hf/hf_tokenizer.h
//
// rung's encoder for Hugging Face tokenizer.json files of the BPE families (tokenizer_json.h): the
// ids of a text are those of the library's `encode(text, add_special_tokens=True)` with special added
// tokens never read from the text (its encode_special_tokens option): a document that holds
// "<|endoftext|>" is encoded as those characters, not as the end-of-text token. The pipeline is the
// library's:
//   1. non-special added tokens whose `normalized` is false are found in the raw text
//      (added_token_matcher.h);
//   2. each stretch between them is normalized (text_normalizer.h), and the normalized added tokens are
//      found in it;
//   3. each remaining stretch is pre-tokenized (pre_tokenizer.h) and each piece encoded by the BPE model
//      (bpe_model.h);
//   4. the post-processor's template tokens go before and after (TemplateProcessing's single template).
// Pieces are encoded through a cache of the pieces already seen (exact: a piece's ids depend on the
// piece alone). A SentencePiece-style tokenizer without a splitting pre-tokenizer hands the model whole
// stretches of text; these are cut into words before each run of "▁" that follows other text, which is
// exact when no vocabulary entry holds "▁" after other text (then no token can span such a cut) and
// merges are not ignored; splits_words() says whether the tokenizer met that and the cut is used.
//
// Thread safety: a loaded HfTokenizer is shared; each thread encodes with its own Session.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/status.h"
#include "core/hf/tokenizer_json.h"

namespace rung::hf {

class HfTokenizer {
 public:
  // Parses tokenizer.json's text (ParseTokenizerJson, whose errors it returns) and readies the encoder;
  // INVALID_ARGUMENT for a pre-tokenizer pattern ICU cannot compile.
  static StatusOr<std::unique_ptr<HfTokenizer>> FromJson(std::string_view text, const std::string& source);
  ~HfTokenizer();

  // One thread's regex matchers and piece cache (bounded: emptied when it holds kMaxCachedPieces).
  class Session {
   public:
    ~Session();

   private:
    friend class HfTokenizer;
    struct State;
    Session();
    std::unique_ptr<State> state_;
  };
  std::unique_ptr<Session> NewSession() const;
  static constexpr size_t kMaxCachedPieces = size_t{1} << 18;
  static constexpr size_t kMaxCachedPieceBytes = 256;

  // Replaces *ids with the ids of `text` (valid UTF-8), with the template's tokens around them where
  // `add_special_tokens` (the library's flag of that name). `continues`: the text goes on from text
  // encoded before it (the next piece of a document too long to encode at once), so nothing that marks
  // a text's start is prepended to it (Prepend, Metaspace's mark, ByteLevel's prefix space): the pieces'
  // ids then differ from the whole text's only where a token would span the cut. INTERNAL where ICU fails.
  Status Encode(std::string_view text, bool add_special_tokens, Session& session, std::vector<int32_t>* ids,
                bool continues = false) const;

  const TokenizerJson& definition() const { return definition_; }
  int64_t vocab_size() const { return definition_.vocab_size; }
  bool splits_words() const { return splits_words_; }
  // The id of `content`: an added token's, else the vocabulary's.
  std::optional<int64_t> TokenId(std::string_view content) const;
  // Each id's length in bytes when decoded: byte-level characters count one byte each, SentencePiece's
  // "▁" one (a space) and <0xNN> one; special added tokens and the unknown token 0; ids no entry has 0.
  std::vector<int32_t> TokenByteLengths() const;

 private:
  struct Parts;
  HfTokenizer(TokenizerJson definition, std::unique_ptr<Parts> parts);
  // Appends the ids of one pre-tokenized piece.
  void EncodePiece(const std::string& piece, Session& session, std::vector<int32_t>* ids) const;
  void EncodeCached(std::string_view piece, Session& session, std::vector<int32_t>* ids) const;

  TokenizerJson definition_;
  std::unique_ptr<Parts> parts_;
  bool splits_words_ = false;
};

}  // namespace rung::hf
