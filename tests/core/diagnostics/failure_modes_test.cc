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
const double kInf = std::numeric_limits<double>::infinity();

double Pow2(int exponent) { return std::ldexp(1.0, exponent); }

// ---------------------------------------------------------------------------------------------
// Rounding

TEST(Rounding, Bf16KnownValues) {
  EXPECT_EQ(RoundToBf16(1.0), 1.0);
  EXPECT_EQ(RoundToBf16(1.0 + Pow2(-7)), 1.0 + Pow2(-7));      // one ulp: representable
  EXPECT_EQ(RoundToBf16(1.0 + Pow2(-8)), 1.0);                 // half an ulp: tie to even (1)
  EXPECT_EQ(RoundToBf16(1.0 + 3 * Pow2(-8)), 1.0 + Pow2(-6));  // 1.5 ulp: tie to even (2 ulp)
  EXPECT_EQ(RoundToBf16(1.0 + Pow2(-8) + Pow2(-30)), 1.0 + Pow2(-7));  // just past the tie
  EXPECT_EQ(RoundToBf16(-(1.0 + 3 * Pow2(-8))), -(1.0 + Pow2(-6)));
  EXPECT_EQ(RoundToBf16(1.0 / 3.0), 171.0 / 512.0);  // 0x3EAB = 0.333984375
  EXPECT_EQ(RoundToBf16(255.5), 256.0);              // 8 significant bits: ulp 1 at 128..256
  EXPECT_EQ(RoundToBf16(254.5), 254.0);
  // fp32's exponent range: the largest finite value, the tie past it, the smallest subnormal.
  const double largest = (2.0 - Pow2(-7)) * Pow2(127);
  EXPECT_EQ(RoundToBf16(largest), largest);
  EXPECT_EQ(RoundToBf16((2.0 - Pow2(-8)) * Pow2(127)), kInf);
  EXPECT_EQ(RoundToBf16(-(2.0 - Pow2(-8)) * Pow2(127)), -kInf);
  EXPECT_EQ(RoundToBf16((2.0 - Pow2(-7) - Pow2(-9)) * Pow2(127)), largest);
  EXPECT_EQ(RoundToBf16(Pow2(-126)), Pow2(-126));
  EXPECT_EQ(RoundToBf16(Pow2(-133)), Pow2(-133));
  EXPECT_EQ(RoundToBf16(Pow2(-134)), 0.0);  // tie between 0 and 2^-133: even is 0
  EXPECT_EQ(RoundToBf16(1.5 * Pow2(-134)), Pow2(-133));
  EXPECT_EQ(RoundToBf16(3 * Pow2(-134)), 2 * Pow2(-133));  // 1.5 quanta: tie to 2
  EXPECT_EQ(RoundToBf16(1e-300), 0.0);
}

TEST(Rounding, Fp16KnownValues) {
  EXPECT_EQ(RoundToFp16(1.0 + Pow2(-10)), 1.0 + Pow2(-10));
  EXPECT_EQ(RoundToFp16(1.0 + Pow2(-11)), 1.0);
  EXPECT_EQ(RoundToFp16(1.0 + 3 * Pow2(-11)), 1.0 + Pow2(-9));
  EXPECT_EQ(RoundToFp16(1.0 / 3.0), 1365.0 / 4096.0);  // 0x3555 = 0.333251953125
  EXPECT_EQ(RoundToFp16(2049.0), 2048.0);              // ulp 2 at 2048..4096, tie to even
  EXPECT_EQ(RoundToFp16(2051.0), 2052.0);
  EXPECT_EQ(RoundToFp16(65504.0), 65504.0);            // the largest finite half
  EXPECT_EQ(RoundToFp16(65519.99), 65504.0);
  EXPECT_EQ(RoundToFp16(65520.0), kInf);               // the tie past it rounds to 2^16: inf
  EXPECT_EQ(RoundToFp16(-65520.0), -kInf);
  EXPECT_EQ(RoundToFp16(1e10), kInf);
  EXPECT_EQ(RoundToFp16(Pow2(-14)), Pow2(-14));        // the smallest normal
  EXPECT_EQ(RoundToFp16(Pow2(-14) - Pow2(-25)), Pow2(-14));  // 1023.5 quanta: tie to 1024
  EXPECT_EQ(RoundToFp16(Pow2(-14) - 3 * Pow2(-25)), 1022 * Pow2(-24));  // 1022.5: tie to 1022
  EXPECT_EQ(RoundToFp16(Pow2(-24)), Pow2(-24));        // the smallest subnormal
  EXPECT_EQ(RoundToFp16(Pow2(-25)), 0.0);              // half of it: tie to 0
  EXPECT_EQ(RoundToFp16(Pow2(-25) * (1 + Pow2(-40))), Pow2(-24));
  EXPECT_EQ(RoundToFp16(3 * Pow2(-25)), 2 * Pow2(-24));
  EXPECT_EQ(RoundToFp16(-Pow2(-26)), 0.0);
  EXPECT_TRUE(std::signbit(RoundToFp16(-Pow2(-26))));  // the sign of zero is kept
  EXPECT_EQ(RoundToFp16(std::numeric_limits<double>::denorm_min()), 0.0);
}

