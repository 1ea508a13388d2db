// coordinator/cli/trial_time_model.cc
#include "coordinator/cli/trial_time_model.h"

#include <algorithm>
#include <iostream>

#include "coordinator/cli/command_support.h"
#include "core/common/trainer_blas_kernel.h"
#include "core/config/model_arithmetic.h"
#include "sweeps/spec/trial_work.h"

namespace rung::cli {
namespace {

// Drops the calibration unless `trainer` runs the BLAS kernel it was measured on, saying why in `warnings`.
void KeepCalibrationOnItsKernel(const std::string& trainer, TimeModel* time_model, std::vector<std::string>* warnings) {
  if (!time_model->calibration) return;
  // Kernels differ several-fold in speed: a calibration counts only on the kernel it was measured on.
  StatusOr<TrainerBlasKernel> kernel = AskTrainerForBlasKernel(trainer);
  const std::string measured_on =
      time_model->calibration->blas_kernel.empty() ? "an unrecorded kernel" : time_model->calibration->blas_kernel;
  if (!kernel.ok()) {
    warnings->push_back("the calibration is not used: " + kernel.status().message());
    time_model->calibration.reset();
  } else if (kernel->Short() != time_model->calibration->blas_kernel) {
    warnings->push_back("the calibration of " + time_model->calibration->measured_at + " was measured on BLAS kernel " +
                        measured_on + ", and rung-train now runs " + kernel->Short() +
                        ": not used (rung validate --calibrate measures again)");
    time_model->calibration.reset();
  }
}

}  // namespace

double TimeModel::Seconds(const ExpandedTrial& trial) const {
  const double work = CountTrialWork(trial.config).total();
  if (!calibration) return work / flops_per_sec;
  return calibration->Seconds(TrainingFlopsPerToken(trial.config), work);
}

int TrainerThreads(const ExpandedSweep& sweep) {
  return sweep.trials.empty() ? 1 : static_cast<int>(std::max<int64_t>(1, sweep.trials.front().config.resources.cpus));
}

TimeModel ChooseTimeModel(double flops_per_sec, const std::string& trainer, int threads, const std::string& command) {
  TimeModel time_model;
  std::vector<std::string> cache_warnings;
  if (flops_per_sec > 0) {
    time_model.flops_per_sec = flops_per_sec;
  } else {
    time_model.calibration = ReadCalibration(CalibrationCachePath(), CalibrationKey(threads), &cache_warnings);
    KeepCalibrationOnItsKernel(trainer, &time_model, &cache_warnings);
  }
  for (const std::string& warning : cache_warnings) std::cerr << command << ": warning: " << warning << "\n";
  return time_model;
}

std::string EstimateBasis(const TimeModel& time_model, double flops_per_sec, int threads, const std::string& spec_path) {
  if (time_model.calibration) {
    return "calibrated on this machine at " + std::to_string(threads) + " thread(s) per trainer on BLAS kernel " +
           time_model.calibration->blas_kernel + ", " + time_model.calibration->measured_at +
           " (rung validate --calibrate measures again)";
  }
  if (flops_per_sec > 0) {
    return "at " + Scientific(flops_per_sec, 2) + " FLOP/s each (--flops-per-sec), no fixed cost per trial";
  }
  return "uncalibrated: " + Scientific(kUncalibratedFlopsPerSec, 2) +
         " FLOP/s (rung-train at " + std::to_string(kUncalibratedThreads) +
         " threads elsewhere, bench/README.md), no fixed cost per trial; `rung validate " +
         spec_path + " --calibrate` times this machine";
}

double Makespan(std::vector<double> seconds, int workers) {
  std::sort(seconds.rbegin(), seconds.rend());
  std::vector<double> busy(static_cast<size_t>(std::max(1, workers)), 0.0);
  for (double each : seconds) *std::min_element(busy.begin(), busy.end()) += each;
  return *std::max_element(busy.begin(), busy.end());
}

}  // namespace rung::cli
