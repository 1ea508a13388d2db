#include "core/data/byte_corpus.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "core/common/file_bytes.h"
#include "core/common/sha256.h"
#include "core/data/sampling.h"

namespace rung {
namespace {

namespace fs = std::filesystem;

bool IsHidden(const fs::path& path) {
  const std::string name = path.filename().string();
  return !name.empty() && name[0] == '.';
}


}  // namespace

std::vector<std::string_view> SplitDocuments(std::string_view text, std::string_view separator) {
  std::vector<std::string_view> documents;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(separator, begin);
    if (end == std::string_view::npos) end = text.size();
    if (end > begin) documents.push_back(text.substr(begin, end - begin));
    begin = end + separator.size();
  }
  return documents;
}

double DocumentSplitDraw(uint64_t split_seed, int64_t document_index) {
  return CounterRng(MixKey(MixKey(split_seed, kDocumentSplitDomain), static_cast<uint64_t>(document_index)))
      .Uniform();
}

std::vector<bool> ValidationDocuments(size_t documents, uint64_t split_seed, double val_fraction) {
  std::vector<double> draws(documents);
  std::vector<bool> in_validation(documents);
  for (size_t d = 0; d < documents; ++d) {
    draws[d] = DocumentSplitDraw(split_seed, static_cast<int64_t>(d));
    in_validation[d] = draws[d] < val_fraction;
  }
  const auto validation_count = std::count(in_validation.begin(), in_validation.end(), true);
  if (validation_count == 0) {
    in_validation[std::min_element(draws.begin(), draws.end()) - draws.begin()] = true;
  } else if (validation_count == static_cast<int64_t>(documents)) {
    in_validation[std::max_element(draws.begin(), draws.end()) - draws.begin()] = false;
  }
  return in_validation;
}

StatusOr<std::vector<std::string>> ListCorpusFiles(const std::string& path, const CorpusWalk& walk) {
  const std::string named = walk.what + " '" + path + "'";
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) return Status::NotFound(named + " does not exist");
  if (fs::is_regular_file(status)) return std::vector<std::string>{path};
  if (!fs::is_directory(status)) return Status::DataLoss(named + " is neither a file nor a folder");
  std::vector<std::string> files;
  fs::recursive_directory_iterator it(path, error), end;
  if (error) return Status::NotFound("cannot read folder '" + path + "': " + error.message());
  for (; it != end; it.increment(error)) {
    if (error) return Status::NotFound("cannot read folder '" + path + "': " + error.message());
    const bool folder = it->is_directory();
    if (IsHidden(it->path()) || (folder && walk.skip_folder && walk.skip_folder(it->path().string()))) {
      if (folder) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(it->path().string());
  }
  if (error) return Status::NotFound("cannot read folder '" + path + "': " + error.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) return Status::DataLoss(walk.what + " folder '" + path + "' holds no files");
  return files;
}

StatusOr<std::unique_ptr<ByteCorpus>> ByteCorpus::Load(const DataConfig& config, uint64_t seed) {
  RUNG_ASSIGN_OR_RETURN(const std::vector<std::string> files, ListCorpusFiles(config.path));
  return LoadFiles(files, config, seed, "text", config.path, nlohmann::json::object());
}

