// sweeps/fit/report_format.h
//
// Renders a MultiplierReport (compute_multipliers.h) for people and for programs.
//
//   table  human tables: one per estimator (piecewise first), the fits with their RMSE, the
//          E-sensitivity table and notes. Undefined multipliers print "undefined" and the reason.
//   json   a list of objects, one per (variant, ladder point, estimator) and one per E of the
//          sensitivity grid ("role": "e_sensitivity"); always variant, label, compute, loss,
//          estimator, multiplier (null when undefined, with "undefined_reason"), plus what applies:
//          loss_sd, seeds, seconds, e, baseline_compute, how, fit (A, alpha, E, c_ref, rmse of the
//          variant's own fit), baseline_fit_rmse, paired_multiplier and loss_gap ({n, undefined,
//          mean, sd}), interval ({level, low, high, replicates, unit}), wallclock_multiplier
//          (the rows of report_rows.h, whose codec writes them).
//   csv    the same rows flat, one header line.
// A standard deviation of fewer than two values (one seed) is undefined: blank in the table and
// CSV, null in JSON (loss_sd, and the sd of paired_multiplier and loss_gap).
//
// Example:
//   StatusOr<ReportFormat> format = ParseReportFormat("json");
//   std::cout << FormatReport(report, format.value());
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/common/status.h"
#include "sweeps/fit/compute_multipliers.h"

namespace rung::fit {

enum class ReportFormat { kTable, kJson, kCsv };

// "table", "json" or "csv"; INVALID_ARGUMENT otherwise.
StatusOr<ReportFormat> ParseReportFormat(const std::string& name);

std::string FormatReportTable(const MultiplierReport& report);
nlohmann::ordered_json ReportToJson(const MultiplierReport& report);
std::string FormatReportCsv(const MultiplierReport& report);
// Dispatches; JSON is indented by 2 and ends with a newline.
std::string FormatReport(const MultiplierReport& report, ReportFormat format);

// 1.16e12-style compute (three significant digits, no '+', no leading exponent zeros).
std::string FormatCompute(double flops);

}  // namespace rung::fit
