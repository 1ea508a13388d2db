// coordinator/cli/calibration_cache.h
//
// The training rate of this machine, measured by `rung validate SPEC --calibrate` (short real
// rung-train runs) and cached so that later estimates use it. The cache is one JSON file,
// $XDG_CACHE_HOME/rung/calibration.json (else ~/.cache/rung/calibration.json):
//
//   {"version": 1, "entries": [{"key": "host=h;cores=16;threads=1;build=<commit>",
//                               "measured_at": "2024-05-01 10:00:00Z", "blas_kernel": "Cooperlake (rung)",
//                               "points": [{"shape": "L2-d48 T128 B32", "flops_per_token": 1.7e5,
//                                           "flops_per_sec": 2.1e9, "seconds_per_trial": 1.4}]}]}
//
// A key names what the rate depends on: the host, its hardware threads, the trainer's threads and
// rung's build (a rebuild may change the rate). The entry also names the BLAS kernel the trainer ran
// on (core/common/trainer_blas_kernel.h): rung validate uses a calibration only while the trainer
// still runs that kernel, since kernels differ several-fold in speed. A point is one model shape: its full FLOP rate
// (sweeps/spec/trial_work.h over wall seconds of steady training) and the fixed seconds a trial costs
// besides (start, data, warm-up, checkpoint, diagnostics). Estimates for other shapes interpolate
// between the points in ln(FLOPs per token) and hold the nearest one outside them.
//
// Contract: the cache is a convenience, never trusted. A file that cannot be read, is over 1 MiB, is
// not JSON, or has fields of the wrong type or out of range is ignored (or the bad points only), with
// a warning saying what and where; reading never fails and never crashes. Writing merges this key's
// entry into what is readable and replaces the file atomically (a temporary file renamed).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung::cli {

struct CalibrationPoint {
  std::string shape;               // e.g. "L2-d48 T128 B32"
  double flops_per_token = 0;      // training FLOPs per token (trial_work.h TrainingFlopsPerToken)
  double flops_per_sec = 0;        // full FLOPs per wall second
  double seconds_per_trial = 0;    // fixed cost of a trial
};

struct Calibration {
  std::string key;
  std::string measured_at;
  std::string blas_kernel;               // the trainer's kernel when measured; "" in an older rung's cache
  std::vector<CalibrationPoint> points;  // by flops_per_token

  // Seconds of a trial of `flops` full FLOPs at `flops_per_token`. REQUIRES: points not empty.
  double Seconds(double flops_per_token, double flops) const;
};

// $XDG_CACHE_HOME/rung/calibration.json, else $HOME/.cache/rung/calibration.json ("" without either).
std::string CalibrationCachePath();

// "host=<name>;cores=<hardware threads>;threads=<threads>;build=<commit>".
std::string CalibrationKey(int threads);

// The entry for `key` in the cache at `path`, or nullopt (none, or the file unusable: a warning in
// `warnings` says why; a missing file is no warning).
std::optional<Calibration> ReadCalibration(const std::string& path, const std::string& key,
                                           std::vector<std::string>* warnings);

// Stores `calibration` (its points merged with the key's cached ones measured on the same BLAS kernel,
// a shape measured again replaced).
// INVALID_ARGUMENT when the folder or file cannot be written.
Status WriteCalibration(const std::string& path, const Calibration& calibration, std::vector<std::string>* warnings);

}  // namespace rung::cli