TEST(Rounding, NonFiniteAndZeroPassThrough) {
  for (Precision precision : {Precision::kBf16, Precision::kFp16, Precision::kFp32}) {
    EXPECT_EQ(RoundToPrecision(kInf, precision), kInf);
    EXPECT_EQ(RoundToPrecision(-kInf, precision), -kInf);
    EXPECT_TRUE(std::isnan(RoundToPrecision(std::nan(""), precision)));
    EXPECT_EQ(RoundToPrecision(0.0, precision), 0.0);
    EXPECT_TRUE(std::signbit(RoundToPrecision(-0.0, precision)));
  }
  EXPECT_EQ(FractionBits(Precision::kBf16), 7);
  EXPECT_EQ(FractionBits(Precision::kFp16), 10);
  EXPECT_EQ(FractionBits(Precision::kFp32), 23);
  EXPECT_STREQ(PrecisionName(Precision::kFp16), "fp16");
}

// Random doubles with exponents in [min_exponent, max_exponent] (past a format's range at both ends),
// every third one exactly halfway between two neighbours with `fraction_bits` fraction bits.
std::vector<double> RoundingProbes(uint64_t seed, int count, int fraction_bits, int min_exponent, int max_exponent) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(min_exponent, max_exponent);
  std::vector<double> probes;
  for (int i = 0; i < count; ++i) {
    double x = std::ldexp(mantissa(random), exponent(random));
    if (i % 3 == 0) {  // exactly halfway between two neighbours at this precision
      const int e = std::ilogb(x);
      x = std::ldexp(std::floor(std::ldexp(x, fraction_bits - e)) + 0.5, e - fraction_bits);
    }
    probes.push_back(i % 2 == 0 ? x : -x);
  }
  return probes;
}

TEST(Rounding, TheBitRoutineAtFp32ParametersIsTheFloatCast) {
  for (double x : RoundingProbes(1, 20000, 23, -152, 130)) {
    ASSERT_EQ(RoundToBinaryFormat(x, 23, -126, 127), RoundToFp32(x)) << x;
  }
  EXPECT_EQ(RoundToFp32(1.0 + Pow2(-24)), 1.0);
  EXPECT_EQ(RoundToFp32(1.0 + 3 * Pow2(-24)), 1.0 + Pow2(-22));
  EXPECT_EQ(RoundToFp32(Pow2(-150)), 0.0);
}

TEST(Rounding, Bf16OfAFloatIsTheRoundedTopHalfOfItsBits) {
  // On floats (exact in double) bf16 rounding is the classic bit trick on the fp32 pattern.
  for (double probe : RoundingProbes(2, 20000, 7, -152, 130)) {
    const float x = static_cast<float>(probe);
    if (!std::isfinite(x)) continue;
    uint32_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    const uint32_t top = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
    float expected = 0.0f;
    std::memcpy(&expected, &top, sizeof expected);
    ASSERT_EQ(RoundToBf16(static_cast<double>(x)), static_cast<double>(expected)) << x;
  }
}

#ifdef __FLT16_MAX__
TEST(Rounding, Fp16IsTheCompilersHalfConversion) {
  for (double x : RoundingProbes(3, 20000, 10, -27, 17)) {
    const double half = static_cast<double>(static_cast<_Float16>(x));
    ASSERT_EQ(RoundToFp16(x), half) << x;
  }
}
#endif

