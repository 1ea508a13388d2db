#include "coordinator/cli/precision_table.h"

#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"

namespace rung::cli {

namespace pb = rung::v1;
using nlohmann::json;

void PrintPrecision(const pb::GetPrecisionResponse& response, const std::string& format, std::ostream& out) {
  const bool csv = format == "csv";
  auto shown = [csv](bool has, double value, int digits) {
    return !has ? std::string(csv ? "" : "-") : csv ? ExactNumber(value) : Number(value, digits);
  };
  auto optional = [](bool has, double value) { return has ? json(value) : json(nullptr); };
  TextTable table({"variant", "rung", "multiplier", "low", "high", "half_width", "target", "projected", "seeds", "met",
                   "note"});
  json rows = json::array();
  for (const pb::PrecisionRow& row : response.rows()) {
    json object = {{"variant", row.variant()},
                   {"rung_label", row.rung_label()},
                   {"multiplier", optional(row.has_multiplier(), row.multiplier())},
                   {"low", optional(row.has_low(), row.low())},
                   {"high", optional(row.has_high(), row.high())},
                   {"half_width", optional(row.has_half_width(), row.half_width())},
                   {"target", response.target_half_width()},
                   {"projected", optional(row.has_projected(), row.projected())},
                   {"seeds", row.seeds()},
                   {"met", row.met()},
                   {"df", optional(row.has_df(), row.df())},
                   {"note", row.note()}};
    rows.push_back(object);
    table.AddRow({row.variant(), row.rung_label(), shown(row.has_multiplier(), row.multiplier(), 5),
                  shown(row.has_low(), row.low(), 5), shown(row.has_high(), row.high(), 5),
                  shown(row.has_half_width(), row.half_width(), 3),
                  csv ? ExactNumber(response.target_half_width()) : Number(response.target_half_width(), 3),
                  shown(row.has_projected(), row.projected(), 3), std::to_string(row.seeds()), row.met() ? "yes" : "no",
                  row.note().empty() ? (csv ? "" : "-") : row.note()},
                 object);
  }
  json next = json::array();
  for (const pb::PrecisionAddition& addition : response.next()) {
    next.push_back({{"variant", addition.variant()},
                    {"rung_label", addition.rung_label()},
                    {"seed", addition.seed()},
                    {"flops", addition.flops()},
                    {"why", addition.why()}});
  }
  if (format == "json") {
    json whole = {{"precision", response.precision()},
                  {"status", response.status()},
                  {"why", response.why()},
                  {"estimator", response.estimator()},
                  {"level", response.level()},
                  {"target_half_width", response.target_half_width()},
                  {"budget_flops", response.budget_flops()},
                  {"planned_flops", response.planned_flops()},
                  {"in_flight", response.in_flight()},
                  {"unfinished", response.unfinished()},
                  {"baseline", response.baseline()},
                  {"rows", rows},
                  {"next", next},
                  {"intervals", response.intervals()},
                  {"closed_reason", response.closed_reason()}};
    out << whole.dump(2) << "\n";
    return;
  }
  if (format == "table") {
    out << "precision aim: " << response.estimator() << " multipliers against " << response.baseline() << ", "
        << Number(100 * response.level(), 3) << "% intervals, target half width " << Number(response.target_half_width(), 3)
        << "\n";
    out << "FLOPs (6 N D): " << Scientific(response.planned_flops()) << " planned of a budget of "
        << Scientific(response.budget_flops()) << " (" << Number(100 * response.planned_flops() / response.budget_flops(), 3)
        << "%); " << response.unfinished() << " trial(s) unfinished, at most " << response.in_flight()
        << " when the aim adds one\n";
    out << "state: " << response.precision();
    if (!response.closed_reason().empty()) {
      out << " (" << response.closed_reason() << ")";
    } else {
      out << " (" << response.status() << ": " << response.why() << ")";
    }
    out << "\n\n";
  }
  table.Print(out, format);
  if (format != "table") return;
  if (!response.next().empty()) {
    out << "\nnext, when a trial slot frees:\n";
    for (const pb::PrecisionAddition& addition : response.next()) {
      out << "  " << addition.variant() << " at " << addition.rung_label() << " seed " << addition.seed() << " ("
          << Scientific(addition.flops()) << " FLOPs): " << addition.why() << "\n";
    }
  }
  if (!response.intervals().empty()) out << "\nintervals: " << response.intervals() << "\n";
}

}  // namespace rung::cli
