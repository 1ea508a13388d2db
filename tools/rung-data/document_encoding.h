// tools/rung-data/document_encoding.h
//
// Encodes documents in parallel, as `rung-data prepare` and `rung-data encode` do: `threads` threads
// take documents in turn, each with its own DocumentEncoder (text_tokenizer.h). A document longer than
// max_document_bytes is encoded in pieces (document_pieces.h), its ids those of the pieces one after
// another (each piece after the first encoded as the continuation it is: DocumentEncoder::Encode), so
// an encoder's memory stays bounded; shorter documents are encoded whole. Where
// `special_tokens`, each document's ids are wrapped in the tokenizer's template tokens (PrefixIds,
// SuffixIds), once per document.
//
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "tools/rung-data/text_tokenizer.h"

namespace rung::data_tool {

struct EncodedDocuments {
  std::vector<std::vector<int>> ids;  // one per document
  int64_t documents_split = 0;        // longer than max_document_bytes, encoded in pieces
  double seconds = 0;
};

// The options prepare and encode share, checked alike: INVALID_ARGUMENT, naming the flag, for
// --token-bytes other than 0, 2 or 4, --threads outside [0, 1024], --max-document-bytes below 4.
Status CheckEncodingOptions(int64_t threads, int64_t token_bytes, int64_t max_document_bytes);

// The width of a shard's tokens: `requested` (2 or 4), or for 0, 2 where the `vocab_size` ids fit and
// else 4. INVALID_ARGUMENT, naming `tokenizer`, for 2 with more than 65536 ids.
StatusOr<int64_t> ShardTokenBytes(int64_t requested, int64_t vocab_size, const std::string& tokenizer);

// `bytes`: the documents' total, for the progress line; `threads` 0: every core. Errors: the first
// encoder's.
StatusOr<EncodedDocuments> EncodeDocuments(const TextTokenizer& tokenizer, const std::vector<std::string>& documents,
                                           int64_t bytes, bool special_tokens, int64_t threads,
                                           int64_t max_document_bytes);

}  // namespace rung::data_tool
