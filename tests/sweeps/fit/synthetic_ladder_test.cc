// tests/sweeps/fit/synthetic_ladder_test.cc
#include "sweeps/fit/synthetic_ladder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <map>
#include <vector>

namespace rung::fit {
namespace {

SyntheticLadderModel TwoVariants(int seeds, double sigma, double rho) {
  SyntheticLadderModel model;
  model.baseline_law = {std::log(30.0), 0.15, 1.5, 1.0};
  model.variants = {{"base", 1.0, {{"L0", 1e15}, {"L1", 1e16}}}, {"v", 1.05, {{"L0", 1e15}, {"L1", 1e16}}}};
  model.seeds = seeds;
  model.sigma = sigma;
  model.rho = rho;
  return model;
}

TEST(SyntheticLadder, WithoutNoiseEveryRunIsOnTheLawAtItsMultipleOfCompute) {
  const LadderResults ladder = DrawSyntheticLadder(TwoVariants(2, 0, 0), 7);
  ASSERT_EQ(ladder.runs.size(), 8u);
  ASSERT_TRUE(ValidateLadderResults(ladder).ok());
  for (const LadderRun& run : ladder.runs) {
    const double multiple = run.variant == "v" ? 1.05 : 1.0;
    EXPECT_DOUBLE_EQ(run.loss, 1.5 + 30 * std::pow(multiple * run.compute, -0.15)) << run.variant << " " << run.label;
  }
}

TEST(SyntheticLadder, TheSameSeedDrawsTheSameLadderAndAnotherSeedAnother) {
  const LadderResults a = DrawSyntheticLadder(TwoVariants(3, 0.01, 0.5), StudySeed("setting", 4));
  const LadderResults b = DrawSyntheticLadder(TwoVariants(3, 0.01, 0.5), StudySeed("setting", 4));
  const LadderResults c = DrawSyntheticLadder(TwoVariants(3, 0.01, 0.5), StudySeed("setting", 5));
  ASSERT_EQ(a.runs.size(), b.runs.size());
  for (size_t i = 0; i < a.runs.size(); ++i) EXPECT_EQ(a.runs[i].loss, b.runs[i].loss);
  EXPECT_NE(a.runs[0].loss, c.runs[0].loss);
  EXPECT_NE(StudySeed("setting", 4), StudySeed("setting!", 4));
}

// Over many seeds the runs' variance is sigma^2 and a variant's run shares rho sigma^2 with the
// baseline's run of its seed and label: the model's two numbers, recovered from the draws.
TEST(SyntheticLadder, TheNoiseHasTheStatedVarianceAndPairing) {
  const SyntheticLadderModel model = TwoVariants(20000, 0.02, 0.6);
  const LadderResults ladder = DrawSyntheticLadder(model, 11);
  std::map<std::pair<std::string, int64_t>, double> base_residual;  // (label, seed) -> residual
  double base_squares = 0, variant_squares = 0, cross = 0;
  int n = 0;
  for (const LadderRun& run : ladder.runs) {
    if (run.variant == "base") base_residual[{run.label, *run.seed}] = run.loss - model.baseline_law.Predict(run.compute);
  }
  for (const LadderRun& run : ladder.runs) {
    if (run.variant != "v") continue;
    const double r = run.loss - model.baseline_law.Predict(1.05 * run.compute);
    const double b = base_residual.at({run.label, *run.seed});
    variant_squares += r * r;
    base_squares += b * b;
    cross += r * b;
    ++n;
  }
  // Standard errors at 40000 draws: variance 0.7%, correlation about 0.003.
  EXPECT_NEAR(std::sqrt(variant_squares / n), 0.02, 0.02 * 0.02);
  EXPECT_NEAR(std::sqrt(base_squares / n), 0.02, 0.02 * 0.02);
  EXPECT_NEAR(cross / std::sqrt(variant_squares * base_squares), 0.6, 0.015);
}

// A variant with a gap noise follows the baseline's run of its seed: their difference is the
// noise-free difference plus N(0, gap sd^2), whatever the baseline's own noise.
TEST(SyntheticLadder, AVariantWithAGapNoiseFollowsTheBaselinesRunOfItsSeed) {
  SyntheticLadderModel model = TwoVariants(20000, 0.05, 0.0);
  model.baseline = "base";
  model.gap_noise[{"v", "L1"}] = {0.002, 0};
  const LadderResults ladder = DrawSyntheticLadder(model, 13);
  std::map<std::pair<std::string, int64_t>, double> base_loss;
  for (const LadderRun& run : ladder.runs) {
    if (run.variant == "base") base_loss[{run.label, *run.seed}] = run.loss;
  }
  double sum = 0, squares = 0, l0_squares = 0;
  int n = 0, l0 = 0;
  const double clean_gap = model.baseline_law.Predict(1.05e16) - model.baseline_law.Predict(1e16);
  for (const LadderRun& run : ladder.runs) {
    if (run.variant != "v") continue;
    const double gap = run.loss - base_loss.at({run.label, *run.seed});
    if (run.label == "L1") {
      sum += gap - clean_gap;
      squares += (gap - clean_gap) * (gap - clean_gap);
      ++n;
    } else {
      l0_squares += gap * gap;
      ++l0;
    }
  }
  EXPECT_NEAR(sum / n, 0.0, 0.0001);
  EXPECT_NEAR(std::sqrt(squares / n), 0.002, 0.00005);
  // L0 has no gap noise: both runs draw their own (rho 0), so the gap's sd is sqrt(2) x 0.05.
  EXPECT_NEAR(std::sqrt(l0_squares / l0), std::sqrt(2.0) * 0.05, 0.002);
}

// A variance estimated on df degrees of freedom spreads as df / chi^2_df around it: the median scale
// is df / median(chi^2_df) (1.1916 at 4 df), capped at kMaxVarianceScale; df 0 is a known variance.
TEST(SyntheticLadder, NoiseMeasuredOnFewDegreesOfFreedomIsDrawnAroundItsEstimate) {
  std::mt19937_64 generator(5);
  const LabelNoise measured{0.02, 0.5, 4, 4};
  std::vector<double> own_scales;
  for (int i = 0; i < 20000; ++i) {
    const LabelNoise drawn = ScaledByEstimateUncertainty(measured, generator);
    const double own = (1 - drawn.rho) * drawn.sigma * drawn.sigma;
    own_scales.push_back(own / (0.5 * 0.02 * 0.02));
    EXPECT_LE(own_scales.back(), kMaxVarianceScale + 1e-9);
  }
  std::nth_element(own_scales.begin(), own_scales.begin() + 10000, own_scales.end());
  EXPECT_NEAR(own_scales[10000], 4 / 3.356694, 0.03);
  const LabelNoise known{0.02, 0.5, 0, 0};
  const LabelNoise same = ScaledByEstimateUncertainty(known, generator);
  EXPECT_DOUBLE_EQ(same.sigma, 0.02);
  EXPECT_DOUBLE_EQ(same.rho, 0.5);
}

}  // namespace
}  // namespace rung::fit
