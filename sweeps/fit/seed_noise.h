// sweeps/fit/seed_noise.h
//
// The seed noise of a finished ladder, as the synthetic model (synthetic_ladder.h) states it: sigma,
// the sd of one run's loss about its (variant, label) cell's seed mean, pooled over cells; and rho, the
// share of that variance a variant's run has in common with the baseline's run of the same seed and
// label (the same data order and initialisation). `rung plan --noise-from SWEEP` measures them on an
// earlier sweep to simulate the next one.
//
//   sigma^2 = sum over cells of sum_s (L_s - mean L)^2 / sum over cells of (n - 1)   (cells with n >= 2)
// over every cell, and over each ladder label's cells apart (the noise of small and large rungs
// differs, and so does their pairing);
//   gap sd  per (variant, label) cell, the sd of L_v,s - L_b,s over the seeds both ran (n - 1 df):
//           how far a variant strays from the baseline's run of its seed, which pairing leaves
//   rho     = sum r_v r_b / sqrt(sum r_v^2 sum r_b^2), over every (variant, label, seed) a variant and
//             the baseline both ran, r the runs' residuals about their cells' seed means. Under the
//             model E[r_v r_b] = (1 - 1/n) rho sigma^2 and E[r^2] = (1 - 1/n) sigma^2: the ratio
//             estimates rho. The model's rho is in [0, 1]; a negative estimate is reported as
//             measured and used as 0.
//
// Thread safety: functions of their arguments.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/fit/ladder_results.h"
#include "sweeps/fit/power_law.h"

namespace rung::fit {

struct CellNoise {
  std::string variant;
  std::string label;
  int seeds = 0;
  double sd = 0;  // sample sd of the cell's runs, nats
  // Against the baseline at the same label (not for the baseline's own cells): the sample sd of the
  // paired gap L_v,s - L_b,s over the seeds both ran, and how many they are (0: no gap sd).
  double gap_sd = 0;
  int gap_pairs = 0;
};

// The pooled sigma and the pairing rho of a set of cells.
struct PooledNoise {
  double sigma = 0;  // pooled, nats
  int cells = 0;     // cells with 2+ seeds behind sigma
  int df = 0;        // sum of (n - 1) over them
  double rho = 0;    // as measured (may be negative; NaN without pairs)
  int pairs = 0;     // residual pairs behind rho
  int paired_cells = 0;  // variant cells those pairs come from

  // Degrees of freedom of the runs' own noise, (1 - rho) sigma^2, as the pairs measure it: pairs less
  // the paired cells' means (at least 1 when there are pairs).
  int OwnDf() const { return pairs > 0 ? std::max(1, pairs - paired_cells) : 0; }

  // rho as the model takes it: clamped to [0, 1], 0 when undefined.
  double ModelRho() const;
};

struct SeedNoise : PooledNoise {  // over every cell
  std::map<std::string, PooledNoise> per_label;  // over each ladder label's cells (rungs differ)
  std::vector<CellNoise> per_cell;               // every cell with 2+ seeds, in the ladder's order
};

// INVALID_ARGUMENT (naming the ladder) when no cell has two seeds or the ladder has no seeds;
// `baseline` must be a variant of the ladder.
StatusOr<SeedNoise> MeasureSeedNoise(const LadderResults& ladder, const std::string& baseline);

// The baseline's loss curve of a finished ladder, to simulate another ladder with: a power law
// L = E + A C^-alpha fitted to its seed-mean points, E free with 3+ points; with 2 points, E fixed at 0
// (a pure power law through both). `how` says which, for the plan's header.
struct LossLaw {
  PowerLaw law;
  std::string how;
};
// FAILED_PRECONDITION with fewer than 2 baseline points, or the fit's error.
StatusOr<LossLaw> FitBaselineLossLaw(const LadderResults& ladder, const std::string& baseline);

}  // namespace rung::fit
