#include "core/config/train_config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/config/length_extension_method.h"

namespace rung {
namespace {

constexpr size_t kMaxDiagnosticsListEntries = 64;
constexpr int64_t kMaxDiagnosticsBatches = 64;
constexpr double kMaxFailureLengthMultiple = 16.0;

std::string FormatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

bool DiagnosesTheEnd(const TrainConfig& train) {
  const std::vector<DiagnosticsMilestone> milestones = DiagnosticsMilestones(train);
  return std::any_of(milestones.begin(), milestones.end(),
                     [](const DiagnosticsMilestone& milestone) { return milestone.name == "end"; });
}

bool DiagnosesBeyond(const TrainConfig& train, int64_t multiple, const std::string& method) {
  if (multiple > 1) return true;
  const LengthExtensionMethod* described = FindLengthExtensionMethod(method);
  return multiple == 1 && train.extrapolation_scale > 0 && described != nullptr && !described->keeps_frequencies();
}

std::vector<DiagnosedLength> DiagnosedLengthsBeyond(const TrainConfig& train) {
  std::vector<DiagnosedLength> points;
  if (train.diagnostics_sequences <= 0) return points;
  for (int64_t multiple : train.diagnostics_multiples) {
    for (const std::string& method : train.extrapolation_methods) {
      if (DiagnosesBeyond(train, multiple, method)) points.push_back({multiple, method});
    }
  }
  return points;
}

std::vector<DiagnosticsMilestone> DiagnosticsMilestones(const TrainConfig& train) {
  std::vector<DiagnosticsMilestone> milestones;
  if (train.diagnostics_sequences <= 0) return milestones;
  // A trial that only evaluates has one moment to measure: its model as it starts, which is its end.
  if (train.steps == 0) {
    if (!train.diagnostics_at.empty()) milestones.push_back(DiagnosticsMilestone{0, "end"});
    return milestones;
  }
  for (double at : train.diagnostics_at) {
    DiagnosticsMilestone milestone;
    if (at == 0.0) {
      milestone.step = 0;
      milestone.name = "start";
    } else if (at <= 1.0) {
      milestone.step = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(at * static_cast<double>(train.steps))));
      milestone.name = "frac " + FormatNumber(at);
    } else {
      milestone.step = static_cast<int64_t>(at);
      milestone.name = "step " + std::to_string(milestone.step);
    }
    if (milestone.step >= train.steps) milestone.name = "end";
    milestones.push_back(milestone);
  }
  // Stable: the first name of a step wins, except that the last step is always "end".
  std::stable_sort(milestones.begin(), milestones.end(),
                   [](const DiagnosticsMilestone& a, const DiagnosticsMilestone& b) { return a.step < b.step; });
  milestones.erase(std::unique(milestones.begin(), milestones.end(),
                               [](const DiagnosticsMilestone& a, const DiagnosticsMilestone& b) { return a.step == b.step; }),
                   milestones.end());
  return milestones;
}

