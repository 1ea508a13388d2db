#include "core/diagnostics/beta_exponent.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "core/diagnostics/contact_aggregation.h"

namespace rung {
namespace {

std::vector<double> PowerLawTable(int64_t size, double a1, double xi) {
  std::vector<double> beta(static_cast<size_t>(size));
  for (int64_t n = 1; n <= size; ++n) beta[n - 1] = a1 * std::pow(std::log(static_cast<double>(n)), xi);
  return beta;
}

TEST(BetaExponent, RecoversAnExactPowerOfLogNOnTheSixPointGrid) {
  BetaExponentFit fit = FitBetaExponentOnGrid(PowerLawTable(1024, 3.0, 0.7), PaperDiagnosticLengths());
  ASSERT_TRUE(fit.fitted);
  EXPECT_NEAR(fit.xi, 0.7, 1e-12);
  EXPECT_NEAR(fit.log_a1, std::log(3.0), 1e-12);
  EXPECT_NEAR(fit.standard_error, 0.0, 1e-9);
  EXPECT_EQ(fit.lengths, PaperDiagnosticLengths());
}

TEST(BetaExponent, GridFitKeepsLengthsFrom64WithinTheTable) {
  BetaExponentFit fit = FitBetaExponentOnGrid(PowerLawTable(300, 1.0, 0.5), {16, 32, 64, 128, 256, 512});
  EXPECT_EQ(fit.lengths, (std::vector<int64_t>{64, 128, 256}));
  EXPECT_FALSE(FitBetaExponentOnGrid(PowerLawTable(100, 1.0, 0.5), PaperDiagnosticLengths()).fitted);
}

TEST(BetaExponent, TrimFitUsesEveryLengthFromTheTrim) {
  BetaExponentFit fit = FitBetaExponentFromTrim(PowerLawTable(200, 2.0, 1.5), 10);
  ASSERT_TRUE(fit.fitted);
  EXPECT_EQ(fit.lengths.size(), 191u);
  EXPECT_EQ(fit.lengths.front(), 10);
  EXPECT_NEAR(fit.xi, 1.5, 1e-10);
}

TEST(BetaExponent, SkipsLengthsWhoseBetaIsNotPositive) {
  std::vector<double> beta = PowerLawTable(1024, 1.0, 1.0);
  beta[127] = -0.5;  // n = 128
  beta[255] = std::nan("");
  BetaExponentFit fit = FitBetaExponentOnGrid(beta, PaperDiagnosticLengths());
  EXPECT_EQ(fit.skipped, 2);
  EXPECT_EQ(fit.lengths, (std::vector<int64_t>{64, 512, 768, 1024}));
  EXPECT_NEAR(fit.xi, 1.0, 1e-12);
}

TEST(BetaExponent, NoisyTableGivesAnIntervalThatCoversTheExponent) {
  std::mt19937_64 random(4);
  std::normal_distribution<double> noise(0.0, 0.02);
  std::vector<double> beta = PowerLawTable(1024, 1.0, 0.8);
  for (double& value : beta) value *= std::exp(noise(random));
  BetaExponentFit fit = FitBetaExponentFromTrim(beta, 64);
  EXPECT_GT(fit.standard_error, 0.0);
  EXPECT_NEAR(fit.xi, 0.8, 4 * fit.standard_error);
}

// Paper 004 (appendix B.2) reports the six-point OLS standard error of the slope: here from the normal
// equations, s^2 [(X'X)^-1]_11 = s^2 m / (m sum x^2 - (sum x)^2), with s^2 the residual variance on m - 2.
TEST(BetaExponent, ReportsTheOrdinaryLeastSquaresStandardErrorOfTheSixPointSlope) {
  std::vector<double> beta = PowerLawTable(1024, 1.0, 0.6);
  const std::vector<double> wiggle = {0.03, -0.02, 0.01, -0.04, 0.02, 0.01};
  const std::vector<int64_t> grid = PaperDiagnosticLengths();
  for (size_t i = 0; i < grid.size(); ++i) beta[grid[i] - 1] *= std::exp(wiggle[i]);
  BetaExponentFit fit = FitBetaExponentOnGrid(beta, grid);
  ASSERT_EQ(fit.lengths.size(), 6u);
  double sum_x = 0, sum_xx = 0, rss = 0;
  for (int64_t n : grid) {
    const double x = std::log(std::log(static_cast<double>(n)));
    sum_x += x;
    sum_xx += x * x;
    const double residual = std::log(beta[n - 1]) - fit.log_a1 - fit.xi * x;
    rss += residual * residual;
  }
  const double m = 6.0;
  const double expected = std::sqrt(rss / (m - 2.0) * m / (m * sum_xx - sum_x * sum_x));
  EXPECT_GT(expected, 0.01);
  EXPECT_NEAR(fit.standard_error, expected, 1e-9 * expected);
}

}  // namespace
}  // namespace rung
