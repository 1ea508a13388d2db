// core/common/text_table.cc
#include "core/common/text_table.h"

#include <algorithm>

#include "core/common/csv_field.h"

namespace rung {
namespace {

// Characters shown: UTF-8 continuation bytes do not count.
size_t DisplayLength(const std::string& text) {
  size_t length = 0;
  for (const unsigned char c : text) length += (c & 0xC0) != 0x80;
  return length;
}

}  // namespace

TextTable::TextTable(std::vector<std::string> columns) : columns_(std::move(columns)), right_(columns_.size(), false) {}

void TextTable::AlignRight(size_t column) { right_.at(column) = true; }

void TextTable::AddRow(std::vector<std::string> cells, nlohmann::json json_row) {
  cells.resize(columns_.size());
  if (json_row.is_null()) {
    json_row = nlohmann::json::object();
    for (size_t column = 0; column < columns_.size(); ++column) json_row[columns_[column]] = cells[column];
  }
  rows_.push_back(std::move(cells));
  json_rows_.push_back(std::move(json_row));
}

std::string TextTable::Text(const std::string& indent) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t column = 0; column < columns_.size(); ++column) {
    widths[column] = DisplayLength(columns_[column]);
    for (const auto& row : rows_) widths[column] = std::max(widths[column], DisplayLength(row[column]));
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text = indent;
    for (size_t column = 0; column < cells.size(); ++column) {
      const std::string pad(widths[column] - DisplayLength(cells[column]), ' ');
      if (column > 0) text += "  ";
      text += right_[column] ? pad + cells[column] : cells[column] + pad;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  line(columns_);
  for (const auto& row : rows_) line(row);
  return out;
}

void TextTable::PrintText(std::ostream& out) const { out << Text(); }

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

}  // namespace rung
