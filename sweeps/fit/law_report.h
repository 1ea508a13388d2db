// sweeps/fit/law_report.h
//
// What `rung laws` reports (docs/science.md section 6.7): per variant the fitted
// L(N, D) = E + A / N^alpha + B / D^beta (chinchilla_law.h) with intervals on every parameter, the
// compute-optimal allocation it implies, each variant's compute multiplier against the baseline
// predicted at computes nobody ran, the IsoFLOP profiles (isoflop_profile.h), and a rollout: the fit
// without the largest sizes, predicting them.
//
// Intervals, each saying what it rests on:
//   parameters      percentile bootstrap over the independent units: the seeds where the runs have
//                   several (every run of a drawn seed enters, all variants together), else the runs
//                   (resampled within each variant). None with fewer than kMinBootstrapUnits units
//                   (compute_multipliers.h: a percentile bootstrap's distinct resamples are too few
//                   below it), and the report says so. Each replicate refits from the full fit's
//                   minimum (L-BFGS, no grid); replicates that do not converge are left out and counted.
//   predictions     residual bootstrap (as OLMo-core's scaling-law fits): per variant the full fit's
//                   ln L residuals, centred and scaled by sqrt(n / (n - p)) (n runs, p the variant's
//                   parameters) so that their spread is not that of residuals of a fit to them, are
//                   resampled onto the fitted values; each replicate is refitted, and a prediction is
//                   the replicate's ln L at the point plus one more resampled residual: the interval
//                   is where a new run's loss at that point would fall. Needs kMinBootstrapUnits runs
//                   per variant.
//   multipliers     the same replicates: CM(C) = C_base / C where the baseline's law reaches, at
//                   C_base, the loss the variant's law (with the replicate's residual) gives at C.
//
// Predicted multipliers are read two ways (PredictedMultiplier::allocation):
//   "rule"     each method at D = r N (r: LawOptions::tokens_per_param, default 20, Hoffmann et al.'s
//              compute-optimal ratio) with C = 6 N D;
//   "optimal"  each method at its own compute-optimal N and D for C.
//
// Example:
//   LawOptions options;
//   options.baseline = "rope";
//   StatusOr<LawReport> report = FitLaws(runs, options);
//
// Errors: INVALID_ARGUMENT (bad runs or options: an unknown baseline, a non-positive compute in
// `at`); FAILED_PRECONDITION (too few points, a form the runs cannot identify, a fit that does not
// converge: the message says which and how far it got). Thread safety: a function of its arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/fit/chinchilla_law.h"
#include "sweeps/fit/compute_multipliers.h"
#include "sweeps/fit/isoflop_profile.h"
#include "sweeps/fit/law_runs.h"
#include "sweeps/fit/predicted_multiplier.h"

