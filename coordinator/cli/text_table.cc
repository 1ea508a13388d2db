#include "coordinator/cli/text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/common/csv_field.h"

namespace rung::cli {

void TextTable::AddRow(std::vector<std::string> cells, nlohmann::json json_row) {
  cells.resize(columns_.size());
  if (json_row.is_null()) {
    json_row = nlohmann::json::object();
    for (size_t column = 0; column < columns_.size(); ++column) json_row[columns_[column]] = cells[column];
  }
  rows_.push_back(std::move(cells));
  json_rows_.push_back(std::move(json_row));
}

void TextTable::PrintText(std::ostream& out) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t column = 0; column < columns_.size(); ++column) {
    widths[column] = columns_[column].size();
    for (const auto& row : rows_) widths[column] = std::max(widths[column], row[column].size());
  }
  auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t column = 0; column < cells.size(); ++column) {
      std::string cell = cells[column];
      cell.resize(widths[column], ' ');
      line += (column ? "  " : "") + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  print_row(columns_);
  for (const auto& row : rows_) print_row(row);
}

void TextTable::PrintCsv(std::ostream& out) const {
  auto print_row = [&](const std::vector<std::string>& cells) {
    for (size_t column = 0; column < cells.size(); ++column) out << (column ? "," : "") << CsvField(cells[column]);
    out << '\n';
  };
  print_row(columns_);
  for (const auto& row : rows_) print_row(row);
}

void TextTable::PrintJson(std::ostream& out) const { out << nlohmann::json(json_rows_).dump(2) << '\n'; }

void TextTable::Print(std::ostream& out, const std::string& format) const {
  if (format == "json") return PrintJson(out);
  if (format == "csv") return PrintCsv(out);
  PrintText(out);
}

std::string HumanCount(double value) {
  const char* suffixes[] = {"", "K", "M", "B", "T"};
  int index = 0;
  while (std::fabs(value) >= 1000.0 && index < 4) {
    value /= 1000.0;
    ++index;
  }
  char text[32];
  std::snprintf(text, sizeof(text), index == 0 ? "%.0f%s" : "%.2f%s", value, suffixes[index]);
  return text;
}

std::string Scientific(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.*e", digits - 1, value);
  return text;
}

std::string HumanDuration(double seconds) {
  char text[32];
  if (seconds < 120) std::snprintf(text, sizeof(text), "%.0f s", seconds);
  else if (seconds < 7200) std::snprintf(text, sizeof(text), "%.1f min", seconds / 60);
  else if (seconds < 172800) std::snprintf(text, sizeof(text), "%.1f h", seconds / 3600);
  else std::snprintf(text, sizeof(text), "%.1f days", seconds / 86400);
  return text;
}

}  // namespace rung::cli
