// fuzz/token_data_fuzzer.cc
//
// libFuzzer target: the token-data inputs that rung reads without controlling them.
// Byte 0 (mod 6) picks the reader, the rest is its input:
//   0: a shard file, as rung-train opens it (TokenShards::Open, core/data/token_shards.h) under each
//      data.format (auto, llmc, raw16, raw32), with an end-of-text id and the long-document evaluation
//      filter on; a shard that opens gives a batch of each split and its description.
//   1: a prepared folder's manifest.json (ParseTokenManifest, core/data/token_manifest.h); one that
//      parses re-encodes (ToJson) and parses again to the same JSON.
//   2: a rung-data input (ReadTextDocuments, tools/rung-data/text_documents.h) as JSON-lines
//      (--text-field text) and as text cut at form feeds; the documents it returns are valid UTF-8 and
//      their sizes add up to its byte count.
//   3: the verification record beside a good prepared folder (.rung-verified.json,
//      core/data/shard_verification_record.h): whatever it holds, the folder opens and each shard says
//      it was verified.
//   4: a folder of two files named as llm.c names its splits (x_train_000001.bin, x_val_000000.bin: the
//      input's halves), opened with one mapping at a time; one that opens is split by file names.
//   5: a long document's pieces (tools/rung-data/document_pieces.h; the next byte sets the limit, 4 to
//      67 bytes, the rest, up to its first invalid UTF-8 byte, is the document): they concatenate to it,
//      each within the limit and starting on a character; and a --split-on value's escapes
//      (tools/rung-data/separator_escapes.h): INVALID_ARGUMENT or a separator no longer than it.
// Errors must be DATA_LOSS or INVALID_ARGUMENT (bad input), never a crash; anything else aborts. Inputs
// are written to a scratch folder (under /dev/shm when there is one), made once per process and removed
// at exit. RUNG_FUZZ_VERBOSE=1 prints each reader's outcome (to check what a seed reaches). Torch-free.
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/sha256.h"
#include "core/common/utf8.h"
#include "core/config/data_config.h"
#include "core/data/llmc_shard_format.h"
#include "core/data/token_manifest.h"
#include "core/data/token_shards.h"
#include "tools/rung-data/document_pieces.h"
#include "tools/rung-data/separator_escapes.h"
#include "tools/rung-data/text_documents.h"

namespace {

namespace fs = std::filesystem;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "token_data_fuzzer: %s\n", why.c_str());
  std::abort();
}

// With RUNG_FUZZ_VERBOSE set: what a reader made of the input.
void Report(const char* what, const rung::Status& status) {
  static const bool verbose = std::getenv("RUNG_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "%s: %s\n", what, status.ok() ? "ok" : status.ToString().c_str());
}

// An error from bad input is DATA_LOSS (unusable data) or INVALID_ARGUMENT (data the config cannot
// serve), or NOT_FOUND for a path, which these inputs never are.
void RequireInputError(const rung::Status& status, const char* what) {
  if (status.code() != rung::StatusCode::kDataLoss && status.code() != rung::StatusCode::kInvalidArgument) {
    Die(std::string(what) + ": " + status.ToString());
  }
}

class Scratch {
 public:
  Scratch() {
    const std::string base = fs::is_directory("/dev/shm") ? "/dev/shm" : fs::temp_directory_path().string();
    std::string pattern = base + "/rung-token-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) Die("cannot create a scratch folder under " + base);
    folder_ = pattern;
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(folder_, ignored);
  }
  std::string Write(const std::string& name, std::string_view bytes) const {
    const std::string path = folder_ + "/" + name;
    std::error_code error;
    fs::create_directories(fs::path(path).parent_path(), error);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) Die("cannot write " + path);
    return path;
  }
  const std::string& folder() const { return folder_; }

 private:
  std::string folder_;
};

const Scratch& TheScratch() {
  static const Scratch scratch;
  return scratch;
}

void FuzzShard(std::string_view bytes) {
  const std::string path = TheScratch().Write("shard.bin", bytes);
  for (const char* format : {"auto", "llmc", "raw16", "raw32"}) {
    rung::DataConfig config;
    config.source = "shards";
    config.path = path;
    config.format = format;
    config.vocab_size = 4096;
    config.seq_len = 8;
    config.val_fraction = 0.25;
    config.eot_token = 0;
    config.eval_min_doc_tokens = 4;
    rung::StatusOr<std::unique_ptr<rung::TokenShards>> shards = rung::TokenShards::Open(config, 1);
    Report(format, shards.status());
    if (!shards.ok()) {
      RequireInputError(shards.status(), "TokenShards::Open");
      continue;
    }
    (*shards)->Batch(rung::Split::kTrain, 0, 2, config.seq_len);
    (*shards)->Batch(rung::Split::kValidation, 0, 2, config.seq_len);
    (*shards)->Describe().dump();
  }
}

void FuzzManifest(std::string_view text) {
  rung::StatusOr<rung::TokenManifest> manifest = rung::ParseTokenManifest(text, "manifest.json");
  Report("manifest", manifest.status());
  if (!manifest.ok()) {
    RequireInputError(manifest.status(), "ParseTokenManifest");
    return;
  }
  const nlohmann::json encoded = manifest->ToJson();
  rung::StatusOr<rung::TokenManifest> again = rung::ParseTokenManifest(encoded.dump(), "manifest.json");
  if (!again.ok()) Die("a parsed manifest does not parse again: " + again.status().ToString());
  if (again->ToJson() != encoded) Die("a parsed manifest does not round-trip: " + encoded.dump());
}

