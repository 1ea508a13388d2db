#include "sweeps/spec/expansion.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/common/checked_arithmetic.h"
#include "core/config/config_number_range.h"
#include "core/records/trainer_records.h"
#include "core/hf/hf_model_options.h"
#include "sweeps/spec/isoflop.h"
#include "sweeps/spec/json_path.h"
#include "sweeps/spec/ladder_variant.h"
#include "sweeps/spec/trial_identity.h"

namespace rung {

double ExpandedSweep::TotalFlops() const {
  double total = 0;
  for (const ExpandedTrial& trial : trials) total += trial.flops;
  return total;
}

double ExpandedSweep::TotalFlopsAll() const {
  double total = 0;
  for (const ExpandedTrial& trial : trials) total += trial.flops_total;
  return total;
}

double ExpandedSweep::TotalTokens() const {
  double total = 0;
  for (const ExpandedTrial& trial : trials) total += static_cast<double>(trial.tokens);
  return total;
}

namespace {

// One cell under construction: its trial JSON and where each leaf value came from.
class CellBuilder {
 public:
  CellBuilder(const nlohmann::json& defaults, const ConfigDocument& document) : json_(defaults), document_(document) {}

  // Writes `value` at `path`; its leaves (and `path` itself, for values derived from it later, such
  // as a head_dim computed from a rung's d_model) are attributed to `location`, or, when `value` was
  // written in the spec at `source` (a spec path), each leaf to where its own key was written.
  void Set(const std::string& path, const nlohmann::json& value, const std::string& location,
           const std::string& source = "") {
    if (value.is_object() && value.empty()) return;
    origins_[path] = location;
    MergeAtPath(&json_, path, value, [&](const std::string& leaf) {
      auto own = source.empty() || leaf.size() <= path.size()
                     ? document_.locations.end()
                     : document_.locations.find(source + leaf.substr(path.size()));
      origins_[leaf] = own != document_.locations.end() ? own->second : location;
    });
    // An axis value ("sweep.position.base[1]"): its key is written at the axis key.
    const size_t bracket = source.rfind('[');
    if (bracket != std::string::npos && source.back() == ']') {
      auto key = document_.locations.find(source.substr(0, bracket));
      if (key != document_.locations.end()) key_origins_[path] = key->second;
    }
  }
  const nlohmann::json& json() const { return json_; }

  // The spec location responsible for the value at `path` (or its nearest enclosing path).
  std::string Locate(const std::string& path) const {
    std::string current = path;
    while (true) {
      auto it = origins_.find(current);
      if (it != origins_.end()) return it->second;
      // A default from the spec: its own location.
      if (document_.locations.count(current)) return document_.locations.at(current);
      size_t dot = current.rfind('.');
      if (dot == std::string::npos) break;
      current = current.substr(0, dot);
    }
    return document_.Locate("");
  }

  // Locate() for an error about the key at `path` itself (an unknown key): where that key was
  // written, when it is an axis key, else Locate(path).
  std::string LocateKey(const std::string& path) const {
    auto key = key_origins_.find(path);
    return key != key_origins_.end() ? key->second : Locate(path);
  }

