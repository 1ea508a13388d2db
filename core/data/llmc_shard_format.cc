#include "core/data/llmc_shard_format.h"

#include <cstring>

namespace rung {
namespace {

int32_t Int32At(std::string_view bytes, size_t index) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data()) + index * 4;
  return static_cast<int32_t>(uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24));
}

void PutInt32(std::string* bytes, size_t index, int32_t value) {
  const auto v = static_cast<uint32_t>(value);
  for (int b = 0; b < 4; ++b) (*bytes)[index * 4 + b] = static_cast<char>((v >> (8 * b)) & 0xFF);
}

StatusOr<ShardLayout> RawLayout(const std::string& path, int64_t file_bytes, int64_t token_bytes) {
  if (file_bytes % token_bytes != 0) {
    return Status::DataLoss("shard " + path + " has " + std::to_string(file_bytes) +
                                   " bytes, not a multiple of the token width " + std::to_string(token_bytes) +
                                   " (byte offset " + std::to_string(file_bytes - file_bytes % token_bytes) +
                                   ": a partial token; truncated file, or the wrong data.token_bytes / data.format?)");
  }
  ShardLayout layout;
  layout.token_bytes = token_bytes;
  layout.tokens = file_bytes / token_bytes;
  return layout;
}

}  // namespace

bool IsShardFormat(std::string_view format) {
  return format == "auto" || format == "llmc" || format == "raw16" || format == "raw32";
}

StatusOr<ShardLayout> ReadShardLayout(const std::string& path, std::string_view head, int64_t file_bytes,
                                      std::string_view format, int64_t raw_token_bytes) {
  if (format == "raw16") return RawLayout(path, file_bytes, 2);
  if (format == "raw32") return RawLayout(path, file_bytes, 4);
  const bool has_magic_bytes = head.size() >= 4 && file_bytes >= 4;
  const int32_t magic = has_magic_bytes ? Int32At(head, 0) : 0;
  const bool known_magic = magic == kLlmcMagic16 || magic == kLlmcMagic32;
  if (!known_magic) {
    if (format == "llmc") {
      return Status::DataLoss(
          "shard " + path + ": byte offset 0: " +
          (has_magic_bytes ? "magic " + std::to_string(magic) : std::string("file shorter than 4 bytes")) +
          " is not an llm.c shard header (magic " + std::to_string(kLlmcMagic16) + " or " +
          std::to_string(kLlmcMagic32) + "); data.format: llmc needs one (raw16/raw32 read headerless files)");
    }
    return RawLayout(path, file_bytes, raw_token_bytes);
  }
  if (file_bytes < kLlmcHeaderBytes || static_cast<int64_t>(head.size()) < kLlmcHeaderBytes) {
    return Status::DataLoss("shard " + path + ": byte offset " + std::to_string(file_bytes) +
                                   ": truncated llm.c header (" + std::to_string(file_bytes) + " of " +
                                   std::to_string(kLlmcHeaderBytes) + " bytes after magic " + std::to_string(magic) +
                                   ")");
  }
  const int32_t version = Int32At(head, 1);
  const int32_t expected_version = magic == kLlmcMagic16 ? kLlmcVersion16 : kLlmcVersion32;
  if (version != expected_version) {
    return Status::DataLoss("shard " + path + ": byte offset 4: llm.c version " + std::to_string(version) +
                                   " with magic " + std::to_string(magic) + ", expected version " +
                                   std::to_string(expected_version));
  }
  ShardLayout layout;
  layout.llmc = true;
  layout.header_bytes = kLlmcHeaderBytes;
  layout.token_bytes = magic == kLlmcMagic16 ? 2 : 4;
  layout.tokens = Int32At(head, 2);
  const int64_t payload = file_bytes - kLlmcHeaderBytes;
  if (layout.tokens < 0 || layout.tokens * layout.token_bytes != payload) {
    return Status::DataLoss(
        "shard " + path + ": byte offset 8: the llm.c header says " + std::to_string(layout.tokens) + " tokens (" +
        std::to_string(layout.tokens * layout.token_bytes) + " bytes), but the file holds " + std::to_string(payload) +
        " bytes after its header (truncated or padded file)");
  }
  return layout;
}

std::string LlmcShardHeader(int64_t tokens, int64_t token_bytes) {
  std::string header(static_cast<size_t>(kLlmcHeaderBytes), '\0');
  PutInt32(&header, 0, token_bytes == 2 ? kLlmcMagic16 : kLlmcMagic32);
  PutInt32(&header, 1, token_bytes == 2 ? kLlmcVersion16 : kLlmcVersion32);
  PutInt32(&header, 2, static_cast<int32_t>(tokens));
  return header;
}

std::string LlmcShardTokens(const std::vector<int32_t>& tokens, int64_t token_bytes) {
  std::string bytes(tokens.size() * static_cast<size_t>(token_bytes), '\0');
  char* out = bytes.data();
  for (const int32_t token : tokens) {
    const auto value = static_cast<uint32_t>(token);
    for (int64_t b = 0; b < token_bytes; ++b) *out++ = static_cast<char>((value >> (8 * b)) & 0xFF);
  }
  return bytes;
}

}  // namespace rung
