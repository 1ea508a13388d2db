// Aliasing at the paper's resolution (core/diagnostics/resolved_aliasing.h) against brute force over
// every pair, and on the paper's own model S(m) = sum_n cos(m theta_n) against Table 4's order.
#include "core/diagnostics/resolved_aliasing.h"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace rung {
namespace {

std::vector<double> RandomScores(int64_t length, uint64_t seed, double spread) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal(0.0, spread);
  std::vector<double> scores(static_cast<size_t>(length));
  for (double& score : scores) score = normal(generator);
  return scores;
}

TEST(ResolvedAliasing, EpsilonIsTheTypesResolutionOfTheLargerOfRootDAndTheAmplitudeSum) {
  // d = 4: pairs (3, 4) and (0, 1) against (1, 0) and (0, 2): amplitudes 5 * 1 + 1 * 2 = 7 > sqrt(4).
  EXPECT_DOUBLE_EQ(PairAmplitudeSum({3, 4, 0, 1}, {1, 0, 0, 2}), 7.0);
  EXPECT_DOUBLE_EQ(ResolutionEpsilon(Precision::kBf16, 4, 7.0), 7.0 / 128);
  EXPECT_DOUBLE_EQ(ResolutionEpsilon(Precision::kFp16, 4, 7.0), 7.0 / 1024);
  EXPECT_DOUBLE_EQ(ResolutionEpsilon(Precision::kFp32, 128, 1.0), std::sqrt(128.0) / 8388608.0);
}

TEST(ResolvedAliasing, CountsEveryPairWithinEpsilonAsBruteForceDoes) {
  for (uint64_t seed : {1, 2, 3}) {
    const std::vector<double> s1 = RandomScores(300, seed, 1.0), s2 = RandomScores(300, seed + 10, 1.0);
    const double e1 = 0.01 * static_cast<double>(seed), e2 = 0.02;
    int64_t pairs = 0, invariant = 0;
    std::vector<char> partnered(s1.size(), 0);
    std::vector<int64_t> map(10 * 10, 0), invariance_map(4 * 4, 0);
    for (size_t i = 0; i < s1.size(); ++i) {
      for (size_t j = i + 1; j < s1.size(); ++j) {
        if (std::fabs(s1[i] - s1[j]) >= e1) continue;
        ++pairs;
        partnered[i] = partnered[j] = 1;
        ++map[(i * 10 / 300) * 10 + j * 10 / 300];
        ++map[(j * 10 / 300) * 10 + i * 10 / 300];
        if (std::fabs(s2[i] - s2[j]) < e2) {
          ++invariant;
          ++invariance_map[(i * 4 / 300) * 4 + j * 4 / 300];
          ++invariance_map[(j * 4 / 300) * 4 + i * 4 / 300];
        }
      }
    }
    const ResolvedPositionAliasing aliasing = PositionAliasingWithin(s1, e1, 10);
    EXPECT_EQ(aliasing.pairs, pairs);
    int64_t with_partner = 0;
    for (char p : partnered) with_partner += p;
    EXPECT_DOUBLE_EQ(aliasing.fraction, static_cast<double>(with_partner) / 300.0);
    EXPECT_EQ(aliasing.heat_map.counts, map);
    const AttentionInvariance invariance = AttentionInvariancePairs(s1, s2, e1, e2, 4);
    EXPECT_EQ(invariance.pairs, invariant);
    EXPECT_EQ(invariance.heat_map.counts, invariance_map);
    int64_t token = 0;
    for (size_t i = 0; i < s1.size(); ++i) token += std::fabs(s1[i] - s2[i]) < e2;
    EXPECT_EQ(TokenAliasingWithin(s1, s2, e2), token);
  }
}

TEST(ResolvedAliasing, AHeadWhoseScoresNeverMoveIsCountedWithoutEnumeratingItsPairs) {
  // 20000 equal scores: 199990000 pairs, counted by sorting; no heat map past kMaxHeatMapPairs.
  const std::vector<double> flat(20000, 1.0);
  const ResolvedPositionAliasing aliasing = PositionAliasingWithin(flat, 1e-3, 200);
  EXPECT_EQ(aliasing.pairs, int64_t{20000} * 19999 / 2);
  EXPECT_DOUBLE_EQ(aliasing.fraction, 1.0);
  EXPECT_EQ(aliasing.heat_map.bins, 0);
  const AttentionInvariance invariance = AttentionInvariancePairs(flat, flat, 1e-3, 1e-3, 16);
  EXPECT_EQ(invariance.pairs, int64_t{20000} * 19999 / 2);
  EXPECT_EQ(invariance.heat_map.bins, 0);
}

TEST(ResolvedAliasing, ThePapersModelAliasesAtTheOrderOfTable4) {
  // S(m) = sum_n cos(m theta_n), theta_n = 1e4^(-n/64), m < 1024: unit amplitudes, so epsilon =
  // 2^-f max(sqrt(128), 64). Table 4 (the normal approximation): 0.057 at bf16, 0.0071 at fp16.
  const int64_t h = 64, length = 1024;
  std::vector<double> scores(length, 0.0);
  for (int64_t m = 0; m < length; ++m) {
    for (int64_t n = 0; n < h; ++n) scores[m] += std::cos(static_cast<double>(m) * std::pow(1e4, -static_cast<double>(n) / h));
  }
  const double all_pairs = length * (length - 1) / 2.0;
  const double bf16 = PositionAliasingWithin(scores, ResolutionEpsilon(Precision::kBf16, 2 * h, h), 0).pairs / all_pairs;
  const double fp16 = PositionAliasingWithin(scores, ResolutionEpsilon(Precision::kFp16, 2 * h, h), 0).pairs / all_pairs;
  EXPECT_GT(bf16, 0.057 / 1.5);
  EXPECT_LT(bf16, 0.057 * 1.5);
  EXPECT_GT(fp16, 0.0071 / 1.5);
  EXPECT_LT(fp16, 0.0071 * 1.5);
}

}  // namespace
}  // namespace rung
