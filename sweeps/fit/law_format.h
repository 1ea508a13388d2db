// sweeps/fit/law_format.h
//
// Renders a LawReport (law_report.h) for people and for programs: what `rung laws` prints.
//
//   table  the form and how it was fitted, per variant E, A, B, alpha, beta with their intervals,
//          RMSE and runs, the compute-optimal allocation; the IsoFLOP profiles; the predicted
//          multipliers (marked extrapolated beyond the runs); the rollout; notes. Every interval
//          says its construction, level and units.
//   json   one object: source, metric, unit, form, fit {...}, intervals {parameters, predictions},
//          variants [{variant, E, A, B, alpha, beta, intervals {E: [low, high], ...}, rmse, points,
//          n_exponent, d_exponent}], runs [...], multipliers [...], rollout {...}, isoflop {...}, notes.
//   csv    long form, one value per line: kind,variant,quantity,value,low,high,compute,n,d,allocation,
//          loss,note (kind: law, multiplier, rollout, isoflop).
//
// Example:
//   std::cout << FormatLawReport(report, ReportFormat::kTable);
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sweeps/fit/law_report.h"
#include "sweeps/fit/report_format.h"

namespace rung::fit {

std::string FormatLawTable(const LawReport& report);
nlohmann::ordered_json LawReportToJson(const LawReport& report);
std::string FormatLawCsv(const LawReport& report);
// Dispatches; JSON is indented by 2 and ends with a newline.
std::string FormatLawReport(const LawReport& report, ReportFormat format);

}  // namespace rung::fit
