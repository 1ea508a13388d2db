#include "coordinator/domain/sweep_tuner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "coordinator/domain/crash_point.h"
#include "coordinator/domain/transitions.h"
#include "coordinator/store/event_log.h"
#include "coordinator/store/trial_cells.h"
#include "sweeps/tune/early_stopping.h"

namespace rung {
namespace {

using domain::Cause;
using domain::kCoordinatorActor;

std::string ShortNumber(double value) {
  std::ostringstream out;
  out.precision(4);
  out << value;
  return out.str();
}

// "L1-d32 {"position.variant":"rope"}": how events name a tuning cell.
std::string CellName(const TuningCellReport& cell) {
  nlohmann::json keys = cell.cell;
  keys.erase("rung");
  return (cell.rung_label.empty() ? std::string("every rung") : cell.rung_label) + " " + keys.dump();
}

// "1e-3=2.31, 2e-3=diverged, ...": a cell's tried values and what they gave.
std::string TriedText(const TuningCellReport& cell) {
  std::string text;
  for (const TriedValue& tried : cell.tried) {
    if (!text.empty()) text += ", ";
    text += ShortNumber(tried.value) + "=" + (tried.metric ? ShortNumber(*tried.metric) : tried.state);
  }
  return text.empty() ? "nothing yet" : text;
}

std::vector<Evaluation> Evaluations(const std::vector<CurvePoint>& curve) {
  std::vector<Evaluation> evaluations;
  evaluations.reserve(curve.size());
  for (const CurvePoint& point : curve) evaluations.push_back({point.point.step, point.point.tokens, point.point.value});
  return evaluations;
}

// Whether the sweep's spec may have an early_stop block (a cheap filter; its expansion decides).
bool MayStopEarly(const SweepRecord& sweep) { return sweep.spec_text.find("early_stop") != std::string::npos; }

}  // namespace

StatusOr<std::shared_ptr<const ExpandedSweep>> SweepTuner::SpecOf(const SweepRecord& sweep) const {
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = spec_cache_.find(sweep.spec_hash);
    if (it != spec_cache_.end()) return it->second;
  }
  // The spec was accepted at submission within the coordinator's limit: expand it whole.
  ExpansionLimits limits;
  limits.max_trials = std::numeric_limits<int64_t>::max();
  StatusOr<ExpandedSweep> expanded =
      ExpandSweepSpecText(sweep.spec_text, sweep.spec_file_name.empty() ? "spec.yaml" : sweep.spec_file_name, limits);
  if (!expanded.ok()) {
    return Status::InvalidArgument("the stored spec of sweep '" + sweep.name +
                                   "' no longer expands: " + expanded.status().message());
  }
  auto shared = std::make_shared<const ExpandedSweep>(std::move(*expanded));
  std::lock_guard<std::mutex> lock(cache_mutex_);
  spec_cache_[sweep.spec_hash] = shared;
  return std::shared_ptr<const ExpandedSweep>(shared);
}

StatusOr<std::vector<ObservedTrial>> SweepTuner::ObserveIn(Tables& tables, const SweepRecord& sweep) {
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> trials, tables.trials().OfSweep(sweep.id));
  RUNG_ASSIGN_OR_RETURN(auto finals, tables.outputs().SummaryOfSweep(sweep.id, sweep.metric.name));
  std::vector<ObservedTrial> observed;
  observed.reserve(trials.size());
  for (TrialRecord& trial : trials) {
    ObservedTrial out;
    out.identity = trial.cell.identity;
    out.order = trial.trial_index;
    out.rung_label = trial.cell.rung_label;
    out.assignments = std::move(trial.cell.assignments);
    switch (trial.state) {
      case TrialState::kSucceeded: {
        out.outcome = TunedOutcome::kFinished;
        auto value = finals.find(trial.id);
        if (value != finals.end() && std::isfinite(value->second)) out.metric = value->second;
        break;
      }
      case TrialState::kFailed: out.outcome = TunedOutcome::kDiverged; break;
      case TrialState::kEarlyStopped:
        out.outcome = trial.early_stop == EarlyStop::kAsha ? TunedOutcome::kStoppedByAsha : TunedOutcome::kDiverged;
        break;
      default: out.outcome = TunedOutcome::kRunning;
    }
    observed.push_back(std::move(out));
  }
  return observed;
}

