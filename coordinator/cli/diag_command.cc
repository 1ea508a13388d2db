#include "core/common/command_line.h"
#include "coordinator/cli/diag_command.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>
#include <iostream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/exit_codes.h"
#include "coordinator/cli/text_table.h"
#include "core/diagnostics/failure_modes.h"
#include "core/diagnostics/synthetic_score_rows.h"
#include "sweeps/plot/failure_modes_plot.h"
#include "sweeps/plot/pair_profile_plot.h"
#include "sweeps/plot/diagnostics_plot.h"
#include "proto/config_value.h"

namespace rung::cli {
namespace {

using nlohmann::json;

struct DiagOptions {
  ConnectionOptions connection;
  int64_t trial_id = 0;
  std::string format = "table";
  std::string table;  // heads | gaps | regime | beta | milestones | failure_modes | extrapolation | niah | frequencies | all
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
};

// The failure-mode statistics of core/diagnostics/failure_modes.h, in the order the table shows them.
constexpr const char* kFailureStatistics[] = {"position_inversion", "position_inversion_deviation",
                                              "position_aliasing_fraction", "position_aliasing_pairs",
                                              "token_inversion", "token_aliasing"};

// The longest row or context `rung diag` builds itself (--n, the Gaussian reference beside a trial).
constexpr int64_t kMaxSyntheticLength = int64_t{1} << 20;

// The context lengths the Gaussian reference of `rung diag --synthetic failure_modes` uses without --n.
const std::vector<int64_t>& DefaultFailureLengths() {
  static const std::vector<int64_t> lengths = {64, 256, 1024, 4096, 16384};
  return lengths;
}

// A trial's heads averaged per (M, precision), as rows of sweeps/plot/failure_modes_plot.h.
json TrialFailureModeRows(const json& attention, const std::string& source) {
  std::map<std::pair<int64_t, std::string>, std::map<std::string, std::pair<double, int64_t>>> sums;
  int64_t heads = 0;
  for (const json& layer : attention.value("layers", json::array())) {
    for (const json& head : layer.value("heads", json::array())) {
      const json& modes = head.value("failure_modes", json::array());
      if (!modes.is_array() || modes.empty()) continue;
      ++heads;
      for (const json& entry : modes) {
        auto& cell = sums[{entry.value("length", int64_t{0}), entry.value("precision", std::string())}];
        for (const char* name : kFailureStatistics) {
          const json& value = entry.value(name, json());
          if (!value.is_number()) continue;
          cell[name].first += value.get<double>();
          ++cell[name].second;
        }
      }
    }
  }
  json rows = json::array();
  for (const auto& [key, statistics] : sums) {
    json row = {{"source", source}, {"length", key.first}, {"precision", key.second}, {"heads", heads}};
    for (const char* name : kFailureStatistics) {
      auto it = statistics.find(name);
      row[name] = it == statistics.end() ? json() : json(it->second.first / static_cast<double>(it->second.second));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// The Gaussian reference over a grid, as rows with source "Gaussian".
StatusOr<json> GaussianFailureModeRows(const FailureModeGrid& grid) {
  RUNG_ASSIGN_OR_RETURN(std::vector<FailureModeRow> measured, MeasureGaussianFailureModes(grid));
  json rows = FailureModeRowsToJson(measured);
  for (json& row : rows) row["source"] = "Gaussian";
  return rows;
}

TextTable FailureModesTable(const json& rows) {
  TextTable table({"source", "M", "base", "precision", "pos_inversion", "|inv-1/2|", "pos_aliasing", "alias_pairs",
                   "token_inversion", "token_aliasing"});
  for (const json& row : rows) {
    table.AddRow({row.value("source", std::string()), Number(row.value("length", json()), 8),
                  Number(row.value("base", json()), 6), row.value("precision", std::string()),
                  Number(row.value("position_inversion", json()), 3),
                  Number(row.value("position_inversion_deviation", json()), 3),
                  Number(row.value("position_aliasing_fraction", json()), 3),
                  Number(row.value("position_aliasing_pairs", json()), 4), Number(row.value("token_inversion", json()), 3),
                  Number(row.value("token_aliasing", json()), 4)},
                 row);
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
int PlotFailureModes(const json& rows, const DiagOptions& options, const std::string& title) {
  plot::DiagnosticsPlotOptions plot_options;
  plot_options.out_dir = options.plot_dir;
  plot_options.gnuplot = options.gnuplot;
  plot_options.title = title;
  return ReportPlotFiles(plot::WriteFailureModePlots(rows, plot_options));
}

// "0.61 ± 0.02"; "-" without a value.
std::string WithInterval(const json& value, const json& half_iqr) {
  if (!value.is_number()) return "-";
  return Number(value, 3) + (half_iqr.is_number() ? " ± " + Number(half_iqr, 2) : "");
}

// The exponents of a gap-counting document (a layer's or the pooled one) as JSON fields.
json ExponentFields(const json& gap) {
  json fields = json::object();
  for (const char* name : {"xi_lambda", "xi_alpha", "xi_delta"}) {
    fields[name] = gap.value(name, json());
    fields[std::string(name) + "_half_iqr"] = gap.value(std::string(name) + "_half_iqr", json());
  }
  fields["tie_share"] = gap.value("tie_share", json());
  return fields;
}

// A number of a diagnostics document for people; "-" where it has none.
std::string Number(const json& value, int digits = 4) {
  if (!value.is_number()) return value.is_null() ? "-" : value.dump();
  return cli::Number(value.get<double>(), digits);
}

// The element of `values` at query position p (1-based), or null.
json AtPosition(const json& values, int64_t position) {
  if (!values.is_array() || position < 1 || position > static_cast<int64_t>(values.size())) return nullptr;
  return values[position - 1];
}

TextTable HeadsTable(const json& attention) {
  const int64_t length = attention.value("length", 0);
  const int64_t eighth = std::max<int64_t>(1, length / 8), half = std::max<int64_t>(1, length / 2);
  // E_r of the record's Renyi order (2 unless train.diagnostics_renyi_order says otherwise).
  const std::string e = "E" + Number(attention.value("renyi_order", json(2.0)), 3) + "@";
  TextTable table({"layer", "head", e + std::to_string(eighth), e + std::to_string(half), e + std::to_string(length),
                   "pair_usage_cv", "effective_base", "dominant_pair", "dominant_wavelength/T"});
  for (const json& layer : attention.value("layers", json::array())) {
    for (const json& head : layer.value("heads", json::array())) {
      const json& e2 = head.value("effective_length_by_position", json::array());
      json row = {{"layer", layer.value("layer", 0)},
                  {"head", head.value("head", 0)},
                  {"effective_length_at", {{std::to_string(eighth), AtPosition(e2, eighth)},
                                           {std::to_string(half), AtPosition(e2, half)},
                                           {std::to_string(length), AtPosition(e2, length)}}},
                  {"pair_usage_cv", head.value("pair_usage_cv", json())},
                  {"pair_usage", head.value("pair_usage", json::array())},
                  {"effective_base", head.value("effective_base", json())},
                  {"dominant_pair", head.value("dominant_pair", json())},
                  {"dominant_wavelength", head.value("dominant_wavelength", json())},
                  {"dominant_wavelength_over_training_length",
                   head.value("dominant_wavelength_over_training_length", json())}};
      table.AddRow({std::to_string(layer.value("layer", 0)), std::to_string(head.value("head", 0)),
                    Number(AtPosition(e2, eighth)), Number(AtPosition(e2, half)), Number(AtPosition(e2, length)),
                    Number(row["pair_usage_cv"], 3), Number(row["effective_base"], 5), Number(row["dominant_pair"]),
                    Number(row["dominant_wavelength_over_training_length"], 3)},
                   row);
    }
  }
  return table;
}

// Per layer and pooled: the means of Lambda, alpha, Delta at n = T, and the exponents over the grid.
TextTable GapsTable(const json& attention) {
  TextTable table({"layer", "n", "rows", "ties", "lambda", "alpha", "delta", "xi_lambda", "xi_alpha", "xi_delta",
                   "ties_on_grid"});
  auto add = [&](const std::string& label, const json& gap) {
    const json& at = gap.value("at_training_length", json::object());
    json row = ExponentFields(gap);
    row["layer"] = label == "pooled" ? json("pooled") : json(std::stoll(label));
    row["n"] = at.value("n", json());
    row["rows"] = at.value("rows", json());
    row["ties"] = at.value("ties", json());
    row["lambda"] = at.value("lambda_mean", json());
    row["alpha"] = at.value("alpha_mean", json());
    row["delta"] = at.value("delta_mean", json());
    row["buckets"] = gap.value("buckets", json::array());
    const json& share = row["tie_share"];
    table.AddRow({label, Number(row["n"]), Number(row["rows"]), Number(row["ties"]), Number(row["lambda"]),
                  Number(row["alpha"]), Number(row["delta"]), WithInterval(row["xi_lambda"], row["xi_lambda_half_iqr"]),
                  WithInterval(row["xi_alpha"], row["xi_alpha_half_iqr"]),
                  WithInterval(row["xi_delta"], row["xi_delta_half_iqr"]),
                  share.is_number() ? Number(100.0 * share.get<double>(), 3) + "%" : "-"},
                 row);
  };
  for (const json& layer : attention.value("layers", json::array())) {
    add(std::to_string(layer.value("layer", 0)), layer.value("gap_counting", json::object()));
  }
  if (attention.contains("pooled")) add("pooled", attention["pooled"]);
  return table;
}

// xi_beta of a learned inverse temperature, both readings, beside the pooled xi_lambda of the same model.
TextTable BetaTable(const json& attention) {
  TextTable table({"reading", "points", "xi", "skipped"});
  const json& pooled = attention.value("pooled", json::object());
  table.AddRow({"xi_lambda (pooled rows)", Number(pooled.value("rows", json())),
                WithInterval(pooled.value("xi_lambda", json()), pooled.value("xi_lambda_half_iqr", json())), "-"},
               {{"reading", "xi_lambda"}, {"rows", pooled.value("rows", json())},
                {"xi", pooled.value("xi_lambda", json())}, {"half_iqr", pooled.value("xi_lambda_half_iqr", json())}});
  const json& temperature = attention.value("inverse_temperature", json::object());
  for (const char* reading : {"xi_beta_grid", "xi_beta_trim"}) {
    if (!temperature.contains(reading)) continue;
    const json& fit = temperature[reading];
    const std::string label = std::string(reading) == "xi_beta_grid"
                                  ? "xi_beta (grid)"
                                  : "xi_beta (n >= " + Number(fit.value("trim", json()), 6) + ")";
    json row = fit;
    row["reading"] = reading;
    table.AddRow({label, Number(fit.value("points", json())), WithInterval(fit.value("xi", json()), fit.value("half_iqr", json())),
                  Number(fit.value("skipped", json()))},
                 row);
  }
  return table;
}

// One line per milestone: the pooled exponents and xi_beta at that point of training.
TextTable MilestonesTable(const std::vector<std::pair<int64_t, json>>& milestones) {
  TextTable table({"step", "milestone", "xi_lambda", "xi_alpha", "xi_delta", "ties", "xi_beta_grid", "xi_beta_trim"});
  for (const auto& [step, attention] : milestones) {
    const json& pooled = attention.value("pooled", json::object());
    const json& temperature = attention.value("inverse_temperature", json::object());
    json row = ExponentFields(pooled);
    row["step"] = step;
    row["milestone"] = attention.value("milestone", json());
    const json grid = temperature.value("xi_beta_grid", json::object()), trim = temperature.value("xi_beta_trim", json::object());
    row["xi_beta_grid"] = grid.value("xi", json());
    row["xi_beta_grid_half_iqr"] = grid.value("half_iqr", json());
    row["xi_beta_trim"] = trim.value("xi", json());
    row["xi_beta_trim_half_iqr"] = trim.value("half_iqr", json());
    const json& share = row["tie_share"];
    table.AddRow({std::to_string(step), attention.value("milestone", std::string("-")),
                  WithInterval(row["xi_lambda"], row["xi_lambda_half_iqr"]),
                  WithInterval(row["xi_alpha"], row["xi_alpha_half_iqr"]),
                  WithInterval(row["xi_delta"], row["xi_delta_half_iqr"]),
                  share.is_number() ? Number(100.0 * share.get<double>(), 3) + "%" : "-",
                  WithInterval(row["xi_beta_grid"], row["xi_beta_grid_half_iqr"]),
                  WithInterval(row["xi_beta_trim"], row["xi_beta_trim_half_iqr"])},
                 row);
  }
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
  StatusOr<json> rows = GaussianFailureModeRows(grid);
  if (!rows.ok()) {
    std::cerr << "rung diag: " << rows.status().message() << "\n";
    return kUsage;
  }
  const TextTable table = FailureModesTable(*rows);
  if (options.format == "table") {
    std::cout << "RoPE's failure modes on i.i.d. Gaussian q, k (head dim " << options.head_dim << ", " << options.draws
              << " draws; inversions on exact scores, aliasing at each precision)\n";
  }
  table.Print(std::cout, options.format);
  return options.plot_dir.empty() ? kOk : PlotFailureModes(*rows, options, "Gaussian q, k");
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

TextTable RegimeTable(const json& attention) {
  TextTable table({"layer", "beta/lambda", "entropy/ln_n", "max_weight", "top_two_gap"});
  for (const json& layer : attention.value("layers", json::array())) {
    for (const json& regime : layer.value("gap_counting", json::object()).value("softmax_regime", json::array())) {
      json row = regime;
      row["layer"] = layer.value("layer", 0);
      table.AddRow({std::to_string(layer.value("layer", 0)), Number(regime.value("beta_over_lambda", json()), 3),
                    Number(regime.value("normalised_entropy", json())), Number(regime.value("max_weight", json())),
                    Number(regime.value("top_two_gap", json()))},
                   row);
    }
  }
  return table;
}

TextTable ExtrapolationTable(const json& extrapolation) {
  TextTable table({"multiple", "length", "method", "val_loss", "in_dist", "extrap", "val_accuracy"});
  if (!extrapolation.is_array()) return table;
  for (const json& entry : extrapolation) {
    json row = entry;
    row.erase("val_loss_per_position");
    table.AddRow({Number(entry.value("multiple", json())), Number(entry.value("length", json())),
                  entry.value("method", std::string()), Number(entry.value("val_loss", json())),
                  Number(entry.value("val_loss_in_dist", json())), Number(entry.value("val_loss_extrap", json())),
                  Number(entry.value("val_accuracy", json()))},
                 row);
  }
  return table;
}

// LeRoPE's leave-one-out band ablation: the loss with each pair reverted to RoPE's frequency.
TextTable BandsTable(const json& ablation) {
  TextTable table({"pair", "rope_theta", "loss", "delta"});
  for (const json& pair : ablation.value("pairs", json::array())) {
    table.AddRow({Number(pair.value("pair", json())), Number(pair.value("rope_theta", json())),
                  Number(pair.value("loss", json())), Number(pair.value("delta", json()), 3)},
                 pair);
  }
  return table;
}

// The multi-key NIAH grid: one row per evaluated length, method and needle depth, one column per number
// of distractor pairs.
TextTable NiahTable(const json& grid) {
  std::vector<std::string> columns = {"multiple", "method", "depth"};
  const json& counts = grid.value("distractors", json::array());
  for (const json& count : counts) columns.push_back("d" + Number(count));
  TextTable table(columns);
  const json& depths = grid.value("depths", json::array());
  for (const json& entry : grid.value("grids", json::array())) {
    const json& accuracy = entry.value("accuracy", json::array());
    const json& placed = entry.value("placed", json::array());
    for (size_t d = 0; d < accuracy.size() && d < depths.size(); ++d) {
      std::vector<std::string> cells = {Number(entry.value("multiple", json())), entry.value("method", std::string()),
                                        Number(depths[d], 2)};
      for (size_t c = 0; c < counts.size(); ++c) cells.push_back(c < accuracy[d].size() ? Number(accuracy[d][c], 2) : "-");
      table.AddRow(cells, {{"multiple", entry.value("multiple", json())},
                           {"length", entry.value("length", json())},
                           {"method", entry.value("method", json())},
                           {"depth", depths[d]},
                           {"accuracy", accuracy[d]},
                           {"placed", d < placed.size() ? placed[d] : json()}});
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

FrequencyRows FrequencyTable(const json& documents, double base, double train_length) {
  FrequencyRows rows;
  for (auto item = documents.begin(); item != documents.end(); ++item) {
    const std::string prefix = "frequencies.layer_";
    if (item.key().rfind(prefix, 0) != 0) continue;
    const json& shape = item.value().value("shape", json::array());
    const json& values = item.value().value("values", json::array());
    if (shape.size() != 2 || !shape[0].is_number_integer() || !shape[1].is_number_integer()) continue;
    const int64_t groups = shape[0].get<int64_t>(), pairs = shape[1].get<int64_t>();
    // A tensor whose shape does not hold its values (a trainer that is not rung-train) is not drawn.
    if (groups <= 0 || pairs <= 0 || groups > static_cast<int64_t>(values.size()) ||
        pairs > static_cast<int64_t>(values.size()) / groups) {
      continue;
    }
    const std::string layer = item.key().substr(prefix.size());
    int64_t layer_index = 0;
    if (std::from_chars(layer.data(), layer.data() + layer.size(), layer_index).ec != std::errc()) continue;
    for (int64_t g = 0; g < groups; ++g) {
      plot::FrequencyProfile profile;
      profile.label = "layer " + layer + (groups > 1 ? " row " + std::to_string(g) : "");
      for (int64_t f = 0; f < pairs && g * pairs + f < static_cast<int64_t>(values.size()); ++f) {
        const json& value = values[g * pairs + f];
        const double theta = value.is_number() ? value.get<double>() : std::nan("");
        const double rope = std::pow(base, -static_cast<double>(f) / static_cast<double>(pairs));
        profile.theta.push_back(theta);
        const double wavelength = theta > 0 ? 2 * M_PI / theta / train_length : std::nan("");
        rows.table.AddRow({layer, std::to_string(g), std::to_string(f), Number(theta), Number(rope), Number(theta / rope),
                           Number(wavelength)},
                          {{"layer", layer_index}, {"row", g}, {"pair", f}, {"theta", theta}, {"rope_theta", rope},
                           {"ratio", theta / rope}, {"wavelength_over_training_length", wavelength}});
      }
      rows.profiles.push_back(std::move(profile));
    }
  }
  return rows;
}

int RunDiag(CoordinatorConnection& connection, const DiagOptions& options) {
  rung::v1::GetDiagnosticsRequest request;
  request.set_trial_id(options.trial_id);
  rung::v1::GetDiagnosticsResponse response;
  grpc::Status status = connection.user().GetDiagnostics(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("diag", status);
  json attention, extrapolation;
  json documents = json::object();
  std::vector<std::pair<int64_t, json>> milestones;  // the attention documents by step
  for (const rung::v1::TrialDiagnostic& diagnostic : response.diagnostics()) {
    json value = json::parse(diagnostic.json(), nullptr, false);
    if (diagnostic.name() == "attention") {
      milestones.emplace_back(diagnostic.step(), value);
      continue;
    }
    if (diagnostic.name() == "extrapolation") extrapolation = value;
    documents[diagnostic.name()] = std::move(value);
  }
  std::stable_sort(milestones.begin(), milestones.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [step, value] : milestones) {
    if (options.step < 0 || step == options.step) attention = value;
  }
  if (!milestones.empty() && !attention.is_object() && options.step >= 0) {
    std::cerr << "rung diag: trial " << options.trial_id << " has no diagnostics at step " << options.step
              << "; its milestones are at steps";
    for (const auto& [step, value] : milestones) std::cerr << " " << step;
    std::cerr << "\n";
    return kUsage;
  }
  if (attention.is_object()) documents["attention"] = attention;
  if (milestones.size() > 1) {
    json all = json::array();
    for (const auto& [step, value] : milestones) all.push_back({{"step", step}, {"attention", value}});
    documents["milestones"] = all;
  }
  rung::v1::GetTrialRequest trial_request;
  trial_request.set_trial_id(options.trial_id);
  rung::v1::Trial trial;
  status = connection.user().GetTrial(connection.Context().get(), trial_request, &trial);
  if (!status.ok()) return ReportRpcError("diag", status);
  const json config = wire::FromConfigObject(trial.config());
  auto number_at = [&config](const char* pointer, double otherwise) {
    if (!config.is_object() || !config.contains(json::json_pointer(pointer))) return otherwise;
    const json& value = config.at(json::json_pointer(pointer));
    return value.is_number() ? value.get<double>() : otherwise;
  };
  const double base = number_at("/position/base", 10000.0);
  const double train_length = number_at("/data/seq_len", 0.0);
  // The documents are what a trainer sent, shown as they are: a field of an unexpected type (a worker
  // that is not rung-train, or a hostile one) is reported, never a crash.
  try {
    FrequencyRows frequencies = FrequencyTable(documents, base, train_length > 0 ? train_length : 1.0);
    if (!attention.is_object()) {
      std::cerr << "rung diag: trial " << options.trial_id
                << " has no attention diagnostics yet (they are written when a trial succeeds; see `rung show "
                << options.trial_id << "`)\n";
      return kUsage;
    }
    std::string table = options.table;
    if (table.empty()) table = options.format == "table" ? "all" : "heads";
    // The failure modes of the trial's heads, then the Gaussian reference at its M, head dimension, base.
    json failure_rows = TrialFailureModeRows(attention, "trial " + std::to_string(options.trial_id));
    if (!failure_rows.empty()) {
      FailureModeGrid grid;
      // The trainer's contexts, within what the CLI measures itself (--n's range, 64 of them at most).
      for (const json& row : failure_rows) {
        const int64_t length = row.value("length", int64_t{0});
        if (length >= 2 && length <= kMaxSyntheticLength && grid.lengths.size() < 64 &&
            std::find(grid.lengths.begin(), grid.lengths.end(), length) == grid.lengths.end()) {
          grid.lengths.push_back(length);
        }
      }
      grid.bases = {base};
      grid.head_dim = static_cast<int64_t>(number_at("/model/head_dim", 0.0));
      StatusOr<json> gaussian = GaussianFailureModeRows(grid);
      if (gaussian.ok()) failure_rows.insert(failure_rows.end(), gaussian->begin(), gaussian->end());
      for (json& row : failure_rows) {
        if (!row.contains("base")) row["base"] = base;
      }
    }
    if (table == "all" && options.format == "csv") {
      std::cerr << "rung diag: --format csv needs one --table (heads, gaps, regime, beta, milestones, failure_modes, "
                   "extrapolation, bands, niah or frequencies)\n";
      return kUsage;
    }
    if (table == "all" && options.format == "json") {
      std::cout << json{{"trial_id", options.trial_id}, {"diagnostics", documents}}.dump(2) << "\n";
    } else {
      const bool all = table == "all";
      auto section = [&](const std::string& name, const std::string& heading, const TextTable& rows) {
        if (!all && table != name) return;
        if (all) std::cout << heading << "\n";
        rows.Print(std::cout, options.format);
        if (all) std::cout << "\n";
      };
      section("heads",
              "Heads (E2 = effective attention length at a query position; T = " +
                  std::to_string(attention.value("length", 0)) + ")",
              HeadsTable(attention));
      std::string grid = "n in";
      for (const json& n : attention.value("grid", json::array())) grid += " " + Number(n, 8);
      if (grid == "n in") grid = "the record's n-grid";
      section("gaps",
              "Gap counting on unscaled score rows: means at n = T; exponents over " + grid +
                  " (rows pooled per n, ± half-IQR over (sequence, layer, head) units)" +
                  (attention.contains("warning") ? "\nwarning: " + attention.value("warning", std::string()) : ""),
              GapsTable(attention));
      section("regime", "Softmax regime at beta = c * lambda", RegimeTable(attention));
      if (attention.contains("inverse_temperature") || table == "beta") {
        section("beta", "Inverse-temperature exponent of the learned beta_n (fit beta_n = a1 (log n)^xi) beside xi_lambda",
                BetaTable(attention));
      }
      if (!failure_rows.empty() || table == "failure_modes") {
        section("failure_modes",
                "RoPE's failure modes on the trial's queries and keys (mean over heads) beside i.i.d. Gaussian q, k at "
                "the same M, head dimension and base",
                FailureModesTable(failure_rows));
      }
      if (milestones.size() > 1 || table == "milestones") {
        section("milestones", "Exponents at each training milestone (pooled)", MilestonesTable(milestones));
      }
      section("extrapolation",
              "Validation beyond the training length (in_dist: positions < T; extrap: positions >= T)",
              ExtrapolationTable(extrapolation));
      if (documents.contains("band_ablation") || table == "bands") {
        const json& ablation = documents.value("band_ablation", json::object());
        section("bands",
                "Leave-one-out band ablation (LeRoPE D.1): the loss on " + Number(ablation.value("sequences", json()), 6) +
                    " validation sequences at T with each pair reverted to RoPE's frequency (trained: " +
                    Number(ablation.value("loss", json())) + ")",
                BandsTable(ablation));
      }
      if (documents.contains("niah_grid") || table == "niah") {
        section("niah",
                "Multi-key needle in a haystack: answer accuracy by needle depth (rows) and distractor pairs (dN), " +
                    Number(documents.value("niah_grid", json::object()).value("instances", json()), 6) +
                    " instances per cell",
                NiahTable(documents.value("niah_grid", json::object())));
      }
      section("frequencies",
              "Rotary frequencies against RoPE's (b = " + Number(json(base), 6) +
                  ", T = " + Number(json(train_length)) + ")",
              frequencies.table);
    }
    if (!options.plot_dir.empty() && !failure_rows.empty()) {
      if (int code = PlotFailureModes(failure_rows, options, "trial " + std::to_string(options.trial_id)); code != kOk) {
        return code;
      }
    }
    if (!options.plot_dir.empty()) {
      plot::DiagnosticsPlotOptions plot_options;
      plot_options.out_dir = options.plot_dir;
      plot_options.gnuplot = options.gnuplot;
      plot_options.title = "trial " + std::to_string(options.trial_id);
      if (int code = ReportPlotFiles(plot::WriteDiagnosticsPlots(attention, extrapolation, plot_options)); code != kOk) {
        return code;
      }
      const json& layers = attention.value("layers", json::array());
      if (std::any_of(layers.begin(), layers.end(), [](const json& layer) {
            return layer.is_object() && layer.contains("pair_profile_edges");
          })) {
        if (int code = ReportPlotFiles(plot::WritePairProfilePlots(attention, plot_options)); code != kOk) return code;
      }
      if (documents.contains("band_ablation")) {
        if (int code = ReportPlotFiles(plot::WriteBandAblationPlot(documents["band_ablation"], plot_options)); code != kOk) {
          return code;
        }
      }
      if (documents.contains("niah_grid")) {
        if (int code = ReportPlotFiles(plot::WriteNiahGridPlot(documents["niah_grid"], plot_options)); code != kOk) {
          return code;
        }
      }
      if (!frequencies.profiles.empty() && train_length > 0 && base > 1) {
        plot_options.title = "trial " + std::to_string(options.trial_id) + " (" + wire::FromConfigEntries(trial.assignments()).dump() + ")";
        StatusOr<std::vector<std::string>> profile =
            plot::WriteFrequencyProfilePlot(frequencies.profiles, base, train_length, plot_options);
        if (!profile.ok()) {
          std::cerr << "rung diag: " << profile.status().message() << "\n";
          return kFailure;
        }
        for (const std::string& file : *profile) std::cerr << "wrote " << file << "\n";
      }
    }
    return kOk;
  } catch (const std::exception& error) {  // json's type errors, and anything a hostile document provokes
    std::cerr << "rung diag: trial " << options.trial_id
              << "'s diagnostics are not in the form rung-train writes them: " << error.what() << "\n";
    return kFailure;
  }
}

}  // namespace

void AddDiagCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<DiagOptions>();
  CLI::App* command = AddCommand<DiagOptions>(
      app, exit_code, "diag",
      "A trained model's attention diagnostics: effective attention length E_2, frequency-pair usage and its CV,\n"
      "effective base, dominant band, gap counting (Lambda, alpha, Delta; xi_Lambda, xi_alpha, xi_Delta with\n"
      "half-IQR intervals), the softmax regime, xi_beta of a learned inverse temperature, the exponents at each\n"
      "training milestone, RoPE's four failure modes per head beside Gaussian vectors, validation beyond the training\n"
      "length, LeRoPE's leave-one-out band ablation, and the needle-in-a-haystack grid. --plot DIR draws E_2 by\n"
      "position, pair-usage heatmaps, the pair-by-distance profile per head (AdaRoPE figures 1 and 5), the gap-counting\n"
      "fit, per-position loss, one figure per failure mode, the band ablation and the NIAH heatmaps.\n"
      "--synthetic needs no trial and no coordinator: simplex|gaussian run gap counting on rows with closed forms\n"
      "(simplex: Lambda = ln n / D, xi_Lambda = 1, xi_alpha = xi_Delta = 0; Gaussian: xi_Lambda about 0.6);\n"
      "failure_modes measures the four failure modes on i.i.d. Gaussian q, k over --n, --base and every precision.",
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
  command->add_option("--head-dim", options->head_dim, "--synthetic failure_modes: head dimension (default 64)")
      ->check(CLI::Range(int64_t{2}, int64_t{4096}))
      ->needs(synthetic);
  command->add_option("--draws", options->draws, "--synthetic failure_modes: Gaussian draws averaged (default 16)")
      ->check(CLI::Range(1, 10000))
      ->needs(synthetic);
  command->add_option("--bootstrap", options->bootstrap, "--synthetic: bootstrap replicates (default 200)")
      ->check(CLI::Range(0, 10000))
      ->needs(synthetic);
  command->add_option("--step", options->step, "The milestone to show, by its step (default: the latest)")
      ->check(PositiveNumberCheck(/*zero_allowed=*/true))
      ->excludes(synthetic);
  // --synthetic runs here, with no connection; a trial goes to the coordinator as every command does.
  command->callback([options, exit_code, command] {
    if (!options->synthetic.empty()) {
      options->lengths_given = command->count("--n") > 0;
      *exit_code = RunSynthetic(*options);
      return;
    }
    if (command->count("trial") == 0) {
      std::cerr << "rung diag: give a trial id, or --synthetic simplex|gaussian|failure_modes\n";
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
                      "heads, gaps, regime, beta, milestones, failure_modes, extrapolation, bands, niah, frequencies or all")
      ->check(CLI::IsMember({"heads", "gaps", "regime", "beta", "milestones", "failure_modes", "extrapolation", "bands",
                             "niah", "frequencies", "all"}));
  command->add_option("--plot", options->plot_dir, "Also draw the figures (SVG, PNG) into this folder")->type_name("DIR");
  command->add_option("--gnuplot", options->gnuplot, "gnuplot executable (default: gnuplot on PATH)")->type_name("PATH");
}

}  // namespace rung::cli
