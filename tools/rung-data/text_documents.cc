#include "tools/rung-data/text_documents.h"

#include <nlohmann/json.hpp>

#include "core/common/file_bytes.h"
#include "core/common/sha256.h"
#include "core/common/utf8.h"
#include "core/data/byte_corpus.h"

namespace rung::data_tool {
namespace {

Status RequireUtf8(const std::string& path, std::string_view text, int64_t base_offset) {
  const size_t valid = ValidUtf8Prefix(text);
  if (valid == text.size()) return Status::Ok();
  return Status::InvalidArgument("input " + path + ": byte offset " + std::to_string(base_offset + static_cast<int64_t>(valid)) +
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
      if (object.is_discarded()) return Status::InvalidArgument(where + ": not a JSON value (or invalid UTF-8)");
      if (!object.is_object()) return Status::InvalidArgument(where + ": not a JSON object");
      auto value = object.find(field);
      if (value == object.end() || !value->is_string()) {
        return Status::InvalidArgument(where + ": no string field \"" + field + "\" (--text-field)");
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

}  // namespace

StatusOr<TextDocuments> ReadTextDocuments(const std::vector<std::string>& inputs, const DocumentOptions& options) {
  TextDocuments out;
  std::string contents;
  for (const std::string& input : inputs) {
    RUNG_ASSIGN_OR_RETURN(const std::vector<std::string> files, ListCorpusFiles(input));
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
  if (out.documents.empty()) return Status::InvalidArgument("the inputs hold no document (empty files?)");
  return out;
}

}  // namespace rung::data_tool
