#include "coordinator/cli/sweep_figures.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "coordinator/cli/trial_diagnostics.h"

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/sweep_fetch.h"
#include "coordinator/client/sweep_evaluations.h"
#include "proto/config_value.h"
#include "proto/grpc_status.h"
#include "proto/trainer_record_proto.h"
#include "sweeps/plot/diagnostics_plot.h"
#include "sweeps/plot/extrapolation_plot.h"
#include "sweeps/plot/gnuplot_script.h"
#include "sweeps/plot/loss_curves_plot.h"
#include "sweeps/plot/tuning_plot.h"
#include "sweeps/tune/lr_search.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;
using nlohmann::json;

// The call's status with its own code (proto/grpc_status.h), `what` before its message.
Status FromGrpc(const grpc::Status& status, const std::string& what) {
  return FromGrpcStatus(status).WithContext(what);
}

// A cell's axis values by dotted key, as text (an object axis' value as its JSON), the seed only when
// `with_seed`.
std::vector<std::pair<std::string, std::string>> AxisValues(const json& assignments, bool with_seed) {
  std::vector<std::pair<std::string, std::string>> axes;
  if (!assignments.is_object()) return axes;
  for (auto it = assignments.begin(); it != assignments.end(); ++it) {
    if (with_seed || it.key() != "seed") axes.emplace_back(it.key(), ValueText(it.value()));
  }
  return axes;
}

// "lerope seed 1" from {"position.variant": "lerope", "seed": 1}; axis names shortened to their last
// part (plot::AxesLabel).
std::string CellLabel(const json& assignments, bool with_seed) {
  const std::string label = plot::AxesLabel(AxisValues(assignments, with_seed));
  return label.empty() ? "trial" : label;
}

// The evaluated trials as the figures take them: their axis values (seed included: what differs
// labels the lines), and a pair of figures per rung when they span several.
StatusOr<std::vector<plot::EvaluatedTrial>> EvaluatedTrials(const std::vector<client::TrialEvaluations>& evaluations) {
  std::set<std::string> rungs;
  for (const client::TrialEvaluations& evaluated : evaluations) rungs.insert(evaluated.trial.rung_label());
  std::vector<plot::EvaluatedTrial> trials;
  for (const client::TrialEvaluations& evaluated : evaluations) {
    plot::EvaluatedTrial& trial = trials.emplace_back();
    if (rungs.size() > 1) trial.group = evaluated.trial.rung_label();
    trial.axes = AxisValues(wire::FromConfigEntries(evaluated.trial.assignments()), true);
    trial.val_loss = evaluated.val_loss;
    for (const pb::ExtrapolationResult& result : evaluated.table.results()) {
      const Status read = wire::StructFromMessage(result, &trial.results.emplace_back());
      if (!read.ok()) return read.WithContext("the extrapolation table of trial " + std::to_string(evaluated.trial.trial_id()));
    }
  }
  return trials;
}

// Whether a trial's axis values hold `only`'s (see the header).
bool Selected(const json& assignments, const TrialSelection& only) {
  for (const auto& [key, values] : only) {
    if (!assignments.is_object() || !assignments.contains(key)) return false;
    if (std::find(values.begin(), values.end(), assignments.at(key)) == values.end()) return false;
  }
  return true;
}

// INVALID_ARGUMENT naming a key of `only` that is no trial's axis, with the axes there are.
Status CheckSelection(const std::vector<pb::Trial>& trials, const TrialSelection& only) {
  std::set<std::string> axes;
  for (const pb::Trial& trial : trials) {
    const json assignments = wire::FromConfigEntries(trial.assignments());
    for (auto it = assignments.begin(); it != assignments.end(); ++it) axes.insert(it.key());
  }
  for (const auto& [key, values] : only) {
    if (axes.count(key)) continue;
    std::string listed;
    for (const std::string& axis : axes) listed += (listed.empty() ? "" : ", ") + axis;
    return Status::InvalidArgument("--where: '" + key + "' is not an axis of the sweep; its axes: " +
                                   (listed.empty() ? "(none)" : listed));
  }
  return Status::Ok();
}

