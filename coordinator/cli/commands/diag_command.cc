// coordinator/cli/commands/diag_command.cc
//
// `rung diag TRIAL`: what rung-train measured on a trained model (docs/science.md sections 7 and 9), read
// from the coordinator (GetDiagnostics):
//   heads          per layer and head: effective attention length E_2 at positions T/8, T/2 and T,
//                  pair-usage coefficient of variation, effective base, dominant pair and its
//                  wavelength against the training length T
//   gaps           gap counting per layer on the unscaled score rows at the training length (rows,
//                  ties, mean Lambda, alpha, Delta) and xi_Lambda with its bootstrap interval
//   regime         the softmax regime at beta = c * Lambda: normalised entropy, max weight, top-two gap
//   lengths        the pooled exponents at each evaluated length: T, and each train.diagnostics_multiples
//                  entry under its extension method (paper 004 reads xi_Lambda at n_eval)
//   extrapolation  validation loss at each evaluated multiple of T and extension method
//   probe          train.probe's accuracy at each prompt length, extension method and needle depth
//                  (indexing: at each list length)
//   bands          the leave-one-out band ablations (a pair reverted to RoPE's frequency, and zeroed)
//   influence      AdaRoPE B.3's head influence: the loss increase with a head's AdaRoPE parameters reset
//   frequencies    the rotary frequencies per layer and row against RoPE's b^(-f/pairs), and their
//                  wavelengths over T (a LeRoPE or AdaRoPE profile against RoPE's)
// --table picks one (table format prints all five; csv and json need one, default heads);
// --format json --table all prints the stored documents. --plot DIR also draws the figures of
// sweeps/plot/diagnostics_plot.h,
// and the frequency profile (wavelength against RoPE's).
#include "coordinator/client/command_registry.h"
#include "core/common/command_line.h"
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>
#include <iostream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/model_tool.h"
#include "coordinator/cli/paper003_closed_forms.h"
#include "coordinator/cli/text_table.h"
#include "coordinator/cli/trial_diagnostics.h"
#include "core/records/record_json.h"
#include "core/diagnostics/appendix_d1_statistics.h"
#include "core/diagnostics/failure_modes.h"
#include "core/diagnostics/synthetic_score_rows.h"
#include "sweeps/plot/failure_modes_plot.h"
#include "sweeps/plot/pair_profile_plot.h"
#include "sweeps/plot/diagnostics_plot.h"
#include "sweeps/plot/probe_plot.h"
#include "proto/config_value.h"

