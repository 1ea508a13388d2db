#include "sweeps/fit/student_t.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tests/sweeps/fit/student_t_reference.h"

// The reference values are SciPy's (tests/sweeps/fit/student_t_reference.py generates the table; the
// ctest fit.StudentTAgreesWithScipy checks it against the SciPy installed). Tolerances:
//   quantiles            1e-12 relative (|q| > 1e-300; the median is exactly 0)
//   cdf                  1e-12 relative below 1/4 (the lower tail), 1e-14 absolute from 1/4 up
//                        (near 1/2 and above, where the cdf is 1 - a small tail)
//   two-sided p-values   1e-12 relative
//   incomplete beta      1e-12 relative (SciPy's own error is up to 7e-13 for a parameter of 500)
//   Holm                 exact: the same products of doubles as the definition

namespace rung::fit {
namespace {

constexpr double kStudentTNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kStudentTInf = std::numeric_limits<double>::infinity();

// |actual - expected| <= relative * |expected|, with the case in the message.
::testing::AssertionResult StudentTRelativelyNear(double actual, double expected, double relative) {
  if (std::fabs(actual - expected) <= relative * std::fabs(expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "actual " << actual << ", expected " << expected << ", relative error "
                                       << std::fabs(actual - expected) / std::fabs(expected) << " > " << relative;
}

double StudentTReferenceQuantile(double df, double p) {
  for (const reference::QuantileCase& row : reference::kQuantiles) {
    if (row.df == df && row.p == p) return row.quantile;
  }
  ADD_FAILURE() << "no reference quantile for df " << df << ", p " << p;
  return kStudentTNaN;
}

TEST(StudentTQuantile, AgreesWithScipyToTwelveDigits) {
  for (const reference::QuantileCase& row : reference::kQuantiles) {
    SCOPED_TRACE(::testing::Message() << "df " << row.df << ", p " << row.p);
    double quantile = StudentTQuantile(row.p, row.df);
    if (std::fabs(row.quantile) > 1e-300) {
      EXPECT_TRUE(StudentTRelativelyNear(quantile, row.quantile, 1e-12));
    } else {
      EXPECT_EQ(quantile, 0.0);
    }
  }
}

// SciPy's own t.ppf (cdflib's stdtrit up to at least SciPy 1.10) stops its search at about 1e-9
// relative: the quantiles agree with it to that, and with the root of SciPy's cdf to 1e-12 (above).
TEST(StudentTQuantile, AgreesWithScipysPpfToItsOwnAccuracy) {
  for (const reference::QuantileCase& row : reference::kQuantiles) {
    SCOPED_TRACE(::testing::Message() << "df " << row.df << ", p " << row.p);
    double quantile = StudentTQuantile(row.p, row.df);
    if (row.p == 0.5) {
      EXPECT_LT(std::fabs(row.scipy_ppf), 1e-15);
    } else {
      EXPECT_TRUE(StudentTRelativelyNear(quantile, row.scipy_ppf, 1e-8));
    }
  }
}

TEST(StudentTCdf, AgreesWithScipyInBothTails) {
  for (const reference::CdfCase& row : reference::kCdfs) {
    SCOPED_TRACE(::testing::Message() << "df " << row.df << ", t " << row.t);
    double cdf = StudentTCdf(row.t, row.df);
    if (row.cdf < 0.25) {
      EXPECT_TRUE(StudentTRelativelyNear(cdf, row.cdf, 1e-12));
    } else {
      EXPECT_NEAR(cdf, row.cdf, 1e-14);
    }
    // The upper tail P(T > t) = P(T < -t), from the same table's two-sided p-value.
    EXPECT_TRUE(StudentTRelativelyNear(StudentTCdf(-std::fabs(row.t), row.df), row.two_sided / 2, 1e-12));
  }
}

TEST(StudentTTwoSidedPValue, AgreesWithScipyToTwelveDigits) {
  for (const reference::CdfCase& row : reference::kCdfs) {
    SCOPED_TRACE(::testing::Message() << "df " << row.df << ", t " << row.t);
    EXPECT_TRUE(StudentTRelativelyNear(StudentTTwoSidedPValue(row.t, row.df), row.two_sided, 1e-12));
  }
}

TEST(RegularizedIncompleteBeta, AgreesWithScipyToTwelveDigits) {
  for (const reference::BetaCase& row : reference::kBetas) {
    SCOPED_TRACE(::testing::Message() << "a " << row.a << ", b " << row.b << ", x " << row.x);
    double value = RegularizedIncompleteBeta(row.a, row.b, row.x);
    if (row.value == 0) {
      EXPECT_EQ(value, 0.0);
    } else {
      EXPECT_TRUE(StudentTRelativelyNear(value, row.value, 1e-12));
    }
  }
}

TEST(HolmAdjust, MatchesTheDefinitionWorkedByHand) {
  for (const reference::HolmCase& row : reference::kHolm) {
    std::vector<double> adjusted = HolmAdjust(row.p_values);
    ASSERT_EQ(adjusted.size(), row.adjusted.size());
    for (std::size_t index = 0; index < adjusted.size(); ++index) {
      SCOPED_TRACE(::testing::Message() << "case of " << row.p_values.size() << " p-values, entry " << index);
      if (std::isnan(row.adjusted[index])) {
        EXPECT_TRUE(std::isnan(adjusted[index]));
      } else {
        EXPECT_EQ(adjusted[index], row.adjusted[index]);
      }
    }
  }
}

TEST(HolmAdjust, AdjustedValuesAreMonotoneInThePValuesAndNeverBelowThem) {
  std::mt19937_64 generator(7);
  std::uniform_real_distribution<double> uniform(0.0, 0.2);
  std::vector<double> p_values(40);
  for (double& p : p_values) p = uniform(generator);
  std::vector<double> adjusted = HolmAdjust(p_values);
  for (std::size_t i = 0; i < p_values.size(); ++i) {
    EXPECT_GE(adjusted[i], p_values[i]);
    EXPECT_LE(adjusted[i], 1.0);
    for (std::size_t j = 0; j < p_values.size(); ++j) {
      if (p_values[i] <= p_values[j]) EXPECT_LE(adjusted[i], adjusted[j]);
    }
  }
}

TEST(HolmAdjust, EmptyGivesEmptyAndAnOutOfRangeEntryMakesEveryOutputNaN) {
  EXPECT_TRUE(HolmAdjust({}).empty());
  for (double invalid : {-0.1, 1.5, kStudentTInf}) {
    std::vector<double> adjusted = HolmAdjust({0.01, invalid, kStudentTNaN});
    ASSERT_EQ(adjusted.size(), 3u);
    for (double value : adjusted) EXPECT_TRUE(std::isnan(value)) << invalid;
  }
}

TEST(StudentTQuantile, InvertsTheCdfInBothTails) {
  std::mt19937_64 generator(11);
  std::uniform_real_distribution<double> log_p(std::log(1e-300), std::log(0.5));
  std::uniform_real_distribution<double> log_df(std::log(0.3), std::log(1e8));
  for (int draw = 0; draw < 400; ++draw) {
    double p = std::exp(log_p(generator));
    double df = std::exp(log_df(generator));
    SCOPED_TRACE(::testing::Message() << "df " << df << ", p " << p);
    double quantile = StudentTQuantile(p, df);
    if (std::isinf(quantile)) continue;  // beyond the largest double (tiny df, tiny p)
    // The cdf of the quantile is p, to the precision the double quantile carries: one ulp of q moves
    // the cdf by about min(df, q^2) + 1 ulps (t f(t) / F(t): df in the power-law tail, q^2 where
    // the distribution is nearly normal).
    double conditioning = std::min(df, quantile * quantile) + 1;
    EXPECT_TRUE(StudentTRelativelyNear(StudentTCdf(quantile, df), p, 1e-13 + 4.5e-16 * conditioning));
  }
}

TEST(StudentTQuantile, IsAntisymmetricAndZeroAtTheMedian) {
  for (double df : {0.5, 1.0, 2.0, 3.7, 30.0, 1e6}) {
    EXPECT_EQ(StudentTQuantile(0.5, df), 0.0);
    // p whose 1 - p is exact (a few binary digits), so that 1 - p and p are the same tail.
    for (double p : {0x1p-30, 0x1p-10, 0.25, 0.375, 0.4990234375}) {
      EXPECT_EQ(StudentTQuantile(1 - p, df), -StudentTQuantile(p, df)) << df << " " << p;
      EXPECT_LT(StudentTQuantile(p, df), 0.0);
    }
  }
}

TEST(StudentTQuantile, CauchyFarTailKeepsItsDigits) {
  // df = 1: q(p) = -cot(pi p), which is -1 / (pi p) to 1e-600 relative at p = 1e-300. (The form
  // tan(pi (p - 1/2)) would lose every digit there: p - 1/2 rounds to -1/2.)
  const double pi = 3.14159265358979323846;
  EXPECT_TRUE(StudentTRelativelyNear(StudentTQuantile(1e-300, 1.0), -1 / (pi * 1e-300), 1e-15));
  EXPECT_TRUE(StudentTRelativelyNear(StudentTQuantile(1e-12, 1.0), -1 / std::tan(pi * 1e-12), 1e-15));
  EXPECT_DOUBLE_EQ(StudentTQuantile(0.75, 1.0), 1.0);
}

TEST(StudentTQuantile, QuantileBeyondTheLargestDoubleIsInfinite) {
  // df = 1/2: P(T < t) ~ c |t|^(-1/2) far out, so p = 1e-300 is reached near t = -1e600.
  EXPECT_EQ(StudentTQuantile(1e-300, 0.5), -kStudentTInf);
  EXPECT_EQ(StudentTQuantile(1 - 1e-16, 0.05), kStudentTInf);
}

TEST(StudentTDistribution, InfiniteDegreesOfFreedomIsTheStandardNormal) {
  EXPECT_TRUE(StudentTRelativelyNear(StudentTCdf(-1.959963984540054, kStudentTInf), 0.025, 1e-14));
  EXPECT_TRUE(StudentTRelativelyNear(StudentTQuantile(0.975, kStudentTInf), 1.959963984540054, 1e-14));
  // P(Z < -30), kept far in the tail (scipy.stats.norm.cdf(-30)).
  EXPECT_TRUE(StudentTRelativelyNear(StudentTCdf(-30, kStudentTInf), 4.906713927148187e-198, 1e-13));
  // Very many degrees of freedom: t and the normal differ by O(t^4 / df), below double precision.
  for (double t : {-8.0, -3.0, -1.0, 0.5}) {
    EXPECT_TRUE(StudentTRelativelyNear(StudentTCdf(t, 1e18), StudentTCdf(t, kStudentTInf), 1e-13)) << t;
  }
  EXPECT_TRUE(StudentTRelativelyNear(StudentTQuantile(1e-10, 1e300), StudentTQuantile(1e-10, kStudentTInf), 1e-13));
}

TEST(StudentTDistribution, InfiniteAndZeroTGiveTheLimits) {
  EXPECT_EQ(StudentTCdf(-kStudentTInf, 3.0), 0.0);
  EXPECT_EQ(StudentTCdf(kStudentTInf, 3.0), 1.0);
  EXPECT_EQ(StudentTCdf(0.0, 3.0), 0.5);
  EXPECT_EQ(StudentTTwoSidedPValue(0.0, 3.0), 1.0);
  EXPECT_EQ(StudentTTwoSidedPValue(-kStudentTInf, 3.0), 0.0);
  EXPECT_EQ(StudentTTwoSidedPValue(1e300, 2.0), 0.0);
}

TEST(StudentTDistribution, InvalidArgumentsGiveNaN) {
  for (double df : {0.0, -1.0, kStudentTNaN, -kStudentTInf}) {
    EXPECT_TRUE(std::isnan(StudentTCdf(1.0, df))) << df;
    EXPECT_TRUE(std::isnan(StudentTQuantile(0.3, df))) << df;
    EXPECT_TRUE(std::isnan(StudentTTwoSidedPValue(1.0, df))) << df;
  }
  for (double p : {0.0, 1.0, -0.5, 1.5, kStudentTNaN, kStudentTInf}) {
    EXPECT_TRUE(std::isnan(StudentTQuantile(p, 3.0))) << p;
  }
  EXPECT_TRUE(std::isnan(StudentTCdf(kStudentTNaN, 3.0)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedPValue(kStudentTNaN, 3.0)));
}

TEST(RegularizedIncompleteBeta, InvalidArgumentsGiveNaN) {
  EXPECT_TRUE(std::isnan(RegularizedIncompleteBeta(0.0, 1.0, 0.5)));
  EXPECT_TRUE(std::isnan(RegularizedIncompleteBeta(1.0, -1.0, 0.5)));
  EXPECT_TRUE(std::isnan(RegularizedIncompleteBeta(kStudentTInf, 1.0, 0.5)));
  EXPECT_TRUE(std::isnan(RegularizedIncompleteBeta(1.0, 1.0, -0.1)));
  EXPECT_TRUE(std::isnan(RegularizedIncompleteBeta(1.0, 1.0, 1.1)));
  EXPECT_TRUE(std::isnan(RegularizedIncompleteBeta(1.0, kStudentTNaN, 0.5)));
  EXPECT_TRUE(std::isnan(RegularizedIncompleteBeta(1.0, 1.0, kStudentTNaN)));
}

TEST(RegularizedIncompleteBeta, MatchesClosedFormsAndItsReflection) {
  // I_x(a, 1) = x^a, I_x(1, b) = 1 - (1 - x)^b: identities, not values of this code.
  for (double x : {1e-8, 0.1, 0.5, 0.9}) {
    for (double a : {0.2, 1.0, 3.5, 40.0}) {
      EXPECT_TRUE(StudentTRelativelyNear(RegularizedIncompleteBeta(a, 1.0, x), std::pow(x, a), 1e-13)) << a << " " << x;
      EXPECT_TRUE(StudentTRelativelyNear(RegularizedIncompleteBeta(1.0, a, x), -std::expm1(a * std::log1p(-x)), 1e-13))
          << a << " " << x;
    }
  }
  // I_x(a, b) + I_(1-x)(b, a) = 1.
  std::mt19937_64 generator(3);
  std::uniform_real_distribution<double> log_parameter(std::log(0.1), std::log(1e4));
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int draw = 0; draw < 200; ++draw) {
    double a = std::exp(log_parameter(generator));
    double b = std::exp(log_parameter(generator));
    double x = uniform(generator);
    EXPECT_NEAR(RegularizedIncompleteBeta(a, b, x) + RegularizedIncompleteBeta(b, a, 1 - x), 1.0, 1e-14)
        << a << " " << b << " " << x;
  }
}

}  // namespace
}  // namespace rung::fit
