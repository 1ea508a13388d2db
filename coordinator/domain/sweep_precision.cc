#include "coordinator/domain/sweep_precision.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "coordinator/domain/coordinator.h"
#include "coordinator/domain/crash_point.h"
#include "coordinator/domain/sweep_fits.h"
#include "coordinator/domain/sweep_tuner.h"
#include "coordinator/domain/transitions.h"
#include "coordinator/store/event_log.h"
#include "coordinator/store/trial_cells.h"
#include "sweeps/spec/expansion.h"
#include "sweeps/spec/ladder_variant.h"

namespace rung {
namespace {

using domain::kCoordinatorActor;
using CellKey = std::pair<std::string, std::string>;  // (variant, rung label)

std::string Short(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", value);
  return text;
}

fit::PrecisionTarget TargetOf(const PrecisionSpec& spec) {
  fit::PrecisionTarget target;
  for (fit::Estimator estimator : {fit::Estimator::kHermite, fit::Estimator::kPowerLawSharedE,
                                   fit::Estimator::kPowerLawFreeE}) {
    if (spec.estimator == fit::EstimatorName(estimator)) target.estimator = estimator;
  }
  target.half_width = spec.target_half_width;
  target.level = spec.level;
  target.at = spec.at;
  target.budget_flops = spec.budget_flops;
  target.in_flight = spec.in_flight;
  return target;
}

// The trials of a sweep as one decision saw them: ids, states and attempts.
std::string Fingerprint(const std::vector<TrialRecord>& trials) {
  std::string text;
  for (const TrialRecord& trial : trials) {
    text += std::to_string(trial.id) + ":" + TrialStateName(trial.state) + ":" + std::to_string(trial.attempt) + ";";
  }
  return text;
}

// What a decision reads: the aim's inputs, and how to build a cell's trial at a new seed.
struct Gathered {
  std::shared_ptr<const ExpandedSweep> spec;
  fit::AimState state;
  std::map<CellKey, const ExpandedTrial*> templates;  // a spec cell of each (variant, label)
  std::map<CellKey, double> tuned_value;              // tuned sweeps: the value each point runs at
  std::string fingerprint;
};

StatusOr<Gathered> Gather(Store& store, Coordinator& coordinator, const SweepRecord& sweep) {
  Gathered gathered;
  RUNG_ASSIGN_OR_RETURN(gathered.spec, coordinator.tuner().SpecOf(sweep));
  const SweepSpec& spec = gathered.spec->spec;
  if (!spec.precision.set) {
    return Status::FailedPrecondition("sweep '" + sweep.name + "' has no precision block: it aims at no interval");
  }
  std::vector<std::string> keys;
  auto read_trials = [&] { return store.Read([&](Tables& tables) { return tables.trials().OfSweep(sweep.id); }); };
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> before, read_trials());
  RUNG_ASSIGN_OR_RETURN(SweepLadder ladder, BuildLadder(coordinator, sweep, sweep.metric.name, MetricSummary::kFinal, &keys));
  if (ladder.baseline.empty()) {
    return Status::FailedPrecondition("the spec's baseline " + sweep.baseline.dump() +
                                      " does not select one variant of the sweep: a precision aim needs one");
  }
  gathered.state.baseline = ladder.baseline;
  gathered.state.ladder = std::move(ladder.ladder);
  std::set<int64_t> with_run;  // trials with a run in the ladder
  for (const FitPointRecord& point : ladder.points) with_run.insert(point.trial_id);
  for (const ExpandedTrial& trial : gathered.spec->trials) {
    gathered.templates.emplace(CellKey{LadderVariantName(trial.assignments, trial.config_json, keys), trial.rung_label},
                               &trial);
  }
  for (const fit::TunedPoint& point : ladder.tuned) gathered.tuned_value[{point.variant, point.label}] = point.value;

  RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> trials, read_trials());
  // The ladder and the trials from one state: a trial that ended between the reads would read as
  // ended without a run.
  if (Fingerprint(trials) != Fingerprint(before)) return Status::Aborted("the sweep's trials changed during the read");
  gathered.fingerprint = Fingerprint(trials);
  std::map<CellKey, size_t> cell_at;
  for (const TrialRecord& trial : trials) {
    if (trial.state != TrialState::kCancelled) gathered.state.planned_flops += trial.cell.flops;
    if (!IsTerminal(trial.state)) ++gathered.state.unfinished;
    const CellKey key{LadderVariantName(trial.cell.assignments, trial.cell.config, keys), trial.cell.rung_label};
    if (spec.tune.set) {
      // A tuned sweep's cell is its runs at the point's value (its search closed).
      auto value = gathered.tuned_value.find(key);
      const auto tuned = trial.cell.assignments.find(spec.tune.key);
      if (value == gathered.tuned_value.end() || tuned == trial.cell.assignments.end() || !tuned->is_number() ||
          spec.tune.NearestIndex(tuned->get<double>()) != spec.tune.NearestIndex(value->second)) {
        continue;
      }
    }
    if (trial.state == TrialState::kCancelled) continue;
    // A cell the spec no longer has (a resubmission removed its variant or rung) is no target.
    if (gathered.templates.count(key) == 0) continue;
    auto [at, inserted] = cell_at.emplace(key, gathered.state.cells.size());
    if (inserted) gathered.state.cells.push_back({key.first, key.second, trial.cell.flops, {}, {}, {}});
    fit::AimCell& cell = gathered.state.cells[at->second];
    cell.seeds.insert(trial.cell.seed);
    if (!IsTerminal(trial.state)) {
      cell.unfinished.insert(trial.cell.seed);
    } else if (with_run.count(trial.id) == 0) {
      cell.ended_without_run.insert(trial.cell.seed);
    }
  }
  return gathered;
}

// The trial of `addition`'s cell at its seed (and, tuned, at its point's value).
StatusOr<ExpandedTrial> TrialFor(const Gathered& gathered, const fit::AimAddition& addition) {
  auto base = gathered.templates.find({addition.variant, addition.label});
  if (base == gathered.templates.end()) {
    return Status::Internal("no cell of the spec is " + addition.variant + " at " + addition.label);
  }
  ExpandedTrial trial = *base->second;
  const TuneSpec& tune = gathered.spec->spec.tune;
  if (tune.set) {
    auto value = gathered.tuned_value.find({addition.variant, addition.label});
    if (value == gathered.tuned_value.end()) {
      return Status::Internal(addition.variant + " at " + addition.label + " has no tuned value");
    }
    RUNG_ASSIGN_OR_RETURN(trial, ExpandTrialWithValue(trial, tune.key, value->second));
  }
  return ExpandTrialWithAssignment(trial, "seed", addition.seed);
}

// "lerope at L1-d16: 0.0042 (met); ...": the rows, for events.
std::string RowsText(const fit::AimDecision& decision) {
  std::string text;
  for (const fit::AimRow& row : decision.rows) {
    text += (text.empty() ? "" : "; ") + row.variant + " at " + row.label + ": " +
            (row.half_width ? Short(*row.half_width) : std::string("no interval")) + (row.met ? " (met)" : "");
  }
  return text;
}

// Closes the sweep's aim as `status` (met, budget, no_fit) with its precision_complete event, in the
// caller's transaction.
Status CloseAim(Tables& tables, int64_t sweep_id, fit::AimStatus status, const std::string& why) {
  RUNG_RETURN_IF_ERROR(tables.sweeps().SetPrecision(sweep_id, fit::AimStatusName(status), tables.now()));
  EventRecord event = domain::NewEvent(tables, event_kind::kPrecisionComplete,
                                       {kCoordinatorActor, std::string(fit::AimStatusName(status)) + ": " + why});
  event.sweep_id = sweep_id;
  return tables.events().Append(event);
}

}  // namespace