// The most cells one training-curve figure draws before a rung is split by its other axes.
constexpr size_t kCellsPerFigure = 8;

}  // namespace

StatusOr<SweepFigures> WriteSweepFigures(CoordinatorConnection& connection, int64_t sweep_id, const std::string& out_dir,
                                         const std::string& gnuplot, const TrialSelection& only) {
  std::vector<pb::Trial> trials;
  RUNG_RETURN_IF_ERROR(FromGrpc(FetchTrials(connection, sweep_id, &trials), "listing the sweep's trials"));
  RUNG_RETURN_IF_ERROR(CheckSelection(trials, only));
  trials.erase(std::remove_if(trials.begin(), trials.end(),
                              [&](const pb::Trial& trial) {
                                return !Selected(wire::FromConfigEntries(trial.assignments()), only);
                              }),
               trials.end());
  pb::GetSweepRequest sweep_request;
  sweep_request.set_sweep_id(sweep_id);
  pb::Sweep sweep;
  RUNG_RETURN_IF_ERROR(FromGrpc(connection.user().GetSweep(connection.Context().get(), sweep_request, &sweep), "GetSweep"));

  std::vector<plot::LossCurve> curves;
  std::vector<json> trial_assignments;  // of curves[i]
  double largest_flops = 0;
  for (const pb::Trial& trial : trials) {
    if (trial.state() != pb::TRIAL_STATE_SUCCEEDED) continue;
    largest_flops = std::max(largest_flops, trial.flops());
    pb::GetMetricsRequest request;
    request.set_trial_id(trial.trial_id());
    request.add_names("val_loss");
    request.set_max_points(400);
    pb::GetMetricsResponse response;
    RUNG_RETURN_IF_ERROR(FromGrpc(connection.user().GetMetrics(connection.Context().get(), request, &response),
                                  "GetMetrics of trial " + std::to_string(trial.trial_id())));
    plot::LossCurve curve;
    curve.rung = trial.rung_label();
    const json assignments = wire::FromConfigEntries(trial.assignments());
    curve.label = CellLabel(assignments, true);
    curve.cell = CellLabel(assignments, false);
    curve.baseline = trial.baseline();
    for (const pb::MetricSeries& series : response.series()) {
      for (const pb::MetricPoint& point : series.points()) {
        if (point.flops() > 0) curve.points.push_back({point.flops(), point.value()});
      }
    }
    curves.push_back(std::move(curve));
    trial_assignments.push_back(assignments);
  }
  // A rung of more cells than a figure can tell apart is drawn as one figure per value of the axes
  // beyond the baseline's (the cells of nrw-window's window_width x variant: one figure per width).
  const json baseline = wire::FromConfigEntries(sweep.baseline());
  std::map<std::string, std::set<std::string>> cells_of_rung;
  for (const plot::LossCurve& curve : curves) cells_of_rung[curve.rung].insert(curve.cell);
  for (size_t i = 0; i < curves.size(); ++i) {
    if (cells_of_rung[curves[i].rung].size() <= kCellsPerFigure) continue;
    json others = trial_assignments[i];
    for (auto it = baseline.begin(); it != baseline.end(); ++it) others.erase(it.key());
    others.erase("seed");
    if (!others.empty()) curves[i].group = CellLabel(others, false);
  }
  plot::LossCurvesOptions curve_options;
  curve_options.out_dir = out_dir;
  curve_options.title = sweep.name();
  curve_options.gnuplot = gnuplot;
  SweepFigures figures;
  std::vector<std::string>& files = figures.files;
  if (std::any_of(curves.begin(), curves.end(), [](const plot::LossCurve& curve) { return !curve.points.empty(); })) {
    RUNG_ASSIGN_OR_RETURN(files, plot::WriteLossCurvesPlots(curves, curve_options));
  } else {
    figures.skipped.push_back("loss_curves: no SUCCEEDED trial has a validation curve against training compute "
                              "(an evaluation trial, train.steps 0, trains nothing)");
  }

  // A tuned sweep: the metric against the tuned value per rung, and the best value against N.
  if (!sweep.tuning().empty()) {
    pb::GetTuningRequest tuning_request;
    tuning_request.set_sweep_id(sweep_id);
    pb::GetTuningResponse tuning;
    RUNG_RETURN_IF_ERROR(
        FromGrpc(connection.user().GetTuning(connection.Context().get(), tuning_request, &tuning), "GetTuning"));
    std::vector<plot::TuningCurve> tuning_curves;
    std::map<std::string, std::vector<std::pair<double, double>>> searched;  // method -> (N, best)
    for (const pb::TuningCell& cell : tuning.cells()) {
      json keys = wire::FromConfigEntries(cell.cell());
      keys.erase("rung");
      plot::TuningCurve curve;
      curve.rung = cell.rung_label().empty() ? "all" : cell.rung_label();
      curve.method = CellLabel(keys, false);
      curve.n = cell.n_total();
      curve.bracketed = cell.bracketed();
      for (const pb::TunedValue& value : cell.tried()) {
        if (value.has_metric()) curve.points.emplace_back(value.value(), value.metric());
      }
      const bool closed = cell.status() == "bracketed" || cell.status() == "exhausted";
      if (cell.has_best() && closed) {
        curve.chosen = cell.best();
        searched[curve.method].emplace_back(cell.n_total(), cell.best());
      }
      tuning_curves.push_back(std::move(curve));
    }
    std::vector<plot::TuningLaw> laws;
    for (const auto& [method, points] : searched) {
      if (auto law = FitValueLaw(points)) laws.push_back({method, law->coefficient, law->exponent});
    }
    plot::TuningPlotOptions tuning_options;
    tuning_options.out_dir = out_dir;
    tuning_options.key = tuning.key();
    tuning_options.metric = sweep.metric_name();
    tuning_options.title = sweep.name();
    tuning_options.gnuplot = gnuplot;
    // A search with no scored value yet draws nothing; any other failure is the command's (an
    // output file rung may not write is INVALID_ARGUMENT too, so the test is here, not on the code).
    const bool scored = std::any_of(tuning_curves.begin(), tuning_curves.end(),
                                    [](const plot::TuningCurve& curve) { return !curve.points.empty(); });
    if (scored) {
      RUNG_ASSIGN_OR_RETURN(std::vector<std::string> tuning_files,
                            plot::WriteTuningPlots(tuning_curves, laws, tuning_options));
      files.insert(files.end(), tuning_files.begin(), tuning_files.end());
    }
  }


  // One trial per cell (seed aside) at the largest rung, its first SUCCEEDED one: its diagnostics
  // figures, and its layer 0 frequencies in the profile figure.
  std::vector<plot::FrequencyProfile> profiles;
  std::map<std::string, bool> drawn;
  double base = 0, train_length = 0;
  for (const pb::Trial& trial : trials) {
    if (trial.state() != pb::TRIAL_STATE_SUCCEEDED || trial.flops() < largest_flops) continue;
    const std::string cell = CellLabel(wire::FromConfigEntries(trial.assignments()), false);
    if (drawn[cell]) continue;
    pb::GetDiagnosticsRequest request;
    request.set_trial_id(trial.trial_id());
    pb::GetDiagnosticsResponse response;
    RUNG_RETURN_IF_ERROR(FromGrpc(connection.user().GetDiagnostics(connection.Context().get(), request, &response),
                                  "GetDiagnostics of trial " + std::to_string(trial.trial_id())));
    RUNG_ASSIGN_OR_RETURN(const TrialDiagnostics diagnostics, ReadTrialDiagnostics(response));
    // This cell's attention diagnostics (the latest milestone): E_2 by position, pair usage, gap
    // counting (rung diag --plot).
    if (!diagnostics.attention.empty()) {
      plot::DiagnosticsPlotOptions diagnostics_options;
      diagnostics_options.out_dir = out_dir + "/diagnostics/trial-" + std::to_string(trial.trial_id());
      diagnostics_options.gnuplot = gnuplot;
      diagnostics_options.title = sweep.name() + " " + trial.rung_label() + " " + cell + " (trial " +
                                  std::to_string(trial.trial_id()) + ")";
      RUNG_ASSIGN_OR_RETURN(const std::vector<std::string> written,
                            plot::WriteDiagnosticsPlots(diagnostics.attention.back().second,
                                                        diagnostics.extrapolation, diagnostics_options));
      files.insert(files.end(), written.begin(), written.end());
    }
    drawn[cell] = true;
    const auto tensor = diagnostics.tensors.find("frequencies.layer_0");
    if (tensor == diagnostics.tensors.end() || tensor->second.tensor.shape.size() != 2) continue;
    plot::FrequencyProfile profile;
    profile.label = cell + " (trial " + std::to_string(trial.trial_id()) + ")";
    bool any = false;
    const std::vector<double>& values = tensor->second.tensor.values;
    for (int64_t f = 0; f < tensor->second.tensor.shape[1] && f < static_cast<int64_t>(values.size()); ++f) {
      const double theta = values[static_cast<size_t>(f)];
      any = any || theta > 0;
      profile.theta.push_back(theta);
    }
    if (!any) continue;  // NoPE, ALiBi: nothing rotates
    if (base == 0) {
      pb::GetTrialRequest trial_request;
      trial_request.set_trial_id(trial.trial_id());
      pb::Trial full;
      RUNG_RETURN_IF_ERROR(FromGrpc(connection.user().GetTrial(connection.Context().get(), trial_request, &full), "GetTrial"));
      const json config = wire::FromConfigObject(full.config());
      base = config.value("/position/base"_json_pointer, 10000.0);
      train_length = config.value("/data/seq_len"_json_pointer, 0.0);
    }
    profiles.push_back(std::move(profile));
  }
  if (!profiles.empty() && base > 1 && train_length > 0) {
    plot::DiagnosticsPlotOptions profile_options;
    profile_options.out_dir = out_dir;
    profile_options.gnuplot = gnuplot;
    profile_options.title = sweep.name() + ": learned frequencies at the largest rung";
    RUNG_ASSIGN_OR_RETURN(const std::vector<std::string> profile,
                          plot::WriteFrequencyProfilePlot(profiles, base, train_length, profile_options));
    files.insert(files.end(), profile.begin(), profile.end());
  }

  // The evaluations beyond the training length: loss against the evaluation length, and by position.
  std::vector<client::TrialEvaluations> evaluations;
  RUNG_RETURN_IF_ERROR(FromGrpc(client::FetchSweepEvaluations(connection, sweep_id, &evaluations),
                                "reading the evaluations beyond the training length"));
  evaluations.erase(std::remove_if(evaluations.begin(), evaluations.end(),
                                   [&](const client::TrialEvaluations& evaluated) {
                                     return !Selected(wire::FromConfigEntries(evaluated.trial.assignments()), only);
                                   }),
                    evaluations.end());
  if (!evaluations.empty()) {
    RUNG_ASSIGN_OR_RETURN(const std::vector<plot::EvaluatedTrial> evaluated, EvaluatedTrials(evaluations));
    plot::ExtrapolationPlotOptions extrapolation_options;
    extrapolation_options.out_dir = out_dir;
    extrapolation_options.title = sweep.name();
    extrapolation_options.gnuplot = gnuplot;
    RUNG_ASSIGN_OR_RETURN(const std::vector<std::string> written,
                          plot::WriteExtrapolationPlots(evaluated, extrapolation_options));
    files.insert(files.end(), written.begin(), written.end());
  }
  if (files.empty()) {
    return Status::InvalidArgument("sweep " + sweep.name() + " has no validation curve against compute and no "
                                   "evaluation beyond the training length to draw" +
                                   (only.empty() ? std::string() : " among the trials --where selects"));
  }
  return figures;
}

}  // namespace rung::cli
