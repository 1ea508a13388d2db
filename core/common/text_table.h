// core/common/text_table.h
//
// A table in the three forms every command offers: aligned text for people, CSV and JSON (a list of
// objects keyed by column) for scripts. Columns are as wide as their widest cell in characters (UTF-8
// aware: "±" is one), two spaces apart; a column is left-aligned unless AlignRight says otherwise
// (numbers); trailing blanks are dropped. Numbers are formatted by the caller. The one table printer
// of the CLI (coordinator/cli) and of the fit reports (sweeps/fit/report_format.h).
//
// Example:
//   TextTable table({"variant", "CM"});
//   table.AlignRight(1);
//   table.AddRow({"lerope", "1.034"}, {{"variant", "lerope"}, {"multiplier", 1.0342}});
//   table.Print(std::cout, "table");   // or "csv", "json"
//
// Thread safety: a value; const methods may run concurrently.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rung {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> columns);

  // REQUIRES: column < the number of columns.
  void AlignRight(size_t column);

  // Cells beyond the columns are dropped, missing ones blank. `json_row` (optional) holds typed values
  // for JSON; without it the row's JSON is its cells by column name.
  void AddRow(std::vector<std::string> cells, nlohmann::json json_row = nullptr);

  // The aligned text, each line prefixed with `indent`.
  std::string Text(const std::string& indent = "") const;
  void PrintText(std::ostream& out) const;
  void PrintCsv(std::ostream& out) const;
  void PrintJson(std::ostream& out) const;
  // The rows as PrintJson prints them.
  nlohmann::json Json() const { return json_rows_; }
  // format: "table" | "csv" | "json".
  void Print(std::ostream& out, const std::string& format) const;

 private:
  std::vector<std::string> columns_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<nlohmann::json> json_rows_;
};

}  // namespace rung
