// sweeps/fit/csv_records.h
//
// The CSV reading behind every results file rung takes (`rung fit --from-csv`'s ladders,
// `rung laws --from-csv`'s runs): a header naming columns from a known set (case-insensitive, any
// order), then one record per line. Blank lines and lines starting with '#' are skipped; fields may be
// quoted ("a,b"; "" inside quotes is a quote); whitespace around unquoted fields is ignored.
//
// Errors name the file and the line ("runs.csv:7: column 'loss': 'n/a' is not a number") and are
// gathered, up to kMaxCsvErrors, so that a file's problems are listed at once.
//
// Example:
//   CsvErrors errors("runs.csv");
//   StatusOr<CsvRecords> records = ParseCsvRecords(text, schema, &errors);
//   for (const CsvRecord& record : records->records) {
//     double loss = 0;
//     errors.Number(record, "loss", &loss);
//   }
//   if (!errors.empty()) return errors.ToStatus();
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace rung::fit {

inline constexpr size_t kMaxCsvErrors = 20;

// One data line: its 1-based line number and its fields, by column name (absent columns are not keys).
struct CsvRecord {
  int line = 0;
  std::map<std::string, std::string> fields;

  const std::string* Field(const std::string& column) const;
};

struct CsvRecords {
  std::vector<std::string> columns;  // the header's columns, lower case, in file order
  std::vector<CsvRecord> records;
  bool Has(const std::string& column) const;
};

// The problems found in one file, each "<source>:<line>: <message>".
class CsvErrors {
 public:
  explicit CsvErrors(std::string source) : source_(std::move(source)) {}
  void Add(int line, const std::string& message);
  bool empty() const { return errors_.empty(); }
  // INVALID_ARGUMENT listing every problem, one per line. REQUIRES: !empty().
  Status ToStatus() const;
  const std::string& source() const { return source_; }

  // A finite or non-finite number from `column`; false (and an error) when it is empty or not a number.
  bool Number(const CsvRecord& record, const std::string& column, double* value);
  // An integer; false (and an error) otherwise.
  bool Integer(const CsvRecord& record, const std::string& column, int64_t* value);

 private:
  std::string source_;
  std::vector<std::string> errors_;
};

// The columns a file may have, and how its messages name them.
struct CsvSchema {
  std::vector<std::string> known;     // allowed column names, lower case
  std::vector<std::string> required;  // of which these must be present
  std::string columns;                // "variant, label, compute, loss and optionally seed, seconds"
  std::string header;                 // "variant,label,compute,loss (seed and seconds are optional)"
};

// Splits `text` into records. Line problems (an unterminated quote, a wrong field count) go to
// `errors` and the line is skipped; the header's problems, an empty file and a header without
// records return INVALID_ARGUMENT at once.
StatusOr<CsvRecords> ParseCsvRecords(std::string_view text, const CsvSchema& schema, CsvErrors* errors);

// A file's whole text: NOT_FOUND when it cannot be opened, INVALID_ARGUMENT for a directory.
StatusOr<std::string> ReadCsvText(const std::string& path);

}  // namespace rung::fit
