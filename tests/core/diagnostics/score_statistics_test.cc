#include "core/diagnostics/score_statistics.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace rung {
namespace {

TEST(EffectiveLength, IsNForAUniformRowAndOneForAOneHotRow) {
  for (int n : {1, 7, 128}) {
    EXPECT_NEAR(EffectiveLength(std::vector<double>(n, 1.0 / n)), n, 1e-9 * n);
    std::vector<double> one_hot(n, 0.0);
    one_hot[n / 2] = 1.0;
    EXPECT_DOUBLE_EQ(EffectiveLength(one_hot), 1.0);
  }
  // Renyi order 3 of a uniform row is n too.
  EXPECT_NEAR(EffectiveLength(std::vector<double>(10, 0.1), 3.0), 10.0, 1e-9);
}

TEST(GapCounting, ASimplexRowGivesLnNOverDAndAlphaOne) {
  for (int n : {2, 16, 1000}) {
    for (double gap : {0.25, 1.0, 3.0}) {
      std::vector<double> row(n, 5.0 - gap);
      row[n / 3] = 5.0;
      GapCount count = CountGaps(row);
      ASSERT_FALSE(count.tie);
      EXPECT_NEAR(count.lambda, std::log(n) / gap, 1e-12) << n << " " << gap;
      EXPECT_NEAR(count.alpha, 1.0, 1e-12);
      EXPECT_NEAR(count.delta, gap, 1e-12);
    }
  }
}

TEST(GapCounting, LambdaTimesDeltaIsAlphaLnNOnRandomRows) {
  std::mt19937_64 random(3);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + trial * 5;
    std::vector<double> row(n);
    for (double& value : row) value = normal(random);
    GapCount count = CountGaps(row);
    ASSERT_FALSE(count.tie);
    EXPECT_NEAR(count.lambda * count.delta, count.alpha * std::log(n), 1e-6 * count.alpha * std::log(n) + 1e-12)
        << "n " << n;
  }
}

TEST(GapCounting, TiedMaximaAreExcluded) {
  GapCount count = CountGaps({1.0, 3.0, 3.0, 0.0});
  EXPECT_TRUE(count.tie);
  EXPECT_TRUE(std::isinf(count.lambda));
}

TEST(GapCounting, HandCountedRow) {
  // gaps {0, 1, 1, 3}: N(1) = 3 -> ln 3 / 1 = 1.0986; N(3) = 4 -> ln 4 / 3 = 0.462. Lambda = ln 3 at Delta = 1.
  GapCount count = CountGaps({4.0, 3.0, 3.0, 1.0});
  EXPECT_NEAR(count.lambda, std::log(3.0), 1e-12);
  EXPECT_DOUBLE_EQ(count.delta, 1.0);
  EXPECT_NEAR(count.alpha, std::log(3.0) / std::log(4.0), 1e-12);
}

TEST(SoftmaxRegime, UniformRowHasFullEntropyAndOneHotLimitHasNone) {
  SoftmaxRegime flat = SoftmaxRegimeAt(std::vector<double>(8, 0.0), 1.0);
  EXPECT_NEAR(flat.normalised_entropy, 1.0, 1e-12);
  EXPECT_NEAR(flat.max_weight, 1.0 / 8, 1e-12);
  EXPECT_NEAR(flat.top_two_gap, 0.0, 1e-12);
  SoftmaxRegime sharp = SoftmaxRegimeAt({0.0, 1.0, 0.0, 0.0}, 100.0);
  EXPECT_NEAR(sharp.max_weight, 1.0, 1e-12);
  EXPECT_NEAR(sharp.normalised_entropy, 0.0, 1e-9);
}

}  // namespace
}  // namespace rung
