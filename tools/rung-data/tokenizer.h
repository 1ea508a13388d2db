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
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace rung::data_tool {

struct TokenizerTrainOptions {
  int64_t vocab_size = 4096;
  std::string type = "bpe";  // bpe | unigram
  uint64_t seed = 0;
  int64_t threads = 1;  // training threads (1 is deterministic)
};

// Trains a model on `documents` (each split into lines: SentencePiece trains on sentences) and returns
// its serialized bytes. Errors: INVALID_ARGUMENT for a bad type or vocabulary size, or what
// SentencePiece refuses (a vocabulary too large for the text), with its message.
StatusOr<std::string> TrainTokenizer(const std::vector<std::string>& documents, const TokenizerTrainOptions& options);

class Tokenizer {
 public:
  // Loads a model file. Errors: NOT_FOUND if it cannot be read; INVALID_ARGUMENT if SentencePiece
  // cannot parse it, or it has no </s> (eos) to end documents with.
  static StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& path);
  ~Tokenizer();

  int64_t vocab_size() const;
  int64_t eot_id() const;
  // Each id's length in bytes when decoded: 1 for byte tokens, 0 for control and unknown tokens, else
  // the piece's UTF-8 length with its whitespace marks as spaces.
  std::vector<int32_t> TokenByteLengths() const;
  // The ids of `text`. INTERNAL if SentencePiece fails.
  Status Encode(std::string_view text, std::vector<int>* ids) const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rung::data_tool