StatusOr<std::unique_ptr<ByteCorpus>> ByteCorpus::LoadFiles(const std::vector<std::string>& files,
                                                            const DataConfig& config, uint64_t seed,
                                                            const std::string& source, const std::string& path,
                                                            nlohmann::json provenance,
                                                            const std::vector<int64_t>& group_starts) {
  if (config.doc_separator.empty()) return Status::InvalidArgument("data.doc_separator must not be empty");
  std::unique_ptr<ByteCorpus> corpus(new ByteCorpus());
  corpus->source_ = source;
  corpus->path_ = path;
  corpus->files_ = files;
  corpus->config_ = config;
  corpus->seed_ = seed;
  corpus->provenance_ = std::move(provenance);

  // Read every file once: hash its bytes, cut it into documents (kept as copies; views would dangle).
  Sha256Hasher hasher;
  std::vector<std::string> documents;
  std::string contents;
  for (const std::string& file : files) {
    RUNG_RETURN_IF_ERROR(ReadFileBytes(file, "", &contents));
    hasher.Update(contents);
    for (std::string_view document : SplitDocuments(contents, config.doc_separator)) {
      documents.emplace_back(document);
    }
  }
  corpus->sha256_ = hasher.FinishHex();
  if (!group_starts.empty()) {
    std::vector<std::string> groups;
    for (size_t g = 0; g < group_starts.size(); ++g) {
      const int64_t first = group_starts[g];
      const int64_t end = g + 1 < group_starts.size() ? group_starts[g + 1] : static_cast<int64_t>(documents.size());
      if (first < 0 || end > static_cast<int64_t>(documents.size()) || first >= end) {
        return Status::DataLoss("'" + path + "': document groups start at " + std::to_string(first) +
                                       ", which does not fit its " + std::to_string(documents.size()) +
                                       " documents in order (stale manifest?)");
      }
      std::string group;
      for (int64_t d = first; d < end; ++d) group += documents[static_cast<size_t>(d)];
      groups.push_back(std::move(group));
    }
    documents = std::move(groups);
  }
  if (documents.empty()) return Status::DataLoss("no text in data.path '" + path + "'");

  const std::string& separator = config.doc_separator;
  if (documents.size() == 1) {
    // One document: hold out its tail.
    corpus->single_document_ = true;
    const std::string& only = documents[0];
    const auto held_out = static_cast<size_t>(std::llround(static_cast<double>(only.size()) * config.val_fraction));
    const size_t cut = only.size() - std::min(held_out, only.size());
    corpus->train_bytes_ = separator + only.substr(0, cut);
    corpus->validation_bytes_ = only.substr(cut);
    corpus->train_documents_ = {0};
    corpus->validation_documents_ = {0};
  } else {
    const std::vector<bool> in_validation = ValidationDocuments(documents.size(), config.split_seed, config.val_fraction);
    for (size_t d = 0; d < documents.size(); ++d) {
      std::string& stream = in_validation[d] ? corpus->validation_bytes_ : corpus->train_bytes_;
      stream += separator;
      stream += documents[d];
      (in_validation[d] ? corpus->validation_documents_ : corpus->train_documents_).push_back(static_cast<int64_t>(d));
    }
  }

  for (Split split : {Split::kTrain, Split::kValidation}) {
    const int64_t tokens = corpus->SplitTokens(split);
    if (tokens < config.seq_len + 1) {
      return Status::InvalidArgument(
          std::string(split == Split::kTrain ? "training" : "validation") + " split of '" + path + "' has " +
          std::to_string(tokens) + " bytes, fewer than data.seq_len + 1 = " + std::to_string(config.seq_len + 1) +
          " (more text, a shorter seq_len or another val_fraction)");
    }
  }
  if (config.eval_min_doc_tokens > 0) {
    const std::string& validation = corpus->validation_bytes_;
    const char start = separator[0];
    corpus->eval_documents_ =
        LongDocuments(static_cast<int64_t>(validation.size()), config.eval_min_doc_tokens,
                      [&](int64_t p) { return validation[static_cast<size_t>(p)] == start; });
    if (corpus->eval_documents_.empty()) {
      return Status::InvalidArgument(
          "data.eval_min_doc_tokens = " + std::to_string(config.eval_min_doc_tokens) + ": no validation document of '" +
          path + "' is that long (" + std::to_string(corpus->validation_documents_.size()) +
          " validation documents; a smaller value, longer documents (data.builtin_documents: books) or another "
          "val_fraction)");
    }
  }
  return corpus;
}

TokenBatch ByteCorpus::Batch(Split split, int64_t index, int64_t batch_size, int64_t seq_len) const {
  const std::string& stream = SplitBytes(split);
  return MakeWindowBatch(split, index, batch_size, seq_len, seed_, static_cast<int64_t>(stream.size()),
                         [&stream](int64_t start, int64_t count, int32_t* out) {
                           for (int64_t t = 0; t < count; ++t) {
                             out[t] = static_cast<unsigned char>(stream[static_cast<size_t>(start + t)]);
                           }
                         },
                         &eval_documents_);
}

const std::vector<int32_t>* ByteCorpus::TokenByteLengths() const {
  static const std::vector<int32_t> kOneBytePerToken(256, 1);
  return &kOneBytePerToken;
}

int64_t ByteCorpus::SplitTokens(Split split) const { return static_cast<int64_t>(SplitBytes(split).size()); }

const std::string& ByteCorpus::SplitBytes(Split split) const {
  return split == Split::kTrain ? train_bytes_ : validation_bytes_;
}

const std::vector<int64_t>& ByteCorpus::DocumentIndices(Split split) const {
  return split == Split::kTrain ? train_documents_ : validation_documents_;
}

nlohmann::json ByteCorpus::Describe() const {
  nlohmann::json description = {
      {"source", source_},
      {"path", path_},
      {"files", files_.size()},
      {"documents", {{"train", train_documents_.size()}, {"validation", validation_documents_.size()}}},
      {"tokens", {{"train", SplitTokens(Split::kTrain)}, {"validation", SplitTokens(Split::kValidation)}}},
      {"split", single_document_ ? "single_document_tail" : "by_document"},
      {"val_fraction", config_.val_fraction},
      {"split_seed", config_.split_seed},
      {"doc_separator", config_.doc_separator},
      {"sha256", sha256_},
  };
  if (config_.eval_min_doc_tokens > 0) {
    description["eval_documents"] = {{"min_tokens", config_.eval_min_doc_tokens},
                                     {"documents", eval_documents_.size()}};
  }
  if (files_.size() <= 64) description["file_list"] = files_;
  if (provenance_.is_object()) description.update(provenance_);
  return description;
}

}  // namespace rung
