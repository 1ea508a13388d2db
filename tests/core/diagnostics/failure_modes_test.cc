#include "core/diagnostics/failure_modes.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung {
namespace {

constexpr double kPi = 3.14159265358979323846;

TEST(RopeScores, FrequencyScheduleIsBaseToTheMinusTwoFOverD) {
  const std::vector<double> theta = RopeFrequencySchedule(10000.0, 8);
  ASSERT_EQ(theta.size(), 4u);
  EXPECT_DOUBLE_EQ(theta[0], 1.0);
  EXPECT_DOUBLE_EQ(theta[1], 0.1);
  EXPECT_DOUBLE_EQ(theta[2], 0.01);
  EXPECT_DOUBLE_EQ(theta[3], 0.001);
}

TEST(RopeScores, OnePairIsAScaledCosine) {
  // d = 2: S(m) = |q||k| / sqrt(2) cos(m theta + arg q - arg k).
  const double arg_q = 0.7, arg_k = -1.9, theta = 0.37;
  const std::vector<double> q = {2.0 * std::cos(arg_q), 2.0 * std::sin(arg_q)};
  const std::vector<double> k = {0.5 * std::cos(arg_k), 0.5 * std::sin(arg_k)};
  const std::vector<double> scores = RopeScores(q, k, {theta}, 300);
  ASSERT_EQ(scores.size(), 300u);
  for (int m = 0; m < 300; ++m) {
    EXPECT_NEAR(scores[m], 1.0 / std::sqrt(2.0) * std::cos(m * theta + arg_q - arg_k), 1e-13) << m;
  }
  EXPECT_TRUE(RopeScores(q, k, {theta}, 0).empty());
}

// <R_t q, R_{t-m} k> / sqrt(d), rotating pair f by p theta_f as core/model/rotary.cc does.
double ModelScore(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& theta,
                  int64_t t, int64_t m) {
  double dot = 0.0;
  for (size_t f = 0; f < theta.size(); ++f) {
    const double cq = std::cos(t * theta[f]), sq = std::sin(t * theta[f]);
    const double ck = std::cos((t - m) * theta[f]), sk = std::sin((t - m) * theta[f]);
    const double q0 = q[2 * f] * cq - q[2 * f + 1] * sq, q1 = q[2 * f] * sq + q[2 * f + 1] * cq;
    const double k0 = k[2 * f] * ck - k[2 * f + 1] * sk, k1 = k[2 * f] * sk + k[2 * f + 1] * ck;
    dot += q0 * k0 + q1 * k1;
  }
  return dot / std::sqrt(static_cast<double>(q.size()));
}

TEST(RopeScores, AreTheModelsLogitForAKeyMBehindTheQuery) {
  std::mt19937_64 random(5);
  std::normal_distribution<double> normal;
  std::vector<double> q(6), k(6);
  for (double& x : q) x = normal(random);
  for (double& x : k) x = normal(random);
  const std::vector<double> theta = {1.3, 0.2, 0.011};  // e.g. learned, not a schedule
  const std::vector<double> scores = RopeScores(q, k, theta, 200);
  for (int64_t m = 0; m < 200; ++m) {
    EXPECT_NEAR(scores[m], ModelScore(q, k, theta, m + 17, m), 1e-12) << m;
  }
}

TEST(RopeScores, BlockedSumsMatchDirectSumsAtLongDistances) {
  std::mt19937_64 random(6);
  std::normal_distribution<double> normal;
  std::vector<double> q(64), k(64);
  for (double& x : q) x = normal(random);
  for (double& x : k) x = normal(random);
  const std::vector<double> theta = RopeFrequencySchedule(500000.0, 64);
  const int64_t length = 4096 * 3 + 77;  // more than one group of blocks, a partial last block
  const std::vector<double> scores = RopeScores(q, k, theta, length);
  for (int64_t m = 0; m < length; m += 37) {
    double direct = 0.0;
    for (size_t f = 0; f < theta.size(); ++f) {
      const double a = q[2 * f] * k[2 * f] + q[2 * f + 1] * k[2 * f + 1];
      const double b = q[2 * f] * k[2 * f + 1] - q[2 * f + 1] * k[2 * f];
      direct += a * std::cos(m * theta[f]) + b * std::sin(m * theta[f]);
    }
    ASSERT_NEAR(scores[m], direct / 8.0, 1e-11) << m;
  }
}

// ---------------------------------------------------------------------------------------------
// Position inversion

std::vector<double> CosineScores(double theta, double phase, int64_t length) {
  // d = 2 with |q| = |k| = 2^(1/4): S(m) = cos(m theta + phase).
  const double r = std::pow(2.0, 0.25);
  return RopeScores({r, 0.0}, {r * std::cos(-phase), r * std::sin(-phase)}, {theta}, length);
}

TEST(PositionInversion, MonotoneScoresGiveZeroAndOne) {
  // m theta + phase within (0, pi): decreasing, no nearer key loses; within (pi, 2 pi): all do.
  EXPECT_EQ(PositionInversion(CosineScores(kPi / 100, 0.01, 99)), 0.0);
  EXPECT_EQ(PositionInversion(CosineScores(kPi / 100, kPi + 0.01, 99)), 1.0);
  EXPECT_EQ(PositionInversion({2.0, 1.0}), 0.0);
  EXPECT_EQ(PositionInversion({1.0, 2.0}), 1.0);
  EXPECT_EQ(PositionInversion({1.0, 1.0}), 0.0);  // a tie is no inversion
}

TEST(PositionInversion, OnePeriodOfCosineHasAClosedForm) {
  // theta = 2 pi / M, phase theta / 4, h = M / 2: near value cos(i theta + theta/4) < far value
  // cos((M - j) theta + theta/4) = cos(j theta - theta/4) (i < h, 1 <= j <= h) iff i >= j, so
  // h (h - 1) / 2 of the h^2 pairs: (h - 1) / (2 h), tending to 1/2.
  for (int64_t length : {4, 8, 64, 1000, 4096}) {
    const double theta = 2 * kPi / length;
    const double h = length / 2.0;
    EXPECT_DOUBLE_EQ(PositionInversion(CosineScores(theta, theta / 4, length)), (h - 1) / (2 * h)) << length;
  }
}

TEST(PositionInversion, SortedCountIsTheEnumeratedCount) {
  std::mt19937_64 random(7);
  std::normal_distribution<double> normal;
  std::vector<double> q(8), k(8);
  for (double& x : q) x = normal(random);
  for (double& x : k) x = normal(random);
  for (int64_t length : {2, 3, 5, 64, 501}) {
    for (bool rounded : {false, true}) {  // scores rounded to 1/8 have ties: strict comparison
      std::vector<double> scores = RopeScores(q, k, RopeFrequencySchedule(100.0, 8), length);
      if (rounded) {
        for (double& score : scores) score = std::round(score * 8.0) / 8.0;
      }
      const int64_t split = (length + 1) / 2;  // m1 < M/2 <= m2
      int64_t inverted = 0;
      for (int64_t m1 = 0; m1 < split; ++m1) {
        for (int64_t m2 = split; m2 < length; ++m2) inverted += scores[m1] < scores[m2];
      }
      EXPECT_DOUBLE_EQ(PositionInversion(scores),
                       static_cast<double>(inverted) / static_cast<double>(split * (length - split)))
          << length << " " << rounded;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Token inversion

TEST(TokenInversion, TwoKeysWithKnownPhases) {
  // d = 2, equal |k|: S_i(m) = cos(m theta + phi_i), S1 - S2 = -2 sin(m theta + c) sin((phi1 - phi2)/2)
  // with c = (phi1 + phi2) / 2. phi1 = 0.1, phi2 = 0.1 + pi/2: flipped iff m theta + c is in
  // (pi, 2 pi) mod 2 pi; theta = 2 pi / 8: m = 3, 4, 5, 6 of 0..7.
  const double theta = 2 * kPi / 8;
  const std::vector<double> s1 = CosineScores(theta, 0.1, 8), s2 = CosineScores(theta, 0.1 + kPi / 2, 8);
  ASSERT_GT(s1[0], s2[0]);
  EXPECT_DOUBLE_EQ(TokenInversion(s1, s2), 0.5);
  EXPECT_DOUBLE_EQ(TokenInversion(s2, s1), 0.5);  // ordered by S(0) whichever comes first
  // Equal phases, |k1| > |k2|: S1 - S2 has the sign of cos(m theta + phi); theta = pi / M, phi = 0.1:
  // flipped iff m > (pi/2 - 0.1) / theta.
  const int64_t length = 1000;
  const double slow = kPi / length;
  std::vector<double> big = CosineScores(slow, 0.1, length), small = big;
  for (double& score : small) score *= 0.5;
  const int64_t first_flipped = static_cast<int64_t>(std::floor((kPi / 2 - 0.1) / slow)) + 1;
  EXPECT_DOUBLE_EQ(TokenInversion(small, big), static_cast<double>(length - first_flipped) / length);
  // No order at 0: nothing to invert.
  EXPECT_TRUE(std::isnan(TokenInversion({1.0, 2.0}, {1.0, 0.0})));
}

}  // namespace
}  // namespace rung
