// Paper 003's closed forms against the paper's printed tables: every cell of Table 3 and Table 4 (as
// the paper prints it: its tables' numbers are Python's format(x, '.2') and '.1'), Theorem 8's limit
// against the text's "up to 5% ... 1.6K aliasing positions in 32K tokens" at h = 64 and bf16.
#include "core/diagnostics/failure_mode_closed_forms.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/common/python_float_format.h"

namespace rung {
namespace {

constexpr int64_t kPairs = 64;  // h = 64 (head dimension 128), as both tables

TEST(FailureModeClosedForms, Table3IsTheSmallestLengthWhereEq5ReachesThreshold) {
  const double bases[] = {1e4, 1e5, 1e6, 1e7, 1e8};
  // Table 3 prints 2.65 x 10^5, 23361, 4630, 1457, 612.
  const double printed[] = {2.65e5, 23361, 4630, 1457, 612};
  for (size_t i = 0; i < std::size(bases); ++i) {
    const double length = SmallestInversionLength(kPairs, bases[i], 0.3);
    if (i == 0) {
      EXPECT_EQ(length, 264835);
      EXPECT_EQ(PythonGeneralFormat(length, 3), "2.65e+05");
    } else {
      EXPECT_EQ(length, printed[i]) << "B = " << bases[i];
    }
    EXPECT_GE(PositionInversionLowerBound(static_cast<int64_t>(length), kPairs, bases[i]), 0.3);
    EXPECT_LT(PositionInversionLowerBound(static_cast<int64_t>(length) - 1, kPairs, bases[i]), 0.3);
  }
}

TEST(FailureModeClosedForms, Eq5RisesWithLengthAndBaseTowardsOneHalf) {
  EXPECT_LT(PositionInversionLowerBound(1024, kPairs, 1e4), PositionInversionLowerBound(4096, kPairs, 1e4));
  EXPECT_LT(PositionInversionLowerBound(1024, kPairs, 1e4), PositionInversionLowerBound(1024, kPairs, 1e6));
  EXPECT_LT(PositionInversionLowerBound(int64_t{1} << 40, kPairs, 1e8),
            PositionInversionLowerBound(int64_t{1} << 62, kPairs, 1e8));
  EXPECT_LT(PositionInversionLowerBound(int64_t{1} << 62, kPairs, 1e8), 0.5);
  EXPECT_TRUE(std::isnan(PositionInversionLowerBound(1, kPairs, 1e4)));
}

TEST(FailureModeClosedForms, Eq5IsTheNormalApproximationWithAContinuousLambda) {
  // C.1: Phi(-(lambda(M) - lambda(M/2)) / sqrt((lambda(M) + lambda(M/2)) / 2)); with lambda = h log_B M
  // as a real number it is Eq. 5 exactly, and with lambda an integer it stays near it.
  for (double base : {1e4, 1e6}) {
    for (int64_t length : {int64_t{1024}, int64_t{65536}, int64_t{1} << 30}) {
      const double whole = FastPairBoundary(length, kPairs, base);
      const double half = FastPairBoundary(length / 2, kPairs, base);
      const double continuous = 0.5 * std::erfc((whole - half) / std::sqrt((whole + half) / 2.0) / std::sqrt(2.0));
      EXPECT_NEAR(continuous, PositionInversionLowerBound(length, kPairs, base), 1e-12) << length;
      EXPECT_NEAR(PositionInversionNormal(length, kPairs, base, false), continuous, 0.1) << length;
    }
  }
}

TEST(FailureModeClosedForms, SmallestLengthIsUndefinedAtOrAboveOneHalf) {
  EXPECT_TRUE(std::isnan(SmallestInversionLength(kPairs, 1e4, 0.5)));
  EXPECT_TRUE(std::isnan(SmallestInversionLength(kPairs, 1e4, 0.0)));
  EXPECT_EQ(SmallestInversionLength(kPairs, 1e4, 1e-9), 2);
  // Close to 1/2 the root is past 2^53: a real number, not an integer count, and still finite.
  const double far = SmallestInversionLength(kPairs, 1e4, 0.45);
  EXPECT_GT(far, 9007199254740992.0);
  EXPECT_TRUE(std::isfinite(far));
}

TEST(FailureModeClosedForms, LambdaCountsThePairsThatTurnAtLeastOneRadian) {
  // h log_B M = 64 log_10(1024) / 4 = 48.16: pairs 0..48 turn more than a radian over [0, 1024).
  EXPECT_EQ(FastPairCount(1024, kPairs, 1e4, false), 49);
  for (int64_t n = 0; n < kPairs; ++n) {
    const bool fast = 1024.0 * std::pow(1e4, -static_cast<double>(n) / kPairs) > 1.0;
    EXPECT_EQ(fast, n < 49) << n;
  }
  // Past M = B the paper's lambda exceeds h; capped it stops at h.
  EXPECT_EQ(FastPairCount(65536, kPairs, 1e4, false), 78);
  EXPECT_EQ(FastPairCount(65536, kPairs, 1e4, true), 64);
  EXPECT_EQ(FastPairCount(1, kPairs, 1e4, false), 0);
  const RopeProductNormal normal = RopeProductNormalAt(1024, kPairs, 1e4, false);
  EXPECT_EQ(normal.mean_bound, 15);
  EXPECT_DOUBLE_EQ(normal.sd, std::sqrt(24.5));
}

// Table 4 as printed: M, B, then bf16, fp16, fp32 probabilities, then their expectations.
struct Table4Row {
  int64_t length;
  double base;
  const char* probability[3];
  const char* expectation[3];
};
const Table4Row kTable4[] = {
    {1024, 1e4, {"0.057", "0.0071", "8.7e-07"}, {"3e+04 ± 2e+02", "3.7e+03 ± 6e+01", "0.46 ± 0.7"}},
    {1024, 1e5, {"0.064", "0.008", "9.7e-07"}, {"3.3e+04 ± 2e+02", "4.2e+03 ± 6e+01", "0.51 ± 0.7"}},
    {1024, 1e6, {"0.069", "0.0087", "1.1e-06"}, {"3.6e+04 ± 2e+02", "4.5e+03 ± 7e+01", "0.56 ± 0.7"}},
    {4096, 1e4, {"0.052", "0.0065", "8e-07"}, {"4.4e+05 ± 6e+02", "5.5e+04 ± 2e+02", "6.7 ± 3e+00"}},
    {4096, 1e5, {"0.058", "0.0073", "8.9e-07"}, {"4.9e+05 ± 7e+02", "6.1e+04 ± 2e+02", "7.4 ± 3e+00"}},
    {4096, 1e6, {"0.064", "0.008", "9.7e-07"}, {"5.4e+05 ± 7e+02", "6.7e+04 ± 3e+02", "8.2 ± 3e+00"}},
    {16384, 1e4, {"0.048", "0.006", "7.4e-07"}, {"6.5e+06 ± 2e+03", "8.1e+05 ± 9e+02", "9.9e+01 ± 1e+01"}},
    {16384, 1e5, {"0.054", "0.0068", "8.3e-07"}, {"7.3e+06 ± 3e+03", "9.1e+05 ± 1e+03", "1.1e+02 ± 1e+01"}},
    {16384, 1e6, {"0.059", "0.0074", "9.1e-07"}, {"8e+06 ± 3e+03", "1e+06 ± 1e+03", "1.2e+02 ± 1e+01"}},
    {32768, 1e4, {"0.047", "0.0058", "7.1e-07"}, {"2.5e+07 ± 5e+03", "3.1e+06 ± 2e+03", "3.8e+02 ± 2e+01"}},
    {32768, 1e5, {"0.052", "0.0065", "8e-07"}, {"2.8e+07 ± 5e+03", "3.5e+06 ± 2e+03", "4.3e+02 ± 2e+01"}},
    {32768, 1e6, {"0.057", "0.0071", "8.7e-07"}, {"3.1e+07 ± 5e+03", "3.8e+06 ± 2e+03", "4.7e+02 ± 2e+01"}},
    {65536, 1e4, {"0.045", "0.0056", "6.9e-07"}, {"9.7e+07 ± 1e+04", "1.2e+07 ± 3e+03", "1.5e+03 ± 4e+01"}},
    {65536, 1e5, {"0.051", "0.0063", "7.7e-07"}, {"1.1e+08 ± 1e+04", "1.4e+07 ± 4e+03", "1.7e+03 ± 4e+01"}},
    {65536, 1e6, {"0.055", "0.0069", "8.4e-07"}, {"1.2e+08 ± 1e+04", "1.5e+07 ± 4e+03", "1.8e+03 ± 4e+01"}},
};

TEST(FailureModeClosedForms, Table4PrintsAsThePaperPrintsIt) {
  const int fraction_bits[] = {7, 10, 23};
  for (const Table4Row& row : kTable4) {
    for (int i = 0; i < 3; ++i) {
      const SinglePairAliasing aliasing = SinglePairAliasingAt(row.length, kPairs, row.base, fraction_bits[i], false);
      EXPECT_EQ(PythonGeneralFormat(aliasing.probability, 2), row.probability[i])
          << "M = " << row.length << ", B = " << row.base << ", f = " << fraction_bits[i];
      EXPECT_EQ(PythonGeneralFormat(aliasing.expected_pairs, 2) + " ± " + PythonGeneralFormat(aliasing.expected_pairs_sd, 1),
                row.expectation[i])
          << "M = " << row.length << ", B = " << row.base << ", f = " << fraction_bits[i];
    }
  }
}

TEST(FailureModeClosedForms, Table4UsesThePapersResolutionNotOneRoundedScore) {
  // epsilon = 2^-f max(sqrt(d), h): 64 / 128 = 0.5 at bf16, h = 64.
  EXPECT_DOUBLE_EQ(AliasingResolution(kPairs, 7), 0.5);
  // For a small head sqrt(d) wins: h = 2, d = 4.
  EXPECT_DOUBLE_EQ(AliasingResolution(2, 7), 2.0 / 128.0);
  // Theorem 6: a random distance almost surely has a partner at bf16 by M = 1024.
  EXPECT_GT(SinglePairAliasingAt(1024, kPairs, 1e4, 7, false).distance_has_alias, 0.999);
  EXPECT_TRUE(std::isnan(SinglePairAliasingAt(1, kPairs, 1e4, 7, false).probability));
}

TEST(FailureModeClosedForms, Theorem8ConvergesToTwoToTheOneMinusFRootHOverTwoPi) {
  // The text: "If h = 64, using BF16, up to 5% of the total positions exhibit token aliasing. This means
  // 1.6K aliasing positions in 32K tokens."
  const double limit = TokenAliasingLimit(kPairs, 7);
  EXPECT_NEAR(limit, std::ldexp(1.0, -6) * std::sqrt(64.0 / (2.0 * 3.14159265358979323846)), 1e-15);
  EXPECT_EQ(PythonGeneralFormat(limit, 1), "0.05");
  EXPECT_EQ(PythonGeneralFormat(limit * 32768 / 1000, 2), "1.6");
  // At lambda(M) = h the approximation is the limit: B = 2^64 gives lambda(2^64 - 1) = 64, capped or not.
  const int64_t at_h = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(FastPairCount(at_h, kPairs, std::ldexp(1.0, 63), true), kPairs);
  EXPECT_DOUBLE_EQ(TokenAliasingApproximation(at_h, kPairs, std::ldexp(1.0, 63), 7, true), limit);
  // Below it, fewer fast pairs leave a mean gap: less aliasing than the limit.
  EXPECT_LT(TokenAliasingApproximation(1024, kPairs, 1e4, 7, false), limit);
}

}  // namespace
}  // namespace rung
