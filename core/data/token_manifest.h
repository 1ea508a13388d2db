// core/data/token_manifest.h
//
// TokenManifest: what `rung-data prepare` writes beside its shards (manifest.json) and what rung-train
// reads a prepared folder through. It names the tokenizer and the source files (each with its SHA-256),
// the end-of-text id written between documents, the vocabulary, the token width, every shard (its
// split, documents, tokens, the UTF-8 bytes of its documents and its file's SHA-256), and each token
// id's length in bytes when decoded (for bits per byte, docs/science.md section 11). rung-train never
// links the tokenizer: the manifest tells it everything it needs.
//
//   {"format": "rung-token-manifest", "version": 1,
//    "tokenizer": {"file": "tokenizer.model", "sha256", "type": "bpe" | "unigram", "vocab_size"},
//    "sources": [{"path", "bytes", "sha256"}],
//    "eot_id", ["bos_id"], "vocab_size", "token_bytes": 2 | 4, "val_fraction", "seed", "shard_tokens", "split_on",
//    "text_field", "max_document_bytes", "documents_split",
//    "shards": [{"file", "split": "train" | "val", "documents", "tokens", "bytes", "sha256"}],
//    "token_byte_lengths": [vocab_size integers]}
// max_document_bytes and documents_split (optional, 0 when absent): documents longer than the first
// were encoded in pieces (tools/rung-data/document_pieces.h), and how many there were. bos_id
// (optional, absent: none): the tokenizer's BOS, which starts every document after its end-of-text
// token (a Hugging Face tokenizer whose template adds one: Llama 2, Llama 3).
//
// Shard files are named relative to the manifest's folder and must be plain names (no '/', no "..").
//
// Thread safety: values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace rung {

inline constexpr std::string_view kTokenManifestFile = "manifest.json";
inline constexpr std::string_view kTokenManifestFormat = "rung-token-manifest";

struct ManifestShard {
  std::string file;   // name inside the manifest's folder
  std::string split;  // "train" | "val"
  int64_t documents = 0;
  int64_t tokens = 0;  // in the shard, end-of-text tokens included
  int64_t bytes = 0;   // UTF-8 bytes of its documents (what its tokens decode to)
  std::string sha256;  // of the whole shard file
};

struct ManifestSource {
  std::string path;
  int64_t bytes = 0;
  std::string sha256;
};

struct TokenManifest {
  std::string tokenizer_file;
  std::string tokenizer_sha256;
  std::string tokenizer_type;
  std::vector<ManifestSource> sources;
  int64_t eot_id = 0;
  int64_t bos_id = -1;  // each document starts (after its end-of-text token) with this BOS; -1: none
  int64_t vocab_size = 0;
  int64_t token_bytes = 2;
  double val_fraction = 0.0;
  uint64_t seed = 0;
  int64_t shard_tokens = 0;
  std::string split_on;    // "" when documents are files or JSON lines
  std::string text_field;  // "" unless JSON-lines input
  int64_t max_document_bytes = 0;  // longer documents were encoded in pieces; 0: not recorded
  int64_t documents_split = 0;     // how many were
  std::vector<ManifestShard> shards;
  std::vector<int32_t> token_byte_lengths;  // one per id

  nlohmann::json ToJson() const;
};

// Parses a manifest's text; `path` names it in errors. Errors: DATA_LOSS (the manifest is unusable)
// naming the path and the field (not JSON, the wrong format or version, a missing or mistyped field, vocab_size outside
// [1, 2^31), token_bytes not 2 or 4 or too narrow for the vocabulary, eot_id outside the vocabulary,
// token_byte_lengths not one non-negative length per id, a shard name that is not a plain file name, a
// split other than train/val or a sha256 that is not 64 lowercase hex digits, negative counts).
StatusOr<TokenManifest> ParseTokenManifest(std::string_view text, const std::string& path);

// Reads and parses `folder`/manifest.json. NOT_FOUND if it does not exist; else ParseTokenManifest's.
StatusOr<TokenManifest> ReadTokenManifest(const std::string& folder);

// Whether `folder` holds a manifest.json (a prepared folder).
bool HasTokenManifest(const std::string& folder);

}  // namespace rung
