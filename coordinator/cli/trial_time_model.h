// coordinator/cli/trial_time_model.h
//
// How long a spec's trials take on this machine, for the estimates of `rung validate` and
// `rung plan`: a calibration measured here (calibration_cache.h) while rung-train still runs the BLAS
// kernel it was measured on, else one FLOP rate for every trial (--flops-per-sec, or the uncalibrated
// rate, kUncalibratedFlopsPerSec of sweeps/spec/trial_work.h) and no fixed cost. And the time a set
// of trials takes on several workers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "coordinator/cli/calibration_cache.h"
#include "sweeps/spec/expansion.h"
#include "sweeps/spec/trial_work.h"

namespace rung::cli {

struct TimeModel {
  std::optional<Calibration> calibration;
  double flops_per_sec = kUncalibratedFlopsPerSec;

  // Seconds of one trial: its full FLOPs (sweeps/spec/trial_work.h) at the calibration's rate for its
  // shape plus the fixed cost, else at flops_per_sec.
  double Seconds(const ExpandedTrial& trial) const;
};

// The threads of each trainer (the first trial's resources.cpus, at least 1): what a calibration is keyed by.
int TrainerThreads(const ExpandedSweep& sweep);

// The model for an estimate: `flops_per_sec` when > 0, else the cached calibration for `threads` when
// `trainer` still runs its BLAS kernel, else the uncalibrated rate. Warnings (an unusable cache, a
// kernel that changed) go to stderr prefixed by `command` ("rung validate").
TimeModel ChooseTimeModel(double flops_per_sec, const std::string& trainer, int threads, const std::string& command);

// How the model's times were reached, for the line under an estimate; `spec_path` names the spec in
// the hint to calibrate.
std::string EstimateBasis(const TimeModel& time_model, double flops_per_sec, int threads, const std::string& spec_path);

// The time `workers` workers take for trials of these durations: longest first, each to the worker
// that is free first (the coordinator leases in index order, so this is the ideal, not a bound).
double Makespan(std::vector<double> seconds, int workers);

}  // namespace rung::cli