StatusOr<std::optional<std::vector<std::pair<nlohmann::json, int64_t>>>> SweepTuner::BestFromSweep(
    const ExpandedSweep& expanded) const {
  const TuneSpec& tune = expanded.spec.tune;
  using Bests = std::vector<std::pair<nlohmann::json, int64_t>>;
  if (tune.from_sweep.empty()) return std::optional<Bests>();
  const std::string where = tune.location + ": error: tune." + tune.key + ".from_sweep: ";
  RUNG_ASSIGN_OR_RETURN(std::optional<SweepRecord> source,
                        store_.Read([&](Tables& tables) { return tables.sweeps().FindByName(tune.from_sweep); }));
  if (!source) return Status::InvalidArgument(where + "no sweep is named '" + tune.from_sweep + "'");
  RUNG_ASSIGN_OR_RETURN(std::shared_ptr<const ExpandedSweep> source_spec, SpecOf(*source));
  if (!source_spec->spec.tune.set || source_spec->spec.tune.key != tune.key) {
    return Status::InvalidArgument(where + "sweep '" + tune.from_sweep + "' did not tune " + tune.key);
  }
  RUNG_ASSIGN_OR_RETURN(std::vector<ObservedTrial> observed,
                        store_.Read([&](Tables& tables) { return ObserveIn(tables, *source); }));
  StatusOr<TuningPlan> plan = PlanTuning(*source_spec, observed);
  if (!plan.ok()) return Status::InvalidArgument(where + plan.status().message());
  Bests bests;
  for (const TuningCellReport& cell : plan->cells) {
    // A closed cell's best, on this spec's grid.
    if (cell.closed() && cell.best_value) bests.emplace_back(cell.cell, tune.NearestIndex(*cell.best_value));
  }
  return std::optional<Bests>(std::move(bests));
}

StatusOr<TuningPlan> SweepTuner::PlanForSubmission(const ExpandedSweep& expanded, const std::string& sweep_name) const {
  RUNG_ASSIGN_OR_RETURN(auto best_from, BestFromSweep(expanded));
  RUNG_ASSIGN_OR_RETURN(std::vector<ObservedTrial> observed,
                        store_.Read([&](Tables& tables) -> StatusOr<std::vector<ObservedTrial>> {
                          RUNG_ASSIGN_OR_RETURN(std::optional<SweepRecord> sweep,
                                                tables.sweeps().FindByName(sweep_name));
                          if (!sweep) return std::vector<ObservedTrial>();
                          return ObserveIn(tables, *sweep);
                        }));
  return PlanTuning(expanded, observed, best_from ? &*best_from : nullptr);
}

StatusOr<TuningPlan> SweepTuner::Plan(int64_t sweep_id) const {
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, store_.Read([&](Tables& tables) { return tables.sweeps().Get(sweep_id); }));
  if (sweep.tuning.empty()) {
    return Status::FailedPrecondition("sweep '" + sweep.name + "' has no tune block: nothing was searched");
  }
  RUNG_ASSIGN_OR_RETURN(std::shared_ptr<const ExpandedSweep> spec, SpecOf(sweep));
  return PlanForSubmission(*spec, sweep.name);
}

