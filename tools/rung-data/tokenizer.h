// tools/rung-data/tokenizer.h
//
// The SentencePiece tokenizer rung-data trains and encodes with (Debian's libsentencepiece). Training
// sets the options that make decoding exact: identity normalisation, no whitespace folding
// (remove_extra_whitespaces=false), no dummy prefix, byte fallback (any byte a piece does not cover is
// one of 256 byte tokens), so decode(encode(document)) gives back the document's bytes. One exception,
// SentencePiece's own: U+2581 (LOWER ONE EIGHTH BLOCK) is its whitespace mark and decodes as a space.
// The end-of-text token is SentencePiece's </s> (eos); rung-data writes it before every document.
//
// This header keeps SentencePiece out of its includers; only tokenizer.cc sees it (its protobuf copy
// must never meet LibTorch's or gRPC's: rung-data links nothing of theirs).
//
// Thread safety: Encode may be called concurrently on one loaded tokenizer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace rung::data_tool {

struct TokenizerTrainOptions {
  int64_t vocab_size = 4096;
  std::string type = "bpe";  // bpe | unigram
  uint64_t seed = 0;
  int64_t threads = 1;  // training threads (1 is deterministic), 1 to 128 (SentencePiece's range)
};

// The options alone, before any document is read: INVALID_ARGUMENT for a type other than bpe or
// unigram, a vocabulary size outside [260, 2^24] (no text needs fewer: see MinimumVocabSize) or threads
// outside [1, 128].
Status CheckTokenizerTrainOptions(const TokenizerTrainOptions& options);

// The smallest vocabulary SentencePiece trains on `documents` with rung-data's settings, for bpe and
// unigram alike: its 3 control tokens (<unk>, <s>, </s>), the 256 byte tokens of byte fallback, and
// one token for each distinct character of the text it trains on (character coverage 1.0), counted as
// SentencePiece counts them: lines of at most 65,536 bytes that do not hold U+2585; a space and U+2581
// are one character; tabs, NULs and the text of its own pieces ("<s>", "<0x41>") are not counted.
// DATA_LOSS when no line of the documents is one SentencePiece trains on.
StatusOr<int64_t> MinimumVocabSize(const std::vector<std::string>& documents);

// Trains a model on `documents` (each split into lines: SentencePiece trains on sentences) and returns
// its serialized bytes. Errors: INVALID_ARGUMENT for options CheckTokenizerTrainOptions refuses, a
// vocabulary smaller than MinimumVocabSize (saying how small it may be), or what SentencePiece refuses
// (a vocabulary larger than a model of the text can have), with its reason; MinimumVocabSize's
// DATA_LOSS.
StatusOr<std::string> TrainTokenizer(const std::vector<std::string>& documents, const TokenizerTrainOptions& options);

// The length of the whitespace mark that starts at text[at]: 1 for a space, 3 for SentencePiece's own
// mark U+2581, 0 for anything else (or at the end).
size_t WhitespaceMarkLength(std::string_view text, size_t at);

class Tokenizer {
 public:
  // Loads a model file. Errors: NOT_FOUND if it cannot be read; DATA_LOSS if SentencePiece cannot
  // parse it, or it has no </s> (eos) to end documents with.
  static StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& path);
  ~Tokenizer();

  int64_t vocab_size() const;
  int64_t eot_id() const;
  // The id of a piece, where the model has it.
  std::optional<int64_t> PieceId(const std::string& piece) const;
  // Each id's length in bytes when decoded: 1 for byte tokens, 0 for control and unknown tokens, else
  // the piece's UTF-8 length with its whitespace marks as spaces.
  std::vector<int32_t> TokenByteLengths() const;
  // The ids of `text`. INTERNAL if SentencePiece fails.
  Status Encode(std::string_view text, std::vector<int>* ids) const;
  // True when encoding a text word by word gives the ids of encoding it whole, where a word starts at
  // a run of whitespace marks (a space or U+2581) that follows anything else (the split SentencePiece's
  // trainer makes with split_by_whitespace). Decided at Load from the model: it is not a unigram model
  // (whose whole-text score sums can break ties differently), every normal and user-defined piece
  // carries whitespace marks only in a leading run (so no piece spans a word start), and its
  // normalizer leaves text as it is but for spaces becoming marks (no dummy prefix, no whitespace
  // folding, a probe of whitespace runs and characters NFKC would change round-trips exactly), which
  // makes normalization word by word the same as whole. rung-data's own BPE models are.
  bool pieces_stay_within_words() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rung::data_tool