StatusOr<PrecisionReport> SweepPrecision::Report(int64_t sweep_id) {
  PrecisionReport report;
  RUNG_ASSIGN_OR_RETURN(report.sweep, coordinator_.sweeps().Get(sweep_id));
  StatusOr<Gathered> read = Gather(store_, coordinator_, report.sweep);
  for (int tries = 0; tries < 4 && !read.ok() && read.status().code() == StatusCode::kAborted; ++tries) {
    read = Gather(store_, coordinator_, report.sweep);
  }
  RUNG_RETURN_IF_ERROR(read.status());
  Gathered& gathered = *read;
  report.spec = gathered.spec->spec.precision;
  report.baseline = gathered.state.baseline;
  report.unfinished = gathered.state.unfinished;
  const fit::PrecisionTarget target = TargetOf(report.spec);
  RUNG_ASSIGN_OR_RETURN(report.now, fit::AimPrecision(gathered.state, target));
  if (report.sweep.precision == kPrecisionAiming && report.sweep.tuning != kTuningSearching) {
    // What a freed slot would take: the same decision with one more trial in flight allowed.
    fit::PrecisionTarget one_more = target;
    one_more.in_flight = gathered.state.unfinished + 1;
    RUNG_ASSIGN_OR_RETURN(fit::AimDecision next, fit::AimPrecision(gathered.state, one_more));
    report.next = next.additions;
  }
  RUNG_ASSIGN_OR_RETURN(std::vector<std::string> closes,
                        store_.Read([&](Tables& tables) {
                          return tables.events().SweepReasons(sweep_id, event_kind::kPrecisionComplete);
                        }));
  if (!closes.empty() && report.sweep.precision != kPrecisionAiming) report.closed_reason = closes.back();
  return report;
}

