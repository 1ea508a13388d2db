// sweeps/fit/precision_plan.h
//
// Power analysis of a ladder before it runs (`rung plan SPEC`): the intervals its compute multipliers
// will have, predicted by simulation through the same estimator and interval code the fit runs
// (ComputeMultipliers), on ladders drawn from the synthetic model (synthetic_ladder.h) with the spec's
// variants and ladder points, a baseline loss curve, the seed noise (sigma, rho) and an assumed true
// multiplier for every variant but the baseline.
//
// Per (variant, ladder point) and seed count n, over `studies` simulated ladders:
//   width   the interval's high - low (multiplier units: 0.04 is about +-2% at CM near 1): median and
//           the 10th and 90th percentiles over the studies with an interval
// Noise measured on an earlier ladder is an estimate: each study draws its labels' noise around it
// (LabelNoise's degrees of freedom), so that the widths' spread includes what the estimate leaves open.
//   power   the share of all studies whose interval excludes 1 on the side of the true multiplier
//           (low > 1 for M > 1): how often the ladder tells M from 1 at the interval's level. With M = 1
//           it is the rate of false claims (about 1 - level).
// The seeds needed: the smallest n in [2, max_seeds] whose power reaches the target (and, when asked,
// whose median width is at most the target width); none when no n up to max_seeds does.
//
// Studies are seeded from a text naming the setting (StudySeed): a plan is reproducible, and does
// not depend on the number of threads.
//
// Thread safety: functions of their arguments; each call runs its own threads.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/fit/compute_multipliers.h"
#include "sweeps/fit/synthetic_ladder.h"

namespace rung::fit {

struct PlanSetting {
  PowerLaw law;                               // the baseline's noise-free loss curve
  double sigma = 0;                           // sd of one run's loss, nats
  double rho = 0;                             // pairing, in [0, 1]
  std::map<std::string, LabelNoise> label_noise;  // per ladder label, in place of sigma and rho
  // Per (variant, label): the variant follows the baseline's run with this gap noise (synthetic_ladder.h).
  std::map<std::pair<std::string, std::string>, GapNoise> gap_noise;
  Estimator estimator = Estimator::kHermite;  // whose rows are read (not power_law_fixed_e)
  double level = 0.95;                        // of the intervals
  int studies = 200;                          // simulated ladders per seed count
  int threads = 1;
};

struct PlanCell {
  std::string variant;
  std::string label;
  double compute = 0;     // the variant's, FLOPs
  double multiplier = 1;  // assumed true
  int seeds = 0;
  int studies = 0;
  int with_interval = 0;  // studies whose row had an interval
  std::optional<double> width_median, width_p10, width_p90;
  double power = 0;
};

// The variants of a spec (the baseline among them, multiplier 1) simulated at `seeds` seeds: one
// cell per variant but the baseline and ladder point, in the variants' order.
// INVALID_ARGUMENT for an estimator the plan cannot run, seeds < 2, studies < 1, sigma <= 0, rho
// outside [0, 1], no baseline among the variants; a study's ComputeMultipliers error otherwise.
StatusOr<std::vector<PlanCell>> SimulatePlan(const std::vector<SyntheticVariant>& variants,
                                             const std::string& baseline, int seeds, const PlanSetting& setting);

struct SeedsNeeded {
  std::string variant;
  std::string label;
  std::optional<int> seeds;  // the fewest that meet the target; empty: none up to max_seeds
  PlanCell at;               // the cell at those seeds (or at max_seeds)
};

// The fewest seeds per cell for `power` (and, when set, a median width <= target_width), scanning
// n = 2, 3, ..., max_seeds and stopping when every cell is met.
StatusOr<std::vector<SeedsNeeded>> FindSeedsNeeded(const std::vector<SyntheticVariant>& variants,
                                                   const std::string& baseline, const PlanSetting& setting,
                                                   double power, std::optional<double> target_width, int max_seeds);

}  // namespace rung::fit
