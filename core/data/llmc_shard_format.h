// core/data/llmc_shard_format.h
//
// The llm.c token-shard layout, the format nanoGPT-style projects exchange pre-tokenised data in: a
// header of 256 little-endian int32 (header[0] the magic, header[1] the version, header[2] the token
// count; the rest zero), then the tokens, little-endian:
//   magic 20240520, version 1: uint16 tokens (llm.c's write_datafile for vocabularies <= 65536)
//   magic 20240801, version 7: uint32 tokens (larger vocabularies)
// Files without the header ("raw") are flat tokens of a width the caller names.
//
// data.format picks how a file is read: "auto" sniffs the magic (a file whose first int32 is neither
// magic is raw, of data.token_bytes); "llmc" requires the header; "raw16"/"raw32" read flat uint16/uint32
// even if the first bytes happen to look like a header.
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(ShardLayout layout, ReadShardLayout(path, first_bytes, file_bytes, "auto", 2));
//   // tokens start at layout.header_bytes, layout.token_bytes wide, layout.tokens of them
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace rung {

inline constexpr int32_t kLlmcMagic16 = 20240520;  // version 1, uint16 tokens
inline constexpr int32_t kLlmcMagic32 = 20240801;  // version 7, uint32 tokens
inline constexpr int32_t kLlmcVersion16 = 1;
inline constexpr int32_t kLlmcVersion32 = 7;
inline constexpr int64_t kLlmcHeaderInts = 256;
inline constexpr int64_t kLlmcHeaderBytes = kLlmcHeaderInts * 4;

// Where a shard's tokens are and how wide they are.
struct ShardLayout {
  bool llmc = false;         // has the llm.c header
  int64_t header_bytes = 0;  // 0 or kLlmcHeaderBytes
  int64_t token_bytes = 2;   // 2 or 4
  int64_t tokens = 0;
};

// Whether `format` is one of auto, llmc, raw16, raw32.
bool IsShardFormat(std::string_view format);

// The layout of a shard of `file_bytes` bytes whose first bytes are `head` (at least
// min(file_bytes, kLlmcHeaderBytes) of them), read as `format`; `raw_token_bytes` (2 or 4) is the width
// of a headerless file under "auto". Errors (DATA_LOSS: the file is not a usable shard; each names `path`
// and the byte offset of what is wrong): under "llmc" a file without the magic; a header shorter than 1024 bytes; a known
// magic with another version; a token count that is negative or disagrees with the file's length; a raw
// file whose length is not a multiple of the token width.
StatusOr<ShardLayout> ReadShardLayout(const std::string& path, std::string_view head, int64_t file_bytes,
                                      std::string_view format, int64_t raw_token_bytes);

// The 1024-byte llm.c header for `tokens` tokens of `token_bytes` (2: magic 20240520 v1; 4: 20240801 v7).
// REQUIRES: token_bytes is 2 or 4, 0 <= tokens < 2^31.
std::string LlmcShardHeader(int64_t tokens, int64_t token_bytes);

// The tokens that follow that header: each id little-endian in `token_bytes` bytes.
// REQUIRES: token_bytes is 2 or 4, and every id fits it.
std::string LlmcShardTokens(const std::vector<int32_t>& tokens, int64_t token_bytes);

}  // namespace rung
