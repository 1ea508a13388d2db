#include "tools/rung-data/document_encoding.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "tools/rung-data/document_pieces.h"
#include "tools/rung-data/progress.h"

namespace rung::data_tool {

Status CheckEncodingOptions(int64_t threads, int64_t token_bytes, int64_t max_document_bytes) {
  if (token_bytes != 0 && token_bytes != 2 && token_bytes != 4) {
    return Status::InvalidArgument("--token-bytes must be 2 or 4, got " + std::to_string(token_bytes));
  }
  if (threads < 0 || threads > 1024) {
    return Status::InvalidArgument("--threads must lie in [0, 1024] (0: every core), got " + std::to_string(threads));
  }
  if (max_document_bytes < 4) {
    return Status::InvalidArgument("--max-document-bytes must be at least 4 (one UTF-8 character), got " +
                                   std::to_string(max_document_bytes));
  }
  return Status::Ok();
}

StatusOr<int64_t> ShardTokenBytes(int64_t requested, int64_t vocab_size, const std::string& tokenizer) {
  const int64_t token_bytes = requested != 0 ? requested : vocab_size <= 65536 ? 2 : 4;
  if (token_bytes == 2 && vocab_size > 65536) {
    return Status::InvalidArgument("tokenizer " + tokenizer + " has " + std::to_string(vocab_size) +
                                   " ids, which do not fit uint16 tokens (--token-bytes 2); use 4");
  }
  return token_bytes;
}

StatusOr<EncodedDocuments> EncodeDocuments(const TextTokenizer& tokenizer, const std::vector<std::string>& documents,
                                           int64_t bytes, bool special_tokens, int64_t threads,
                                           int64_t max_document_bytes) {
  if (threads == 0) threads = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const auto start = std::chrono::steady_clock::now();
  EncodedDocuments out;
  out.ids.assign(documents.size(), {});
  const std::vector<int> prefix = special_tokens ? tokenizer.PrefixIds() : std::vector<int>();
  const std::vector<int> suffix = special_tokens ? tokenizer.SuffixIds() : std::vector<int>();
  std::atomic<size_t> next{0};
  std::atomic<int64_t> documents_split{0};
  std::vector<Status> failures(static_cast<size_t>(threads));
  ProgressReporter progress("encode", bytes);
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::unique_ptr<DocumentEncoder> encoder = tokenizer.NewEncoder();
      std::vector<int> piece_ids;
      for (size_t d = next.fetch_add(1); d < documents.size(); d = next.fetch_add(1)) {
        const std::string& document = documents[d];
        std::vector<int>& ids = out.ids[d];
        Status status;
        if (static_cast<int64_t>(document.size()) <= max_document_bytes) {
          status = encoder->Encode(document, /*continues=*/false, &piece_ids);
          ids.reserve(prefix.size() + piece_ids.size() + suffix.size());
          ids.insert(ids.end(), prefix.begin(), prefix.end());
          ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
        } else {
          documents_split.fetch_add(1);
          ids.insert(ids.end(), prefix.begin(), prefix.end());
          bool continues = false;
          for (std::string_view piece : DocumentPieces(document, static_cast<size_t>(max_document_bytes))) {
            status = encoder->Encode(piece, continues, &piece_ids);
            continues = true;
            if (!status.ok()) break;
            ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
          }
        }
        if (!status.ok()) {
          failures[static_cast<size_t>(t)] = Status(status.code(), "document " + std::to_string(d + 1) + " of " +
                                                                       std::to_string(documents.size()) + ": " +
                                                                       status.message());
          return;
        }
        ids.insert(ids.end(), suffix.begin(), suffix.end());
        progress.Add(static_cast<int64_t>(document.size()));
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  progress.Finish();
  for (Status& failure : failures) RUNG_RETURN_IF_ERROR(failure);
  out.documents_split = documents_split.load();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace rung::data_tool
