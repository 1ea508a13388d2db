#include "core/data/builtin_corpus.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/common/executable_folder.h"
#include "core/data/byte_corpus.h"

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
      return Status::InvalidArgument("builtin corpus manifest " + files.manifest_path +
                                     " is not a JSON object with string \"package\", \"version\" and \"sha256\"");
    }
    files.package = field("package")->get<std::string>();
    files.version = field("version")->get<std::string>();
    files.sha256 = field("sha256")->get<std::string>();
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

StatusOr<std::unique_ptr<BatchSource>> LoadBuiltinCorpusFrom(const BuiltinCorpusFiles& files,
                                                            const DataConfig& config, uint64_t seed) {
  nlohmann::json provenance = {
      {"package", files.package}, {"version", files.version}, {"manifest", files.manifest_path}};
  RUNG_ASSIGN_OR_RETURN(
      std::unique_ptr<ByteCorpus> corpus,
      ByteCorpus::LoadFiles({files.text_path}, config, seed, "builtin", files.text_path, std::move(provenance)));
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
