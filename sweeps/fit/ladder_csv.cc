#include "sweeps/fit/ladder_csv.h"

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

const std::vector<std::string>& KnownColumns() {
  static const std::vector<std::string> columns = {"variant", "label", "compute", "loss", "seed", "seconds"};
  return columns;
}

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

bool ParseDouble(const std::string& text, double* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && errno != ERANGE;
}

bool ParseInt(const std::string& text, int64_t* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  *value = parsed;
  return end == text.c_str() + text.size() && errno != ERANGE;
}

}  // namespace

StatusOr<LadderResults> ParseLadderCsv(std::string_view text, const std::string& source) {
  LadderResults ladder;
  ladder.source = source;
  std::vector<std::string> errors;
  auto error = [&](int line, const std::string& message) {
    if (errors.size() < 20) errors.push_back(source + ":" + std::to_string(line) + ": " + message);
  };
  auto finish = [&]() -> Status {
    std::string message = errors.front();
    for (size_t index = 1; index < errors.size(); ++index) message += "\n" + errors[index];
    return Status::InvalidArgument(message);
  };

  // Column name -> field index; -1 when absent.
  std::map<std::string, int> column;
  for (const std::string& name : KnownColumns()) column[name] = -1;
  size_t header_fields = 0;
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
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string trimmed = Trim(line);
    if (trimmed.empty() || trimmed[0] == '#') {
      if (newline == text.size()) break;
      continue;
    }
    std::string split_error;
    if (!SplitFields(line, &fields, &split_error)) {
      error(line_number, split_error);
      continue;
    }
    if (!have_header) {
      have_header = true;
      header_fields = fields.size();
      for (size_t index = 0; index < fields.size(); ++index) {
        std::string name = Lower(fields[index]);
        auto known = column.find(name);
        if (known == column.end()) {
          std::string nearest = NearestKey(name, KnownColumns());
          error(line_number, "unknown column '" + fields[index] + "'" +
                                 (nearest.empty() ? std::string() : " (did you mean '" + nearest + "'?)") +
                                 "; the columns are variant, label, compute, loss and optionally seed, seconds");
        } else if (known->second >= 0) {
          error(line_number, "column '" + name + "' appears twice");
        } else {
          known->second = static_cast<int>(index);
        }
      }
      for (const char* required : {"variant", "label", "compute", "loss"}) {
        if (column[required] < 0) {
          error(line_number, std::string("missing column '") + required +
                                 "'; the header needs variant,label,compute,loss (seed and seconds are optional)");
        }
      }
      if (!errors.empty()) return finish();
      if (newline == text.size()) break;
      continue;
    }
    if (fields.size() != header_fields) {
      error(line_number, std::to_string(fields.size()) + " fields, the header has " + std::to_string(header_fields));
      if (newline == text.size()) break;
      continue;
    }
    LadderRun run;
    run.origin = source + ":" + std::to_string(line_number);
    run.variant = fields[column["variant"]];
    run.label = fields[column["label"]];
    if (run.variant.empty()) error(line_number, "column 'variant' is empty");
    if (run.label.empty()) error(line_number, "column 'label' is empty");
    auto number = [&](const char* name, double* value) {
      const std::string& field = fields[column[name]];
      if (!ParseDouble(field, value)) {
        error(line_number, std::string("column '") + name +
                               "': " + (field.empty() ? std::string("empty") : "'" + field + "' is not a number"));
      }
    };
    number("compute", &run.compute);
    number("loss", &run.loss);
    if (column["seed"] >= 0) {
      int64_t seed = 0;
      const std::string& field = fields[column["seed"]];
      if (!ParseInt(field, &seed)) {
        error(line_number,
              "column 'seed': " + (field.empty() ? std::string("empty") : "'" + field + "' is not an integer"));
      }
      run.seed = seed;
    }
    if (column["seconds"] >= 0) {
      double seconds = 0;
      number("seconds", &seconds);
      run.seconds = seconds;
    }
    ladder.runs.push_back(std::move(run));
    if (newline == text.size()) break;
  }
  if (!have_header)
    return Status::InvalidArgument(source + ": empty file; expected a header variant,label,compute,loss");
  if (!errors.empty()) return finish();
  if (ladder.runs.empty()) return Status::InvalidArgument(source + ": a header but no runs");
  RUNG_RETURN_IF_ERROR(ValidateLadderResults(ladder));
  return ladder;
}

StatusOr<LadderResults> ReadLadderCsv(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    return Status::InvalidArgument(path + " is a directory, not a CSV file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::DataLoss("cannot read " + path);
  return ParseLadderCsv(text.str(), path);
}

}  // namespace rung::fit
