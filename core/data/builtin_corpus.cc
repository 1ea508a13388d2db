#include "core/data/builtin_corpus.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/common/executable_folder.h"
#include "core/data/byte_corpus.h"
#include "core/data/token_manifest.h"
#include "core/data/token_shards.h"

namespace rung {
namespace {

namespace fs = std::filesystem;

constexpr char kRelativeText[] = "builtin/austen.txt";

}  // namespace

std::vector<std::string> BuiltinCorpusCandidates() {
  std::vector<std::string> candidates;
  if (const char* data_dir = std::getenv("RUNG_DATA_DIR"); data_dir != nullptr && *data_dir != '\0') {
    candidates.push_back((fs::path(data_dir) / kRelativeText).string());
  }
  if (const std::string folder = ExecutableFolder(); !folder.empty()) {
    candidates.push_back((fs::path(folder) / ".." / "data" / kRelativeText).lexically_normal().string());
  }
  candidates.push_back(std::string("/usr/local/share/rung/") + kRelativeText);
  candidates.push_back(std::string("/usr/share/rung/") + kRelativeText);
  return candidates;
}

StatusOr<BuiltinCorpusFiles> FindBuiltinCorpus(const std::vector<std::string>& candidates) {
  std::error_code error;
  for (const std::string& candidate : candidates) {
    if (!fs::is_regular_file(candidate, error)) continue;
    BuiltinCorpusFiles files;
    files.text_path = candidate;
    files.manifest_path = fs::path(candidate).replace_extension(".json").string();
    std::ifstream in(files.manifest_path);
    if (!in) {
      return Status::NotFound("builtin corpus " + candidate + " has no manifest " + files.manifest_path +
                              "; rebuild it with `make corpus` or deploy/fetch-builtin-corpus.sh " +
                              fs::path(candidate).parent_path().string());
    }
    const nlohmann::json manifest = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    auto field = [&manifest](const char* key) -> const nlohmann::json* {
      if (!manifest.is_object() || !manifest.contains(key) || !manifest[key].is_string()) return nullptr;
      return &manifest[key];
    };
    if (field("package") == nullptr || field("version") == nullptr || field("sha256") == nullptr) {
      return Status::DataLoss("builtin corpus manifest " + files.manifest_path +
                                     " is not a JSON object with string \"package\", \"version\" and \"sha256\"");
    }
    files.package = field("package")->get<std::string>();
    files.version = field("version")->get<std::string>();
    files.sha256 = field("sha256")->get<std::string>();
    if (auto books = manifest.find("book_first_documents"); books != manifest.end()) {
      if (!books->is_array()) {
        return Status::DataLoss("builtin corpus manifest " + files.manifest_path +
                                       ": \"book_first_documents\" must be an array of document indices");
      }
      for (const nlohmann::json& first : *books) {
        if (!first.is_number_unsigned()) {
          return Status::DataLoss("builtin corpus manifest " + files.manifest_path +
                                         ": \"book_first_documents\" must be an array of document indices");
        }
        files.book_first_documents.push_back(first.get<int64_t>());
      }
    }
    return files;
  }
  std::string message = "builtin corpus not found; looked for";
  for (const std::string& candidate : candidates) message += " " + candidate;
  message +=
      ". Build it with `make corpus`, or run deploy/fetch-builtin-corpus.sh DIR/builtin (needs r-cran-janeaustenr) "
      "and set RUNG_DATA_DIR=DIR";
  return Status::NotFound(message);
}

StatusOr<BuiltinCorpusFiles> LocateBuiltinCorpus() { return FindBuiltinCorpus(BuiltinCorpusCandidates()); }

namespace {

// data.builtin_form: bpe-4096: the prepared folder beside the text, as shards through its manifest.
StatusOr<std::unique_ptr<BatchSource>> LoadBuiltinBpeForm(const BuiltinCorpusFiles& files, const DataConfig& config,
                                                          uint64_t seed) {
  const std::string folder = (fs::path(files.text_path).parent_path() / kBuiltinBpeFolder).string();
  const std::string rebuild = "; build it with `make corpus` (deploy/build-builtin-tokens.sh)";
  if (!HasTokenManifest(folder)) {
    return Status::NotFound("data.builtin_form: bpe-4096 needs the BPE form of the builtin corpus, " + folder +
                            "/manifest.json, which is not there" + rebuild);
  }
  RUNG_ASSIGN_OR_RETURN(const TokenManifest manifest, ReadTokenManifest(folder));
  if (manifest.sources.size() != 1 || manifest.sources[0].sha256 != files.sha256 ||
      manifest.vocab_size != kBuiltinBpeVocabSize || manifest.eot_id != kBuiltinBpeEotId) {
    return Status::DataLoss(folder + "/manifest.json was not prepared from " + files.text_path + " (sha256 " +
                            files.sha256 + ") with a vocabulary of " + std::to_string(kBuiltinBpeVocabSize) +
                            " and end-of-text id " + std::to_string(kBuiltinBpeEotId) + rebuild);
  }
  if (config.val_fraction != manifest.val_fraction || config.split_seed != manifest.seed) {
    return Status::InvalidArgument(
        "data.builtin_form: bpe-4096 is split by document at val_fraction " + std::to_string(manifest.val_fraction) +
        " and split_seed " + std::to_string(manifest.seed) +
        " (the byte form's defaults, so both forms hold out the same chapters); leave data.val_fraction and "
        "data.split_seed at their defaults");
  }
  DataConfig shards = config;
  shards.source = "shards";
  shards.path = folder;
  shards.format = "auto";
  shards.vocab_size = kBuiltinBpeVocabSize;
  shards.eot_token = kBuiltinBpeEotId;
  RUNG_ASSIGN_OR_RETURN(std::unique_ptr<TokenShards> source, TokenShards::Open(shards, seed));
  return std::unique_ptr<BatchSource>(std::move(source));
}

}  // namespace

StatusOr<std::unique_ptr<BatchSource>> LoadBuiltinCorpusFrom(const BuiltinCorpusFiles& files,
                                                            const DataConfig& config, uint64_t seed) {
  if (config.builtin_form == "bpe-4096") return LoadBuiltinBpeForm(files, config, seed);
  nlohmann::json provenance = {
      {"package", files.package}, {"version", files.version}, {"manifest", files.manifest_path}};
  const bool books = config.builtin_documents == "books";
  if (books) {
    if (files.book_first_documents.empty()) {
      return Status::NotFound("data.builtin_documents: books needs the book boundaries in " + files.manifest_path +
                              " (\"book_first_documents\"), which this corpus predates; rebuild it with `make corpus` "
                              "or deploy/fetch-builtin-corpus.sh");
    }
    if (config.doc_separator != "\f") {
      return Status::InvalidArgument("data.builtin_documents: books reads the chapters at the builtin separator "
                                     "\"\\f\"; leave data.doc_separator at its default");
    }
    provenance["documents_are"] = "books";
  }
  RUNG_ASSIGN_OR_RETURN(std::unique_ptr<ByteCorpus> corpus,
                        ByteCorpus::LoadFiles({files.text_path}, config, seed, "builtin", files.text_path,
                                              std::move(provenance),
                                              books ? files.book_first_documents : std::vector<int64_t>{}));
  if (corpus->sha256() != files.sha256) {
    return Status::DataLoss("builtin corpus " + files.text_path + " has sha256 " + corpus->sha256() +
                            " but its manifest says " + files.sha256 +
                            "; rebuild it with `make corpus` or deploy/fetch-builtin-corpus.sh");
  }
  return std::unique_ptr<BatchSource>(std::move(corpus));
}

StatusOr<std::unique_ptr<BatchSource>> LoadBuiltinCorpus(const DataConfig& config, uint64_t seed) {
  RUNG_ASSIGN_OR_RETURN(const BuiltinCorpusFiles files, LocateBuiltinCorpus());
  return LoadBuiltinCorpusFrom(files, config, seed);
}

}  // namespace rung