StatusOr<int64_t> SweepPrecision::Decide(int64_t sweep_id) {
  for (int tries = 0; tries < 5; ++tries) {
    RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, coordinator_.sweeps().Get(sweep_id));
    if (sweep.precision != kPrecisionAiming || !TakesDecisions(sweep.state) || sweep.tuning == kTuningSearching) return 0;
    StatusOr<Gathered> read = Gather(store_, coordinator_, sweep);
    if (!read.ok() && read.status().code() == StatusCode::kAborted) continue;  // read again
    if (!read.ok() && read.status().code() == StatusCode::kFailedPrecondition) {
      // A sweep whose ladder can never be read for the aim (its baseline selects several variants):
      // closed as such, rather than left open with nothing to decide.
      RUNG_RETURN_IF_ERROR(store_.Write([&](Tables& tables) -> Status {
        RUNG_ASSIGN_OR_RETURN(SweepRecord current, tables.sweeps().Get(sweep_id));
        if (current.precision != kPrecisionAiming || current.spec_hash != sweep.spec_hash) return Status::Ok();
        RUNG_RETURN_IF_ERROR(CloseAim(tables, sweep_id, fit::AimStatus::kNoFit, read.status().message()));
        return domain::SettleSweep(tables, sweep_id, kCoordinatorActor);
      }));
      return 0;
    }
    RUNG_RETURN_IF_ERROR(read.status());
    Gathered& gathered = *read;
    const fit::PrecisionTarget target = TargetOf(gathered.spec->spec.precision);
    RUNG_ASSIGN_OR_RETURN(fit::AimDecision decision, fit::AimPrecision(gathered.state, target));
    std::vector<ExpandedTrial> added_trials;
    for (const fit::AimAddition& addition : decision.additions) {
      RUNG_ASSIGN_OR_RETURN(ExpandedTrial trial, TrialFor(gathered, addition));
      added_trials.push_back(std::move(trial));
    }
    if (decision.additions.empty() && !fit::IsClosed(decision.status)) return 0;  // waiting
    CrashPoint("precision.before_decision");
    bool stale = false;
    RUNG_ASSIGN_OR_RETURN(int64_t added, store_.Write([&](Tables& tables) -> StatusOr<int64_t> {
      RUNG_ASSIGN_OR_RETURN(SweepRecord current, tables.sweeps().Get(sweep_id));
      if (current.precision != kPrecisionAiming || !TakesDecisions(current.state) || current.spec_hash != sweep.spec_hash ||
          current.tuning == kTuningSearching) {
        return 0;  // decided, closed or resubmitted meanwhile
      }
      RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> trials, tables.trials().OfSweep(sweep_id));
      if (Fingerprint(trials) != gathered.fingerprint) {
        stale = true;  // a trial ended or was added since the fit: decide again on what is committed
        return 0;
      }
      std::map<std::string, TrialRecord*> existing;  // by identity; null: added by this decision
      int64_t next_index = 0;
      for (TrialRecord& trial : trials) {
        existing[trial.cell.identity] = &trial;
        next_index = std::max(next_index, trial.trial_index + 1);
      }
      int64_t inserted = 0;
      std::string list;
      for (size_t i = 0; i < added_trials.size(); ++i) {
        const fit::AimAddition& addition = decision.additions[i];
        const TrialCell cell = MakeTrialCell(added_trials[i]);
        auto found = existing.find(cell.identity);
        std::string named;
        if (found == existing.end()) {
          RUNG_RETURN_IF_ERROR(
              tables.trials().Insert(sweep_id, next_index, cell, current.policy.priority, tables.now()).status());
          existing[cell.identity] = nullptr;  // taken by this decision
          named = "(trial " + std::to_string(next_index++) + ")";
        } else if (found->second != nullptr && found->second->state == TrialState::kCancelled) {
          // The aim reads a cancelled trial as never run (Gather), so it asks for that seed again: a
          // sweep cancelled with seeds the aim added, then resubmitted. Run that trial (inserting it
          // again would clash with its identity; skipping it would ask for it on every decision).
          TrialRecord& trial = *found->second;
          RUNG_RETURN_IF_ERROR(tables.trials().UpdateCell(trial.id, cell, current.policy.priority, tables.now()));
          RUNG_RETURN_IF_ERROR(tables.trials().ClearFailures(trial.id));
          trial.failures = 0;
          RUNG_RETURN_IF_ERROR(domain::MoveTrial(
              tables, trial, TrialState::kPending,
              {kCoordinatorActor, "requeued: the precision aim asks for seed " + std::to_string(addition.seed) +
                                      " of its cell again"}));
          named = "(trial " + std::to_string(trial.trial_index) + ", requeued)";
        }
        if (!named.empty()) {
          list += (list.empty() ? "" : ", ") + addition.variant + " at " + addition.label + " seed " +
                  std::to_string(addition.seed) + " " + named;
          ++inserted;
        }
        // One event per decision step: the additions of one step share their reason.
        if (!list.empty() && (i + 1 == added_trials.size() || decision.additions[i + 1].why != addition.why)) {
          EventRecord event = domain::NewEvent(tables, event_kind::kPrecisionDecision,
                                               {kCoordinatorActor, addition.why + " -> added " + list});
          event.sweep_id = sweep_id;
          RUNG_RETURN_IF_ERROR(tables.events().Append(event));
          list.clear();
        }
      }
      if (fit::IsClosed(decision.status)) {
        RUNG_RETURN_IF_ERROR(CloseAim(tables, sweep_id, decision.status,
                                      decision.why + " (" + RowsText(decision) + "; planned " +
                                          Short(decision.planned_flops) + " of " + Short(target.budget_flops) +
                                          " FLOPs)"));
      }
      RUNG_RETURN_IF_ERROR(domain::SettleSweep(tables, sweep_id, kCoordinatorActor));
      return inserted;
    }));
    CrashPoint("precision.after_decision");
    if (stale) continue;
    ChangeSignals::Announce(signals_, added > 0);
    return added;
  }
  return 0;  // the sweep kept changing under the fit: the next ending decides
}

Status SweepPrecision::DecideAll() {
  RUNG_ASSIGN_OR_RETURN(std::vector<SweepRecord> open,
                        store_.Read([&](Tables& tables) { return tables.sweeps().Searching(); }));
  for (const SweepRecord& sweep : open) {
    if (sweep.precision != kPrecisionAiming) continue;
    // One sweep's error (a spec this build cannot expand; a store error) leaves it waiting for the
    // next ending or the reaper, and neither the others nor the coordinator's start.
    Decide(sweep.id).status().IgnoreError();
  }
  return Status::Ok();
}

}  // namespace rung