 private:
  nlohmann::json json_;
  std::map<std::string, std::string> origins_;
  std::map<std::string, std::string> key_origins_;  // axis keys: path -> where the key was written
  const ConfigDocument& document_;
};

bool IsAssigned(const nlohmann::json& assignments, const std::string& path) {
  for (auto it = assignments.begin(); it != assignments.end(); ++it) {
    if (it.key() == path || path.rfind(it.key() + ".", 0) == 0) return true;
    if (it.value().is_object() && FindPath(nlohmann::json{{it.key(), it.value()}}, path) != nullptr) return true;
  }
  return false;
}

std::string DescribeCell(const ExpandedTrial& trial) {
  std::string text = "rung " + trial.rung_label;
  for (auto it = trial.assignments.begin(); it != trial.assignments.end(); ++it) {
    text += ", " + it.key() + "=" + (it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
  }
  return text;
}

// The trial takes `config`: its JSON, identity, parameter counts, tokens and FLOPs follow from it.
void SetResolvedConfig(TrialConfig config, ExpandedTrial* trial) {
  trial->config = std::move(config);
  trial->config_json = TrialConfigToJson(trial->config);
  trial->identity = TrialIdentityHash(trial->config, trial->config_json);
  trial->parameters = CountParameters(trial->config.model);
  trial->tokens = trial->config.train.steps * TokensPerStep(trial->config.train, trial->config.data.seq_len);
  FlopsPerToken per_token = CountFlopsPerToken(trial->config.model);
  trial->flops = per_token.nonembedding * static_cast<double>(trial->tokens);
  trial->flops_total = per_token.total() * static_cast<double>(trial->tokens);
}

// The size of an expansion.
struct TrialCount {
  int64_t cells_per_rung = 0;
  int64_t trials = 0;  // rungs x cells_per_rung
};

// The trials the spec expands to, when within limits.max_trials; else nullopt, with the refusal (the
// count, the limit and how to raise it) in `diagnostics`.
std::optional<TrialCount> TrialCountWithinLimit(const ConfigDocument& document, const SweepSpec& spec,
                                                const ExpansionLimits& limits, SpecDiagnostics* diagnostics) {
  const Ladder& ladder = spec.ladder;
  const std::optional<int64_t> cells_per_rung = spec.axes.CellsPerRung();
  const std::optional<int64_t> trial_count =
      cells_per_rung ? CheckedMul(static_cast<int64_t>(ladder.rungs.size()), *cells_per_rung) : std::nullopt;
  if (!trial_count || *trial_count > limits.max_trials) {
    const bool has_axes = document.json.contains("sweep");
    diagnostics->Error(
        document.Locate(has_axes ? "sweep" : "ladder"), has_axes ? "sweep" : "ladder",
        "the spec expands to " +
            (trial_count ? std::to_string(*trial_count) + " trials (" + std::to_string(ladder.rungs.size()) +
                               " rung(s) x " + std::to_string(*cells_per_rung) + " cells)"
                         : std::string("more trials than an int64 counts")) +
            ", " + TrialLimitText(limits));
    return std::nullopt;
  }
  return TrialCount{*cells_per_rung, *trial_count};
}

// Whether a search's worst case, up to max_points values of each of `trial_count` cells, is within
// limits.max_trials; its refusal in `diagnostics` when not. True without a tune block.
bool SearchWithinLimit(const SweepSpec& spec, int64_t trial_count, const ExpansionLimits& limits,
                       SpecDiagnostics* diagnostics) {
  if (!spec.tune.set) return true;
  const std::optional<int64_t> worst = CheckedMul(trial_count, spec.tune.max_points);
  if (worst && *worst <= limits.max_trials) return true;
  diagnostics->Error(spec.tune.location, "tune." + spec.tune.key,
                     "the search can take up to " +
                         (worst ? std::to_string(*worst) : std::string("more than an int64 counts")) + " trials (" +
                         std::to_string(trial_count) + " cells x max_points " + std::to_string(spec.tune.max_points) +
                         "), " + TrialLimitText(limits));
  return false;
}

// The cell of rung `rung` at the axes' positions `odometer`: the defaults, the rung's model and train
// keys, then each axis value, set in `builder`; the trial with its rung and axis assignments.
ExpandedTrial CellAt(const SweepSpec& spec, size_t rung, const std::vector<size_t>& odometer, CellBuilder* builder) {
  const LadderRung& step = spec.ladder.rungs[rung];
  const std::vector<SweepAxis>& axes = spec.axes.axes;
  builder->Set("model", step.model, step.location, step.path);
  builder->Set("train", step.train, step.location, step.path.empty() ? "" : step.path + ".train");
  ExpandedTrial trial;
  trial.rung = static_cast<int64_t>(rung);
  trial.rung_label = step.label;
  for (size_t axis = 0; axis < axes.size(); ++axis) {
    const AxisPoint& point = axes[axis].points[odometer[axis]];
    for (size_t key = 0; key < axes[axis].keys.size(); ++key) {
      trial.assignments[axes[axis].keys[key]] = point.values[key];
      if (axes[axis].keys[key] == kLabelAxisKey) continue;  // names the cell, sets nothing
      builder->Set(axes[axis].keys[key], point.values[key], point.locations[key],
                   key < point.paths.size() ? point.paths[key] : "");
    }
  }
  return trial;
}

// Advances the axes' positions to the next cell of a rung (last axis fastest), back to all zeros after
// the last.
void AdvanceOdometer(const std::vector<SweepAxis>& axes, std::vector<size_t>* odometer) {
  for (size_t axis = axes.size(); axis-- > 0;) {
    if (++(*odometer)[axis] < axes[axis].points.size()) break;
    (*odometer)[axis] = 0;
  }
}

// Sets the ladder rules that depend on the rung's parameter count (in `parsed`, the cell's first parse)
// and that the cell's axes leave alone: tokens (when `derive_tokens`), lr, batch_size.
void ApplyLadderRules(const Ladder& ladder, const TrialConfig& parsed, const ExpandedTrial& trial, bool derive_tokens,
                      const std::string& tokens_location, CellBuilder* builder) {
  ParameterCounts counts = CountParameters(parsed.model);
  const double parameters = static_cast<double>(
      ladder.param_count == "nonembedding" ? counts.nonembedding() : counts.total() - counts.positional);
  if (derive_tokens) {
    builder->Set("train.tokens", static_cast<int64_t>(std::llround(ladder.tokens_per_param * parameters)),
                 tokens_location);
  }
  const size_t size = ladder.rungs[static_cast<size_t>(trial.rung)].size;
  if (ladder.lr.set && !IsAssigned(trial.assignments, "train.lr")) {
    builder->Set("train.lr", ladder.lr.At(size, parameters), ladder.lr.location);
  }
  if (ladder.batch_size.set && !IsAssigned(trial.assignments, "train.batch_size")) {
    builder->Set("train.batch_size", static_cast<int64_t>(std::llround(ladder.batch_size.At(size, parameters))),
                 ladder.batch_size.location);
  }
}

// train.init.model: checkpoint: the model block from the Hugging Face folder train.init.checkpoint
// names (core/hf/hf_model_options.h), each key located where train.init.model is written; false with
// the reason at train.init.checkpoint when the folder cannot give one.
bool TakeModelFromCheckpoint(CellBuilder* builder, std::vector<ConfigError>* errors) {
  const nlohmann::json* model = FindPath(builder->json(), "train.init.model");
  const nlohmann::json* folder = FindPath(builder->json(), "train.init.checkpoint");
  if (model == nullptr || *model != "checkpoint" || folder == nullptr || !folder->is_string() ||
      folder->get<std::string>().empty()) {
    return true;  // validation says what is missing
  }
  const nlohmann::json* position = FindPath(builder->json(), "position");
  StatusOr<std::vector<std::pair<std::string, nlohmann::json>>> keys =
      hf::HfFolderModelKeys(folder->get<std::string>(), position != nullptr ? *position : nlohmann::json());
  if (!keys.ok()) {
    errors->push_back({"train.init.checkpoint", "train.init.model checkpoint reads a Hugging Face folder: " +
                                                    keys.status().message()});
    return false;
  }
  // A key the spec or an axis writes must say what the folder says: the folder's model is the one run
  // (a variant that starts as RoPE is not among the keys: HfFolderModelKeys).
  bool agrees = true;
  for (const auto& [key, value] : *keys) {
    const nlohmann::json* written = FindPath(builder->json(), key);
    if (written != nullptr && *written != value) {
      errors->push_back({key, written->dump() + " here, but " + folder->get<std::string>() + "/config.json gives " +
                                  value.dump() + " (train.init.model: checkpoint runs the folder's model): leave " +
                                  key + " out, or set train.init.model: spec"});
      agrees = false;
    }
  }
  if (!agrees) return false;
  const std::string location = builder->Locate("train.init.model");
  for (const auto& [key, value] : *keys) builder->Set(key, value, location);
  return true;
}

// An IsoFLOP rung's cell (ladder.h, isoflop_budgets): train.steps set, in `builder`, to the whole
// number whose FLOPs as the trial records them lie nearest the rung's budget, from `parsed` (the
// cell with every other rule and axis applied). False, with the error at the budget in `errors`,
// when none lies within kIsoflopTolerance.
bool SetIsoflopSteps(const LadderRung& step, const TrialConfig& parsed, const std::string& budget_location,
                     CellBuilder* builder, std::vector<ConfigError>* errors) {
  const double per_token = CountFlopsPerToken(parsed.model).nonembedding;
  const int64_t per_step = TokensPerStep(parsed.train, parsed.data.seq_len);
  const std::string budget = CompactBudgetText(step.isoflop_budget);
  if (!(per_token > 0) || per_step <= 0) {
    errors->push_back({step.budget_path, "rung " + step.label + ": the model has no nonembedding parameters, so no "
                                         "training reaches the budget " + budget + " FLOPs (6 N_nonembedding D)"});
    return false;
  }
  const IsoflopSteps steps = NearestIsoflopSteps(step.isoflop_budget, per_token, per_step);
  if (!steps.within_tolerance) {
    std::ostringstream text;
    text.precision(3);
    text << "rung " << step.label << ": no whole number of train.steps brings 6 N_nonembedding D within "
         << kIsoflopTolerance * 100 << "% of the budget " << budget << " FLOPs (N_nonembedding "
         << CountParameters(parsed.model).nonembedding() << ", " << per_step << " tokens a step, "
         << per_token * static_cast<double>(per_step) << " FLOPs a step): the nearest, " << steps.steps
         << " step(s), gives " << steps.flops << " FLOPs, " << std::showpos << steps.relative_error * 100
         << std::noshowpos << "%; ";
    if (steps.at_token_limit) {
      text << "the budget needs more tokens than an int64 counts: a smaller budget or a larger model";
    } else {
      text << "use a smaller train.batch_size or data.seq_len (fewer tokens a step), or a larger budget";
    }
    errors->push_back({step.budget_path, text.str()});
    return false;
  }
  builder->Set("train.steps", steps.steps, budget_location);
  return true;
}

// Resolves one cell into its trial config, JSON, identity and counts; false when its config has errors
// (in `errors`, by path). `tokens_location` is where ladder.tokens_per_param is written.
bool ResolveCell(const ConfigDocument& document, const Ladder& ladder, const std::string& tokens_location,
                 CellBuilder* builder, ExpandedTrial* trial, std::vector<ConfigError>* errors) {
  if (!TakeModelFromCheckpoint(builder, errors)) return false;
  const LadderRung& step = ladder.rungs[static_cast<size_t>(trial->rung)];
  const bool isoflop = step.isoflop_budget > 0;
  const std::string budget_location = isoflop ? document.Locate(step.budget_path) : "";
  // Rules that need the parameter count are applied after a first parse; a placeholder keeps
  // that parse from failing for want of tokens.
  const bool derive_tokens = ladder.tokens_per_param > 0 && !isoflop && !IsAssigned(trial->assignments, "train.tokens") &&
                             !IsAssigned(trial->assignments, "train.steps");
  if (derive_tokens) {
    builder->Set("train.tokens", 1, tokens_location);
    builder->Set("train.steps", 0, tokens_location);
  }
  if (isoflop) {
    builder->Set("train.tokens", 0, budget_location);
    builder->Set("train.steps", 1, budget_location);
  }
  std::optional<TrialConfig> parsed = ParseTrialConfig(builder->json(), errors);
  if (!parsed) return false;
  // Ladder rules that depend on the rung's parameter count.
  if (ladder.tokens_per_param > 0 || ladder.lr.set || ladder.batch_size.set) {
    ApplyLadderRules(ladder, *parsed, *trial, derive_tokens, tokens_location, builder);
    parsed = ParseTrialConfig(builder->json(), errors);
    if (!parsed) return false;
  }
  // The steps follow from everything else: the model, the batch and the sequence length.
  if (isoflop) {
    if (!SetIsoflopSteps(step, *parsed, budget_location, builder, errors)) return false;
    parsed = ParseTrialConfig(builder->json(), errors);
    if (!parsed) return false;
  }
  SetResolvedConfig(std::move(*parsed), trial);
  return true;
}

// Adds a cell's config errors, each located in the spec: an unknown key where the key was written,
// any other where the offending value came from.
void ReportCellErrors(const std::vector<ConfigError>& errors, const CellBuilder& builder,
                      SpecDiagnostics* diagnostics) {
  for (const ConfigError& error : errors) {
    const bool about_the_key = error.message.rfind("unknown key", 0) == 0;
    diagnostics->Error(about_the_key ? builder.LocateKey(error.path) : builder.Locate(error.path), error.path,
                       error.message);
  }
}

// The cells in order, one at a time: each built from the defaults, its rung and its axis values, then
// resolved; its errors located in the spec (in `diagnostics`), or its trial kept, numbered in order.
std::vector<ExpandedTrial> ExpandCells(const ConfigDocument& document, const SweepSpec& spec, const TrialCount& count,
                                       SpecDiagnostics* diagnostics) {
  const std::string tokens_location = document.Locate("ladder.tokens_per_param");
  std::vector<ExpandedTrial> trials;
  trials.reserve(static_cast<size_t>(std::min<int64_t>(count.trials, kMaxTrialsCeiling)));
  for (size_t rung = 0; rung < spec.ladder.rungs.size(); ++rung) {
    std::vector<size_t> odometer(spec.axes.axes.size(), 0);
    for (int64_t cell = 0; cell < count.cells_per_rung; ++cell) {
      CellBuilder builder(spec.defaults, document);
      ExpandedTrial trial = CellAt(spec, rung, odometer, &builder);
      AdvanceOdometer(spec.axes.axes, &odometer);
      std::vector<ConfigError> errors;
      const bool resolved = ResolveCell(document, spec.ladder, tokens_location, &builder, &trial, &errors);
      ReportCellErrors(errors, builder, diagnostics);
      if (!resolved) continue;
      trial.index = static_cast<int64_t>(trials.size());
      trials.push_back(std::move(trial));
    }
  }
  return trials;
}

// Baseline: every key must address the trial config, and some cell must match; marks the cells that do.
void MarkBaseline(const ConfigDocument& document, const SweepSpec& spec, std::vector<ExpandedTrial>* trials,
                  SpecDiagnostics* diagnostics) {
  if (spec.baseline.empty() || trials->empty()) return;
  bool keys_ok = true;
  for (auto it = spec.baseline.begin(); it != spec.baseline.end(); ++it) {
    if (FindPath(trials->front().config_json, it.key()) == nullptr) {
      diagnostics->Error(document.Locate("baseline." + it.key()), "baseline." + it.key(),
                         it.key() == kLabelAxisKey
                             ? "a label names cells and is not a key of the trial config: select labelled "
                               "cells as the reference when reading results (rung results --against label=NAME)"
                             : "not a key of the trial config");
      keys_ok = false;
    }
  }
  int64_t matches = 0;
  for (ExpandedTrial& trial : *trials) {
    trial.baseline = keys_ok;
    for (auto it = spec.baseline.begin(); keys_ok && it != spec.baseline.end(); ++it) {
      const nlohmann::json* value = FindPath(trial.config_json, it.key());
      if (value == nullptr || *value != it.value()) trial.baseline = false;
    }
    matches += trial.baseline ? 1 : 0;
  }
  if (keys_ok && matches == 0) {
    diagnostics->Error(spec.baseline_location, "baseline", "matches no cell of the sweep " + spec.baseline.dump());
  }
}

// The metrics a trainer reports for `trials` (core/records): the step series, the final summaries, and
// the extrapolation summaries their trials ask for.
std::set<std::string> ReportedMetrics(const std::vector<ExpandedTrial>& trials) {
  std::set<std::string> reported;
  for (const std::string& name : records::StepMetricNames()) reported.insert(name);
  for (const std::string& name : records::FinalSummaryNames()) reported.insert(name);
  for (const ExpandedTrial& trial : trials) {
    for (int64_t multiple : trial.config.train.extrapolation_multiples) {
      for (const std::string& method : trial.config.train.extrapolation_methods) {
        records::ExtrapolationResult result;
        result.multiple = multiple;
        result.method = method;
        for (const char* metric :
             {"val_loss", "val_loss_full", "val_loss_in_dist", "val_accuracy", "val_bpb", "val_loss_back_half"}) {
          reported.insert(records::ExtrapolationSummaryName(metric, result));
        }
        if (multiple > 1) reported.insert(records::ExtrapolationSummaryName("val_loss_extrap", result));
      }
    }
    const TrainConfig& train = trial.config.train;
    // The end's attention diagnostics: xi_Lambda at T and at each evaluated length beyond it.
    if (train.diagnostics_sequences > 0 && DiagnosesTheEnd(train)) {
      reported.insert("xi_lambda");
      for (const DiagnosedLength& point : DiagnosedLengthsBeyond(train)) {
        reported.insert(records::LengthSuffixedName("xi_lambda", point.multiple, point.method));
      }
    }
    std::vector<records::ProbeResult> cells;
    for (const ProbeSetting& setting : ProbeSettings(train.probe, trial.config.data.seq_len, train.extrapolation_methods)) {
      records::ProbeResult cell;
      cell.probe = train.probe.kind;
      cell.length = setting.length;
      cell.method = setting.method;
      cells.push_back(cell);
    }
    if (train.probe.kind == "indexing") {
      // Within the context only. Of the default list lengths those that fit are known once encoded: every
      // one is a name the trainer may report.
      records::ProbeResult cell;
      cell.probe = train.probe.kind;
      cell.method = "none";
      cells.push_back(cell);
      for (int64_t elements : IndexingElementCounts(train.probe)) {
        cell.elements = elements;
        cells.push_back(cell);
      }
    }
    for (const auto& summary : records::ProbeSummaries(cells)) reported.insert(summary.first);
  }
  return reported;
}

// The sweep's metric must be something a trainer reports for its trials; the error names what they do.
void CheckMetricIsReported(const ConfigDocument& document, const SweepSpec& spec,
                           const std::vector<ExpandedTrial>& trials, SpecDiagnostics* diagnostics) {
  if (spec.metric.name.empty() || trials.empty()) return;
  const std::set<std::string> reported = ReportedMetrics(trials);
  if (reported.count(spec.metric.name) != 0) return;
  std::string names;
  for (const char* name : {"val_loss", "train_loss", "val_accuracy"}) {
    names += std::string(names.empty() ? "" : ", ") + name;
  }
  for (const std::string& name : reported) {
    if (name.rfind("val_loss_", 0) == 0) names += ", " + name;
  }
  diagnostics->Error(document.Locate("metric.name"), "metric.name",
                     "'" + spec.metric.name + "' is reported by no trainer for these trials; they report " + names +
                         " (and the other numeric fields of the step and final records, " +
                         "core/records/trainer_records.h)");
}

// The key a search tunes must be a real of the trial config; successive halving needs a search.
void CheckSearchKeys(const ConfigDocument& document, const SweepSpec& spec, const std::vector<ExpandedTrial>& trials,
                     SpecDiagnostics* diagnostics) {
  if (spec.tune.set && !trials.empty()) {
    const nlohmann::json* value = FindPath(trials.front().config_json, spec.tune.key);
    if (value == nullptr || !value->is_number_float()) {
      diagnostics->Error(spec.tune.location, "tune." + spec.tune.key,
                         "'" + spec.tune.key + "' is not a real-valued key of the trial config (e.g. train.lr)");
    }
  }
  if (spec.early_stop.asha && !spec.tune.set) {
    diagnostics->Error(document.Locate("early_stop.asha"), "early_stop.asha",
                       "successive halving compares the trials of one tuning cell: it needs a `tune` block");
  }
}

// A precision block aims at the baseline's multipliers: it needs a baseline, two seeds at each rung to
// start from (an interval needs two), its `at` labels among the rungs, and a budget the first design
// fits in.
void CheckPrecision(const ConfigDocument& document, const ExpandedSweep& sweep, SpecDiagnostics* diagnostics) {
  const PrecisionSpec& precision = sweep.spec.precision;
  if (!precision.set || sweep.trials.empty()) return;
  if (sweep.spec.baseline.empty()) {
    diagnostics->Error(precision.location, "precision",
                       "a precision block aims at the compute multipliers against the baseline: the spec needs "
                       "`baseline:` (e.g. {position.variant: rope})");
  }
  std::map<std::string, std::set<int64_t>> seeds_at;  // rung label -> seeds of its baseline cells
  for (const ExpandedTrial& trial : sweep.trials) {
    if (trial.baseline) seeds_at[trial.rung_label].insert(static_cast<int64_t>(trial.config.seed));
  }
  if (seeds_at.size() < 2 && !sweep.spec.baseline.empty()) {
    diagnostics->Error(precision.location, "precision",
                       "a multiplier needs the baseline at two rungs or more; the ladder gives it " +
                           std::to_string(seeds_at.size()));
  }
  for (const auto& [label, seeds] : seeds_at) {
    if (seeds.size() < 2) {
      diagnostics->Error(precision.location, "precision",
                         "rung " + label + " starts with " + std::to_string(seeds.size()) +
                             " seed(s): an interval needs 2 (3 or more narrow it most); list them in the sweep's "
                             "`seed` axis, e.g. seed: [0, 1, 2]");
      break;
    }
  }
  std::vector<std::string> labels;  // in the ladder's order
  for (const ExpandedTrial& trial : sweep.trials) {
    if (std::find(labels.begin(), labels.end(), trial.rung_label) == labels.end()) labels.push_back(trial.rung_label);
  }
  for (const std::string& label : precision.at) {
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) {
      std::string known;
      for (const std::string& one : labels) known += (known.empty() ? "" : ", ") + one;
      diagnostics->Error(document.Locate("precision.at"), "precision.at",
                         "'" + label + "' is not a rung label of the ladder; its labels: " + known);
    }
  }
  // The variants as the fits name them (ladder_variant.h): the baseline must be one of them, and each
  // target rung must have the baseline and another variant.
  if (!sweep.spec.baseline.empty()) {
    std::vector<const nlohmann::json*> assignments;
    for (const ExpandedTrial& trial : sweep.trials) assignments.push_back(&trial.assignments);
    const std::vector<std::string> keys = DefaultVariantKeys(assignments, sweep.spec.tune.set ? sweep.spec.tune.key : "");
    std::set<std::string> baseline_variants;
    std::map<std::string, std::set<std::string>> others_at;  // label -> variants but the baseline's
    std::set<std::string> baseline_at;
    for (const ExpandedTrial& trial : sweep.trials) {
      const std::string variant = LadderVariantName(trial.assignments, trial.config_json, keys);
      if (trial.baseline) {
        baseline_variants.insert(variant);
        baseline_at.insert(trial.rung_label);
      } else {
        others_at[trial.rung_label].insert(variant);
      }
    }
    if (baseline_variants.size() > 1) {
      std::string names;
      for (const std::string& name : baseline_variants) names += (names.empty() ? "" : ", ") + name;
      diagnostics->Error(sweep.spec.baseline_location.empty() ? precision.location : sweep.spec.baseline_location, "baseline",
                         "selects the variants " + names +
                             ": a precision aim measures every other variant against one; narrow `baseline:`");
    }
    for (const std::string& label : precision.at.empty() ? labels : precision.at) {
      if (baseline_at.count(label) && !others_at[label].empty()) continue;
      if (std::find(labels.begin(), labels.end(), label) == labels.end()) continue;  // said above
      diagnostics->Error(precision.location, "precision.at",
                         "rung " + label + (baseline_at.count(label) ? " has no variant but the baseline"
                                                                     : " has no run of the baseline") +
                             ": it has no multiplier to aim at");
    }
  }
  const double first_design = sweep.TotalFlops();
  if (precision.budget_flops > 0 && precision.budget_flops < first_design) {
    std::ostringstream text;
    text.precision(4);
    text << "budget_flops " << precision.budget_flops << " is below the first design's " << first_design
         << " FLOPs (6 N D over the spec's " << sweep.trials.size() << " trials): nothing could be added";
    diagnostics->Error(document.Locate("precision.budget_flops"), "precision.budget_flops", text.str());
  }
}

// "cells 0 (rung ..., key=value) and 3 (...)": two cells, by index and description.
std::string CellPair(const ExpandedTrial& first, const ExpandedTrial& second) {
  return "cells " + std::to_string(first.index) + " (" + DescribeCell(first) + ") and " +
         std::to_string(second.index) + " (" + DescribeCell(second) + ")";
}

// Two cells of one effective model (identity): an error in a tuned sweep, whose search plans each
// cell's values by identity (they would wait on each other); else a warning, as it is legal (seeds
// differ elsewhere) but almost always a mistake. Each cell is paired with the first of its identity.
void CheckDistinctModels(const ConfigDocument& document, const SweepSpec& spec,
                         const std::vector<ExpandedTrial>& trials, SpecDiagnostics* diagnostics) {
  std::map<std::string, int64_t> first_with_identity;
  for (const ExpandedTrial& trial : trials) {
    auto [it, inserted] = first_with_identity.emplace(trial.identity, trial.index);
    if (inserted) continue;
    const ExpandedTrial& first = trials[it->second];
    const auto label = [](const ExpandedTrial& cell) {
      return cell.assignments.is_object() ? cell.assignments.value(kLabelAxisKey, nlohmann::json()) : nlohmann::json();
    };
    if (label(first) != label(trial)) {
      diagnostics->Error(document.Locate("sweep"), "sweep",
                         CellPair(first, trial) + " are the same model under two labels (identity " +
                             trial.identity.substr(0, 12) + "): a label names a cell and cannot make two; give "
                             "the arms a key of the trial config that differs");
    } else if (spec.tune.set) {
      diagnostics->Error(document.Locate("sweep"), "sweep",
                         CellPair(first, trial) + " are the same model; a tuned sweep needs every cell distinct");
    } else {
      diagnostics->Warning(document.Locate("sweep"), "sweep",
                           CellPair(first, trial) + " are the same model (identity " + trial.identity.substr(0, 12) +
                               ")");
    }
  }
}

}  // namespace

StatusOr<ExpandedTrial> ExpandTrialWithValue(const ExpandedTrial& base, const std::string& key, double value) {
  return ExpandTrialWithAssignment(base, key, value);
}

StatusOr<ExpandedTrial> ExpandTrialWithAssignment(const ExpandedTrial& base, const std::string& key,
                                                  const nlohmann::json& value) {
  nlohmann::json json = base.config_json;
  MergeAtPath(&json, key, value);
  std::vector<ConfigError> errors;
  std::optional<TrialConfig> parsed = ParseTrialConfig(json, &errors);
  if (!parsed) {
    std::string message = key + " = " + (value.is_number() ? ConfigNumberText(value.get<double>()) : value.dump()) +
                          " is not a valid value:";
    for (const ConfigError& error : errors) message += " " + error.path + ": " + error.message + ";";
    message.pop_back();
    return Status::InvalidArgument(message);
  }
  ExpandedTrial trial = base;
  SetResolvedConfig(std::move(*parsed), &trial);
  trial.assignments[key] = value;
  return trial;
}

StatusOr<ExpandedSweep> ExpandSweepSpec(const ConfigDocument& document, const ExpansionLimits& limits) {
  SpecDiagnostics diagnostics;
  ExpandedSweep sweep;
  // Structural errors do not stop the expansion: the cells still report theirs, so a user sees
  // every problem at once.
  sweep.spec = ParseSweepSpec(document, limits, &diagnostics);
  const SweepSpec& spec = sweep.spec;
  // The count first: a spec over the limit builds no cell.
  const std::optional<TrialCount> count = TrialCountWithinLimit(document, spec, limits, &diagnostics);
  if (!count || !SearchWithinLimit(spec, count->trials, limits, &diagnostics)) return diagnostics.ToStatus();
  sweep.trials = ExpandCells(document, spec, *count, &diagnostics);
  MarkBaseline(document, spec, &sweep.trials, &diagnostics);
  CheckMetricIsReported(document, spec, sweep.trials, &diagnostics);
  CheckSearchKeys(document, spec, sweep.trials, &diagnostics);
  CheckDistinctModels(document, spec, sweep.trials, &diagnostics);
  CheckPrecision(document, sweep, &diagnostics);
  if (diagnostics.has_errors()) return diagnostics.ToStatus();
  sweep.warnings = diagnostics.warnings();
  return sweep;
}

StatusOr<ExpandedSweep> LoadSweepSpec(const std::string& path, const ExpansionLimits& limits) {
  RUNG_ASSIGN_OR_RETURN(const ConfigDocument document, ReadConfigDocument(path));
  return ExpandSweepSpec(document, limits);
}

StatusOr<ExpandedSweep> ExpandSweepSpecText(const std::string& text, const std::string& name,
                                            const ExpansionLimits& limits) {
  RUNG_ASSIGN_OR_RETURN(const ConfigDocument document, ParseConfigDocument(text, name));
  return ExpandSweepSpec(document, limits);
}

}  // namespace rung