void ValidateTrainConfig(const TrainConfig& t, const ResourcesConfig& r, std::vector<ConfigError>* errors) {
  auto error = [&](const std::string& path, const std::string& message) { errors->push_back({path, message}); };
  // steps 0 with a model to start from: a trial that evaluates that model and does not train.
  const bool evaluates_only = t.steps == 0 && t.tokens == 0 && (!t.init.checkpoint.empty() || !t.init.from_trial.empty());
  if (t.steps <= 0 && !evaluates_only) {
    error("train.steps", "must be positive (or give train.tokens; 0 with train.init.checkpoint or "
                         "train.init.from_trial evaluates that model without training)");
  }
  if (t.steps < 0 || t.tokens < 0) error("train.tokens", "must be >= 0");
  if (t.batch_size <= 0) error("train.batch_size", "must be positive");
  if (t.grad_accum <= 0) error("train.grad_accum", "must be positive");
  if (!(t.lr > 0.0)) error("train.lr", "must be positive");
  if (!(t.weight_decay >= 0.0)) error("train.weight_decay", "must be >= 0");
  if (!(t.weight_decay_over_steps >= 0.0 && t.weight_decay_over_steps <= 1e9)) {
    error("train.weight_decay_over_steps", "must lie in [0, 1e9] (k of weight_decay = k / steps; 0 = off)");
  }
  if (!(t.beta1 >= 0.0 && t.beta1 < 1.0)) error("train.beta1", "must lie in [0, 1)");
  if (!(t.beta2 >= 0.0 && t.beta2 < 1.0)) error("train.beta2", "must lie in [0, 1)");
  if (!(t.eps > 0.0)) error("train.eps", "must be positive");
  if (!(t.clip >= 0.0)) error("train.clip", "must be >= 0 (0 = no clipping)");
  if (t.schedule.warmup_steps < 0) error("train.schedule.warmup_steps", "must be >= 0");
  if (!(t.schedule.decay_fraction >= 0.0 && t.schedule.decay_fraction <= 1.0)) {
    error("train.schedule.decay_fraction", "must lie in [0, 1]");
  }
  if (!(t.schedule.final_lr_fraction >= 0.0 && t.schedule.final_lr_fraction <= 1.0)) {
    error("train.schedule.final_lr_fraction", "must lie in [0, 1]");
  }
  if (t.eval_every < 0) error("train.eval_every", "must be >= 0");
  if (t.eval_batches <= 0) error("train.eval_batches", "must be positive");
  if (t.log_every <= 0) error("train.log_every", "must be positive");
  if (t.checkpoint_every < 0) error("train.checkpoint_every", "must be >= 0");
  if (t.keep_checkpoints < 1) error("train.keep_checkpoints", "must be >= 1");
  if (t.precision == "bf16" && t.device != "cuda") error("train.precision", "bf16 needs device: cuda");
  for (int64_t multiple : t.extrapolation_multiples) {
    if (multiple < 1) error("train.extrapolation_multiples", "multiples must be >= 1, got " + std::to_string(multiple));
  }
  if (!t.extrapolation_multiples.empty() && t.extrapolation_methods.empty()) {
    std::string names;
    for (const std::string& name : LengthExtensionMethodNames()) names += (names.empty() ? "" : ", ") + name;
    error("train.extrapolation_methods", "give at least one method (" + names + ")");
  }
  if (!(t.extrapolation_scale == 0.0 || (t.extrapolation_scale >= 1.0 && t.extrapolation_scale <= 1024.0))) {
    error("train.extrapolation_scale", "must be 0 (each evaluated multiple its own factor) or lie in [1, 1024]");
  }
  ValidateProbeConfig(t.probe, errors);
  if (t.init.model == "checkpoint" && t.init.checkpoint.empty()) {
    error("train.init.model", "checkpoint takes the model block from the Hugging Face folder train.init.checkpoint "
                              "names" + std::string(t.init.from_trial.empty() ? "" : " (a source trial's model is its spec's: copy it)") +
                              "; give train.init.checkpoint, or the model block");
  }
  if (!(t.extrapolation_yarn_c >= 0.0 && t.extrapolation_yarn_c <= 10.0)) {
    error("train.extrapolation_yarn_c", "must lie in [0, 10] (YaRN's c in (c ln s + 1)^2; 0.1 is the usual value)");
  }
  if (t.diagnostics_sequences < 0) {
    error("train.diagnostics_sequences", "must be >= 0 (sequences per evaluation batch; 0 = no diagnostics)");
  }
  if (t.diagnostics_batches < 1 || t.diagnostics_batches > kMaxDiagnosticsBatches) {
    error("train.diagnostics_batches",
          "must lie in [1, " + std::to_string(kMaxDiagnosticsBatches) + "] (evaluation batches of the diagnostics)");
  }
  if (t.diagnostics_bootstrap_unit != "batch" && t.diagnostics_bootstrap_unit != "sequence") {
    error("train.diagnostics_bootstrap_unit",
          "must be batch (an evaluation batch in one layer and head) or sequence, not '" + t.diagnostics_bootstrap_unit +
              "'");
  }
  if (t.diagnostics_at.size() > kMaxDiagnosticsListEntries) {
    error("train.diagnostics_at", "at most " + std::to_string(kMaxDiagnosticsListEntries) + " milestones");
  }
  for (double at : t.diagnostics_at) {
    const bool start = at == 0.0;
    const bool fraction = at > 0.0 && at <= 1.0;
    const bool step = at > 1.0 && at == std::floor(at) && at <= static_cast<double>(std::max<int64_t>(t.steps, 1));
    if (!start && !fraction && !step) {
      error("train.diagnostics_at", "each milestone is 0 (the start), a fraction of training in (0, 1] or a step in 2.." +
                                        std::to_string(std::max<int64_t>(t.steps, 1)) + ", got " + FormatNumber(at));
      break;
    }
  }
  if (t.diagnostics_lengths.empty() || t.diagnostics_lengths.size() > kMaxDiagnosticsListEntries) {
    error("train.diagnostics_lengths", "give 1 to " + std::to_string(kMaxDiagnosticsListEntries) + " lengths");
  }
  for (int64_t n : t.diagnostics_lengths) {
    if (n < 2) {
      error("train.diagnostics_lengths", "each length is a number of keys >= 2, got " + std::to_string(n));
      break;
    }
  }
  if (t.diagnostics_grid_ratios.size() > kMaxDiagnosticsListEntries) {
    error("train.diagnostics_grid_ratios", "at most " + std::to_string(kMaxDiagnosticsListEntries) + " ratios");
  }
  for (double ratio : t.diagnostics_grid_ratios) {
    if (!(ratio > 0.0 && ratio <= 1.0)) {
      error("train.diagnostics_grid_ratios",
            "each ratio n / L of the n-grid lies in (0, 1] (paper 004's Qwen cells: [0.25, 0.5, 0.75, 1]), got " +
                FormatNumber(ratio));
      break;
    }
  }
  if (t.diagnostics_multiples.size() > kMaxDiagnosticsListEntries) {
    error("train.diagnostics_multiples", "at most " + std::to_string(kMaxDiagnosticsListEntries) + " multiples");
  }
  for (size_t i = 0; i < t.diagnostics_multiples.size(); ++i) {
    const int64_t multiple = t.diagnostics_multiples[i];
    if (multiple < 1) {
      error("train.diagnostics_multiples",
            "each evaluated length is a multiple >= 1 of the training length, got " + std::to_string(multiple));
      break;
    }
    if (std::find(t.diagnostics_multiples.begin(), t.diagnostics_multiples.begin() + static_cast<std::ptrdiff_t>(i),
                  multiple) != t.diagnostics_multiples.begin() + static_cast<std::ptrdiff_t>(i)) {
      error("train.diagnostics_multiples", "multiple " + std::to_string(multiple) + " is given twice");
      break;
    }
  }
  if (!t.diagnostics_multiples.empty() && t.diagnostics_sequences > 0 && !DiagnosesTheEnd(t)) {
    error("train.diagnostics_multiples", "measured at the end, beside the end's diagnostics at the training length: "
                                         "add 1 (the end) to train.diagnostics_at");
  }
  if (!t.diagnostics_grid_ratios.empty()) {
    std::vector<double> distinct = t.diagnostics_grid_ratios;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (distinct.size() < 4) {
      error("train.diagnostics_grid_ratios", "give at least 4 distinct ratios (the fit of xi_Lambda needs 4 lengths; "
                                             "paper 004's: [0.25, 0.5, 0.75, 1])");
    }
  }
  if (!t.diagnostics_multiples.empty() && t.extrapolation_methods.empty()) {
    error("train.extrapolation_methods", "give at least one method (none: no extension) for train.diagnostics_multiples");
  }
  if (t.diagnostics_regime_multiples.empty() || t.diagnostics_regime_multiples.size() > kMaxDiagnosticsListEntries) {
    error("train.diagnostics_regime_multiples", "give 1 to " + std::to_string(kMaxDiagnosticsListEntries) + " multiples");
  }
  for (double c : t.diagnostics_regime_multiples) {
    if (!(c > 0.0) || !std::isfinite(c)) {
      error("train.diagnostics_regime_multiples", "each multiple c of beta = c * Lambda must be positive, got " +
                                                      FormatNumber(c));
      break;
    }
  }
  if (t.diagnostics_failure_lengths.size() > kMaxDiagnosticsListEntries) {
    error("train.diagnostics_failure_lengths", "at most " + std::to_string(kMaxDiagnosticsListEntries) + " contexts");
  }
  for (double multiple : t.diagnostics_failure_lengths) {
    if (!(multiple > 0.0 && multiple <= kMaxFailureLengthMultiple)) {
      error("train.diagnostics_failure_lengths", "each context is a multiple of the training length in (0, " +
                                                     FormatNumber(kMaxFailureLengthMultiple) + "], got " +
                                                     FormatNumber(multiple));
      break;
    }
  }
  if (t.niah_grid_instances < 0 || t.niah_grid_instances > 1024) {
    error("train.niah_grid_instances", "must lie in [0, 1024] (instances per grid cell; 0 = no grid)");
  }
  if (t.diagnostics_beta_trim < 2) error("train.diagnostics_beta_trim", "must be >= 2 (log log n needs n >= 2)");
  if (t.diagnostics_pair_profile_bins < 0 || t.diagnostics_pair_profile_bins > 1024) {
    error("train.diagnostics_pair_profile_bins", "must lie in [0, 1024] (distance bins of the pair profile; 0 = none)");
  }
  if (!(t.diagnostics_renyi_order > 1.0)) {
    error("train.diagnostics_renyi_order", "must be > 1 (the order r of E_r; 2 gives E_2 = 1 / sum a^2)");
  }
  if (r.cpus < 1) error("resources.cpus", "must be >= 1");
  if (r.gpus < 0) error("resources.gpus", "must be >= 0");
  if (r.world_size < 1) error("resources.world_size", "must be >= 1");
  if (r.world_size > 1 && t.batch_size > 0 && t.batch_size % r.world_size != 0) {
    error("resources.world_size", "must divide train.batch_size (" + std::to_string(t.batch_size) +
                                      "): each rank trains on an equal share of every batch");
  }
}

}  // namespace rung