void FuzzDocuments(std::string_view bytes) {
  const std::string path = TheScratch().Write("input.txt", bytes);
  for (const char* field : {"text", ""}) {
    rung::data_tool::DocumentOptions options;
    options.text_field = field;
    options.split_on = "\f";
    rung::StatusOr<rung::data_tool::TextDocuments> documents = rung::data_tool::ReadTextDocuments({path}, options);
    Report(*field != '\0' ? "json-lines" : "text", documents.status());
    if (!documents.ok()) {
      RequireInputError(documents.status(), "ReadTextDocuments");
      continue;
    }
    int64_t total = 0;
    for (const std::string& document : documents->documents) {
      if (rung::ValidUtf8Prefix(document) != document.size()) Die("a document that is not valid UTF-8");
      total += static_cast<int64_t>(document.size());
    }
    if (total != documents->bytes) Die("the documents' sizes do not add up to the byte count");
  }
}

// A good prepared folder (two llm.c shards of 16 ids and their manifest), written once per process.
std::string PreparedFolder() {
  static const std::string folder = [] {
    rung::TokenManifest manifest;
    manifest.tokenizer_file = "tokenizer.model";
    manifest.tokenizer_sha256 = std::string(64, '0');
    manifest.vocab_size = 16;
    manifest.eot_id = 0;
    manifest.token_byte_lengths.assign(16, 1);
    for (const char* split : {"train", "val"}) {
      std::string body;
      for (int t = 0; t < 40; ++t) body += std::string{static_cast<char>(t % 16), '\0'};
      const std::string shard = rung::LlmcShardHeader(40, 2) + body;
      const std::string name = std::string(split) + "_000000.bin";
      TheScratch().Write("prepared/" + name, shard);
      manifest.shards.push_back({name, split, 3, 40, 40, rung::Sha256Hex(shard)});
    }
    TheScratch().Write("prepared/manifest.json", manifest.ToJson().dump());
    return TheScratch().folder() + "/prepared";
  }();
  return folder;
}

void FuzzVerificationRecord(std::string_view bytes) {
  const std::string folder = PreparedFolder();
  TheScratch().Write("prepared/.rung-verified.json", bytes);
  rung::DataConfig config;
  config.source = "shards";
  config.path = folder;
  config.vocab_size = 16;
  config.seq_len = 8;
  rung::StatusOr<std::unique_ptr<rung::TokenShards>> shards = rung::TokenShards::Open(config, 1);
  Report("verification record", shards.status());
  if (!shards.ok()) Die("a good prepared folder does not open beside a hostile record: " + shards.status().ToString());
  const nlohmann::json description = (*shards)->Describe();
  for (const nlohmann::json& file : description["files"]) {
    const std::string verified = file.value("sha256_verified", "");
    if (verified != "now" && verified != "cached") Die("a shard not verified: " + file.dump());
  }
}

void FuzzNamedSplitFolder(std::string_view bytes) {
  std::error_code ignored;
  fs::remove_all(TheScratch().folder() + "/named", ignored);
  const size_t half = bytes.size() / 2;
  TheScratch().Write("named/x_train_000001.bin", bytes.substr(0, half));
  TheScratch().Write("named/x_val_000000.bin", bytes.substr(half));
  rung::DataConfig config;
  config.source = "shards";
  config.path = TheScratch().folder() + "/named";
  config.vocab_size = 4096;
  config.seq_len = 4;
  rung::TokenShardsOptions options;
  options.max_mapped_files = 1;
  rung::StatusOr<std::unique_ptr<rung::TokenShards>> shards = rung::TokenShards::Open(config, 1, options);
  Report("named split", shards.status());
  if (!shards.ok()) {
    RequireInputError(shards.status(), "TokenShards::Open (named split)");
    return;
  }
  if ((*shards)->Describe()["split"] != "file_names") Die("a folder named for its splits is not split by names");
  (*shards)->Batch(rung::Split::kTrain, 0, 2, config.seq_len);
  (*shards)->Batch(rung::Split::kValidation, 0, 2, config.seq_len);
}

void FuzzPiecesAndEscapes(std::string_view bytes) {
  if (bytes.empty()) return;
  const size_t limit = 4 + static_cast<unsigned char>(bytes[0]) % 64;
  const std::string_view rest = bytes.substr(1);
  const std::string_view document = rest.substr(0, rung::ValidUtf8Prefix(rest));
  std::string joined;
  for (std::string_view piece : rung::data_tool::DocumentPieces(document, limit)) {
    if (piece.size() > limit) Die("a piece longer than its limit");
    if (!piece.empty() && (static_cast<unsigned char>(piece.front()) & 0xC0) == 0x80) {
      Die("a piece starts mid-character");
    }
    if (piece.empty() && !document.empty()) Die("an empty piece");
    joined += piece;
  }
  if (joined != document) Die("the pieces do not concatenate to the document");
  rung::StatusOr<std::string> separator = rung::data_tool::UnescapeSeparator(rest);
  Report("escapes", separator.status());
  if (!separator.ok() && separator.status().code() != rung::StatusCode::kInvalidArgument) {
    Die("UnescapeSeparator: " + separator.status().ToString());
  }
  if (separator.ok() && separator->size() > rest.size()) Die("an unescaped separator longer than its escapes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: FuzzShard(rest); break;
    case 1: FuzzManifest(rest); break;
    case 2: FuzzDocuments(rest); break;
    case 3: FuzzVerificationRecord(rest); break;
    case 4: FuzzNamedSplitFolder(rest); break;
    default: FuzzPiecesAndEscapes(rest); break;
  }
  return 0;
}
