// fuzz/token_data_fuzzer.cc
//
// libFuzzer target: the token-data inputs of issue 17 that rung reads without controlling them. Byte 0
// picks the reader, the rest is its input:
//   0: a shard file, as rung-train opens it (TokenShards::Open, core/data/token_shards.h) under each
//      data.format (auto, llmc, raw16, raw32), with an end-of-text id and the long-document evaluation
//      filter on; a shard that opens gives a batch of each split and its description.
//   1: a prepared folder's manifest.json (ParseTokenManifest, core/data/token_manifest.h); one that
//      parses re-encodes (ToJson) and parses again to the same JSON.
//   2: a rung-data input (ReadTextDocuments, tools/rung-data/text_documents.h) as JSON-lines
//      (--text-field text) and as text cut at form feeds; the documents it returns are valid UTF-8 and
//      their sizes add up to its byte count.
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

#include "core/common/utf8.h"
#include "core/config/data_config.h"
#include "core/data/token_manifest.h"
#include "core/data/token_shards.h"
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
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) Die("cannot write " + path);
    return path;
  }

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: FuzzShard(rest); break;
    case 1: FuzzManifest(rest); break;
    default: FuzzDocuments(rest); break;
  }
  return 0;
}
