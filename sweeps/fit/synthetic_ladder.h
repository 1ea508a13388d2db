// sweeps/fit/synthetic_ladder.h
//
// Ladders whose compute multipliers are known, drawn with seed noise: what rung-bench-precision
// measures the estimators and intervals on, and what `rung plan` simulates a spec with before it runs.
// Both draw from this one model, so that the plan predicts what the bench has measured.
//
// The model (docs/science.md section 6.5):
//   baseline   L_b(C) = the PowerLaw `baseline_law` (E + A C^-alpha), noise-free
//   variant v  L_v(C) = L_b(M_v C): at every ladder point the true multiplier is M_v (1 for the baseline)
//   noise      per seed s and ladder label k, u_{s,k} ~ N(0, rho sigma^2), shared by every variant (the
//              same seed's data order and initialisation), and e_{v,s,k} ~ N(0, (1 - rho) sigma^2) for
//              each variant on its own. One run (v, k, s) has loss L_v(C_{v,k}) + u_{s,k} + e_{v,s,k}.
//              sigma and rho may be given per label (label_noise): rungs differ in both. A variant may
//              instead follow the baseline's run of its seed and label with a gap noise of its own
//              (gap_noise: variants differ in how closely they pair with the baseline).
// Draw order (fixed, so a study is reproducible from its seed): seeds ascending, then labels in order
// of first appearance (the variants in order, each one's points in order), then u, then each
// variant's e in variant order (only variants with that label draw one; a variant with a gap noise
// uses its e for the gap).
//
// Example:
//   SyntheticLadderModel model;
//   model.baseline_law = {std::log(30.0), 0.15, 1.5, 1.0};
//   model.variants = {{"rope", 1.0, {{"L0", 1e15}, {"L1", 1e16}}}, {"lerope", 1.03, {{"L0", 1e15}, {"L1", 1e16}}}};
//   model.seeds = 3; model.sigma = 0.01; model.rho = 0.5;
//   LadderResults ladder = DrawSyntheticLadder(model, StudySeed("my setting", 0));
//
// Thread safety: functions of their arguments.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sweeps/fit/ladder_results.h"
#include "sweeps/fit/power_law.h"

namespace rung::fit {

struct SyntheticVariant {
  std::string name;
  double multiplier = 1;                              // M_v: 1 for the baseline
  std::vector<std::pair<std::string, double>> points;  // (label, compute in FLOPs), ascending compute
};

// The noise of the runs at one ladder label.
struct LabelNoise {
  double sigma = 0;  // sd of one run's loss, nats
  double rho = 0;    // share of the variance common to a seed and label, in [0, 1]
  // Degrees of freedom of estimates, when sigma and rho were measured (0: known). rung plan draws
  // each simulated ladder's noise around them (ScaledByEstimateUncertainty); the draw itself uses
  // sigma and rho as they are.
  int sigma_df = 0;  // of sigma^2
  int own_df = 0;    // of the own part (1 - rho) sigma^2
};

// The noise of a variant's runs against the baseline's run of the same seed and label: what pairing
// leaves of it.
struct GapNoise {
  double sd = 0;  // sd of the paired gap L_v - L_b over seeds, nats
  int df = 0;     // of its estimate when measured (0: known)
};

// `noise` with its two variances, shared rho sigma^2 and own (1 - rho) sigma^2, each multiplied by
// df / chi^2_df drawn from `generator` (the spread of a variance estimated on df degrees of freedom),
// at most kMaxVarianceScale (an sd at most 3 times its estimate: on 1 or 2 df the factor's tail is
// unbounded, and would put simulated losses below zero); a part with df 0 is kept. The result's
// sigma and rho follow from the drawn variances.
inline constexpr double kMaxVarianceScale = 9;
LabelNoise ScaledByEstimateUncertainty(const LabelNoise& noise, std::mt19937_64& generator);
// The same for a gap's variance.
GapNoise ScaledByEstimateUncertainty(const GapNoise& noise, std::mt19937_64& generator);

struct SyntheticLadderModel {
  PowerLaw baseline_law;
  std::vector<SyntheticVariant> variants;  // the baseline among them, with multiplier 1
  int seeds = 1;                           // seeds 1..seeds
  double sigma = 0;                        // sd of one run's loss, nats
  double rho = 0;                          // share of the variance common to a seed and label, in [0, 1]
  // Per ladder label, in place of sigma and rho (noise differs between rungs); labels without an
  // entry take sigma and rho.
  std::map<std::string, LabelNoise> label_noise;
  // Per (variant, label), in place of the variant's own draw: its run is the baseline's run of that
  // seed and label plus the noise-free difference L_v - L_b plus N(0, sd^2). Needs `baseline`, and the
  // baseline at that label.
  std::string baseline;
  std::map<std::pair<std::string, std::string>, GapNoise> gap_noise;
};

// One draw of the model: every (variant, label, seed) run, source "synthetic".
// REQUIRES: seeds >= 1, every sigma >= 0, every 0 <= rho <= 1.
LadderResults DrawSyntheticLadder(const SyntheticLadderModel& model, uint64_t seed);

// A study's generator seed from a text naming its setting and the study's index: FNV-1a of the text,
// mixed with the index by SplitMix64. The same text and index give the same seed on every platform.
uint64_t StudySeed(const std::string& setting_text, int64_t study);

// SplitMix64's output function (Steele, Lea, Flood 2014): a well-mixed 64-bit value from x.
uint64_t SplitMix64(uint64_t x);

}  // namespace rung::fit