StatusOr<int64_t> SweepTuner::Decide(int64_t sweep_id) {
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, store_.Read([&](Tables& tables) { return tables.sweeps().Get(sweep_id); }));
  if (sweep.tuning != kTuningSearching || !TakesDecisions(sweep.state)) return 0;
  RUNG_ASSIGN_OR_RETURN(std::shared_ptr<const ExpandedSweep> spec, SpecOf(sweep));
  CrashPoint("tuner.before_decision");
  RUNG_ASSIGN_OR_RETURN(int64_t added, store_.Write([&](Tables& tables) -> StatusOr<int64_t> {
    RUNG_ASSIGN_OR_RETURN(SweepRecord current, tables.sweeps().Get(sweep_id));
    if (current.tuning != kTuningSearching || !TakesDecisions(current.state) || current.spec_hash != sweep.spec_hash) {
      return 0;  // decided, closed or resubmitted meanwhile
    }
    RUNG_ASSIGN_OR_RETURN(std::vector<ObservedTrial> observed, ObserveIn(tables, current));
    RUNG_ASSIGN_OR_RETURN(TuningPlan plan, PlanTuning(*spec, observed));
    // The sweep's trials were read once, for the observation: their indices give the next one.
    std::set<std::string> existing;
    int64_t next_index = 0;
    for (const ObservedTrial& trial : observed) {
      existing.insert(trial.identity);
      next_index = std::max(next_index, trial.order + 1);
    }

    // New trials, with one event per cell naming what decided them.
    int64_t added = 0;
    std::map<int64_t, std::vector<std::string>> added_by_cell;
    for (const PlannedTrial& planned : plan.trials) {
      if (existing.count(planned.trial.identity)) continue;
      const TrialCell cell = MakeTrialCell(planned.trial);
      RUNG_RETURN_IF_ERROR(
          tables.trials().Insert(sweep_id, next_index++, cell, current.policy.priority, tables.now()).status());
      existing.insert(planned.trial.identity);
      added_by_cell[planned.cell].push_back(ShortNumber(spec->spec.tune.ValueAt(planned.grid_index)) + " (trial " +
                                            std::to_string(next_index - 1) + ")");
      ++added;
    }
    for (const auto& [cell_id, values] : added_by_cell) {
      const TuningCellReport& cell = plan.cells[static_cast<size_t>(cell_id)];
      std::string list;
      for (const std::string& value : values) list += (list.empty() ? "" : ", ") + value;
      EventRecord event = domain::NewEvent(tables, event_kind::kTuneDecision,
                                           {kCoordinatorActor, CellName(cell) + ": tried " + TriedText(cell) +
                                                                   "; " + cell.reason + " -> added " + list});
      event.sweep_id = sweep_id;
      RUNG_RETURN_IF_ERROR(tables.events().Append(event));
    }
    // Cells closed since the last decision: one event each (the log is read back to know).
    RUNG_ASSIGN_OR_RETURN(std::vector<std::string> closed_before,
                          tables.events().SweepReasons(sweep_id, event_kind::kTuneCellClosed));
    for (const TuningCellReport& cell : plan.cells) {
      if (!cell.closed()) continue;
      const std::string name = CellName(cell) + ": ";
      if (std::any_of(closed_before.begin(), closed_before.end(),
                      [&](const std::string& reason) { return reason.rfind(name, 0) == 0; })) {
        continue;
      }
      EventRecord event = domain::NewEvent(
          tables, event_kind::kTuneCellClosed,
          {kCoordinatorActor, name + CellStatusName(cell.status) + " at " + ShortNumber(cell.best_value.value_or(0)) +
                                  " (tried " + TriedText(cell) + "; " + cell.reason + ")"});
      event.sweep_id = sweep_id;
      RUNG_RETURN_IF_ERROR(tables.events().Append(event));
    }
    if (added == 0 && plan.complete()) {
      RUNG_RETURN_IF_ERROR(tables.sweeps().SetTuning(sweep_id, kTuningComplete, tables.now()));
      EventRecord event = domain::NewEvent(
          tables, event_kind::kTuneComplete,
          {kCoordinatorActor, "every one of " + std::to_string(plan.cells.size()) + " tuning cells is closed"});
      event.sweep_id = sweep_id;
      RUNG_RETURN_IF_ERROR(tables.events().Append(event));
    }
    RUNG_RETURN_IF_ERROR(domain::SettleSweep(tables, sweep_id, kCoordinatorActor));
    return added;
  }));
  CrashPoint("tuner.after_decision");
  ChangeSignals::Announce(signals_, added > 0);
  return added;
}

Status SweepTuner::DecideAll() {
  RUNG_ASSIGN_OR_RETURN(std::vector<SweepRecord> searching,
                        store_.Read([&](Tables& tables) { return tables.sweeps().Searching(); }));
  for (const SweepRecord& sweep : searching) {
    StatusOr<int64_t> decided = Decide(sweep.id);
    // A spec this build cannot expand any more leaves its sweep waiting; the others go on.
    if (!decided.ok() && decided.status().code() != StatusCode::kInvalidArgument) return decided.status();
  }
  return Status::Ok();
}

