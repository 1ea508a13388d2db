#include "sweeps/fit/csv_records.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/config/config_error.h"

namespace rung::fit {
namespace {

std::string Trim(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Splits one CSV line; false with `error` set on an unterminated quote.
bool SplitFields(std::string_view line, std::vector<std::string>* fields, std::string* error) {
  fields->clear();
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t pos = 0; pos < line.size(); ++pos) {
    char c = line[pos];
    if (quoted) {
      if (c == '"' && pos + 1 < line.size() && line[pos + 1] == '"') {
        field += '"';
        ++pos;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && Trim(field).empty()) {
      quoted = was_quoted = true;
      field.clear();
    } else if (c == ',') {
      fields->push_back(was_quoted ? field : Trim(field));
      field.clear();
      was_quoted = false;
    } else {
      field += c;
    }
  }
  if (quoted) {
    *error = "unterminated quote";
    return false;
  }
  fields->push_back(was_quoted ? field : Trim(field));
  return true;
}

}  // namespace

const std::string* CsvRecord::Field(const std::string& column) const {
  auto it = fields.find(column);
  return it == fields.end() ? nullptr : &it->second;
}

bool CsvRecords::Has(const std::string& column) const {
  return std::find(columns.begin(), columns.end(), column) != columns.end();
}

void CsvErrors::Add(int line, const std::string& message) {
  if (errors_.size() < kMaxCsvErrors) errors_.push_back(source_ + ":" + std::to_string(line) + ": " + message);
}

Status CsvErrors::ToStatus() const {
  std::string message = errors_.front();
  for (size_t index = 1; index < errors_.size(); ++index) message += "\n" + errors_[index];
  return Status::InvalidArgument(message);
}

bool CsvErrors::Number(const CsvRecord& record, const std::string& column, double* value) {
  const std::string* field = record.Field(column);
  if (field != nullptr && !field->empty()) {
    errno = 0;
    char* end = nullptr;
    *value = std::strtod(field->c_str(), &end);
    if (end == field->c_str() + field->size() && errno != ERANGE) return true;
  }
  Add(record.line, "column '" + column + "': " +
                       (field == nullptr || field->empty() ? std::string("empty") : "'" + *field + "' is not a number"));
  return false;
}

bool CsvErrors::Integer(const CsvRecord& record, const std::string& column, int64_t* value) {
  const std::string* field = record.Field(column);
  if (field != nullptr && !field->empty()) {
    errno = 0;
    char* end = nullptr;
    long long parsed = std::strtoll(field->c_str(), &end, 10);
    *value = parsed;
    if (end == field->c_str() + field->size() && errno != ERANGE) return true;
  }
  Add(record.line, "column '" + column + "': " +
                       (field == nullptr || field->empty() ? std::string("empty")
                                                           : "'" + *field + "' is not an integer"));
  return false;
}

StatusOr<CsvRecords> ParseCsvRecords(std::string_view text, const CsvSchema& schema, CsvErrors* errors) {
  CsvRecords result;
  std::vector<int> index_of;  // header field -> column position in result.columns, -1 when unknown
  bool have_header = false;
  int line_number = 0;
  size_t pos = 0;
  std::vector<std::string> fields;
  while (pos <= text.size()) {
    size_t newline = text.find('\n', pos);
    if (newline == std::string_view::npos) newline = text.size();
    std::string_view line = text.substr(pos, newline - pos);
    pos = newline + 1;
    ++line_number;
    const bool last = newline == text.size();
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string trimmed = Trim(line);
    if (trimmed.empty() || trimmed[0] == '#') {
      if (last) break;
      continue;
    }
    std::string split_error;
    if (!SplitFields(line, &fields, &split_error)) {
      errors->Add(line_number, split_error);
      if (last) break;
      continue;
    }
    if (!have_header) {
      have_header = true;
      for (const std::string& field : fields) {
        std::string name = Lower(field);
        if (std::find(schema.known.begin(), schema.known.end(), name) == schema.known.end()) {
          std::string nearest = NearestKey(name, schema.known);
          errors->Add(line_number, "unknown column '" + field + "'" +
                                       (nearest.empty() ? std::string() : " (did you mean '" + nearest + "'?)") +
                                       "; the columns are " + schema.columns);
        } else if (result.Has(name)) {
          errors->Add(line_number, "column '" + name + "' appears twice");
        }
        result.columns.push_back(name);
      }
      for (const std::string& required : schema.required) {
        if (!result.Has(required)) {
          errors->Add(line_number, "missing column '" + required + "'; the header needs " + schema.header);
        }
      }
      if (!errors->empty()) return errors->ToStatus();
      if (last) break;
      continue;
    }
    if (fields.size() != result.columns.size()) {
      errors->Add(line_number, std::to_string(fields.size()) + " fields, the header has " +
                                   std::to_string(result.columns.size()));
      if (last) break;
      continue;
    }
    CsvRecord record;
    record.line = line_number;
    for (size_t index = 0; index < fields.size(); ++index) record.fields[result.columns[index]] = fields[index];
    result.records.push_back(std::move(record));
    if (last) break;
  }
  if (!have_header) {
    return Status::InvalidArgument(errors->source() + ": empty file; expected a header " + schema.header);
  }
  if (result.records.empty() && errors->empty()) {
    return Status::InvalidArgument(errors->source() + ": a header but no runs");
  }
  return result;
}

StatusOr<std::string> ReadCsvText(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    return Status::InvalidArgument(path + " is a directory, not a CSV file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::DataLoss("cannot read " + path);
  return text.str();
}

}  // namespace rung::fit