// ---------------------------------------------------------------------------------------------
// Scores

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
    for (bool rounded : {false, true}) {  // bf16-rounded scores have ties: strict comparison
      std::vector<double> scores = RopeScores(q, k, RopeFrequencySchedule(100.0, 8), length);
      if (rounded) scores = RoundScores(scores, Precision::kBf16);
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
// Position aliasing

TEST(PositionAliasing, CountsGroupsOfEqualRoundedScores) {
  const std::vector<double> scores = {1.0, 1.0 + Pow2(-9), 2.0, 3.0, 1.0 + Pow2(-20)};
  // bf16: 1, 1 + 2^-9 and 1 + 2^-20 all round to 1.
  PositionAliasing bf16 = MeasurePositionAliasing(scores, Precision::kBf16);
  EXPECT_EQ(bf16.pairs, 3);
  EXPECT_DOUBLE_EQ(bf16.fraction, 3.0 / 5.0);
  // fp16 keeps 1 + 2^-9; 1 + 2^-20 rounds to 1.
  PositionAliasing fp16 = MeasurePositionAliasing(scores, Precision::kFp16);
  EXPECT_EQ(fp16.pairs, 1);
  EXPECT_DOUBLE_EQ(fp16.fraction, 2.0 / 5.0);
  PositionAliasing fp32 = MeasurePositionAliasing(scores, Precision::kFp32);
  EXPECT_EQ(fp32.pairs, 0);
  EXPECT_EQ(fp32.fraction, 0.0);
  // +0 and -0 are one value; so are two overflows.
  EXPECT_EQ(MeasurePositionAliasing({0.0, -0.0, 7e4, 8e4, 5.0}, Precision::kFp16).pairs, 2);
}

TEST(PositionAliasing, HeatMapBinsTheOrderedPairs) {
  const std::vector<double> scores = {1.0, 1.0 + Pow2(-9), 2.0, 3.0, 1.0 + Pow2(-20)};
  // bf16 pairs (0, 1), (0, 4), (1, 4). Two bins: bin(m) = floor(2 m / 5) = 0, 0, 0, 1, 1.
  AliasingHeatMap two = PositionAliasingHeatMap(scores, Precision::kBf16, 2);
  EXPECT_EQ(two.bins, 2);
  EXPECT_EQ(two.length, 5);
  EXPECT_THAT(two.counts, testing::ElementsAre(2, 2, 2, 0));
  // The default 200 bins are capped at M: one distance per bin.
  AliasingHeatMap fine = PositionAliasingHeatMap(scores, Precision::kBf16);
  ASSERT_EQ(fine.bins, 5);
  std::vector<int64_t> expected(25, 0);
  for (auto [m1, m2] : std::vector<std::pair<int, int>>{{0, 1}, {0, 4}, {1, 4}}) {
    expected[m1 * 5 + m2] = expected[m2 * 5 + m1] = 1;
  }
  EXPECT_EQ(fine.counts, expected);
}

TEST(PositionAliasing, GroupedCountsAreTheEnumeratedCounts) {
  std::mt19937_64 random(8);
  std::normal_distribution<double> normal;
  std::vector<double> q(16), k(16);
  for (double& x : q) x = normal(random);
  for (double& x : k) x = normal(random);
  const int64_t length = 700, bins = 9;
  const std::vector<double> scores = RopeScores(q, k, RopeFrequencySchedule(10000.0, 16), length);
  for (Precision precision : {Precision::kBf16, Precision::kFp16}) {
    const std::vector<double> rounded = RoundScores(scores, precision);
    int64_t pairs = 0, with_partner = 0;
    std::vector<int64_t> map(bins * bins, 0);
    for (int64_t m1 = 0; m1 < length; ++m1) {
      bool partner = false;
      for (int64_t m2 = 0; m2 < length; ++m2) {
        if (m1 == m2 || rounded[m1] != rounded[m2]) continue;
        partner = true;
        pairs += m1 < m2;
        ++map[(m1 * bins / length) * bins + m2 * bins / length];
      }
      with_partner += partner;
    }
    ASSERT_GT(pairs, 0);
    const PositionAliasing aliasing = MeasurePositionAliasing(scores, precision);
    EXPECT_EQ(aliasing.pairs, pairs);
    EXPECT_DOUBLE_EQ(aliasing.fraction, static_cast<double>(with_partner) / length);
    EXPECT_EQ(PositionAliasingHeatMap(scores, precision, bins).counts, map);
  }
}

// ---------------------------------------------------------------------------------------------
// Token inversion and aliasing

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

TEST(TokenAliasing, CountsEqualRoundedScores) {
  const std::vector<double> s1 = {1.0, 2.0, 3.0, 1.0 + Pow2(-9)};
  const std::vector<double> s2 = {1.0 + Pow2(-10), 2.5, 3.0 + Pow2(-30), 1.0};
  EXPECT_EQ(TokenAliasing(s1, s2, Precision::kBf16), 3);  // m = 0, 2, 3
  EXPECT_EQ(TokenAliasing(s1, s2, Precision::kFp16), 1);  // m = 2
  EXPECT_EQ(TokenAliasing(s1, s2, Precision::kFp32), 1);  // m = 2 (3 + 2^-30 is 3 in fp32)
  EXPECT_EQ(TokenAliasing({}, {}, Precision::kFp32), 0);
}

// ---------------------------------------------------------------------------------------------
// A trained head's vectors

TEST(MeasureFailureModes, IsThePrimitivesOnTheHeadsScores) {
  std::mt19937_64 random(9);
  std::normal_distribution<double> normal;
  RopeHeadVectors head;
  for (std::vector<double>* vector : {&head.query, &head.key, &head.key1, &head.key2}) {
    vector->resize(8);
    for (double& x : *vector) x = normal(random);
  }
  head.theta = {0.9, 0.3, 0.05, 0.002};
  const StatusOr<FailureModeStats> stats = MeasureFailureModes(head, 3000, Precision::kBf16);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  const std::vector<double> s = RopeScores(head.query, head.key, head.theta, 3000);
  const std::vector<double> s1 = RopeScores(head.query, head.key1, head.theta, 3000);
  const std::vector<double> s2 = RopeScores(head.query, head.key2, head.theta, 3000);
  EXPECT_EQ(stats->position_inversion, PositionInversion(s));
  EXPECT_EQ(stats->position_aliasing_fraction, MeasurePositionAliasing(s, Precision::kBf16).fraction);
  EXPECT_EQ(stats->position_aliasing_pairs, MeasurePositionAliasing(s, Precision::kBf16).pairs);
  EXPECT_EQ(stats->token_inversion, TokenInversion(s1, s2));
  EXPECT_EQ(stats->token_aliasing, TokenAliasing(s1, s2, Precision::kBf16));
}

TEST(MeasureFailureModes, RefusesMalformedHeads) {
  RopeHeadVectors good;
  good.query = good.key = good.key1 = good.key2 = {1.0, 0.0, 0.5, 0.5};
  good.theta = {1.0, 0.01};
  ASSERT_TRUE(MeasureFailureModes(good, 16, Precision::kFp16).ok());
  EXPECT_EQ(MeasureFailureModes(good, 1, Precision::kFp16).status().code(), StatusCode::kInvalidArgument);
  RopeHeadVectors odd = good;
  odd.query = odd.key = odd.key1 = odd.key2 = {1.0, 0.0, 0.5};
  EXPECT_EQ(MeasureFailureModes(odd, 16, Precision::kFp16).status().code(), StatusCode::kInvalidArgument);
  RopeHeadVectors short_key = good;
  short_key.key2 = {1.0, 0.0};
  EXPECT_EQ(MeasureFailureModes(short_key, 16, Precision::kFp16).status().code(), StatusCode::kInvalidArgument);
  RopeHeadVectors frequencies = good;
  frequencies.theta = {1.0};
  EXPECT_EQ(MeasureFailureModes(frequencies, 16, Precision::kFp16).status().code(), StatusCode::kInvalidArgument);
  RopeHeadVectors infinite = good;
  infinite.key[1] = kInf;
  EXPECT_EQ(MeasureFailureModes(infinite, 16, Precision::kFp16).status().code(), StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// The Gaussian reference: the paper's trends (b = 10000, d = 64)

// Rows at M = 64, 1024, 16384 (lengths outermost) for the precisions given.
std::vector<FailureModeRow> GaussianRows(std::vector<Precision> precisions, int draws, uint64_t seed) {
  FailureModeGrid grid;
  grid.lengths = {64, 1024, 16384};
  grid.bases = {10000.0};
  grid.precisions = std::move(precisions);
  grid.head_dim = 64;
  grid.draws = draws;
  grid.seed = seed;
  StatusOr<std::vector<FailureModeRow>> rows = MeasureGaussianFailureModes(grid);
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? *rows : std::vector<FailureModeRow>();
}

// All three precisions, shared by the aliasing tests (computed once).
const std::vector<FailureModeRow>& AllPrecisionRows() {
  static const std::vector<FailureModeRow> rows =
      GaussianRows({Precision::kBf16, Precision::kFp16, Precision::kFp32}, 32, 11);
  return rows;
}
const FailureModeRow& Row(int length_index, Precision precision) {
  return AllPrecisionRows()[length_index * 3 + static_cast<int>(precision)];
}

TEST(GaussianReference, InversionTendsToOneHalfAsTheContextGrows) {
  const std::vector<FailureModeRow> rows = GaussianRows({Precision::kFp32}, 128, 12);
  ASSERT_EQ(rows.size(), 3u);
  // |inversion - 1/2| per draw, averaged: it shrinks with M (the shares of inverted pairs approach 1/2).
  // Over seeds, 128-draw means sit near 0.20, 0.15, 0.11, each with a spread of about 0.01.
  const double d64 = rows[0].position_inversion_deviation, d1k = rows[1].position_inversion_deviation,
               d16k = rows[2].position_inversion_deviation;
  EXPECT_GT(d64, d1k + 0.015);
  EXPECT_GT(d1k, d16k);
  EXPECT_GT(d64, d16k + 0.05);
  EXPECT_GT(d16k, 0.05);  // not there yet at 16k: the lowest pairs turn by only ~2 rad
  // Oriented to the key the query prefers at 0, a nearer key wins a little more often than not
  // (over seeds the three rows average 0.46 +- 0.01; without the orientation it would be 1/2).
  EXPECT_LT((rows[0].position_inversion + rows[1].position_inversion + rows[2].position_inversion) / 3, 0.49);
  // Token inversion from a clear order at 0 rises toward 1/2 too.
  EXPECT_LT(rows[0].token_inversion, 0.35);
  EXPECT_GT(rows[1].token_inversion, rows[0].token_inversion + 0.05);
  EXPECT_GT(rows[2].token_inversion, rows[1].token_inversion + 0.03);
  EXPECT_NEAR(rows[2].token_inversion, 0.5, 0.03);
}

TEST(GaussianReference, PositionAliasingGrowsWithTheContextAndCoarserTypes) {
  for (Precision precision : {Precision::kBf16, Precision::kFp16}) {
    EXPECT_LT(Row(0, precision).position_aliasing_pairs, Row(1, precision).position_aliasing_pairs);
    EXPECT_LT(Row(1, precision).position_aliasing_pairs, Row(2, precision).position_aliasing_pairs);
    EXPECT_LT(Row(0, precision).position_aliasing_fraction, Row(1, precision).position_aliasing_fraction);
    EXPECT_LT(Row(1, precision).position_aliasing_fraction, Row(2, precision).position_aliasing_fraction);
  }
  EXPECT_LE(Row(0, Precision::kFp32).position_aliasing_pairs, Row(2, Precision::kFp32).position_aliasing_pairs);
  for (int length_index : {1, 2}) {
    EXPECT_GT(Row(length_index, Precision::kBf16).position_aliasing_pairs,
              Row(length_index, Precision::kFp16).position_aliasing_pairs);
    EXPECT_GT(Row(length_index, Precision::kFp16).position_aliasing_pairs,
              Row(length_index, Precision::kFp32).position_aliasing_pairs);
    EXPECT_GT(Row(length_index, Precision::kBf16).position_aliasing_fraction,
              Row(length_index, Precision::kFp16).position_aliasing_fraction);
    EXPECT_GT(Row(length_index, Precision::kFp16).position_aliasing_fraction,
              Row(length_index, Precision::kFp32).position_aliasing_fraction);
  }
  // At 16k nearly every distance has a bf16 twin; almost none has an fp32 one.
  EXPECT_GT(Row(2, Precision::kBf16).position_aliasing_fraction, 0.9);
  EXPECT_LT(Row(2, Precision::kFp32).position_aliasing_fraction, 0.01);
}

TEST(GaussianReference, TokenAliasingIsOfOrderTwoToTheMinusFTimesM) {
  EXPECT_GT(Row(2, Precision::kBf16).token_aliasing, Row(2, Precision::kFp16).token_aliasing);
  EXPECT_GE(Row(2, Precision::kFp16).token_aliasing, Row(2, Precision::kFp32).token_aliasing);
  for (Precision precision : {Precision::kBf16, Precision::kFp16}) {
    for (int length_index : {1, 2}) {
      const FailureModeRow& row = Row(length_index, precision);
      const double scale = std::ldexp(static_cast<double>(row.length), -FractionBits(precision));
      EXPECT_GT(row.token_aliasing, scale / 30) << PrecisionName(precision) << " " << row.length;
      EXPECT_LT(row.token_aliasing, scale) << PrecisionName(precision) << " " << row.length;
    }
  }
  EXPECT_LT(Row(2, Precision::kFp32).token_aliasing, 0.1);  // 2^-23 M is 0.002
}

TEST(GaussianReference, IsSeededAndOrderedAndRefusesBadGrids) {
  FailureModeGrid grid;
  grid.lengths = {100, 40};
  grid.bases = {10.0, 10000.0};
  grid.precisions = {Precision::kFp16, Precision::kBf16};
  grid.head_dim = 8;
  grid.draws = 3;
  grid.seed = 4;
  const StatusOr<std::vector<FailureModeRow>> first = MeasureGaussianFailureModes(grid);
  const StatusOr<std::vector<FailureModeRow>> second = MeasureGaussianFailureModes(grid);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(first->size(), 8u);
  EXPECT_EQ(FailureModeRowsToJson(*first), FailureModeRowsToJson(*second));
  for (size_t i = 0; i < first->size(); ++i) {
    const FailureModeRow& row = (*first)[i];
    EXPECT_EQ(row.length, grid.lengths[i / 4]);
    EXPECT_EQ(row.base, grid.bases[i / 2 % 2]);
    EXPECT_EQ(row.precision, grid.precisions[i % 2]);
    EXPECT_EQ(row.draws, 3);
    EXPECT_EQ(row.head_dim, 8);
    EXPECT_TRUE(row.heat_map.counts.empty());
  }
  grid.seed = 5;
  EXPECT_NE(FailureModeRowsToJson(*MeasureGaussianFailureModes(grid)), FailureModeRowsToJson(*first));

  for (auto breaks : std::vector<void (*)(FailureModeGrid&)>{
           [](FailureModeGrid& g) { g.lengths.clear(); }, [](FailureModeGrid& g) { g.lengths = {1}; },
           [](FailureModeGrid& g) { g.bases = {0.0}; }, [](FailureModeGrid& g) { g.precisions.clear(); },
           [](FailureModeGrid& g) { g.head_dim = 7; }, [](FailureModeGrid& g) { g.draws = 0; },
           [](FailureModeGrid& g) { g.heat_map_bins = -1; }}) {
    FailureModeGrid bad = grid;
    breaks(bad);
    EXPECT_EQ(MeasureGaussianFailureModes(bad).status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(GaussianReference, HeatMapsSumTheDrawsAndSerialise) {
  FailureModeGrid grid;
  grid.lengths = {2000};
  grid.bases = {10000.0};
  grid.precisions = {Precision::kBf16};
  grid.head_dim = 16;
  grid.draws = 4;
  grid.heat_map_bins = 200;
  const StatusOr<std::vector<FailureModeRow>> rows = MeasureGaussianFailureModes(grid);
  ASSERT_TRUE(rows.ok());
  const FailureModeRow& row = rows->front();
  ASSERT_EQ(row.heat_map.bins, 200);
  int64_t total = 0;
  for (int64_t count : row.heat_map.counts) total += count;
  EXPECT_GT(total, 0);
  EXPECT_DOUBLE_EQ(static_cast<double>(total), 2 * row.position_aliasing_pairs * grid.draws);

  const nlohmann::json json = FailureModeRowsToJson(*rows);
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["length"], 2000);
  EXPECT_EQ(json[0]["precision"], "bf16");
  EXPECT_EQ(json[0]["draws"], 4);
  EXPECT_DOUBLE_EQ(json[0]["position_aliasing_pairs"].get<double>(), row.position_aliasing_pairs);
  EXPECT_DOUBLE_EQ(json[0]["position_inversion_deviation"].get<double>(), row.position_inversion_deviation);
  EXPECT_EQ(json[0]["heat_map"]["bins"], 200);
  ASSERT_EQ(json[0]["heat_map"]["counts"].size(), 200u);
  EXPECT_EQ(json[0]["heat_map"]["counts"][3].size(), 200u);
  EXPECT_EQ(json[0]["heat_map"]["counts"][3][7].get<int64_t>(), row.heat_map.counts[3 * 200 + 7]);

  FailureModeRow tied = row;
  tied.token_inversion = std::nan("");
  tied.heat_map = {};
  const nlohmann::json tied_json = FailureModeRowsToJson({tied});
  EXPECT_TRUE(tied_json[0]["token_inversion"].is_null());
  EXPECT_FALSE(tied_json[0].contains("heat_map"));
}

}  // namespace
}  // namespace rung
