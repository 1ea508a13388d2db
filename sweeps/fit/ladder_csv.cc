#include "sweeps/fit/ladder_csv.h"

#include "sweeps/fit/csv_records.h"

namespace rung::fit {

StatusOr<LadderResults> ParseLadderCsv(std::string_view text, const std::string& source) {
  static const CsvSchema kSchema = {{"variant", "label", "compute", "loss", "seed", "seconds", "n", "d"},
                                    {"variant", "label", "compute", "loss"},
                                    "variant, label, compute, loss and optionally seed, seconds, n, d",
                                    "variant,label,compute,loss (seed, seconds, n and d are optional)"};
  CsvErrors errors(source);
  RUNG_ASSIGN_OR_RETURN(CsvRecords records, ParseCsvRecords(text, kSchema, &errors));
  LadderResults ladder;
  ladder.source = source;
  for (const CsvRecord& record : records.records) {
    LadderRun run;
    run.origin = source + ":" + std::to_string(record.line);
    run.variant = *record.Field("variant");
    run.label = *record.Field("label");
    if (run.variant.empty()) errors.Add(record.line, "column 'variant' is empty");
    if (run.label.empty()) errors.Add(record.line, "column 'label' is empty");
    errors.Number(record, "compute", &run.compute);
    errors.Number(record, "loss", &run.loss);
    if (records.Has("seed")) {
      int64_t seed = 0;
      errors.Integer(record, "seed", &seed);
      run.seed = seed;
    }
    if (records.Has("seconds")) {
      double seconds = 0;
      errors.Number(record, "seconds", &seconds);
      run.seconds = seconds;
    }
    if (records.Has("n") != records.Has("d")) {
      errors.Add(record.line, std::string("column '") + (records.Has("n") ? "d" : "n") +
                                  "' is missing: n (parameters) and d (tokens) come together");
    } else if (records.Has("n")) {
      double n = 0, d = 0;
      errors.Number(record, "n", &n);
      errors.Number(record, "d", &d);
      run.parameters = n;
      run.tokens = d;
    }
    ladder.runs.push_back(std::move(run));
  }
  if (!errors.empty()) return errors.ToStatus();
  RUNG_RETURN_IF_ERROR(ValidateLadderResults(ladder));
  return ladder;
}

StatusOr<LadderResults> ReadLadderCsv(const std::string& path) {
  RUNG_ASSIGN_OR_RETURN(std::string text, ReadCsvText(path));
  return ParseLadderCsv(text, path);
}

}  // namespace rung::fit