namespace rung::cli {
namespace {

using nlohmann::json;

struct DiagOptions {
  ConnectionOptions connection;
  int64_t trial_id = 0;
  std::string format = "table";
  std::string table;  // heads | gaps | regime | beta | milestones | failure_modes | extrapolation | probe | niah | frequencies | all
  std::string plot_dir;
  std::string gnuplot = "gnuplot";
  int64_t step = -1;  // the milestone shown; -1 = the latest
  // --synthetic: rows with closed forms instead of a trial (no coordinator).
  std::string synthetic;
  std::vector<int64_t> lengths = PaperDiagnosticLengths();
  int64_t rows = 2000;
  double gap = 1.0;
  uint64_t seed = 0;
  int bootstrap = 200;
  bool lengths_given = false;  // --n was given
  // --synthetic failure_modes: the Gaussian reference's bases, head dimension and draws.
  std::vector<double> bases = {10000.0};
  int64_t head_dim = 64;
  int draws = 16;
  // --closed-form: a paper's closed forms (no trial, no coordinator); its options but table and format.
  ClosedFormOptions closed_form;
  // --model: a Hugging Face folder or a rung checkpoint measured here (rung-model diag), on --tokens.
  std::string model, tokens, bos = "auto";
  int64_t model_seq_len = 0, sequences = 16, batches = 1;
};

// The failure-mode statistics (core/diagnostics/appendix_d1_statistics.h), in the order the table shows
// them: as a trained head's entry and a row of the figures hold each.
struct FailureStatistic {
  const char* name;
  double records::HeadFailureModes::*head;
  double plot::FailureModeSummary::*summary;
};
constexpr FailureStatistic kFailureStatistics[] = {
    {"position_inversion", &records::HeadFailureModes::position_inversion, &plot::FailureModeSummary::position_inversion},
    {"position_inversion_deviation", &records::HeadFailureModes::position_inversion_deviation,
     &plot::FailureModeSummary::position_inversion_deviation},
    {"position_aliasing_fraction", &records::HeadFailureModes::position_aliasing_fraction,
     &plot::FailureModeSummary::position_aliasing_fraction},
    {"position_aliasing_pairs", &records::HeadFailureModes::position_aliasing_pairs,
     &plot::FailureModeSummary::position_aliasing_pairs},
    {"token_inversion", &records::HeadFailureModes::token_inversion, &plot::FailureModeSummary::token_inversion},
    {"token_aliasing", &records::HeadFailureModes::token_aliasing, &plot::FailureModeSummary::token_aliasing},
    {"attention_invariance", &records::HeadFailureModes::attention_invariance,
     &plot::FailureModeSummary::attention_invariance},
};

// A row of the failure-mode table: the figures' summary, and what it is a mean over.
struct FailureModesRow {
  plot::FailureModeSummary summary;
  int64_t heads = 0;     // a trial's row: the heads averaged
  int64_t head_dim = 0;  // the Gaussian reference's: its head dimension and draws
  int64_t draws = 0;
};

// The longest row or context `rung diag` builds itself (--n, the Gaussian reference beside a trial).
constexpr int64_t kMaxSyntheticLength = int64_t{1} << 20;

// The context lengths the Gaussian reference of `rung diag --synthetic failure_modes` uses without --n.
const std::vector<int64_t>& DefaultFailureLengths() {
  static const std::vector<int64_t> lengths = {64, 256, 1024, 4096, 16384};
  return lengths;
}

// A measured value for people; "-" where there is none (NaN, unset).
std::string Shown(double value, int digits = 4) { return std::isnan(value) ? "-" : cli::Number(value, digits); }
std::string Shown(const std::optional<double>& value, int digits = 4) { return value ? Shown(*value, digits) : "-"; }
std::string Shown(int64_t value) { return std::to_string(value); }
std::string Shown(const std::optional<int64_t>& value) { return value ? std::to_string(*value) : "-"; }

// A value of a JSON row: null where there is none.
json Json(const std::optional<double>& value) { return value ? NumberOrNull(*value) : json(); }
json Json(const std::optional<int64_t>& value) { return value ? json(*value) : json(); }

// A trial's heads averaged per (M, precision), each statistic over the heads that measured it.
std::vector<FailureModesRow> TrialFailureModeRows(const records::AttentionDiagnostics& attention,
                                                  const std::string& source, double base) {
  constexpr size_t kStatistics = std::size(kFailureStatistics);
  std::map<std::pair<int64_t, std::string>, std::array<std::pair<double, int64_t>, kStatistics>> sums;
  int64_t heads = 0;
  bool earlier_procedure = false;  // a record of a release before appendix D.1's measurement
  for (const records::AttentionLayer& layer : attention.layers) {
    for (const records::AttentionHead& head : layer.heads) {
      if (head.failure_modes.empty()) continue;
      ++heads;
      for (const records::HeadFailureModes& entry : head.failure_modes) {
        auto& cell = sums[{entry.length, entry.precision}];
        earlier_procedure |= entry.procedure.empty();
        for (size_t i = 0; i < kStatistics; ++i) {
          // Earlier records measured no attention invariance (a worker of that release sends 0 for it).
          if (entry.procedure.empty() && kFailureStatistics[i].head == &records::HeadFailureModes::attention_invariance) {
            continue;
          }
          const double value = entry.*kFailureStatistics[i].head;
          if (std::isnan(value)) continue;
          cell[i].first += value;
          ++cell[i].second;
        }
      }
    }
  }
  std::vector<FailureModesRow> rows;
  for (const auto& [key, statistics] : sums) {
    FailureModesRow row;
    row.summary.source = earlier_procedure ? source + " (earlier procedure)" : source;
    row.summary.length = key.first;
    row.summary.base = base;
    row.summary.precision = key.second;
    row.heads = heads;
    for (size_t i = 0; i < kStatistics; ++i) {
      const auto& [sum, count] = statistics[i];
      if (count > 0) row.summary.*kFailureStatistics[i].summary = sum / static_cast<double>(count);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// The Gaussian reference of appendix D.1's convention (GaussianAppendixD1Reference) over a grid, as rows
// with source "Gaussian". INVALID_ARGUMENT for an axis outside what the reference takes.
StatusOr<std::vector<FailureModesRow>> GaussianFailureModeRows(const FailureModeGrid& grid) {
  if (grid.lengths.empty() || grid.bases.empty() || grid.precisions.empty()) {
    return Status::InvalidArgument("give at least one M, one base and one precision");
  }
  if (grid.head_dim < 2 || grid.head_dim % 2 != 0) return Status::InvalidArgument("the head dimension must be even, >= 2");
  if (grid.draws < 1) return Status::InvalidArgument("draws must be >= 1");
  std::vector<FailureModesRow> rows;
  for (int64_t length : grid.lengths) {
    if (length < 2) return Status::InvalidArgument("each M must be >= 2");
    for (double base : grid.bases) {
      if (!(base > 0) || !std::isfinite(base)) return Status::InvalidArgument("each base must be a positive number");
      const AppendixD1Means means = GaussianAppendixD1Reference(RopeFrequencySchedule(base, grid.head_dim), length,
                                                                grid.draws, grid.seed, grid.precisions);
      for (const AppendixD1MeanPrecision& precision : means.precisions) {
        FailureModesRow row;
        plot::FailureModeSummary& summary = row.summary;
        summary.source = "Gaussian";
        summary.length = length;
        summary.base = base;
        summary.precision = PrecisionName(precision.precision);
        summary.position_inversion = means.position_inversion;
        summary.position_inversion_deviation = means.position_inversion_deviation;
        summary.position_aliasing_fraction = precision.with_pair;
        summary.position_aliasing_pairs = precision.aliasing_pairs;
        summary.token_inversion = means.token_inversion;
        summary.token_aliasing = precision.token_aliasing;
        summary.attention_invariance = precision.invariance_pairs;
        row.head_dim = grid.head_dim;
        row.draws = grid.draws;
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

TextTable FailureModesTable(const std::vector<FailureModesRow>& rows) {
  TextTable table({"source", "M", "base", "precision", "pos_inversion", "|inv-1/2|", "pos_aliasing", "alias_pairs",
                   "token_inversion", "token_aliasing", "invariance"});
  for (const FailureModesRow& row : rows) {
    const plot::FailureModeSummary& summary = row.summary;
    json fields = {{"source", summary.source},
                   {"length", summary.length},
                   {"base", NumberOrNull(summary.base)},
                   {"precision", summary.precision}};
    if (row.heads > 0) fields["heads"] = row.heads;
    if (row.draws > 0) {
      fields["head_dim"] = row.head_dim;
      fields["draws"] = row.draws;
    }
    for (const FailureStatistic& statistic : kFailureStatistics) {
      fields[statistic.name] = NumberOrNull(summary.*statistic.summary);
    }
    table.AddRow({summary.source, Shown(summary.length), Shown(summary.base, 6), summary.precision,
                  Shown(summary.position_inversion, 3), Shown(summary.position_inversion_deviation, 3),
                  Shown(summary.position_aliasing_fraction, 3), Shown(summary.position_aliasing_pairs, 4),
                  Shown(summary.token_inversion, 3), Shown(summary.token_aliasing, 4),
                  Shown(summary.attention_invariance, 4)},
                 fields);
  }
  return table;
}

// Reports the figures a plot wrote (or why it wrote none) on stderr; the exit code: kUsage for a
// document of the wrong form, kFailure for anything else that failed.
int ReportPlotFiles(const StatusOr<std::vector<std::string>>& files) {
  if (!files.ok()) {
    std::cerr << "rung diag: " << files.status().message() << "\n";
    return files.status().code() == StatusCode::kInvalidArgument ? kUsage : kFailure;
  }
  for (const std::string& file : *files) std::cerr << "wrote " << file << "\n";
  return kOk;
}

// Writes the failure-mode figures of `rows` into options.plot_dir; the exit code.
int PlotFailureModes(const std::vector<FailureModesRow>& rows, const DiagOptions& options, const std::string& title) {
  plot::DiagnosticsPlotOptions plot_options;
  plot_options.out_dir = options.plot_dir;
  plot_options.gnuplot = options.gnuplot;
  plot_options.title = title;
  std::vector<plot::FailureModeSummary> summaries;
  for (const FailureModesRow& row : rows) summaries.push_back(row.summary);
  return ReportPlotFiles(plot::WriteFailureModePlots(summaries, plot_options));
}

// "0.61 ± 0.02" (the spread: a bootstrap half-IQR for xi_lambda, xi_alpha, xi_delta, the OLS standard
// error for xi_beta); "-" without a value.
std::string WithInterval(const std::optional<double>& value, const std::optional<double>& spread) {
  if (!value || std::isnan(*value)) return "-";
  return Shown(*value, 3) + (spread && !std::isnan(*spread) ? " ± " + Shown(*spread, 2) : "");
}

// The exponents of a gap-counting fit (a layer's or the pooled one) as JSON fields.
json ExponentFields(const records::GapCounting& gap) {
  return {{"xi_lambda", Json(gap.xi_lambda)},
          {"xi_lambda_half_iqr", Json(gap.xi_lambda_half_iqr)},
          {"xi_alpha", Json(gap.xi_alpha)},
          {"xi_alpha_half_iqr", Json(gap.xi_alpha_half_iqr)},
          {"xi_delta", Json(gap.xi_delta)},
          {"xi_delta_half_iqr", Json(gap.xi_delta_half_iqr)},
          {"tie_share", Json(gap.tie_share)}};
}

// "12.5%"; "-" without a value.
std::string Percent(const std::optional<double>& share) {
  return !share || std::isnan(*share) ? "-" : Shown(100.0 * *share, 3) + "%";
}

// The element of `values` at query position p (1-based), or NaN.
double AtPosition(const std::vector<double>& values, int64_t position) {
  if (position < 1 || position > static_cast<int64_t>(values.size())) return std::nan("");
  return values[static_cast<size_t>(position - 1)];
}

TextTable HeadsTable(const records::AttentionDiagnostics& attention) {
  const int64_t length = attention.length;
  const int64_t eighth = std::max<int64_t>(1, length / 8), half = std::max<int64_t>(1, length / 2);
  // E_r of the record's Renyi order (2 unless train.diagnostics_renyi_order says otherwise).
  const std::string e = "E" + Shown(attention.renyi_order, 3) + "@";
  TextTable table({"layer", "head", e + std::to_string(eighth), e + std::to_string(half), e + std::to_string(length),
                   "pair_usage_cv", "effective_base", "dominant_pair", "dominant_wavelength/T"});
  for (const records::AttentionLayer& layer : attention.layers) {
    for (const records::AttentionHead& head : layer.heads) {
      const std::vector<double>& e2 = head.effective_length_by_position;
      json row = {{"layer", layer.layer},
                  {"head", head.head},
                  {"effective_length_at", {{std::to_string(eighth), NumberOrNull(AtPosition(e2, eighth))},
                                           {std::to_string(half), NumberOrNull(AtPosition(e2, half))},
                                           {std::to_string(length), NumberOrNull(AtPosition(e2, length))}}},
                  {"pair_usage_cv", NumberOrNull(head.pair_usage_cv)},
                  {"pair_usage", head.pair_usage},
                  {"effective_base", Json(head.effective_base)},
                  {"dominant_pair", Json(head.dominant_pair)},
                  {"dominant_wavelength", Json(head.dominant_wavelength)},
                  {"dominant_wavelength_over_training_length", Json(head.dominant_wavelength_over_training_length)}};
      table.AddRow({std::to_string(layer.layer), std::to_string(head.head), Shown(AtPosition(e2, eighth)),
                    Shown(AtPosition(e2, half)), Shown(AtPosition(e2, length)), Shown(head.pair_usage_cv, 3),
                    Shown(head.effective_base, 5), Shown(head.dominant_pair),
                    Shown(head.dominant_wavelength_over_training_length, 3)},
                   row);
    }
  }
  return table;
}

// Per layer and pooled: the means of Lambda, alpha, Delta at n = T, and the exponents over the grid.
TextTable GapsTable(const records::AttentionDiagnostics& attention) {
  TextTable table({"layer", "n", "rows", "ties", "lambda", "alpha", "delta", "xi_lambda", "xi_alpha", "xi_delta",
                   "ties_on_grid"});
  auto add = [&](const json& layer, const std::string& label, const records::GapCounting& gap) {
    const std::optional<records::GapCountingAtLength>& at = gap.at_training_length;
    json row = ExponentFields(gap);
    row["layer"] = layer;
    row["n"] = at ? json(at->n) : json();
    row["rows"] = at ? json(at->rows) : json();
    row["ties"] = at ? json(at->ties) : json();
    row["lambda"] = at ? NumberOrNull(at->lambda_mean) : json();
    row["alpha"] = at ? NumberOrNull(at->alpha_mean) : json();
    row["delta"] = at ? NumberOrNull(at->delta_mean) : json();
    row["buckets"] = records::DocumentJson(gap.buckets);
    table.AddRow({label, at ? Shown(at->n) : "-", at ? Shown(at->rows) : "-", at ? Shown(at->ties) : "-",
                  at ? Shown(at->lambda_mean) : "-", at ? Shown(at->alpha_mean) : "-", at ? Shown(at->delta_mean) : "-",
                  WithInterval(gap.xi_lambda, gap.xi_lambda_half_iqr), WithInterval(gap.xi_alpha, gap.xi_alpha_half_iqr),
                  WithInterval(gap.xi_delta, gap.xi_delta_half_iqr), Percent(gap.tie_share)},
                 row);
  };
  for (const records::AttentionLayer& layer : attention.layers) {
    add(layer.layer, std::to_string(layer.layer), layer.gap_counting);
  }
  add("pooled", "pooled", attention.pooled);
  return table;
}

// xi_beta of a learned inverse temperature, both readings, beside the pooled xi_lambda of the same model.
TextTable BetaTable(const records::AttentionDiagnostics& attention) {
  TextTable table({"reading", "points", "xi", "skipped"});
  const records::GapCounting& pooled = attention.pooled;
  table.AddRow({"xi_lambda (pooled rows)", Shown(pooled.rows), WithInterval(pooled.xi_lambda, pooled.xi_lambda_half_iqr),
                "-"},
               {{"reading", "xi_lambda"},
                {"rows", Json(pooled.rows)},
                {"xi", Json(pooled.xi_lambda)},
                {"half_iqr", Json(pooled.xi_lambda_half_iqr)}});
  if (!attention.inverse_temperature) return table;
  for (const bool grid : {true, false}) {
    const records::BetaExponentFitRecord& fit =
        grid ? attention.inverse_temperature->xi_beta_grid : attention.inverse_temperature->xi_beta_trim;
    json row = records::DocumentJson(fit);
    row["fitted"] = fit.fitted;  // the documents leave a false flag out; the table says it
    row["reading"] = grid ? "xi_beta_grid" : "xi_beta_trim";
    table.AddRow({grid ? "xi_beta (grid)" : "xi_beta (n >= " + Shown(fit.trim) + ")", Shown(fit.points),
                  WithInterval(fit.xi, fit.standard_error), Shown(fit.skipped)},
                 row);
  }
  return table;
}

// One line per milestone: the pooled exponents and xi_beta at that point of training.
TextTable MilestonesTable(const std::vector<std::pair<int64_t, records::AttentionDiagnostics>>& milestones) {
  TextTable table({"step", "milestone", "xi_lambda", "xi_alpha", "xi_delta", "ties", "xi_beta_grid", "xi_beta_trim"});
  for (const auto& [step, attention] : milestones) {
    const records::GapCounting& pooled = attention.pooled;
    json row = ExponentFields(pooled);
    row["step"] = step;
    row["milestone"] = attention.milestone;
    std::optional<double> grid_xi, grid_error, trim_xi, trim_error;
    if (attention.inverse_temperature) {
      grid_xi = attention.inverse_temperature->xi_beta_grid.xi;
      grid_error = attention.inverse_temperature->xi_beta_grid.standard_error;
      trim_xi = attention.inverse_temperature->xi_beta_trim.xi;
      trim_error = attention.inverse_temperature->xi_beta_trim.standard_error;
    }
    row["xi_beta_grid"] = Json(grid_xi);
    row["xi_beta_grid_standard_error"] = Json(grid_error);
    row["xi_beta_trim"] = Json(trim_xi);
    row["xi_beta_trim_standard_error"] = Json(trim_error);
    table.AddRow({std::to_string(step), attention.milestone.empty() ? "-" : attention.milestone,
                  WithInterval(pooled.xi_lambda, pooled.xi_lambda_half_iqr),
                  WithInterval(pooled.xi_alpha, pooled.xi_alpha_half_iqr),
                  WithInterval(pooled.xi_delta, pooled.xi_delta_half_iqr), Percent(pooled.tie_share),
                  WithInterval(grid_xi, grid_error), WithInterval(trim_xi, trim_error)},
                 row);
  }
  return table;
}

// One line per evaluated length: the training length's record (`at_t`) and each record beyond it
// (train.diagnostics_multiples), with its extension method, n-grid and pooled exponents.
TextTable LengthsTable(const records::AttentionDiagnostics& at_t, const std::vector<records::AttentionDiagnostics>& beyond) {
  TextTable table({"length", "multiple", "method", "grid", "rows", "xi_lambda", "xi_alpha", "xi_delta", "ties"});
  auto add = [&](const records::AttentionDiagnostics& attention) {
    const records::GapCounting& pooled = attention.pooled;
    std::string grid;
    for (int64_t n : attention.grid) grid += (grid.empty() ? "" : ",") + std::to_string(n);
    if (attention.grid_fallback) grid += " (fallback)";
    json row = ExponentFields(pooled);
    row["length"] = attention.length;
    row["multiple"] = attention.multiple.value_or(1);
    row["method"] = attention.method.value_or("none");
    row["grid"] = attention.grid;
    row["grid_fallback"] = attention.grid_fallback;
    row["rows"] = Json(pooled.rows);
    table.AddRow({Shown(attention.length), Shown(attention.multiple.value_or(1)), attention.method.value_or("none"),
                  grid.empty() ? "-" : grid, Shown(pooled.rows), WithInterval(pooled.xi_lambda, pooled.xi_lambda_half_iqr),
                  WithInterval(pooled.xi_alpha, pooled.xi_alpha_half_iqr),
                  WithInterval(pooled.xi_delta, pooled.xi_delta_half_iqr), Percent(pooled.tie_share)},
                 row);
  };
  add(at_t);
  for (const records::AttentionDiagnostics& attention : beyond) add(attention);
  return table;
}

// `rung diag --synthetic`: gap counting and the aggregation on rows with closed forms.
// `rung diag --synthetic failure_modes`: the Gaussian reference over M, bases and precisions.
int RunSyntheticFailureModes(const DiagOptions& options) {
  FailureModeGrid grid;
  grid.lengths = options.lengths_given ? options.lengths : DefaultFailureLengths();
  grid.bases = options.bases;
  grid.head_dim = options.head_dim;
  grid.draws = options.draws;
  grid.seed = options.seed;
  StatusOr<std::vector<FailureModesRow>> rows = GaussianFailureModeRows(grid);
  if (!rows.ok()) {
    std::cerr << "rung diag: " << rows.status().message() << "\n";
    return kUsage;
  }
  const TextTable table = FailureModesTable(*rows);
  if (options.format == "table") {
    std::cout << "RoPE's failure modes on i.i.d. Gaussian q, k (head dim " << options.head_dim << ", " << options.draws
              << " draws; paper 003's appendix D.1 convention: unnormalized S(1..M), keys ordered by their score at m = 1, "
                 "aliasing within each precision's resolution epsilon)\n";
  }
  table.Print(std::cout, options.format);
  return options.plot_dir.empty() ? kOk : PlotFailureModes(*rows, options, "Gaussian q, k");
}

// A --table name that only --closed-form has.
bool IsClosedFormTable(const std::string& table) {
  const std::vector<std::string>& names = ClosedFormTableNames();
  return table != "all" && std::find(names.begin(), names.end(), table) != names.end();
}

// `rung diag --closed-form PAPER`: its tables, with the diag options they share.
int RunClosedForm(const DiagOptions& options, bool head_dim_given) {
  const std::vector<std::string>& names = ClosedFormTableNames();
  if (!options.table.empty() && std::find(names.begin(), names.end(), options.table) == names.end()) {
    std::cerr << "rung diag: --table " << options.table
              << " is a trial's table; --closed-form has table3, inversion, lambda, table4, theorem6, theorem8 or all\n";
    return kUsage;
  }
  ClosedFormOptions closed_form = options.closed_form;
  closed_form.table = options.table;
  closed_form.format = options.format;
  if (head_dim_given) closed_form.head_dim = options.head_dim;
  return RunPaper003ClosedForms(closed_form);
}

int RunSynthetic(const DiagOptions& options) {
  if (options.synthetic == "failure_modes") return RunSyntheticFailureModes(options);
  const ContactFit fit =
      FitContactExponents(SyntheticContactRows(options.synthetic, options.lengths, options.rows, options.gap, options.seed),
                          options.bootstrap, options.seed);
  const bool simplex = options.synthetic == "simplex";
  TextTable buckets({"n", "rows", "lambda", "alpha", "delta", "closed_form_lambda"});
  for (const ContactBucket& bucket : fit.buckets) {
    const double closed = simplex ? std::log(static_cast<double>(bucket.n)) / options.gap : std::nan("");
    buckets.AddRow({std::to_string(bucket.n), std::to_string(bucket.rows), Number(std::exp(bucket.mean_log_lambda)),
                    Number(std::exp(bucket.mean_log_alpha)), Number(std::exp(bucket.mean_log_delta)), NumberOrBlank(closed)},
                   {{"n", bucket.n},
                    {"rows", bucket.rows},
                    {"lambda", NumberOrNull(std::exp(bucket.mean_log_lambda))},
                    {"alpha", NumberOrNull(std::exp(bucket.mean_log_alpha))},
                    {"delta", NumberOrNull(std::exp(bucket.mean_log_delta))},
                    {"closed_form_lambda", NumberOrNull(closed)}});
  }
  TextTable slopes({"exponent", "xi", "half_iqr", "expected"});
  const std::vector<std::tuple<std::string, ContactSlope, std::string>> exponents = {
      {"xi_lambda", fit.lambda, simplex ? "1" : "about 0.6 (0.5 as n grows)"},
      {"xi_alpha", fit.alpha, simplex ? "0" : "-"},
      {"xi_delta", fit.delta, simplex ? "0" : "-"}};
  for (const auto& [name, slope, expected] : exponents) {
    slopes.AddRow({name, fit.fitted ? Number(slope.xi, 4) : "-", fit.fitted ? Number(slope.half_iqr, 2) : "-", expected},
                  {{"exponent", name},
                   {"xi", fit.fitted ? json(slope.xi) : json()},
                   {"half_iqr", fit.fitted ? json(slope.half_iqr) : json()},
                   {"expected", expected}});
  }
  if (options.format == "json") {
    std::cout << json{{"synthetic", options.synthetic}, {"buckets", buckets.Json()}, {"exponents", slopes.Json()}}.dump(2)
              << "\n";
    return kOk;
  }
  if (options.format == "csv") {
    buckets.Print(std::cout, "csv");
    return kOk;
  }
  std::cout << "Synthetic " << options.synthetic << " rows"
            << (simplex ? " (one score 0, the others -" + Number(options.gap, 6) + ")"
                        : " (" + std::to_string(options.rows) + " i.i.d. standard normal rows per n)")
            << ": geometric means of the contact triple per n\n";
  buckets.Print(std::cout, "table");
  std::cout << "\nExponents (OLS of the bucket mean of log X on log log n; half-IQR of " << options.bootstrap
            << " bootstrap replicates over rows)\n";
  slopes.Print(std::cout, "table");
  return kOk;
}

TextTable RegimeTable(const records::AttentionDiagnostics& attention) {
  TextTable table({"layer", "beta/lambda", "entropy/ln_n", "max_weight", "top_two_gap"});
  for (const records::AttentionLayer& layer : attention.layers) {
    for (const records::SoftmaxRegimeAt& regime : layer.gap_counting.softmax_regime) {
      json row = records::DocumentJson(regime);
      row["layer"] = layer.layer;
      table.AddRow({std::to_string(layer.layer), Shown(regime.beta_over_lambda, 3), Shown(regime.normalised_entropy),
                    Shown(regime.max_weight), Shown(regime.top_two_gap)},
                   row);
    }
  }
  return table;
}

TextTable ExtrapolationTable(const std::vector<records::ExtrapolationResult>& extrapolation) {
  TextTable table({"multiple", "length", "method", "val_loss", "in_dist", "extrap", "back_half", "val_accuracy"});
  for (const records::ExtrapolationResult& entry : extrapolation) {
    json row = records::DocumentJson(entry);
    row.erase("val_loss_per_position");
    table.AddRow({Shown(entry.multiple), Shown(entry.length), entry.method, Shown(entry.val_loss),
                  Shown(entry.val_loss_in_dist), Shown(entry.val_loss_extrap), Shown(entry.val_loss_back_half),
                  Shown(entry.val_accuracy)},
                 row);
  }
  return table;
}

// The indexing probe's cells (paper 003 appendix D.2): accuracy, the lists' spread and chance at each
// list length, with the prompts' mean and longest tokens.
TextTable IndexingTable(const std::vector<records::ProbeResult>& cells) {
  TextTable table({"probe", "elements", "mean_tokens", "longest", "correct", "accuracy", "sd_lists", "chance", "blind"});
  for (const records::ProbeResult& cell : cells) {
    table.AddRow({cell.probe, Shown(cell.elements), Shown(cell.mean_tokens, 5), Shown(cell.length),
                  Shown(cell.correct) + "/" + Shown(cell.instances), Shown(cell.accuracy, 3), Shown(cell.accuracy_sd, 3),
                  Shown(cell.chance, 2), Shown(cell.position_blind, 3)},
                 records::DocumentJson(cell));
  }
  return table;
}

// A probe's cells: accuracy at each prompt length, method and needle depth.
TextTable ProbeTable(const std::vector<records::ProbeResult>& cells) {
  if (!cells.empty() && cells.front().elements) return IndexingTable(cells);
  TextTable table({"probe", "length", "method", "depth", "correct", "accuracy"});
  for (const records::ProbeResult& cell : cells) {
    table.AddRow({cell.probe, Shown(cell.length), cell.method, Shown(cell.depth, 2),
                  Shown(cell.correct) + "/" + Shown(cell.instances), Shown(cell.accuracy, 3)},
                 records::DocumentJson(cell));
  }
  return table;
}

// LeRoPE's leave-one-out band ablation: the loss with each pair reverted to RoPE's frequency.
TextTable BandsTable(const records::BandAblationDiagnostics& ablation) {
  TextTable table({"pair", "rope_theta", "reverted_loss", "reverted_delta", "zeroed_loss", "zeroed_delta"});
  for (const records::BandAblationPair& pair : ablation.pairs) {
    table.AddRow({Shown(pair.pair), Shown(pair.rope_theta), Shown(pair.loss), Shown(pair.delta, 3), Shown(pair.zeroed_loss),
                  Shown(pair.zeroed_delta, 3)},
                 records::DocumentJson(pair));
  }
  return table;
}

// AdaRoPE B.3's head influence: each query head's loss increase with its AdaRoPE parameters reset.
TextTable InfluenceTable(const records::HeadInfluenceDiagnostics& influence) {
  TextTable table({"layer", "head", "delta_all", "delta_frequency", "delta_scale"});
  for (const records::HeadInfluence& head : influence.heads) {
    table.AddRow({Shown(head.layer), Shown(head.head), Shown(head.all, 3), Shown(head.frequency, 3), Shown(head.scale, 3)},
                 records::DocumentJson(head));
  }
  return table;
}

// The multi-key NIAH grid: one row per evaluated length, method and needle depth, one column per number
// of distractor pairs.
TextTable NiahTable(const records::NiahGridDiagnostics& grid) {
  std::vector<std::string> columns = {"multiple", "method", "depth"};
  for (int64_t count : grid.distractors) columns.push_back("d" + std::to_string(count));
  TextTable table(columns);
  for (const records::NiahGridAtLength& entry : grid.grids) {
    for (size_t d = 0; d < entry.accuracy.size() && d < grid.depths.size(); ++d) {
      const std::vector<double>& accuracy = entry.accuracy[d];
      std::vector<std::string> cells = {Shown(entry.multiple), entry.method, Shown(grid.depths[d], 2)};
      for (size_t c = 0; c < grid.distractors.size(); ++c) {
        cells.push_back(c < accuracy.size() ? Shown(accuracy[c], 2) : "-");
      }
      json accuracy_row = json::array();
      for (double value : accuracy) accuracy_row.push_back(NumberOrNull(value));
      json placed_row = json();
      if (d < entry.placed.size()) {
        placed_row = json::array();
        for (double value : entry.placed[d]) placed_row.push_back(NumberOrNull(value));
      }
      table.AddRow(cells, {{"multiple", entry.multiple},
                           {"length", entry.length},
                           {"method", entry.method},
                           {"depth", NumberOrNull(grid.depths[d])},
                           {"accuracy", accuracy_row},
                           {"placed", placed_row}});
    }
  }
  return table;
}

// Learned (or fixed) rotary frequencies per layer and row (head or head group) against RoPE's
// theta_f = b^(-f/pairs) for the trial's base b.
struct FrequencyRows {
  std::vector<plot::FrequencyProfile> profiles;
  TextTable table{{"layer", "row", "pair", "theta", "rope_theta", "theta/rope", "wavelength/T"}};
};

FrequencyRows FrequencyTable(const std::map<std::string, TrialTensor>& tensors, double base, double train_length) {
  FrequencyRows rows;
  for (const auto& [name, entry] : tensors) {
    const records::Tensor& tensor = entry.tensor;
    const std::string prefix = "frequencies.layer_";
    if (name.rfind(prefix, 0) != 0 || tensor.shape.size() != 2) continue;
    const int64_t groups = tensor.shape[0], pairs = tensor.shape[1];
    const std::vector<double>& values = tensor.values;
    // A tensor whose shape does not hold its values (a trainer that is not rung-train) is not drawn.
    if (groups <= 0 || pairs <= 0 || groups > static_cast<int64_t>(values.size()) ||
        pairs > static_cast<int64_t>(values.size()) / groups) {
      continue;
    }
    const std::string layer = name.substr(prefix.size());
    int64_t layer_index = 0;
    if (std::from_chars(layer.data(), layer.data() + layer.size(), layer_index).ec != std::errc()) continue;
    for (int64_t g = 0; g < groups; ++g) {
      plot::FrequencyProfile profile;
      profile.label = "layer " + layer + (groups > 1 ? " row " + std::to_string(g) : "");
      for (int64_t f = 0; f < pairs; ++f) {
        const double theta = values[static_cast<size_t>(g * pairs + f)];
        const double rope = std::pow(base, -static_cast<double>(f) / static_cast<double>(pairs));
        profile.theta.push_back(theta);
        const double wavelength = theta > 0 ? 2 * M_PI / theta / train_length : std::nan("");
        rows.table.AddRow({layer, std::to_string(g), std::to_string(f), Shown(theta), Shown(rope), Shown(theta / rope),
                           Shown(wavelength)},
                          {{"layer", layer_index}, {"row", g}, {"pair", f}, {"theta", NumberOrNull(theta)},
                           {"rope_theta", NumberOrNull(rope)}, {"ratio", NumberOrNull(theta / rope)},
                           {"wavelength_over_training_length", NumberOrNull(wavelength)}});
      }
      rows.profiles.push_back(std::move(profile));
    }
  }
  return rows;
}

// Reads the trial's diagnostics, a warning for each that does not read: kOk, or the exit code (reason on stderr).
int FetchTrialDiagnostics(CoordinatorConnection& connection, int64_t trial_id, TrialDiagnostics* diagnostics) {
  rung::v1::GetDiagnosticsRequest request;
  request.set_trial_id(trial_id);
  rung::v1::GetDiagnosticsResponse response;
  grpc::Status status = connection.user().GetDiagnostics(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("diag", status);
  StatusOr<TrialDiagnostics> read = ReadTrialDiagnostics(response);
  if (!read.ok()) {
    std::cerr << "rung diag: trial " << trial_id << ": " << read.status().message() << "\n";
    return kFailure;
  }
  *diagnostics = std::move(read).value();
  for (const std::string& unreadable : diagnostics->unreadable) {
    std::cerr << "rung diag: warning: trial " << trial_id << "'s diagnostic " << unreadable << "\n";
  }
  return kOk;
}

// The milestone --step names (else the latest) in `*attention`, or null: kUsage when --step names none, else kOk.
int PickMilestone(const DiagOptions& options,
                  const std::vector<std::pair<int64_t, records::AttentionDiagnostics>>& milestones,
                  const records::AttentionDiagnostics** attention) {
  *attention = nullptr;
  for (const auto& [step, value] : milestones) {
    if (options.step < 0 || step == options.step) *attention = &value;
  }
  if (!milestones.empty() && *attention == nullptr && options.step >= 0) {
    std::cerr << "rung diag: trial " << options.trial_id << " has no diagnostics at step " << options.step
              << "; its milestones are at steps";
    for (const auto& [step, value] : milestones) std::cerr << " " << step;
    std::cerr << "\n";
    return kUsage;
  }
  return kOk;
}

// Reads the trial into `*trial`: kOk, or the exit code (reason on stderr).
int FetchDiagnosedTrial(CoordinatorConnection& connection, int64_t trial_id, rung::v1::Trial* trial) {
  rung::v1::GetTrialRequest trial_request;
  trial_request.set_trial_id(trial_id);
  grpc::Status status = connection.user().GetTrial(connection.Context().get(), trial_request, trial);
  if (!status.ok()) return ReportRpcError("diag", status);
  return kOk;
}

// The number at JSON pointer `pointer` of a trial config, `otherwise` where there is none.
double ConfigNumber(const json& config, const char* pointer, double otherwise) {
  if (!config.is_object() || !config.contains(json::json_pointer(pointer))) return otherwise;
  const json& value = config.at(json::json_pointer(pointer));
  return value.is_number() ? value.get<double>() : otherwise;
}

// The trial's failure-mode rows, then the Gaussian reference at their M, the config's head dimension and `base`.
std::vector<FailureModesRow> FailureModesWithReference(const records::AttentionDiagnostics& attention,
                                                       const std::string& label, const json& config, double base) {
  std::vector<FailureModesRow> failure_rows = TrialFailureModeRows(attention, label, base);
  if (failure_rows.empty()) return failure_rows;
  FailureModeGrid grid;
  // The trainer's contexts, within what the CLI measures itself (--n's range, 64 of them at most).
  for (const FailureModesRow& row : failure_rows) {
    const int64_t length = row.summary.length;
    if (length >= 2 && length <= kMaxSyntheticLength && grid.lengths.size() < 64 &&
        std::find(grid.lengths.begin(), grid.lengths.end(), length) == grid.lengths.end()) {
      grid.lengths.push_back(length);
    }
  }
  grid.bases = {base};
  grid.head_dim = static_cast<int64_t>(ConfigNumber(config, "/model/head_dim", 0.0));
  StatusOr<std::vector<FailureModesRow>> gaussian = GaussianFailureModeRows(grid);
  if (gaussian.ok()) failure_rows.insert(failure_rows.end(), gaussian->begin(), gaussian->end());
  return failure_rows;
}

// The sections of the output: with `table` "all" each under its heading, then a blank line; else only the one named.
struct DiagSections {
  std::string table;
  std::string format;

  // Prints `rows` in `format` when section `name` is asked for.
  void Print(const std::string& name, const std::string& heading, const TextTable& rows) const {
    const bool all = table == "all";
    if (!all && table != name) return;
    if (all) std::cout << heading << "\n";
    rows.Print(std::cout, format);
    if (all) std::cout << "\n";
  }
};

// The gap-counting section's heading: the record's n-grid, and its warning when it has one.
std::string GapsHeading(const records::AttentionDiagnostics& attention) {
  std::string grid = "n in";
  for (int64_t n : attention.grid) grid += " " + std::to_string(n);
  if (grid == "n in") grid = "the record's n-grid";
  // Records before the bootstrap unit was a setting resampled sequences.
  const std::string unit = attention.bootstrap_unit.value_or("sequence");
  const std::string batches =
      attention.batches && *attention.batches > 1 ? ", " + std::to_string(*attention.batches) + " batches" : "";
  return "Gap counting on unscaled score rows: means at n = T; exponents over " + grid +
         " (rows pooled per n, ± half-IQR over (" + unit + ", layer, head) units" + batches + ")" +
         (attention.warning ? "\nwarning: " + *attention.warning : "");
}

// Prints the sections of the milestone's attention record: heads, gaps, regime, beta, failure_modes, milestones.
void PrintAttentionSections(const DiagSections& sections, const records::AttentionDiagnostics& attention,
                            const std::vector<FailureModesRow>& failure_rows,
                            const std::vector<std::pair<int64_t, records::AttentionDiagnostics>>& milestones,
                            const std::vector<records::AttentionDiagnostics>& beyond) {
  sections.Print("heads",
                 "Heads (E2 = effective attention length at a query position; T = " + std::to_string(attention.length) +
                     ")",
                 HeadsTable(attention));
  sections.Print("gaps", GapsHeading(attention), GapsTable(attention));
  sections.Print("regime", "Softmax regime at beta = c * lambda", RegimeTable(attention));
  if (attention.inverse_temperature || sections.table == "beta") {
    sections.Print("beta",
                   "Inverse-temperature exponent of the learned beta_n (fit beta_n = a1 (log n)^xi; ± its OLS standard "
                   "error) beside xi_lambda (± bootstrap half-IQR)",
                   BetaTable(attention));
  }
  if (!failure_rows.empty() || sections.table == "failure_modes") {
    sections.Print("failure_modes",
                   "RoPE's failure modes as paper 003's appendix D.1 measures them (the model's own score rows over "
                   "[key] x M [query], keys ordered by their score at m = 1, aliasing within each precision's "
                   "resolution; mean over heads) beside i.i.d. Gaussian q and keys in that convention at the same M, "
                   "head dimension and base",
                   FailureModesTable(failure_rows));
  }
  if (milestones.size() > 1 || sections.table == "milestones") {
    sections.Print("milestones",
                   "Exponents at each training milestone (pooled; xi_lambda, xi_alpha, xi_delta ± bootstrap half-IQR, "
                   "xi_beta ± OLS standard error)",
                   MilestonesTable(milestones));
  }
  if (!beyond.empty() || sections.table == "lengths") {
    // The training length's record of the same point as those beyond it: the last milestone (the end).
    const records::AttentionDiagnostics& at_t = milestones.empty() ? attention : milestones.back().second;
    sections.Print("lengths",
                   "Exponents at each evaluated length L (pooled over layers; ± bootstrap half-IQR): the training length "
                   "(milestone " + (at_t.milestone.empty() ? std::string("-") : at_t.milestone) +
                       ") and each train.diagnostics_multiples entry under its extension method; the n-grid is read at "
                       "that L (rows: the non-tied rows pooled)",
                   LengthsTable(at_t, beyond));
  }
}

// Prints the sections of the trial's other documents: extrapolation, bands, niah, and the rotary `frequencies`.
void PrintEvaluationSections(const DiagSections& sections, const TrialDiagnostics& diagnostics,
                             const TextTable& frequencies, double base, double train_length) {
  sections.Print("extrapolation",
                 "Validation beyond the training length (in_dist: positions < T; extrap: positions >= T; back_half: "
                 "positions >= L / 2 of each window of L, paper 004's scoring)",
                 ExtrapolationTable(diagnostics.extrapolation));
  if (!diagnostics.probe.empty() || sections.table == "probe") {
    const std::string score = diagnostics.probe.empty() ? "" : diagnostics.probe.front().score;
    const std::string scored = score == "next_token" ? "the next token after the query"
                               : score == "choice"   ? "the largest logit among the four answers"
                                                     : "greedy decode of the answer, exact match";
    const bool indexing = !diagnostics.probe.empty() && diagnostics.probe.front().elements.has_value();
    sections.Print("probe",
                   indexing ? "Indexing accuracy by list length within the context (paper 003 section 5, appendix D.2: " +
                                  scored + "; sd_lists: the spread of the lists' accuracies; chance: a uniformly guessed value; blind: " +
                                  "the list's most frequent value, the best answer blind to positions; docs/science.md section 12)"
                            : "Probe accuracy by prompt length, extension method and needle depth (" + scored +
                                  "; docs/science.md section 16)",
                   ProbeTable(diagnostics.probe));
  }
  if (diagnostics.band_ablation || sections.table == "bands") {
    const records::BandAblationDiagnostics ablation =
        diagnostics.band_ablation.value_or(records::BandAblationDiagnostics());
    sections.Print("bands",
                   "Leave-one-out band ablations: the loss on " + Shown(ablation.sequences) +
                       " validation sequences at T with each pair reverted to RoPE's frequency, and zeroed (LeRoPE D.1's "
                       "ablation: the band's query and key components, so its logit contribution, set to 0; - where the "
                       "record predates it) (trained: " +
                       Shown(ablation.loss) + ")",
                   BandsTable(ablation));
  }
  if (diagnostics.head_influence || sections.table == "influence") {
    const records::HeadInfluenceDiagnostics influence =
        diagnostics.head_influence.value_or(records::HeadInfluenceDiagnostics());
    sections.Print("influence",
                   "Head influence (AdaRoPE B.3): the loss increase on " + Shown(influence.sequences) +
                       " validation sequences of " + Shown(influence.length) +
                       " tokens with a head's AdaRoPE parameters reset to their start: all, AdaFreq alone (per " +
                       (influence.frequency_unit.empty() ? std::string("-") : influence.frequency_unit) +
                       "), AdaScale alone (per " + (influence.scale_unit.empty() ? std::string("-") : influence.scale_unit) +
                       ") (trained: " + Shown(influence.loss) + ")",
                   InfluenceTable(influence));
  }
  if (diagnostics.niah_grid || sections.table == "niah") {
    const records::NiahGridDiagnostics grid = diagnostics.niah_grid.value_or(records::NiahGridDiagnostics());
    sections.Print("niah",
                   "Multi-key needle in a haystack: answer accuracy by needle depth (rows) and distractor pairs "
                   "(dN), " + Shown(grid.instances) + " instances per cell",
                   NiahTable(grid));
  }
  sections.Print("frequencies",
                 "Rotary frequencies against RoPE's (b = " + Shown(base, 6) + ", T = " + Shown(train_length) + ")",
                 frequencies);
}

// Draws the frequency profile (wavelength against RoPE's), its files named on stderr: kOk, or kFailure.
int PlotFrequencyProfile(const std::vector<plot::FrequencyProfile>& profiles, double base, double train_length,
                         const plot::DiagnosticsPlotOptions& plot_options) {
  StatusOr<std::vector<std::string>> profile =
      plot::WriteFrequencyProfilePlot(profiles, base, train_length, plot_options);
  if (!profile.ok()) {
    std::cerr << "rung diag: " << profile.status().message() << "\n";
    return kFailure;
  }
  for (const std::string& file : *profile) std::cerr << "wrote " << file << "\n";
  return kOk;
}

// With --plot, draws each figure the trial has into options.plot_dir: kOk, or the first failure's exit code.
int PlotTrialDiagnostics(const DiagOptions& options, const TrialDiagnostics& diagnostics,
                         const records::AttentionDiagnostics* attention,
                         const std::vector<FailureModesRow>& failure_rows, const FrequencyRows& frequencies,
                         const rung::v1::Trial& trial, double base, double train_length) {
  if (options.plot_dir.empty()) return kOk;
  const std::string title = "trial " + std::to_string(options.trial_id);
  if (!failure_rows.empty()) {
    if (int code = PlotFailureModes(failure_rows, options, title); code != kOk) return code;
  }
  plot::DiagnosticsPlotOptions plot_options;
  plot_options.out_dir = options.plot_dir;
  plot_options.gnuplot = options.gnuplot;
  plot_options.title = title;
  if (attention != nullptr) {
    if (int code = ReportPlotFiles(plot::WriteDiagnosticsPlots(*attention, diagnostics.extrapolation, plot_options));
        code != kOk) {
      return code;
    }
    if (!diagnostics.attention_beyond.empty()) {
      if (int code = ReportPlotFiles(
              plot::WriteGapCountingByLengthPlot(*attention, diagnostics.attention_beyond, plot_options));
          code != kOk) {
        return code;
      }
    }
    if (std::any_of(attention->layers.begin(), attention->layers.end(),
                    [](const records::AttentionLayer& layer) { return !layer.pair_profile_edges.empty(); })) {
      if (int code = ReportPlotFiles(plot::WritePairProfilePlots(*attention, plot_options)); code != kOk) return code;
    }
  }
  if (diagnostics.band_ablation) {
    if (int code = ReportPlotFiles(plot::WriteBandAblationPlot(*diagnostics.band_ablation, plot_options));
        code != kOk) {
      return code;
    }
  }
  if (diagnostics.head_influence) {
    if (int code = ReportPlotFiles(plot::WriteHeadInfluencePlot(*diagnostics.head_influence, plot_options)); code != kOk) {
      return code;
    }
  }
  if (diagnostics.niah_grid) {
    if (int code = ReportPlotFiles(plot::WriteNiahGridPlot(*diagnostics.niah_grid, plot_options)); code != kOk) {
      return code;
    }
  }
  if (!diagnostics.probe.empty()) {
    if (int code = ReportPlotFiles(plot::WriteProbePlot(diagnostics.probe, plot_options)); code != kOk) return code;
  }
  if (!frequencies.profiles.empty() && train_length > 0 && base > 1) {
    plot_options.title = title + " (" + wire::FromConfigEntries(trial.assignments()).dump() + ")";
    return PlotFrequencyProfile(frequencies.profiles, base, train_length, plot_options);
  }
  return kOk;
}

// `rung diag TRIAL`: prints the trial's diagnostics as asked, with --plot draws them; the exit code.
int RunDiag(CoordinatorConnection& connection, const DiagOptions& options) {
  TrialDiagnostics diagnostics;
  if (int code = FetchTrialDiagnostics(connection, options.trial_id, &diagnostics); code != kOk) return code;
  const records::AttentionDiagnostics* attention = nullptr;
  if (int code = PickMilestone(options, diagnostics.attention, &attention); code != kOk) return code;
  rung::v1::Trial trial;
  if (int code = FetchDiagnosedTrial(connection, options.trial_id, &trial); code != kOk) return code;
  const json config = wire::FromConfigObject(trial.config());
  const double base = ConfigNumber(config, "/position/base", 10000.0);
  const double train_length = ConfigNumber(config, "/data/seq_len", 0.0);
  // An evaluation trial may measure no attention (train.diagnostics_sequences 0) and still have its
  // evaluations: those are shown alone.
  const bool evaluated = !diagnostics.extrapolation.empty() || !diagnostics.probe.empty() || diagnostics.niah_grid ||
                         diagnostics.band_ablation || diagnostics.head_influence;
  std::string table = options.table;
  if (table.empty()) table = options.format == "table" ? "all" : attention != nullptr ? "heads" : "all";
  const bool attention_table = table == "heads" || table == "gaps" || table == "regime" || table == "beta" ||
                               table == "milestones" || table == "failure_modes" || table == "lengths";
  if (attention == nullptr && (!evaluated || attention_table)) {
    std::cerr << "rung diag: trial " << options.trial_id
              << (evaluated ? " recorded no attention diagnostics (none are measured with train.diagnostics_sequences 0); "
                              "it has evaluations: --table extrapolation, probe, niah, bands, influence or all"
                            : " has no attention diagnostics yet (they are written when a trial succeeds; see `rung show " +
                                  std::to_string(options.trial_id) + "`)")
              << "\n";
    return kUsage;
  }
  const FrequencyRows frequencies =
      FrequencyTable(diagnostics.tensors, base, train_length > 0 ? train_length : 1.0);
  const std::vector<FailureModesRow> failure_rows =
      attention != nullptr ? FailureModesWithReference(*attention, "trial " + std::to_string(options.trial_id), config, base)
                           : std::vector<FailureModesRow>();
  if (table == "all" && options.format == "csv") {
    std::cerr << "rung diag: --format csv needs one --table (heads, gaps, regime, beta, milestones, failure_modes, "
                 "lengths, extrapolation, probe, bands, influence, niah or frequencies)\n";
    return kUsage;
  }
  if (table == "all" && options.format == "json") {
    std::cout << json{{"trial_id", options.trial_id}, {"diagnostics", DiagnosticsJson(diagnostics, attention)}}.dump(2)
              << "\n";
  } else {
    const DiagSections sections{table, options.format};
    if (attention != nullptr) {
      PrintAttentionSections(sections, *attention, failure_rows, diagnostics.attention, diagnostics.attention_beyond);
    }
    PrintEvaluationSections(sections, diagnostics, frequencies.table, base, train_length);
  }
  return PlotTrialDiagnostics(options, diagnostics, attention, failure_rows, frequencies, trial, base, train_length);
}

// `rung diag --model`: the diagnostics a training milestone records, measured by rung-model on the
// model's first windows of --tokens, shown as a trial's are (the sections a model alone has: heads, gaps,
// regime, failure_modes); the exit code.
int RunModelDiag(const DiagOptions& options) {
  if (options.tokens.empty() || options.model_seq_len <= 0) {
    std::cerr << "rung diag: --model needs --tokens and --seq-len\n";
    return kUsage;
  }
  std::string table = options.table;
  if (table.empty()) table = options.format == "table" ? "all" : "heads";
  if (table != "all" && table != "heads" && table != "gaps" && table != "regime" && table != "failure_modes") {
    std::cerr << "rung diag: --table " << table << " is measured by a training run (give a trial); a model alone has "
                 "heads, gaps, regime and failure_modes\n";
    return kUsage;
  }
  if (table == "all" && options.format == "csv") {
    std::cerr << "rung diag: --format csv needs one --table (heads, gaps, regime or failure_modes)\n";
    return kUsage;
  }
  StatusOr<SubprocessResult> run = RunModelToolCollecting(
      "diag", {"--model", options.model, "--tokens", options.tokens, "--seq-len", std::to_string(options.model_seq_len),
               "--sequences", std::to_string(options.sequences), "--batches", std::to_string(options.batches),
               "--bos", options.bos});
  if (!run.ok()) {
    std::cerr << "rung diag: " << run.status().message() << "\n";
    return kFailure;
  }
  if (!run->exit.Succeeded()) {
    std::cerr << run->stderr_text;
    return run->exit.signal == 0 ? run->exit.code : kFailure;
  }
  const json measured = json::parse(run->stdout_text, nullptr, /*allow_exceptions=*/false);
  records::AttentionDiagnostics attention;
  if (measured.is_discarded() || !measured.contains("attention") ||
      !records::DocumentFromJson(measured.at("attention"), &attention).ok()) {
    std::cerr << "rung diag: rung-model diag printed no diagnostics\n";
    return kFailure;
  }
  const double base = measured.value("base", 10000.0);
  const json config = {{"model", {{"head_dim", measured.value("head_dim", 0)}}}, {"position", {{"base", base}}}};
  const std::vector<FailureModesRow> failure_rows = FailureModesWithReference(attention, options.model, config, base);
  if (table == "all" && options.format == "json") {
    std::cout << json{{"model", options.model},
                      {"architecture", measured.value("architecture", "")},
                      {"sequences", measured.value("sequences", 0)},
                      {"diagnostics", {{"attention", records::DocumentJson(attention)}}}}
                     .dump(2)
              << "\n";
  } else {
    PrintAttentionSections(DiagSections{table, options.format}, attention, failure_rows, {{0, attention}}, {});
  }
  if (options.plot_dir.empty()) return kOk;
  if (!failure_rows.empty()) {
    if (int code = PlotFailureModes(failure_rows, options, options.model); code != kOk) return code;
  }
  plot::DiagnosticsPlotOptions plot_options;
  plot_options.out_dir = options.plot_dir;
  plot_options.gnuplot = options.gnuplot;
  plot_options.title = options.model;
  if (int code = ReportPlotFiles(plot::WriteDiagnosticsPlots(attention, {}, plot_options)); code != kOk) return code;
  return ReportPlotFiles(plot::WritePairProfilePlots(attention, plot_options));
}

}  // namespace

void AddDiagCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<DiagOptions>();
  CLI::App* command = AddCommand<DiagOptions>(
      app, exit_code, "diag",
      "A trained model's attention diagnostics: effective attention length E_2, frequency-pair usage and its CV,\n"
      "effective base, dominant band, gap counting (Lambda, alpha, Delta; xi_Lambda, xi_alpha, xi_Delta with\n"
      "half-IQR intervals), the softmax regime, xi_beta of a learned inverse temperature (with its OLS standard\n"
      "error), the exponents at each training milestone, RoPE's four failure modes per head beside Gaussian vectors,\n"
      "validation beyond the training length, LeRoPE's leave-one-out band ablation, and the needle-in-a-haystack\n"
      "grid. --plot DIR draws E_2 by position, pair-usage heatmaps, the pair-by-distance profile per head (AdaRoPE\n"
      "figures 1 and 5: on NRW the query against the needle), the gap-counting fit, per-position loss, one figure per\n"
      "failure mode, the band ablation and the NIAH heatmaps.\n"
      "--synthetic needs no trial and no coordinator: simplex|gaussian run gap counting on rows with closed forms\n"
      "(simplex: Lambda = ln n / D, xi_Lambda = 1, xi_alpha = xi_Delta = 0; Gaussian: xi_Lambda about 0.6);\n"
      "failure_modes measures the four failure modes on i.i.d. Gaussian q, k over --n, --base and every precision.\n"
      "--model DIR --tokens FILE --seq-len T measures a Hugging Face folder or a rung checkpoint here (rung-model).\n"
      "--closed-form 003 needs neither: paper 003's formulas as its tables (Table 3, Eq. 5, lambda(M) and the normal\n"
      "approximation, Table 4 as the paper prints it, Theorems 6 and 8) over --lengths, --bases and --precision.",
      options, RunDiag);
  CLI::Option* trial = command->add_option("trial", options->trial_id, "Trial id");
  CLI::Option* synthetic =
      command->add_option("--synthetic", options->synthetic,
                          "Instead of a trial: gap counting on simplex or gaussian rows, or failure_modes on Gaussian q, k")
          ->check(CLI::IsMember({"simplex", "gaussian", "failure_modes"}));
  trial->excludes(synthetic);
  command->add_option("--n", options->lengths,
                      "--synthetic: the n-grid (default 64,128,256,512,768,1024), or for failure_modes the contexts M "
                      "(default 64,256,1024,4096,16384)")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{2}, kMaxSyntheticLength))
      ->needs(synthetic);
  command->add_option("--rows", options->rows, "--synthetic gaussian: rows per n (default 2000)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000}))
      ->needs(synthetic);
  command->add_option("--gap", options->gap, "--synthetic simplex: the gap D (default 1)")
      ->check(CLI::Range(1e-300, 1e300))
      ->needs(synthetic);
  command->add_option("--seed", options->seed, "--synthetic: random seed (default 0)")->needs(synthetic);
  command->add_option("--base", options->bases, "--synthetic failure_modes: RoPE bases (default 10000)")
      ->delimiter(',')
      ->check(CLI::Range(1.0 + 1e-9, 1e300))
      ->needs(synthetic);
  CLI::Option* closed_form =
      command->add_option("--closed-form", options->closed_form.paper,
                          "Instead of a trial: a paper's closed forms, computed here (003: RoPE's failure modes, its "
                          "Tables 3 and 4, Eq. 5, lambda(M), Theorems 6 and 8)")
          ->check(CLI::IsMember({"003"}));
  trial->excludes(closed_form);
  synthetic->excludes(closed_form);
  command->add_option("--head-dim", options->head_dim,
                      "--synthetic failure_modes: head dimension (default 64); --closed-form: d (default 128: h = 64 "
                      "rotary pairs, as the paper's tables)")
      ->check(CLI::Range(int64_t{2}, int64_t{4096}));
  command->add_option("--bases", options->closed_form.bases,
                      "--closed-form: RoPE bases B (default: Table 3's 1e4..1e8 for table3, Table 4's 1e4,1e5,1e6 for "
                      "the others)")
      ->delimiter(',')
      ->check(CLI::Range(1.0 + 1e-9, 1e300))
      ->needs(closed_form);
  command->add_option("--lengths", options->closed_form.lengths,
                      "--closed-form: context lengths M (default Table 4's 1024,4096,16384,32768,65536)")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 62))
      ->needs(closed_form);
  command->add_option("--threshold", options->closed_form.threshold,
                      "--closed-form: Table 3's inversion probability, in (0, 0.5) (default 0.3)")
      ->needs(closed_form);
  command->add_option("--precision", options->closed_form.precisions,
                      "--closed-form: the precisions' columns, of bf16, fp16, fp32 (default all three)")
      ->delimiter(',')
      ->check(CLI::IsMember({"bf16", "fp16", "fp32"}))
      ->needs(closed_form);
  command->add_flag("--cap-lambda", options->closed_form.cap_lambda,
                    "--closed-form: cap lambda(M) at h (the paper's tables let it exceed h past M = B)")
      ->needs(closed_form);
  command->add_option("--draws", options->draws, "--synthetic failure_modes: Gaussian draws averaged (default 16)")
      ->check(CLI::Range(1, 10000))
      ->needs(synthetic);
  command->add_option("--bootstrap", options->bootstrap, "--synthetic: bootstrap replicates (default 200)")
      ->check(CLI::Range(0, 10000))
      ->needs(synthetic);
  command->add_option("--step", options->step, "The milestone to show, by its step (default: the latest)")
      ->check(PositiveNumberCheck(/*zero_allowed=*/true))
      ->excludes(synthetic);
  CLI::Option* model =
      command->add_option("--model", options->model,
                          "Instead of a trial: a Hugging Face model folder or a rung checkpoint, measured here on --tokens "
                          "(heads, gaps, regime, failure_modes)");
  trial->excludes(model);
  model->excludes(synthetic);
  model->excludes(closed_form);
  command->add_option("--tokens", options->tokens, "--model: a token shard, a folder of them, or a prepared folder")
      ->needs(model);
  command->add_option("--seq-len", options->model_seq_len, "--model: the sequence length T")
      ->check(PositiveNumberCheck())
      ->needs(model);
  command->add_option("--sequences", options->sequences, "--model: sequences per batch (default 16)")
      ->check(PositiveNumberCheck())
      ->needs(model);
  command->add_option("--batches", options->batches, "--model: batches, the bootstrap's units (default 1: sequences)")
      ->check(PositiveNumberCheck())
      ->needs(model);
  command->add_option("--bos", options->bos, "--model: prepend its BOS: auto (where its tokenizer config adds one), yes, no")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
      ->needs(model);
  // --synthetic runs here, with no connection; a trial goes to the coordinator as every command does.
  command->callback([options, exit_code, command] {
    if (command->count("--model") > 0) {
      *exit_code = RunModelDiag(*options);
      return;
    }
    if (command->count("--closed-form") > 0) {
      *exit_code = RunClosedForm(*options, command->count("--head-dim") > 0);
      return;
    }
    if (command->count("--head-dim") > 0 && options->synthetic != "failure_modes") {
      std::cerr << "rung diag: --head-dim needs --synthetic failure_modes or --closed-form\n";
      *exit_code = kUsage;
      return;
    }
    if (IsClosedFormTable(options->table)) {
      std::cerr << "rung diag: --table " << options->table << " is a table of --closed-form\n";
      *exit_code = kUsage;
      return;
    }
    if (!options->synthetic.empty()) {
      options->lengths_given = command->count("--n") > 0;
      *exit_code = RunSynthetic(*options);
      return;
    }
    if (command->count("trial") == 0) {
      std::cerr << "rung diag: give a trial id, --model DIR, --synthetic simplex|gaussian|failure_modes or --closed-form 003\n";
      *exit_code = kUsage;
      return;
    }
    StatusOr<std::unique_ptr<CoordinatorConnection>> connection = CoordinatorConnection::Open(options->connection);
    if (!connection.ok()) {
      *exit_code = ReportConnectionError("diag", connection.status());
      return;
    }
    *exit_code = RunDiag(*connection.value(), *options);
  });
  command->add_option("--table", options->table,
                      "heads, gaps, regime, beta, milestones, failure_modes, lengths, extrapolation, probe, bands, "
                      "influence, niah, frequencies or all; "
                      "with --closed-form: table3, inversion, lambda, table4, theorem6, theorem8 or all")
      ->check(CLI::IsMember({"heads", "gaps", "regime", "beta", "milestones", "failure_modes", "lengths", "extrapolation", "probe", "bands",
                             "influence", "niah", "frequencies", "all", "table3", "inversion", "lambda", "table4", "theorem6",
                             "theorem8"}));
  command->add_option("--plot", options->plot_dir, "Also draw the figures (SVG, PNG) into this folder")->type_name("DIR");
  command->add_option("--gnuplot", options->gnuplot, "gnuplot executable (default: gnuplot on PATH)")->type_name("PATH");
}

RUNG_CLI_COMMAND("diag", kResults, AddDiagCommand);

}  // namespace rung::cli
