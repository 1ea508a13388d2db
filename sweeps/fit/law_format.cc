#include "sweeps/fit/law_format.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/common/text_table.h"

namespace rung::fit {
namespace {

using nlohmann::ordered_json;

std::string Num(double value, const char* format = "%.4g") {
  char text[48];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string Percent(double level) { return Num(100 * level, "%g") + "%"; }

std::string WithRange(double value, const std::optional<Range>& range) {
  if (!range) return Num(value);
  return Num(value) + " [" + Num(range->low) + ", " + Num(range->high) + "]";
}

ordered_json RangeJson(const std::optional<Range>& range) {
  if (!range) return nullptr;
  return ordered_json::array({range->low, range->high});
}

ordered_json OptionalJson(const std::optional<double>& value) {
  if (!value) return nullptr;
  return *value;
}

std::string BasisText(const IntervalBasis& basis, double level, const std::string& what) {
  if (basis.construction.empty()) return what + ": none (" + basis.why + ")";
  return what + ": " + Percent(level) + " " + basis.construction + " over " + basis.unit + " (" +
         std::to_string(basis.units) + (basis.unit == "seeds" ? "" : " per variant at least") + ", " +
         std::to_string(basis.used) + " of " + std::to_string(basis.replicates) + " replicates converged)";
}

ordered_json BasisJson(const IntervalBasis& basis) {
  ordered_json out;
  out["construction"] = basis.construction.empty() ? ordered_json(nullptr) : ordered_json(basis.construction);
  out["unit"] = basis.unit;
  out["units"] = basis.units;
  out["replicates"] = basis.replicates;
  out["used"] = basis.used;
  if (!basis.why.empty()) out["why"] = basis.why;
  return out;
}

std::string FitText(const LawReport& report) {
  const LawFitOptions& fit = report.fit_options;
  const size_t grid = fit.a_grid.size() * fit.b_grid.size() * fit.e_grid.size() * fit.alpha_grid.size() *
                      fit.beta_grid.size();
  const std::string per = fit.sharing == LawSharing::kNone || report.variants.size() < 2 ? " per variant" : "";
  std::string starts = fit.lbfgs_starts <= 0
                           ? "every point of Hoffmann's grid of " + std::to_string(grid) + per
                           : "the best " + std::to_string(fit.lbfgs_starts) + " points of Hoffmann's grid of " +
                                 std::to_string(grid) + per;
  return "fitted as Hoffmann et al. (approach 3): Huber loss (delta " + Num(fit.huber_delta, "%g") +
         ") on ln L against the log-sum-exp form, L-BFGS from " + starts + " (" +
         std::to_string(report.converged_starts) + " of " + std::to_string(report.starts) +
         " converged); sharing across variants: " + LawSharingName(fit.sharing);
}

}  // namespace

std::string FormatLawTable(const LawReport& report) {
  std::ostringstream out;
  out << "Scaling laws of " << report.source << " (" << (report.metric.empty() ? "val_loss" : report.metric) << ", "
      << report.unit << "): L(N, D) = E + A / N^alpha + B / D^beta\n";
  out << FitText(report) << "\n";
  out << BasisText(report.parameter_basis, report.level, "parameter intervals") << "\n\n";
  TextTable laws({"variant", "runs", "E", "A", "B", "alpha", "beta", "RMSE", "N_opt ~ C^a", "D_opt ~ C^b"});
  for (size_t column = 1; column < 10; ++column) laws.AlignRight(column);
  for (const VariantLaw& variant : report.variants) {
    const LawParameterIntervals& ci = variant.intervals;
    laws.AddRow({variant.variant, std::to_string(variant.points), WithRange(variant.law.e, ci.e),
                 WithRange(variant.law.a, ci.a), WithRange(variant.law.b, ci.b), WithRange(variant.law.alpha, ci.alpha),
                 WithRange(variant.law.beta, ci.beta), Num(variant.rmse),
                 variant.n_exponent ? WithRange(*variant.n_exponent, ci.n_exponent) : "-",
                 variant.d_exponent ? WithRange(*variant.d_exponent, ci.d_exponent) : "-"});
  }
  out << laws.Text() << "\n";

  if (report.isoflop) {
    const IsoflopReport& iso = *report.isoflop;
    out << "IsoFLOP profiles (approach 2): per budget, loss against ln N fitted by a parabola (Huber), its minimum N*;\n"
        << "N* = G C^a over the budgets; intervals: "
        << (iso.construction.empty() ? "none (" + iso.intervals_why + ")"
                                     : Percent(report.level) + " " + iso.construction + " over " + iso.unit + " (" +
                                           std::to_string(iso.units) + ", " + std::to_string(iso.used) + " of " +
                                           std::to_string(iso.replicates) + " replicates usable)")
        << "\n";
    TextTable budgets({"variant", "budget C", "runs", "sizes", "N*", "D*", "L*", "note"});
    for (size_t column = 1; column < 7; ++column) budgets.AlignRight(column);
    for (const IsoflopVariant& variant : iso.variants) {
      for (const IsoflopBudget& budget : variant.budgets) {
        std::string n_opt = "-";
        if (budget.n_opt) {
          n_opt = Num(*budget.n_opt);
          if (budget.n_opt_low) n_opt += " [" + Num(*budget.n_opt_low) + ", " + Num(*budget.n_opt_high) + "]";
        }
        budgets.AddRow({variant.variant, FormatCompute(budget.compute), std::to_string(budget.runs),
                        std::to_string(budget.sizes), n_opt, budget.d_opt ? Num(*budget.d_opt) : "-",
                        budget.loss_opt ? Num(*budget.loss_opt) : "-", budget.why});
      }
    }
    out << budgets.Text();
    for (const IsoflopVariant& variant : iso.variants) {
      if (variant.a) {
        out << variant.variant << ": N* = " << Num(*variant.g) << " C^" << Num(*variant.a);
        if (variant.a_low) out << " (a in [" << Num(*variant.a_low) << ", " << Num(*variant.a_high) << "])";
        out << ", D* = " << Num(*variant.g_d) << " C^" << Num(*variant.b) << "\n";
      } else {
        out << variant.variant << ": no N* = G C^a (" << variant.why << ")\n";
      }
    }
    out << "\n";
  } else if (!report.isoflop_why.empty()) {
    out << "IsoFLOP profiles: none (" << report.isoflop_why << ")\n\n";
  }

  if (!report.multipliers.empty()) {
    out << "Predicted compute multipliers against " << report.baseline
        << " (CM = C_base / C: the baseline needs CM times the compute for the variant's loss at C)\n"
        << "rule: each method at D = " << Num(report.tokens_per_param, "%g")
        << " N; optimal: each at its own compute-optimal N, D; "
        << BasisText(report.prediction_basis, report.level, "prediction intervals") << "\n";
    TextTable table({"variant", "allocation", "compute", "N", "D", "CM (predicted)", "note"});
    for (size_t column = 2; column < 6; ++column) table.AlignRight(column);
    for (const PredictedMultiplier& row : report.multipliers) {
      std::string value = row.multiplier ? WithRange(*row.multiplier, row.interval) : "undefined";
      std::string note = row.extrapolated ? "extrapolated" : "";
      if (!row.why.empty()) note += (note.empty() ? "" : "; ") + row.why;
      table.AddRow({row.variant, row.allocation, FormatCompute(row.compute), row.n > 0 ? Num(row.n) : "-",
                    row.d > 0 ? Num(row.d) : "-", value, note});
    }
    out << table.Text() << "\n";
  }

  if (report.rollout) {
    const Rollout& rollout = *report.rollout;
    std::string sizes;
    for (double n : rollout.held_out_n) sizes += (sizes.empty() ? "" : ", ") + Num(n);
    out << "Rollout: refitted without N = " << sizes << " (the largest size" << (rollout.held_out_n.size() > 1 ? "s" : "")
        << "), predicting their runs\n";
    if (!rollout.why.empty()) {
      out << "  none: " << rollout.why << "\n\n";
    } else {
      out << BasisText(rollout.basis, report.level, "prediction intervals") << "\n";
      TextTable table({"variant", "run", "N", "D", "loss", "predicted", "interval", "inside"});
      for (size_t column = 2; column < 6; ++column) table.AlignRight(column);
      for (const RolloutPoint& point : rollout.points) {
        table.AddRow({point.variant, point.origin, Num(point.n), Num(point.d), Num(point.loss), Num(point.predicted),
                      point.interval ? "[" + Num(point.interval->low) + ", " + Num(point.interval->high) + "]" : "-",
                      point.interval ? (point.inside ? "yes" : "no") : "-"});
      }
      out << table.Text();
      out << "mean |error| " << Num(rollout.mean_abs_error) << " " << report.unit << " ("
          << Num(100 * rollout.mean_relative_error, "%.2g") << "%); " << rollout.inside << " of "
          << rollout.points.size() << " runs inside their interval\n\n";
    }
  }
  for (const std::string& note : report.notes) out << "note: " << note << "\n";
  return out.str();
}

ordered_json LawReportToJson(const LawReport& report) {
  ordered_json out;
  out["source"] = report.source;
  out["metric"] = report.metric.empty() ? "val_loss" : report.metric;
  out["unit"] = report.unit;
  out["form"] = "L(N, D) = E + A / N^alpha + B / D^beta";
  ordered_json fit;
  fit["method"] = "Huber loss on ln L against the log-sum-exp form, L-BFGS from grid starts";
  fit["huber_delta"] = report.fit_options.huber_delta;
  fit["sharing"] = LawSharingName(report.fit_options.sharing);
  fit["grid_points"] = report.grid_points;
  fit["starts"] = report.starts;
  fit["converged_starts"] = report.converged_starts;
  fit["objective"] = report.objective;
  out["fit"] = fit;
  out["level"] = report.level;
  out["seed"] = report.seed;
  out["intervals"] = {{"parameters", BasisJson(report.parameter_basis)},
                      {"predictions", BasisJson(report.prediction_basis)}};
  ordered_json variants = ordered_json::array();
  for (const VariantLaw& variant : report.variants) {
    const LawParameterIntervals& ci = variant.intervals;
    ordered_json one;
    one["variant"] = variant.variant;
    one["E"] = variant.law.e;
    one["A"] = variant.law.a;
    one["B"] = variant.law.b;
    one["alpha"] = variant.law.alpha;
    one["beta"] = variant.law.beta;
    one["intervals"] = {{"E", RangeJson(ci.e)},         {"A", RangeJson(ci.a)},
                        {"B", RangeJson(ci.b)},         {"alpha", RangeJson(ci.alpha)},
                        {"beta", RangeJson(ci.beta)},   {"n_exponent", RangeJson(ci.n_exponent)},
                        {"d_exponent", RangeJson(ci.d_exponent)}};
    one["rmse"] = variant.rmse;
    one["points"] = variant.points;
    one["n_exponent"] = OptionalJson(variant.n_exponent);
    one["d_exponent"] = OptionalJson(variant.d_exponent);
    variants.push_back(one);
  }
  out["variants"] = variants;
  ordered_json runs = ordered_json::array();
  for (const LawFittedRun& run : report.runs) {
    runs.push_back({{"variant", run.variant}, {"origin", run.origin}, {"n", run.n}, {"d", run.d},
                    {"loss", run.loss}, {"fitted", run.fitted}});
  }
  out["runs"] = runs;
  out["baseline"] = report.baseline.empty() ? ordered_json(nullptr) : ordered_json(report.baseline);
  out["tokens_per_param"] = report.tokens_per_param;
  ordered_json multipliers = ordered_json::array();
  for (const PredictedMultiplier& row : report.multipliers) {
    ordered_json one{{"variant", row.variant},   {"allocation", row.allocation},
                     {"compute", row.compute},   {"n", row.n},
                     {"d", row.d},               {"multiplier", OptionalJson(row.multiplier)},
                     {"interval", RangeJson(row.interval)}, {"predicted", true},
                     {"extrapolated", row.extrapolated}};
    if (!row.why.empty()) one["why"] = row.why;
    multipliers.push_back(one);
  }
  out["multipliers"] = multipliers;
  if (report.rollout) {
    const Rollout& rollout = *report.rollout;
    ordered_json one;
    one["held_out_n"] = rollout.held_out_n;
    if (!rollout.why.empty()) one["why"] = rollout.why;
    one["intervals"] = BasisJson(rollout.basis);
    ordered_json points = ordered_json::array();
    for (const RolloutPoint& point : rollout.points) {
      points.push_back({{"variant", point.variant}, {"origin", point.origin},  {"n", point.n},
                        {"d", point.d},             {"loss", point.loss},      {"predicted", point.predicted},
                        {"interval", RangeJson(point.interval)}, {"inside", point.inside}});
    }
    one["points"] = points;
    one["mean_abs_error"] = rollout.mean_abs_error;
    one["mean_relative_error"] = rollout.mean_relative_error;
    one["inside"] = rollout.inside;
    out["rollout"] = one;
  } else {
    out["rollout"] = nullptr;
  }
  if (report.isoflop) {
    const IsoflopReport& iso = *report.isoflop;
    ordered_json one;
    one["tolerance"] = iso.tolerance;
    one["intervals"] = {{"construction", iso.construction.empty() ? ordered_json(nullptr) : ordered_json(iso.construction)},
                        {"unit", iso.unit}, {"units", iso.units}, {"replicates", iso.replicates}, {"used", iso.used}};
    if (!iso.intervals_why.empty()) one["intervals"]["why"] = iso.intervals_why;
    ordered_json variants_json = ordered_json::array();
    for (const IsoflopVariant& variant : iso.variants) {
      ordered_json v;
      v["variant"] = variant.variant;
      ordered_json budgets = ordered_json::array();
      for (const IsoflopBudget& budget : variant.budgets) {
        ordered_json b{{"compute", budget.compute}, {"runs", budget.runs}, {"sizes", budget.sizes},
                       {"parabola", budget.parabola}, {"n_opt", OptionalJson(budget.n_opt)},
                       {"d_opt", OptionalJson(budget.d_opt)}, {"loss_opt", OptionalJson(budget.loss_opt)}};
        b["n_opt_interval"] = budget.n_opt_low ? ordered_json::array({*budget.n_opt_low, *budget.n_opt_high})
                                               : ordered_json(nullptr);
        if (!budget.why.empty()) b["why"] = budget.why;
        budgets.push_back(b);
      }
      v["budgets"] = budgets;
      v["G"] = OptionalJson(variant.g);
      v["a"] = OptionalJson(variant.a);
      v["a_interval"] = variant.a_low ? ordered_json::array({*variant.a_low, *variant.a_high}) : ordered_json(nullptr);
      v["G_d"] = OptionalJson(variant.g_d);
      v["b"] = OptionalJson(variant.b);
      if (!variant.why.empty()) v["why"] = variant.why;
      variants_json.push_back(v);
    }
    one["variants"] = variants_json;
    out["isoflop"] = one;
  } else {
    out["isoflop"] = nullptr;
    if (!report.isoflop_why.empty()) out["isoflop_why"] = report.isoflop_why;
  }
  out["notes"] = report.notes;
  return out;
}

std::string FormatLawCsv(const LawReport& report) {
  TextTable table({"kind", "variant", "quantity", "value", "low", "high", "compute", "n", "d", "allocation", "loss",
                   "note"});
  auto number = [](double value) { return Num(value, "%.17g"); };
  auto optional = [&](const std::optional<double>& value) { return value ? number(*value) : std::string(); };
  auto law_row = [&](const std::string& variant, const std::string& quantity, double value,
                     const std::optional<Range>& range) {
    table.AddRow({"law", variant, quantity, number(value), range ? number(range->low) : "",
                  range ? number(range->high) : ""});
  };
  for (const VariantLaw& variant : report.variants) {
    const LawParameterIntervals& ci = variant.intervals;
    law_row(variant.variant, "E", variant.law.e, ci.e);
    law_row(variant.variant, "A", variant.law.a, ci.a);
    law_row(variant.variant, "B", variant.law.b, ci.b);
    law_row(variant.variant, "alpha", variant.law.alpha, ci.alpha);
    law_row(variant.variant, "beta", variant.law.beta, ci.beta);
    law_row(variant.variant, "rmse", variant.rmse, std::nullopt);
    law_row(variant.variant, "points", variant.points, std::nullopt);
    if (variant.n_exponent) law_row(variant.variant, "n_exponent", *variant.n_exponent, ci.n_exponent);
    if (variant.d_exponent) law_row(variant.variant, "d_exponent", *variant.d_exponent, ci.d_exponent);
  }
  for (const PredictedMultiplier& row : report.multipliers) {
    table.AddRow({"multiplier", row.variant, "predicted_multiplier", optional(row.multiplier),
                  row.interval ? number(row.interval->low) : "", row.interval ? number(row.interval->high) : "",
                  number(row.compute), number(row.n), number(row.d), row.allocation, "",
                  (row.extrapolated ? std::string("extrapolated") : std::string()) +
                      (row.why.empty() ? "" : (row.extrapolated ? "; " : "") + row.why)});
  }
  if (report.rollout) {
    for (const RolloutPoint& point : report.rollout->points) {
      table.AddRow({"rollout", point.variant, "predicted_loss", number(point.predicted),
                    point.interval ? number(point.interval->low) : "", point.interval ? number(point.interval->high) : "",
                    number(6 * point.n * point.d), number(point.n), number(point.d), "", number(point.loss),
                    point.origin + (point.interval ? (point.inside ? "; inside" : "; outside") : "")});
    }
  }
  if (report.isoflop) {
    for (const IsoflopVariant& variant : report.isoflop->variants) {
      for (const IsoflopBudget& budget : variant.budgets) {
        table.AddRow({"isoflop", variant.variant, "n_opt", optional(budget.n_opt), optional(budget.n_opt_low),
                      optional(budget.n_opt_high), number(budget.compute), "", optional(budget.d_opt), "",
                      optional(budget.loss_opt), budget.why});
      }
      if (variant.a) {
        table.AddRow({"isoflop", variant.variant, "a", number(*variant.a), optional(variant.a_low),
                      optional(variant.a_high), "", "", "", "", "", "N* = G C^a, G = " + number(*variant.g)});
      }
    }
  }
  std::ostringstream out;
  table.PrintCsv(out);
  return out.str();
}

std::string FormatLawReport(const LawReport& report, ReportFormat format) {
  switch (format) {
    case ReportFormat::kJson: return LawReportToJson(report).dump(2) + "\n";
    case ReportFormat::kCsv: return FormatLawCsv(report);
    default: return FormatLawTable(report);
  }
}

}  // namespace rung::fit
