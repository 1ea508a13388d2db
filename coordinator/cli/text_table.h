// coordinator/cli/text_table.h
//
// Output of CLI tables in the three formats every command offers: aligned text for people, CSV and
// JSON (a list of objects keyed by column) for scripts. Numbers are formatted by the caller.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rung::cli {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> columns) : columns_(std::move(columns)) {}

  // REQUIRES: one cell per column. `json_row` (optional) holds typed values for --format json.
  void AddRow(std::vector<std::string> cells, nlohmann::json json_row = nullptr);

  void PrintText(std::ostream& out) const;
  void PrintCsv(std::ostream& out) const;
  void PrintJson(std::ostream& out) const;
  // The rows as --format json prints them.
  nlohmann::json Json() const { return json_rows_; }
  // format: "table" | "csv" | "json".
  void Print(std::ostream& out, const std::string& format) const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<nlohmann::json> json_rows_;
};

// 18874368 -> "18.87M"; 1.2e15 -> "1.20e+15" style helpers for people.
std::string HumanCount(double value);
std::string Scientific(double value, int digits = 3);
std::string HumanDuration(double seconds);

}  // namespace rung::cli
