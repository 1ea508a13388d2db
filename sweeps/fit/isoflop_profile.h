// sweeps/fit/isoflop_profile.h
//
// Chinchilla's approach 2 (Hoffmann et al. 2022, section 3.2; docs/science.md section 6.7): the
// IsoFLOP profiles. Runs are grouped by compute budget (C = 6 N D within IsoflopOptions::tolerance of
// each other: rung's IsoFLOP ladders put every run within 1% of its budget); per variant and budget
// with at least 3 distinct sizes, the loss against x = ln N is fitted by a parabola
// L = c0 + c1 x + c2 x^2 under a Huber loss (delta IsoflopOptions::huber_delta, in the loss's unit);
// its minimum x* = -c1 / (2 c2) gives N*(C) = e^x* and D*(C) = C / (6 N*). A profile that is not
// convex (c2 <= 0) or whose minimum lies outside the sizes it ran has no N*, and says why. Then, per
// variant over its budgets with an N*, N* = G C^a and D* = G' C^b by least squares in ln-ln (b = 1 - a
// and G' = 1 / (6 G), since D* = C / (6 N*)).
//
// Intervals: percentile bootstrap over the units (the seeds where the runs have several, else the
// runs, resampled within each budget), with law_report.h's rule: none below kMinBootstrapUnits
// units. Each replicate refits every parabola and the power law; replicates that lose a minimum some
// budget had are left out and counted, and with fewer than 80% of the replicates left there are no
// intervals (the rest would be a selection), said in intervals_why.
//
// Example:
//   StatusOr<IsoflopReport> profiles = FitIsoflopProfiles(runs, IsoflopOptions());
//
// Errors: FAILED_PRECONDITION when no variant has a budget with 3 distinct sizes. Thread safety: a
// function of its arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/fit/law_runs.h"

namespace rung::fit {

struct IsoflopOptions {
  double tolerance = 0.025;  // runs within this relative spread of compute share a budget
  // The parabolas' Huber delta, in the loss's unit: about the noise between runs (seed-to-seed 0.005 to
  // 0.01 nats on rung's CPU ladders); far below it, a parabola through 4 sizes is an L1 fit of 3 of them.
  double huber_delta = 1e-2;
  int bootstrap = 200;
  uint64_t seed = 0;
  double level = 0.95;
  std::function<Status()> keep_going;
};

struct IsoflopBudget {
  double compute = 0;  // the geometric mean of its runs' 6 N D
  int runs = 0;
  int sizes = 0;                   // distinct N
  std::vector<double> parabola;    // c0, c1, c2 (loss against ln N); empty when not fitted
  std::optional<double> n_opt, d_opt, loss_opt;
  std::optional<double> n_opt_low, n_opt_high;  // bootstrap interval of N*
  std::string why;                 // why there is no minimum
};

struct IsoflopVariant {
  std::string variant;
  std::vector<IsoflopBudget> budgets;  // by compute
  // N* = g * C^a and D* = g_d * C^b; empty with fewer than 2 budgets with a minimum.
  std::optional<double> g, a, g_d, b;
  std::optional<double> a_low, a_high;  // bootstrap interval of a (b's is 1 - a's)
  std::string why;
};

struct IsoflopReport {
  double tolerance = 0.025;
  std::vector<IsoflopVariant> variants;
  std::string construction;  // of the intervals, "" when none
  std::string unit;
  int units = 0;
  int replicates = 0;
  int used = 0;
  std::string intervals_why;  // why there are none
};

StatusOr<IsoflopReport> FitIsoflopProfiles(const LawRuns& runs, const IsoflopOptions& options);

// The measured compute-optimal frontier of an IsoFLOP ladder, as a ladder the multiplier estimators
// read (compute_multipliers.h): per variant and budget (runs within `tolerance` of each other's
// compute), the runs of the size with the lowest seed-mean loss, labelled "C<budget>" (the budget's
// geometric-mean compute as FormatCompute writes it: "C3e10") at that size's compute. The lowest of a few noisy
// sizes is biased low by the noise; the IsoFLOP parabolas' minima are the smoothed reading.
LadderResults IsoflopFrontier(const LadderResults& ladder, double tolerance = 0.025);

}  // namespace rung::fit