StatusOr<int64_t> SweepTuner::ConsiderEarlyStop(int64_t trial_id) {
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, store_.Read([&](Tables& tables) -> StatusOr<SweepRecord> {
    RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Header(trial_id));
    return tables.sweeps().Get(trial.sweep_id);
  }));
  // A spec without the word cannot have the block: no expansion for every evaluation of every sweep.
  if (!MayStopEarly(sweep)) return 0;
  RUNG_ASSIGN_OR_RETURN(std::shared_ptr<const ExpandedSweep> spec, SpecOf(sweep));
  const EarlyStopSpec& early_stop = spec->spec.early_stop;
  if (!early_stop.any()) return 0;
  const std::vector<std::string> axis_keys = spec->spec.axes.Keys();

  RUNG_ASSIGN_OR_RETURN(int64_t stopped, store_.Write([&](Tables& tables) -> StatusOr<int64_t> {
    RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Get(trial_id));
    if (!IsLive(trial.state)) return 0;
    // A live attempt whose final record arrived has trained to the end: its ending is on its way
    // (the worker sends Complete after its last batch), and stopping it would waste the run and
    // file a finished trial as stopped. It still counts as a rival.
    auto trained = [&tables](const TrialRecord& one) { return tables.outputs().HasSummaries(one.id, one.attempt); };
    RUNG_ASSIGN_OR_RETURN(const bool trial_trained, trained(trial));
    std::vector<std::pair<TrialRecord, EarlyStopDecision>> decisions;
    if (early_stop.divergence && !trial_trained) {
      EvaluatedTrial evaluated;
      evaluated.trial_id = trial.id;
      RUNG_ASSIGN_OR_RETURN(std::vector<CurvePoint> curve, tables.outputs().Curve(trial.id, "val_loss"));
      evaluated.val_loss = Evaluations(curve);
      if (auto decision = DivergenceDecision(*early_stop.divergence, evaluated)) decisions.emplace_back(trial, *decision);
    }
    if (early_stop.asha && decisions.empty() && spec->spec.tune.set) {
      const nlohmann::json cell =
          TuningCellOf(spec->spec.tune, axis_keys, trial.cell.rung_label, trial.cell.assignments);
      RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> trials, tables.trials().OfSweep(sweep.id));
      std::vector<TrialRecord> mates;
      std::vector<EvaluatedTrial> evaluated;
      for (TrialRecord& other : trials) {
        // Trials the search planned (the tuned key assigned) of this cell and seed: a value's other
        // seeds, and a closed cell's followers, are not its rivals.
        if (!other.cell.assignments.contains(spec->spec.tune.key) || other.cell.seed != trial.cell.seed) continue;
        if (TuningCellOf(spec->spec.tune, axis_keys, other.cell.rung_label, other.cell.assignments) != cell) continue;
        EvaluatedTrial one;
        one.trial_id = other.id;
        one.total_tokens = other.cell.tokens;
        RUNG_ASSIGN_OR_RETURN(std::vector<CurvePoint> curve, tables.outputs().Curve(other.id, early_stop.asha->metric));
        one.asha_metric = Evaluations(curve);
        evaluated.push_back(std::move(one));
        mates.push_back(std::move(other));
      }
      for (size_t which = 0; which < mates.size(); ++which) {
        if (!IsLive(mates[which].state)) continue;
        RUNG_ASSIGN_OR_RETURN(const bool mate_trained, trained(mates[which]));
        if (mate_trained) continue;
        if (auto decision = AshaDecision(*early_stop.asha, evaluated, which)) decisions.emplace_back(mates[which], *decision);
      }
    }
    if (decisions.empty()) return 0;
    CrashPoint("early_stop.before_stop");
    for (auto& [stopping, decision] : decisions) {
      const bool asha = decision.reason == "asha";
      const std::string reason = (asha ? "asha: " : "diverged: ") + decision.detail;
      RUNG_RETURN_IF_ERROR(domain::StopTrialEarly(tables, stopping, asha ? EarlyStop::kAsha : EarlyStop::kDivergence,
                                                  {kCoordinatorActor, reason}));
      const nlohmann::json inputs = {{"reason", decision.reason}, {"metric", decision.metric},
                                     {"value", decision.value},   {"compared_to", decision.compared_to},
                                     {"step", decision.step}};
      RUNG_RETURN_IF_ERROR(domain::NoteTrial(tables, stopping, event_kind::kEarlyStop, {kCoordinatorActor, inputs.dump()}));
    }
    RUNG_RETURN_IF_ERROR(domain::SettleSweep(tables, sweep.id, kCoordinatorActor));
    return static_cast<int64_t>(decisions.size());
  }));
  if (stopped == 0) return 0;
  ChangeSignals::Announce(signals_, false);
  RUNG_RETURN_IF_ERROR(Decide(sweep.id).status());
  return stopped;
}

Status SweepTuner::ConsiderEarlyStopAll() {
  RUNG_ASSIGN_OR_RETURN(std::vector<int64_t> live, store_.Read([&](Tables& tables) -> StatusOr<std::vector<int64_t>> {
    std::vector<int64_t> ids;
    RUNG_ASSIGN_OR_RETURN(std::vector<SweepRecord> sweeps, tables.sweeps().List());
    for (const SweepRecord& sweep : sweeps) {
      if (!MayStopEarly(sweep)) continue;
      RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> trials, tables.trials().UnfinishedOfSweep(sweep.id));
      for (const TrialRecord& trial : trials) {
        if (IsLive(trial.state)) ids.push_back(trial.id);
      }
    }
    return ids;
  }));
  for (int64_t trial_id : live) {
    StatusOr<int64_t> stopped = ConsiderEarlyStop(trial_id);
    if (!stopped.ok() && stopped.status().code() != StatusCode::kInvalidArgument) return stopped.status();
  }
  return Status::Ok();
}

}  // namespace rung
