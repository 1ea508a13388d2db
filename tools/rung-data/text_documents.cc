#include "tools/rung-data/text_documents.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/common/file_bytes.h"
#include "core/common/sha256.h"
#include "core/common/utf8.h"
#include "core/data/byte_corpus.h"

namespace rung::data_tool {
namespace {

namespace fs = std::filesystem;

Status RequireUtf8(const std::string& path, std::string_view text, int64_t base_offset) {
  const size_t valid = ValidUtf8Prefix(text);
  if (valid == text.size()) return Status::Ok();
  return Status::DataLoss("input " + path + ": byte offset " + std::to_string(base_offset + static_cast<int64_t>(valid)) +
                          ": invalid UTF-8 (rung-data reads text; convert the file to UTF-8)");
}

Status AppendJsonLines(const std::string& path, const std::string& contents, const std::string& field,
                       TextDocuments* out) {
  size_t begin = 0;
  int64_t line_number = 0;
  while (begin < contents.size()) {
    size_t end = contents.find('\n', begin);
    if (end == std::string::npos) end = contents.size();
    ++line_number;
    const std::string_view line(contents.data() + begin, end - begin);
    const std::string where = "input " + path + ":" + std::to_string(line_number) + " (byte offset " +
                              std::to_string(begin) + ")";
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      const nlohmann::json object = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
      if (object.is_discarded()) return Status::DataLoss(where + ": not a JSON value (or invalid UTF-8)");
      if (!object.is_object()) return Status::DataLoss(where + ": not a JSON object");
      auto value = object.find(field);
      if (value == object.end() || !value->is_string()) {
        return Status::DataLoss(where + ": no string field \"" + field + "\" (--text-field)");
      }
      std::string text = value->get<std::string>();
      if (!text.empty()) {
        out->bytes += static_cast<int64_t>(text.size());
        out->documents.push_back(std::move(text));
      }
    }
    begin = end + 1;
  }
  return Status::Ok();
}

// The folder as one spelling, for comparing two paths that may name it differently.
std::string SameFolderKey(const std::string& path) {
  std::error_code error;
  fs::path absolute = fs::weakly_canonical(fs::absolute(path, error), error);
  std::string key = absolute.lexically_normal().string();
  while (key.size() > 1 && key.back() == '/') key.pop_back();
  return key;
}

// What rung-data writes: prepare's manifest.json beside its copy of the tokenizer (tokenizer.model or
// tokenizer.json), or tokenizer train's tokenizer.model beside its tokenizer.json.
bool IsRungDataOutput(const std::string& folder) {
  std::error_code error;
  const fs::path path(folder);
  const bool model = fs::is_regular_file(path / "tokenizer.model", error);
  const bool json = fs::is_regular_file(path / "tokenizer.json", error);
  return (model && json) || ((model || json) && fs::is_regular_file(path / "manifest.json", error));
}

}  // namespace

StatusOr<TextDocuments> ReadTextDocuments(const std::vector<std::string>& inputs, const DocumentOptions& options) {
  TextDocuments out;
  std::vector<std::string> excluded;
  for (const std::string& folder : options.exclude) excluded.push_back(SameFolderKey(folder));
  CorpusWalk walk;
  walk.what = "--input";
  walk.skip_folder = [&](const std::string& folder) {
    const bool skip = IsRungDataOutput(folder) ||
                      std::find(excluded.begin(), excluded.end(), SameFolderKey(folder)) != excluded.end();
    if (skip) out.skipped_folders.push_back(folder);
    return skip;
  };
  std::string contents;
  for (const std::string& input : inputs) {
    std::error_code error;
    if (fs::is_directory(input, error) &&
        std::find(excluded.begin(), excluded.end(), SameFolderKey(input)) != excluded.end()) {
      return Status::InvalidArgument("--input " + input + " is the output folder (--out): rung-data does not read "
                                     "what it writes");
    }
    RUNG_ASSIGN_OR_RETURN(const std::vector<std::string> files, ListCorpusFiles(input, walk));
    for (const std::string& path : files) {
      RUNG_RETURN_IF_ERROR(ReadFileBytes(path, "input", &contents));
      out.sources.push_back({path, static_cast<int64_t>(contents.size()), Sha256Hex(contents)});
      if (!options.text_field.empty()) {
        RUNG_RETURN_IF_ERROR(AppendJsonLines(path, contents, options.text_field, &out));
        continue;
      }
      RUNG_RETURN_IF_ERROR(RequireUtf8(path, contents, 0));
      if (options.split_on.empty()) {
        if (contents.empty()) continue;
        out.bytes += static_cast<int64_t>(contents.size());
        out.documents.push_back(contents);
        continue;
      }
      for (std::string_view document : SplitDocuments(contents, options.split_on)) {
        out.bytes += static_cast<int64_t>(document.size());
        out.documents.emplace_back(document);
      }
    }
  }
  if (out.documents.empty()) return Status::DataLoss("the inputs hold no document (empty files?)");
  return out;
}

}  // namespace rung::data_tool
