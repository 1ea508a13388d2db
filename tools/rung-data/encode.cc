#include "tools/rung-data/encode.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/data/llmc_shard_format.h"
#include "tools/rung-data/document_encoding.h"
#include "tools/rung-data/text_tokenizer.h"

namespace rung::data_tool {

StatusOr<EncodeSummary> Encode(const EncodeOptions& options) {
  if (options.format != "jsonl" && options.format != "bin") {
    return Status::InvalidArgument("--format must be jsonl or bin, got '" + options.format + "'");
  }
  if (options.out == "-" && options.format == "bin") {
    return Status::InvalidArgument("--out -: standard output takes --format jsonl; give bin a file");
  }
  RUNG_RETURN_IF_ERROR(CheckEncodingOptions(options.threads, options.token_bytes, options.max_document_bytes));
  // The output files must be writable where they are named before anything is encoded: a file (or
  // nothing yet) in a folder that exists.
  for (const std::string& path : {options.out, options.token_byte_lengths_out}) {
    if (path.empty() || path == "-") continue;
    const std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
    std::error_code error;
    if (!std::filesystem::is_directory(folder, error)) {
      return Status::InvalidArgument(path + ": its folder " + folder.string() + " does not exist");
    }
    if (std::filesystem::is_directory(path, error)) return Status::InvalidArgument(path + ": is a folder, not a file");
  }
  if (!options.token_byte_lengths_out.empty() && options.token_byte_lengths_out == options.out) {
    return Status::InvalidArgument("--token-byte-lengths names the --out file");
  }
  RUNG_ASSIGN_OR_RETURN(const LoadedTokenizer loaded, LoadTextTokenizer(options.tokenizer, options.eot));
  const int64_t vocab_size = loaded.tokenizer->vocab_size();
  std::optional<int64_t> eot_id = loaded.eot_id;
  int64_t token_bytes = 0;  // the shard's (bin only)
  if (options.format == "bin") {
    RUNG_ASSIGN_OR_RETURN(token_bytes, ShardTokenBytes(options.token_bytes, vocab_size, loaded.path));
  }
  RUNG_ASSIGN_OR_RETURN(const TextDocuments text, ReadTextDocuments(options.inputs, options.documents));
  if (options.format == "bin" && text.documents.size() > 1) {  // only a shard of several needs one
    RUNG_ASSIGN_OR_RETURN(eot_id, RequireEot(loaded));
  }
  RUNG_ASSIGN_OR_RETURN(const EncodedDocuments encoded,
                        EncodeDocuments(*loaded.tokenizer, text.documents, text.bytes, options.special_tokens,
                                        options.threads, options.max_document_bytes));
  EncodeSummary summary;
  summary.documents = static_cast<int64_t>(text.documents.size());
  summary.eot_id = eot_id.value_or(-1);
  summary.vocab_size = vocab_size;
  summary.documents_split = encoded.documents_split;
  summary.encode_seconds = encoded.seconds;
  summary.encoded_bytes = text.bytes;
  for (const std::vector<int>& ids : encoded.ids) summary.tokens += static_cast<int64_t>(ids.size());

  // The ids are written first, the byte lengths after them; where the lengths cannot be written, the
  // ids file is removed again, so a failure leaves neither behind.
  auto write_lengths = [&]() -> Status {
    if (options.token_byte_lengths_out.empty()) return Status::Ok();
    const std::string lengths = nlohmann::json(loaded.tokenizer->TokenByteLengths()).dump() + "\n";
    Status written = WriteFileAtomically(options.token_byte_lengths_out, {lengths});
    if (!written.ok() && options.out != "-") {
      std::error_code error;
      std::filesystem::remove(options.out, error);
    }
    return written;
  };
  if (options.format == "jsonl") {
    std::string body;
    body.reserve(static_cast<size_t>(summary.tokens) * 7 + encoded.ids.size() * 3);
    char number[16];
    for (const std::vector<int>& ids : encoded.ids) {
      body += '[';
      for (size_t i = 0; i < ids.size(); ++i) {
        const int length = std::snprintf(number, sizeof(number), i == 0 ? "%d" : ",%d", ids[i]);
        body.append(number, static_cast<size_t>(length));
      }
      body += "]\n";
    }
    if (options.out == "-") {
      if (std::fwrite(body.data(), 1, body.size(), stdout) != body.size() || std::fflush(stdout) != 0) {
        return Status::Internal("cannot write the ids to standard output");
      }
    } else {
      RUNG_RETURN_IF_ERROR(WriteFileAtomically(options.out, {body}));
    }
    RUNG_RETURN_IF_ERROR(write_lengths());
    return summary;
  }
  std::vector<int32_t> stream;
  stream.reserve(static_cast<size_t>(summary.tokens + std::max<int64_t>(0, summary.documents - 1)));
  for (size_t d = 0; d < encoded.ids.size(); ++d) {
    if (d > 0) stream.push_back(static_cast<int32_t>(*eot_id));
    stream.insert(stream.end(), encoded.ids[d].begin(), encoded.ids[d].end());
  }
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(
      options.out, {LlmcShardHeader(static_cast<int64_t>(stream.size()), token_bytes), LlmcShardTokens(stream, token_bytes)}));
  RUNG_RETURN_IF_ERROR(write_lengths());
  return summary;
}

}  // namespace rung::data_tool
