// coordinator/domain/allocation_fit.cc
#include "coordinator/domain/allocation_fit.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/trial_config.h"
#include "sweeps/spec/trial_work.h"

namespace rung::domain {
namespace {

// The metric whose points say how far a trial got and how fast it stepped.
constexpr char kPaceMetric[] = "train_loss";

// The trial's config as a TrialConfig, or nullopt when the coordinator cannot read it as one.
StatusOr<std::optional<TrialConfig>> ReadableConfig(Tables& tables, const TrialRecord& trial) {
  nlohmann::json json = trial.cell.config;
  if (json.empty()) {  // a header: the config stays in the store until asked for
    RUNG_ASSIGN_OR_RETURN(std::string text, tables.trials().ConfigText(trial.id));
    json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  }
  StatusOr<TrialConfig> config = TrialConfigFromJson(json);
  if (!config.ok()) return std::optional<TrialConfig>();
  return std::optional<TrialConfig>(std::move(config).value());
}

}  // namespace

std::optional<AllocationFit::MeasuredPace> AllocationFit::Measured(const std::optional<StepPace>& pace) {
  if (!pace || pace->steps <= 0 || !std::isfinite(pace->seconds) || pace->seconds <= 0) return std::nullopt;
  MeasuredPace measured;
  measured.seconds_per_step = pace->seconds / static_cast<double>(pace->steps);
  if (pace->start_seconds && std::isfinite(*pace->start_seconds) && *pace->start_seconds >= 0) {
    measured.start_seconds = pace->start_seconds;
  }
  return measured;
}

StatusOr<std::optional<AllocationFit::MeasuredPace>> AllocationFit::CellPace(const TrialRecord& trial) {
  if (trial.cell.tokens <= 0 || trial.cell.steps <= 0) return std::optional<MeasuredPace>();
  const int64_t divisor = std::gcd(trial.cell.tokens, trial.cell.steps);
  const CellKey key{trial.sweep_id,        trial.cell.rung_label, trial.cell.tokens / divisor,
                    trial.cell.steps / divisor, trial.cell.cpus,   trial.cell.gpus,
                    trial.cell.world_size};
  auto known = cell_paces_.find(key);
  if (known != cell_paces_.end()) return known->second;
  RUNG_ASSIGN_OR_RETURN(std::optional<StepPace> pace, tables_.paces().NewestOfCell(trial, kPaceMetric));
  std::optional<MeasuredPace> measured = Measured(pace);
  cell_paces_.emplace(key, measured);
  return measured;
}

StatusOr<FitEstimate> AllocationFit::Estimate(const TrialRecord& trial) {
  FitEstimate estimate;
  RUNG_ASSIGN_OR_RETURN(std::optional<TrialConfig> config, ReadableConfig(tables_, trial));
  if (!config) return estimate;
  const int64_t steps = trial.cell.steps > 0 ? trial.cell.steps : config->train.steps;
  if (steps <= 0) return estimate;

  // Where it resumes: the step its last preempted attempt checkpointed at, or its last periodic
  // checkpoint before the newest stored step (an attempt that went stale or failed checkpointed no
  // later), whichever is later.
  const int64_t every = config->train.checkpoint_every;
  RUNG_ASSIGN_OR_RETURN(std::optional<int64_t> newest, tables_.paces().NewestStep(trial.id, kPaceMetric));
  RUNG_ASSIGN_OR_RETURN(std::optional<int64_t> preempted, tables_.paces().NewestPreemptedStep(trial.id, kPaceMetric));
  const int64_t periodic = every > 0 ? newest.value_or(0) / every * every : 0;
  estimate.progress = std::clamp<int64_t>(std::max(periodic, preempted.value_or(0)), 0, steps);
  estimate.next_checkpoint = every > 0 ? std::min(steps, (estimate.progress / every + 1) * every) : steps;

  RUNG_ASSIGN_OR_RETURN(std::optional<StepPace> own, tables_.paces().NewestOfTrial(trial.id, kPaceMetric));
  std::optional<MeasuredPace> pace = Measured(own);
  if (pace) {
    estimate.source = PaceSource::kTrial;
  } else {
    RUNG_ASSIGN_OR_RETURN(pace, CellPace(trial));
    if (pace) {
      estimate.source = PaceSource::kCell;
    } else if (trial.cell.gpus == 0) {
      const double threads = static_cast<double>(std::max<int64_t>(1, trial.cell.cpus));
      const double flops_per_sec = kUncalibratedFlopsPerSec * threads / kUncalibratedThreads;
      const double tokens_per_step = static_cast<double>(trial.cell.tokens) / static_cast<double>(steps);
      pace = MeasuredPace{TrainingFlopsPerToken(*config) * tokens_per_step / flops_per_sec, std::nullopt};
      estimate.source = PaceSource::kUncalibrated;
    }
  }
  if (!pace) return estimate;  // (d): a GPU trial with nothing measured
  estimate.seconds_per_step = pace->seconds_per_step;
  estimate.start_seconds = pace->start_seconds.value_or(std::chrono::duration<double>(kStartAllowance).count());
  estimate.seconds = estimate.start_seconds +
                     static_cast<double>(estimate.next_checkpoint - estimate.progress) * pace->seconds_per_step;
  return estimate;
}

StatusOr<Fit> AllocationFit::Fits(const TrialRecord& trial) {
  const Timestamp now = tables_.now();
  if (now >= stops_at_) return Fit::kNo;
  RUNG_ASSIGN_OR_RETURN(FitEstimate estimate, Estimate(trial));
  if (!estimate.seconds) return Fit::kItsCheckpoint;
  const double left = std::chrono::duration<double>(stops_at_ - now).count();
  if (*estimate.seconds <= left) return Fit::kItsCheckpoint;
  if (left - estimate.start_seconds >= kTrainingPerStart * estimate.start_seconds) return Fit::kTheStopsCheckpoint;
  return Fit::kNo;
}

StatusOr<std::optional<TrialRecord>> NextLeasableBefore(Tables& tables, int64_t free_cpus, int64_t free_gpus,
                                                        const std::string& worker_id, Timestamp stops_at) {
  if (tables.now() >= stops_at) return std::optional<TrialRecord>();
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> candidates,
                        tables.trials().Leasable(free_cpus, free_gpus, worker_id, kCandidatesPerLook));
  AllocationFit fit(tables, stops_at);
  std::optional<TrialRecord> by_the_stop;  // the first that only the stop's checkpoint saves
  for (TrialRecord& trial : candidates) {
    RUNG_ASSIGN_OR_RETURN(Fit fits, fit.Fits(trial));
    if (fits == Fit::kItsCheckpoint) return std::optional<TrialRecord>(std::move(trial));
    if (fits == Fit::kTheStopsCheckpoint && !by_the_stop) by_the_stop = std::move(trial);
  }
  return by_the_stop;
}

}  // namespace rung::domain