namespace rung::fit {

struct LawOptions {
  LawFitOptions fit;
  int bootstrap = 200;  // replicates of each bootstrap; 0: no intervals
  uint64_t seed = 0;    // of the bootstraps' generators: reproducible
  double level = 0.95;  // of every interval
  std::string baseline;  // the multipliers' baseline; "": none are predicted
  // Computes (FLOPs) of the predicted multipliers; empty: every half decade from the smallest run's
  // compute to 100 times the largest's.
  std::vector<double> at;
  double tokens_per_param = 20;  // the "rule" allocation D = r N
  int rollout = 1;               // largest sizes held out and predicted; 0: no rollout
  bool isoflop = true;           // the IsoFLOP profiles (approach 2)
  // Asked before each replicate; a non-OK answer stops the fit, which returns it. Unset: no checks.
  std::function<Status()> keep_going;
};

struct LawParameterIntervals {
  std::optional<Range> e, a, b, alpha, beta;
  std::optional<Range> n_exponent, d_exponent;  // of the compute-optimal allocation
};

struct VariantLaw {
  std::string variant;
  ChinchillaLaw law;
  LawParameterIntervals intervals;
  double rmse = 0;  // the loss's unit
  int points = 0;   // runs fitted
  // The compute-optimal allocation N_opt ~ C^n_exponent, D_opt ~ C^d_exponent (beta / (alpha + beta) and
  // alpha / (alpha + beta)); empty unless alpha, beta > 0.
  std::optional<double> n_exponent, d_exponent;
};

struct RolloutPoint {
  std::string variant;
  std::string origin;
  double n = 0, d = 0;
  double loss = 0;       // measured
  double predicted = 0;  // by the fit without the held-out sizes
  std::optional<Range> interval;
  bool inside = false;   // the measured loss in the interval
};

struct Rollout {
  std::vector<double> held_out_n;  // the sizes held out
  std::vector<RolloutPoint> points;
  double mean_abs_error = 0;       // |predicted - loss|, the loss's unit
  double mean_relative_error = 0;  // |predicted - loss| / loss
  int inside = 0;                  // points whose loss fell in their interval
  IntervalBasis basis;
  std::string why;  // why there is no rollout (the rest too few to fit)
};

// A fitted run: its loss and the law's.
struct LawFittedRun {
  std::string variant;
  std::string origin;
  double n = 0, d = 0;
  double loss = 0;
  double fitted = 0;
};

struct LawReport {
  std::string source;
  std::string metric;
  std::string unit;  // of the loss: "nats", "bits per byte"
  LawFitOptions fit_options;
  int grid_points = 0;
  int starts = 0;
  int converged_starts = 0;
  double objective = 0;
  double level = 0.95;
  uint64_t seed = 0;
  std::vector<VariantLaw> variants;
  std::vector<LawFittedRun> runs;  // every run fitted, in the source's order
  IntervalBasis parameter_basis;
  IntervalBasis prediction_basis;
  std::string baseline;
  double tokens_per_param = 20;
  std::vector<PredictedMultiplier> multipliers;
  std::optional<Rollout> rollout;
  std::optional<IsoflopReport> isoflop;
  std::string isoflop_why;  // why there are no IsoFLOP profiles
  std::vector<std::string> notes;
};

// A variant's law predictions with residual-bootstrap prediction intervals: what the figures and the
// rollout use. Built once per fit (the replicates), then asked at any point.
class LawPredictor {
 public:
  // REQUIRES: `fit` fitted `runs`. No intervals (Interval() empty) when `replicates` is 0 or a
  // variant has fewer than kMinBootstrapUnits runs.
  static StatusOr<LawPredictor> Build(const std::vector<LawRun>& runs, const LawFit& fit, const LawOptions& options);

  const LawFit& fit() const { return fit_; }
  const IntervalBasis& basis() const { return basis_; }
  double Predict(size_t variant, double n, double d) const { return fit_.laws[variant].Predict(n, d); }
  // Where a new run's loss at (n, d) would fall.
  std::optional<Range> Interval(size_t variant, double n, double d, double level) const;
  // The predicted multiplier of `variant` against `baseline` at `compute`.
  PredictedMultiplier Multiplier(size_t variant, size_t baseline, double compute, const std::string& allocation,
                                 double tokens_per_param, double level) const;

 private:
  LawFit fit_;
  IntervalBasis basis_;
  std::vector<std::vector<ChinchillaLaw>> replicates_;    // per replicate, per variant
  std::vector<std::vector<double>> replicate_residuals_;  // per replicate, per variant: a fresh ln L draw
};

// The multiplier of `variant`'s law against `baseline`'s at `compute` (no interval), with the loss in
// ln space shifted by `log_shift` (a replicate's residual): empty when the baseline's law never
// reaches the variant's loss there.
std::optional<double> LawMultiplier(const ChinchillaLaw& variant, const ChinchillaLaw& baseline, double compute,
                                    const std::string& allocation, double tokens_per_param, double log_shift = 0.0);

StatusOr<LawReport> FitLaws(const LawRuns& runs, const LawOptions& options);

// The most residual-bootstrap replicates behind `rung fit`'s predicted multipliers.
inline constexpr int kPredictedReplicates = 200;

// `rung fit`'s predicted rows (MultiplierReport::predicted): where every run of `runs` has N and D,
// L(N, D) per variant fitted to them and read at each of the baseline's computes in `at` (labelled as
// there) and at 10 and 100 times the largest, both allocations, with residual-bootstrap intervals
// (min(options.bootstrap, kPredictedReplicates) replicates). What the laws cannot give (too few points,
// a form the runs cannot identify, a fit that did not converge) goes to report->predicted_why; runs
// without N and D give nothing; only options.keep_going's refusal is returned.
Status AddPredictedMultipliers(const LadderResults& runs, const LadderResults& at, const MultiplierOptions& options,
                               MultiplierReport* report);

}  // namespace rung::fit
