#include "sweeps/fit/report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/common/csv_field.h"
#include "core/common/text_table.h"
#include "sweeps/fit/report_rows.h"

namespace rung::fit {
namespace {

using json = nlohmann::ordered_json;

std::string Fmt(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string Cm(double value) { return Fmt("%.3f", value); }

// A report table: numbers right-aligned, the columns in `left` (names, notes) left-aligned.
TextTable ReportTable(const std::vector<std::string>& header, const std::vector<size_t>& left) {
  TextTable table(header);
  for (size_t column = 0; column < header.size(); ++column) {
    if (std::find(left.begin(), left.end(), column) == left.end()) table.AlignRight(column);
  }
  return table;
}

std::string PairedText(const std::optional<SeedStats>& stats) {
  if (!stats) return "";
  if (stats->n == 0) return "undefined (" + std::to_string(stats->undefined) + ")";
  // The sd of one seed is undefined: not shown.
  std::string text = Cm(stats->mean) + (stats->n > 1 ? " ± " + Cm(stats->sd) : std::string()) + " (" +
                     std::to_string(stats->n);
  if (stats->undefined > 0) text += ", " + std::to_string(stats->undefined) + " undefined";
  return text + ")";
}

std::string GapText(const std::optional<SeedStats>& gap, bool seeds) {
  if (!gap) return "";
  std::string text = Fmt("%+.4f", gap->mean);
  if (seeds && gap->n > 1) text += " ± " + Fmt("%.4f", gap->sd);
  return text;
}

std::string IntervalText(const std::optional<Interval>& interval) {
  if (!interval) return "";
  return "[" + Cm(interval->low) + ", " + Cm(interval->high) + "]";
}

std::string NoteOf(const MultiplierRow& row) {
  if (!row.multiplier) return row.why;
  // "between r1 and r2" says nothing a reader needs; extrapolation does.
  if (row.how.rfind("continues", 0) == 0) return "extrapolated: " + row.how;
  return "";
}

// What a tuned point that is not a bracketed optimum must say ("train.lr 0.00195 unbracketed; "), or "".
std::string TunedNote(const MultiplierRow& row, const MultiplierReport& report) {
  const TunedPoint* tuned = report.TunedAt(row.variant, row.label);
  if (tuned == nullptr || tuned->status == "bracketed" || tuned->status == "fixed") return "";
  return report.tuned_key + " " + Fmt("%.3g", tuned->value) + " " + tuned->status + "; ";
}

// The row's note, with its tuned point's.
std::string NoteOf(const MultiplierRow& row, const MultiplierReport& report) {
  std::string note = TunedNote(row, report) + NoteOf(row);
  if (note.size() >= 2 && note.compare(note.size() - 2, 2, "; ") == 0) note.resize(note.size() - 2);
  return note;
}

std::string TunedTable(const MultiplierReport& report) {
  if (report.tuned.empty()) return "";
  TextTable table = ReportTable({"variant", "label", report.tuned_key, "status"}, {0, 1, 3});
  for (const TunedPoint& point : report.tuned) table.AddRow({point.variant, point.label, Fmt("%.4g", point.value), point.status});
  std::string out = "Tuned " + report.tuned_key + " (" + report.tuned_policy +
                    "): the value each ladder point's runs used; an unbracketed best lies on an edge of the values "
                    "tried, an extrapolated one was predicted from smaller rungs\n" +
                    table.Text("  ");
  for (const TunedLaw& law : report.tuned_laws) {
    out += "  " + law.variant + ": best " + report.tuned_key + " = " + Fmt("%.3g", law.coefficient) + " * N_total^" +
           Fmt("%.3f", law.exponent) + " (" + std::to_string(law.points) + " searched points)\n";
  }
  return out;
}

bool Any(const std::vector<const MultiplierRow*>& rows, bool (*has)(const MultiplierRow&)) {
  return std::any_of(rows.begin(), rows.end(), [&](const MultiplierRow* row) { return has(*row); });
}

// A p-value to 2 significant digits, "<0.0001" below that.
std::string PValueText(double p) { return p < 1e-4 ? std::string("<0.0001") : Fmt("%.2g", p); }

std::string EstimatorTitle(Estimator estimator, const MultiplierReport& report,
                           const std::vector<const MultiplierRow*>& rows) {
  std::string e;
  if (!rows.empty() && rows.front()->e) e = Fmt("%.4f", *rows.front()->e);
  switch (estimator) {
    case Estimator::kPiecewise:
      return "Piecewise in ln C (as published): the baseline's points joined by straight lines in ln C, inverted "
             "at the variant's loss";
    case Estimator::kHermite:
      return "Hermite in ln C: the baseline's points joined by a monotone cubic that follows their curvature, "
             "inverted at the variant's loss (the piecewise estimator without its bias on convex losses)";
    case Estimator::kPowerLawSharedE:
      return "Power law, one E shared by all variants" + (e.empty() ? std::string() : " (E = " + e + " nats)") +
             ": the baseline's fitted curve inverted at the variant's measured loss";
    case Estimator::kPowerLawFreeE:
      return "Power law, E free per variant" +
             (e.empty() ? std::string() : " (" + report.baseline + "'s E = " + e + " nats)") +
             ": the baseline's fitted curve inverted at the variant's measured loss";
    case Estimator::kPowerLawFixedE:
      return "Power law, E fixed" + (e.empty() ? std::string() : " at " + e + " nats") +
             ": the baseline's fitted curve inverted at the variant's measured loss";
  }
  return "";
}

std::string EstimatorTable(Estimator estimator, const MultiplierReport& report) {
  std::vector<const MultiplierRow*> rows;
  for (const MultiplierRow& row : report.rows) {
    if (row.estimator == estimator) rows.push_back(&row);
  }
  if (rows.empty()) return "";
  const bool piecewise = estimator == Estimator::kPiecewise;
  const bool seeds = report.max_seeds > 1;
  const bool intervals = Any(rows, [](const MultiplierRow& row) { return row.interval.has_value(); });
  const bool wallclock = piecewise && report.has_seconds;
  const std::string level =
      intervals ? Fmt("%.0f", 100 * std::find_if(rows.begin(), rows.end(),
                                                 [](const MultiplierRow* row) { return row->interval.has_value(); })[0]
                                        ->interval->level) +
                      "% CI"
                : "";

  std::vector<std::string> header = {"variant", "label", "compute", "loss"};
  if (seeds) header.push_back("± sd");
  if (piecewise) header.push_back("gap vs " + report.baseline);
  header.push_back("CM");
  if (seeds) header.push_back("paired CM (n seeds)");
  if (intervals) header.push_back(level);
  const bool p_values = Any(rows, [](const MultiplierRow& row) { return row.p_holm.has_value(); });
  if (p_values) header.push_back("p (Holm)");
  if (wallclock) header.push_back("wall-clock CM");
  header.push_back("note");
  TextTable table = ReportTable(header, {0, 1, header.size() - 1});
  for (const MultiplierRow* row : rows) {
    std::vector<std::string> cells = {row->variant, row->label, FormatCompute(row->compute), Fmt("%.4f", row->loss)};
    if (seeds) cells.push_back(row->seeds > 1 ? Fmt("%.4f", row->loss_sd) : "");
    if (piecewise) cells.push_back(GapText(row->loss_gap, seeds));
    cells.push_back(row->multiplier ? Cm(*row->multiplier) : "undefined");
    if (seeds) cells.push_back(PairedText(row->paired_multiplier));
    if (intervals) cells.push_back(IntervalText(row->interval));
    if (p_values) cells.push_back(row->p_holm ? PValueText(*row->p_holm) : "");
    if (wallclock) cells.push_back(row->wallclock_multiplier ? Cm(*row->wallclock_multiplier) : "undefined");
    std::string note = NoteOf(*row, report);
    if (wallclock && !row->wallclock_multiplier && !row->wallclock_why.empty()) {
      note += (note.empty() ? "" : "; ") + std::string("wall clock: ") + row->wallclock_why;
    }
    cells.push_back(note);
    table.AddRow(cells);
  }
  std::string out = EstimatorTitle(estimator, report, rows) + "\n" + table.Text("  ");
  if (!intervals && !rows.empty()) {
    // Why, as a variant's row says it (the baseline's own rows may have a reason of their own).
    auto said = std::find_if(rows.begin(), rows.end(),
                             [&](const MultiplierRow* row) { return row->variant != report.baseline; });
    const MultiplierRow* row = said == rows.end() ? rows.front() : *said;
    if (!row->interval_note.empty()) out += "  (no intervals: " + row->interval_note + ")\n";
  }
  return out;
}

std::string FitsTable(const MultiplierReport& report) {
  if (report.fits.empty()) return "";
  TextTable table = ReportTable({"fit", "variant", "A", "alpha", "E (nats)", "RMSE (nats)", "points", "note"}, {0, 1, 7});
  for (const FitSummary& summary : report.fits) {
    std::string mode = std::string(EModeName(summary.mode)) + " E";
    if (!summary.fit) {
      table.AddRow({mode, summary.variant, "", "", "", "", "", "not fitted: " + summary.why});
      continue;
    }
    const PowerLawFit& fit = *summary.fit;
    std::string note;
    for (const std::string& item : fit.notes) note += (note.empty() ? "" : "; ") + item;
    table.AddRow({mode, summary.variant, Fmt("%.4g", std::exp(fit.law.log_a)), Fmt("%.4f", fit.law.alpha),
               Fmt("%.4f", fit.law.e), Fmt("%.5f", fit.rmse), std::to_string(fit.points), note});
  }
  return "Power-law fits: L = A * (C / " + FormatCompute(report.c_ref) +
         ")^-alpha + E on the seed-mean curves (" +
         (report.power_law_residuals == PowerLawResiduals::kNats ? "least squares on L, nats"
          : SeedMeanFitsAreLeastSquares(report)                ? "least squares on ln L"
                                                               : "Huber delta 1e-3 on ln L") +
         ", 0 <= E < min L, 0.01 <= alpha <= 2, " +
         "multi-start)\n" + table.Text("  ");
}

// The multipliers L(N, D) predicts (MultiplierReport::predicted), or why there are none.
std::string PredictedTable(const MultiplierReport& report) {
  if (report.predicted.empty() && report.predicted_why.empty()) return "";
  std::ostringstream out;
  out << "Predicted by L(N, D) = E + A / N^alpha + B / D^beta per variant (not measured; rung laws shows the fits)\n";
  if (report.predicted.empty()) {
    out << "  none: " << report.predicted_why << "\n";
    return out.str();
  }
  for (const std::string& law : report.predicted_laws) out << "  " << law << "\n";
  const IntervalBasis& basis = report.predicted_basis;
  out << "  rule: each method at D = " << Fmt("%g", report.predicted_tokens_per_param)
      << " N; optimal: each at its own compute-optimal N and D. Intervals: "
      << (basis.construction.empty()
              ? "none (" + basis.why + ")"
              : Fmt("%g", 100 * report.predicted_level) + "% " + basis.construction + " (" + std::to_string(basis.used) +
                    " replicates)")
      << "\n";
  TextTable table({"variant", "allocation", "label", "compute", "CM (predicted)", "interval", "note"});
  table.AlignRight(3);
  table.AlignRight(4);
  for (const ReportRow& row : ReportRows(report)) {
    if (row.role != "predicted") continue;
    table.AddRow({row.variant, row.estimator.substr(4), row.label, FormatCompute(row.compute),
                  row.multiplier ? Cm(*row.multiplier) : "undefined",
                  row.interval ? "[" + Cm(row.interval->low) + ", " + Cm(row.interval->high) + "]" : "",
                  row.multiplier ? (row.how.find("extrapolated") != std::string::npos ? "extrapolated" : "")
                                 : row.undefined_reason});
  }
  out << table.Text("  ");
  return out.str();
}

std::string SensitivityTable(const MultiplierReport& report) {
  if (report.e_grid.empty()) return "";
  std::vector<std::string> header = {"variant", "label"};
  for (double e : report.e_grid) header.push_back("E=" + Fmt("%.3f", e));
  TextTable table = ReportTable(header, {0, 1});
  // e_sensitivity is by E, then (variant, point): the first block gives the row order.
  const size_t per_e = report.e_sensitivity.size() / report.e_grid.size();
  bool any_undefined = false;
  for (size_t index = 0; index < per_e; ++index) {
    const MultiplierRow& first = report.e_sensitivity[index];
    std::vector<std::string> cells = {first.variant, first.label};
    for (size_t e = 0; e < report.e_grid.size(); ++e) {
      const MultiplierRow& row = report.e_sensitivity[e * per_e + index];
      cells.push_back(row.multiplier ? Cm(*row.multiplier) : "undef");
      any_undefined |= !row.multiplier;
    }
    table.AddRow(cells);
  }
  std::vector<std::string> rmse = {report.baseline + " fit", "RMSE"};
  for (const std::optional<double>& value : report.e_grid_baseline_rmse)
    rmse.push_back(value ? Fmt("%.4f", *value) : "-");
  table.AddRow(rmse);
  std::vector<std::string> alpha = {report.baseline + " fit", "alpha"};
  for (const std::optional<double>& value : report.e_grid_baseline_alpha)
    alpha.push_back(value ? Fmt("%.4f", *value) : "-");
  table.AddRow(alpha);
  std::string out = "Power-law CM against a fixed E (" + report.baseline +
                    " refitted at each E, nats; inverted at the variant's measured loss)\n" + table.Text("  ");
  if (any_undefined)
    out += "  undef: the variant's loss is at or below that E (or the fit failed); see --format json\n";
  return out;
}

std::string Opt(const std::optional<double>& value) { return value ? Fmt("%.10g", *value) : ""; }

}  // namespace

StatusOr<ReportFormat> ParseReportFormat(const std::string& name) {
  if (name == "table") return ReportFormat::kTable;
  if (name == "json") return ReportFormat::kJson;
  if (name == "csv") return ReportFormat::kCsv;
  return Status::InvalidArgument("unknown format '" + name + "' (table, json or csv)");
}

std::string FormatCompute(double flops) {
  if (!(flops > 0) || !std::isfinite(flops)) return Fmt("%g", flops);
  int exponent = static_cast<int>(std::floor(std::log10(flops)));
  double mantissa = flops / std::pow(10.0, exponent);
  if (std::stod(Fmt("%.2f", mantissa)) >= 10) {
    mantissa /= 10;
    ++exponent;
  }
  return Fmt("%.2f", mantissa) + "e" + std::to_string(exponent);
}

std::string FormatReportTable(const MultiplierReport& report) {
  std::ostringstream out;
  out << "rung fit: " << report.source << "\n";
  out << "  baseline " << report.baseline << "; " << report.variants.size() << " variants (";
  for (size_t index = 0; index < report.variants.size(); ++index) out << (index ? ", " : "") << report.variants[index];
  out << ") x " << report.ladder_points << " ladder points";
  if (report.max_seeds > 1) out << "; up to " << report.max_seeds << " seeds per point (losses are seed means)";
  if (report.has_seconds) out << "; wall-clock seconds";
  out << "\n";
  out << "  CM = C_base / C_var: the compute " << report.baseline
      << " needs to reach the variant's loss, over the variant's compute.\n"
      << "  CM > 1: the variant is more compute-efficient (CM 1.034: " << report.baseline
      << " needs 3.4% more compute). Compute in FLOPs"
      << (report.compute_count.empty() ? std::string() : " (" + report.compute_count + ")") << ", "
      << (report.metric.empty() || report.metric == "val_loss" ? std::string("loss in nats")
          : report.metric == "val_bpb"                          ? std::string("loss: val_bpb in bits per byte")
                                                                : "loss: " + report.metric)
      << ".\n";
  if (!report.intervals.empty()) out << "  Intervals: " << report.intervals << ".\n";
  for (Estimator estimator :
       {Estimator::kPiecewise, Estimator::kHermite, Estimator::kPowerLawSharedE, Estimator::kPowerLawFreeE,
        Estimator::kPowerLawFixedE}) {
    std::string table = EstimatorTable(estimator, report);
    if (!table.empty()) out << "\n" << table;
  }
  std::string fits = FitsTable(report);
  if (!fits.empty()) out << "\n" << fits;
  std::string sensitivity = SensitivityTable(report);
  if (!sensitivity.empty()) out << "\n" << sensitivity;
  std::string tuned = TunedTable(report);
  if (!tuned.empty()) out << "\n" << tuned;
  std::string predicted = PredictedTable(report);
  if (!predicted.empty()) out << "\n" << predicted;
  if (!report.notes.empty()) {
    out << "\nNotes\n";
    for (const std::string& note : report.notes) out << "  - " << note << "\n";
  }
  return out.str();
}

json ReportToJson(const MultiplierReport& report) { return ReportRowsToJson(ReportRows(report)); }

std::string FormatReportCsv(const MultiplierReport& report) {
  std::string out =
      "variant,label,compute,loss,loss_sd,seeds,seconds,estimator,role,e,multiplier,baseline_compute,"
      "paired_mean,paired_sd,paired_n,gap_mean,gap_sd,ci_low,ci_high,ci_level,ci_construction,ci_units,p_value,"
      "p_holm,wallclock_multiplier,fit_rmse,baseline_fit_rmse,note\n";
  auto add = [&](const MultiplierRow& row, const char* role) {
    std::vector<std::string> cells = {
        CsvField(row.variant),
        CsvField(row.label),
        Fmt("%.10g", row.compute),
        Fmt("%.10g", row.loss),
        row.seeds > 1 ? Fmt("%.10g", row.loss_sd) : "",
        std::to_string(row.seeds),
        Opt(row.seconds),
        EstimatorName(row.estimator),
        role,
        Opt(row.e),
        Opt(row.multiplier),
        Opt(row.baseline_compute),
        row.paired_multiplier && row.paired_multiplier->n ? Fmt("%.10g", row.paired_multiplier->mean) : "",
        row.paired_multiplier && row.paired_multiplier->n > 1 ? Fmt("%.10g", row.paired_multiplier->sd) : "",
        row.paired_multiplier ? std::to_string(row.paired_multiplier->n) : "",
        row.loss_gap ? Fmt("%.10g", row.loss_gap->mean) : "",
        row.loss_gap && row.loss_gap->n > 1 ? Fmt("%.10g", row.loss_gap->sd) : "",
        row.interval ? Fmt("%.10g", row.interval->low) : "",
        row.interval ? Fmt("%.10g", row.interval->high) : "",
        row.interval ? Fmt("%.4g", row.interval->level) : "",
        row.interval ? CsvField(row.interval->construction) : "",
        row.interval ? std::to_string(row.interval->units) : "",
        Opt(row.p_value),
        Opt(row.p_holm),
        Opt(row.wallclock_multiplier),
        Opt(row.fit_rmse),
        Opt(row.baseline_fit_rmse),
        CsvField(TunedNote(row, report) + (row.multiplier ? row.how : row.why))};
    for (size_t index = 0; index < cells.size(); ++index) out += (index ? "," : "") + cells[index];
    out += "\n";
  };
  for (const MultiplierRow& row : report.rows) add(row, "estimate");
  for (const MultiplierRow& row : report.e_sensitivity) add(row, "e_sensitivity");
  // The predicted rows, in the same columns (ReportRows gives their label, estimator and note).
  for (const ReportRow& row : ReportRows(report)) {
    if (row.role != "predicted") continue;
    std::vector<std::string> cells(28);
    cells[0] = CsvField(row.variant);
    cells[1] = CsvField(row.label);
    cells[2] = Fmt("%.10g", row.compute);
    cells[3] = Fmt("%.10g", row.loss);
    cells[5] = "0";
    cells[7] = row.estimator;
    cells[8] = row.role;
    cells[10] = Opt(row.multiplier);
    if (row.interval) {
      cells[17] = Fmt("%.10g", row.interval->low);
      cells[18] = Fmt("%.10g", row.interval->high);
      cells[19] = Fmt("%.4g", row.interval->level);
      cells[20] = CsvField(row.interval->construction);
      cells[21] = std::to_string(row.interval->units);
    }
    cells[27] = CsvField(row.multiplier ? row.how : row.undefined_reason);
    for (size_t index = 0; index < cells.size(); ++index) out += (index ? "," : "") + cells[index];
    out += "\n";
  }
  return out;
}

std::string FormatReport(const MultiplierReport& report, ReportFormat format) {
  switch (format) {
    case ReportFormat::kTable:
      return FormatReportTable(report);
    case ReportFormat::kJson:
      return ReportToJson(report).dump(2) + "\n";
    case ReportFormat::kCsv:
      return FormatReportCsv(report);
  }
  return "";
}

}  // namespace rung::fit
