#include "sweeps/fit/chinchilla_law.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sweeps/fit/law_report.h"
#include "sweeps/fit/law_runs.h"

namespace rung::fit {
namespace {

// Hoffmann et al.'s fitted law (their eq. 10).
const ChinchillaLaw kChinchilla{1.69, 406.4, 410.7, 0.34, 0.28};

// Runs of `law` on a grid of 5 sizes x 4 token counts, each loss multiplied by exp(noise N(0, 1)).
std::vector<LawRun> GridRuns(const std::string& variant, const ChinchillaLaw& law, double noise, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<LawRun> runs;
  for (double n : {1e7, 3e7, 1e8, 3e8, 1e9}) {
    for (double d : {1e8, 1e9, 1e10, 1e11}) {
      LawRun run;
      run.variant = variant;
      run.n = n;
      run.d = d;
      run.loss = law.Predict(n, d) * std::exp(noise * normal(generator));
      runs.push_back(run);
    }
  }
  return runs;
}

void ExpectLawNear(const ChinchillaLaw& fitted, const ChinchillaLaw& truth, double tolerance) {
  EXPECT_NEAR(fitted.e, truth.e, tolerance * truth.e);
  EXPECT_NEAR(std::log(fitted.a), std::log(truth.a), tolerance * 10);
  EXPECT_NEAR(std::log(fitted.b), std::log(truth.b), tolerance * 10);
  EXPECT_NEAR(fitted.alpha, truth.alpha, tolerance);
  EXPECT_NEAR(fitted.beta, truth.beta, tolerance);
}

TEST(ChinchillaLaw, OptimalAllocationIsHoffmannsClosedForm) {
  // N_opt = G (C/6)^(beta/(alpha+beta)), G = (alpha A / (beta B))^(1/(alpha+beta)): at C = 5.76e23
  // (Chinchilla's budget) the law gives about 37B parameters (Hoffmann et al. Table A3: approach 3).
  const double n = kChinchilla.OptimalN(5.76e23);
  EXPECT_GT(n, 3e10);
  EXPECT_LT(n, 4.5e10);
  // And it is the minimum of L along C = 6 N D.
  const double c = 1e21;
  const double best = kChinchilla.OptimalN(c);
  for (double factor : {0.9, 1.1}) {
    EXPECT_LT(kChinchilla.OptimalLoss(c), kChinchilla.Predict(best * factor, c / (6 * best * factor)));
  }
}

TEST(ChinchillaLaw, RecoversKnownParametersFromNoiselessRuns) {
  StatusOr<LawFit> fit = FitChinchilla(GridRuns("rope", kChinchilla, 0.0, 1), {"rope"}, LawFitOptions());
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  ExpectLawNear(fit->laws[0], kChinchilla, 1e-3);
  EXPECT_LT(fit->rmse[0], 1e-5);
  EXPECT_EQ(fit->points[0], 20);
  EXPECT_EQ(fit->grid_points, 5400);
  EXPECT_EQ(fit->starts, 64);
}

TEST(ChinchillaLaw, BestGridStartsFindWhatEveryStartFinds) {
  std::vector<LawRun> runs = GridRuns("rope", kChinchilla, 0.01, 2);
  LawFitOptions every;
  every.lbfgs_starts = 0;
  StatusOr<LawFit> all = FitChinchilla(runs, {"rope"}, every);
  StatusOr<LawFit> best = FitChinchilla(runs, {"rope"}, LawFitOptions());
  ASSERT_TRUE(all.ok() && best.ok());
  EXPECT_EQ(all->starts, 5400);
  EXPECT_NEAR(best->objective, all->objective, 1e-9 * all->objective);
  ExpectLawNear(best->laws[0], all->laws[0], 1e-3);
}

TEST(ChinchillaLaw, SharedExponentsFitOneAlphaAndBetaForAllVariants) {
  ChinchillaLaw other = kChinchilla;
  other.e = 1.6;
  other.a = 300;
  other.b = 500;
  std::vector<LawRun> runs = GridRuns("rope", kChinchilla, 0.0, 1);
  for (const LawRun& run : GridRuns("lerope", other, 0.0, 1)) runs.push_back(run);
  LawFitOptions options;
  options.sharing = LawSharing::kExponents;
  StatusOr<LawFit> fit = FitChinchilla(runs, {"rope", "lerope"}, options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->laws[0].alpha, fit->laws[1].alpha);
  EXPECT_EQ(fit->laws[0].beta, fit->laws[1].beta);
  ExpectLawNear(fit->laws[0], kChinchilla, 1e-3);
  ExpectLawNear(fit->laws[1], other, 1e-3);
}

TEST(ChinchillaLaw, SharedEFitsOneEForAllVariants) {
  ChinchillaLaw other = kChinchilla;
  other.alpha = 0.4;
  other.b = 300;
  std::vector<LawRun> runs = GridRuns("rope", kChinchilla, 0.0, 1);
  for (const LawRun& run : GridRuns("lerope", other, 0.0, 1)) runs.push_back(run);
  LawFitOptions options;
  options.sharing = LawSharing::kE;
  StatusOr<LawFit> fit = FitChinchilla(runs, {"rope", "lerope"}, options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->laws[0].e, fit->laws[1].e);
  ExpectLawNear(fit->laws[1], other, 1e-3);
}

TEST(ChinchillaLaw, RefusesRunsOnOneAllocationRuleNamingTheIsoflopGrid) {
  std::vector<LawRun> runs;
  for (double n : {1e7, 3e7, 1e8, 3e8, 1e9, 3e9}) runs.push_back({"rope", n, 20 * n, kChinchilla.Predict(n, 20 * n)});
  StatusOr<LawFit> fit = FitChinchilla(runs, {"rope"}, LawFitOptions());
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(fit.status().message().find("ran on one allocation rule (its D rises with N, one D per N)"), std::string::npos) << fit.status().message();
  EXPECT_NE(fit.status().message().find("isoflop_budgets"), std::string::npos);
}

TEST(ChinchillaLaw, RefusesTooFewPointsForTheForm) {
  std::vector<LawRun> runs = GridRuns("rope", kChinchilla, 0.0, 1);
  runs.resize(4);
  runs[3].n = 3e7;  // 4 points, 2 sizes
  StatusOr<LawFit> fit = FitChinchilla(runs, {"rope"}, LawFitOptions());
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.status().message().find("variant 'rope' has 4 distinct (N, D) point(s)"), std::string::npos)
      << fit.status().message();
  EXPECT_NE(fit.status().message().find("needs at least 5"), std::string::npos);
}

TEST(ChinchillaLaw, AFitThatDoesNotConvergeSaysSoWithItsBestAttempt) {
  LawFitOptions options;
  options.max_iterations = 2;
  StatusOr<LawFit> fit = FitChinchilla(GridRuns("rope", kChinchilla, 0.02, 3), {"rope"}, options);
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(fit.status().message().find("did not converge"), std::string::npos) << fit.status().message();
  EXPECT_NE(fit.status().message().find("Huber loss"), std::string::npos);
  EXPECT_EQ(fit.status().message().find("nan"), std::string::npos);
}

TEST(LawMultiplier, IsTheSquareOfAScaleOfBothNAndD) {
  // A variant whose loss at (N, D) is the baseline's at (s N, s D) needs s^2 less compute along any
  // rule D = r N and at the optimum.
  const double s = 1.3;
  ChinchillaLaw variant = kChinchilla;
  variant.a = kChinchilla.a * std::pow(s, -kChinchilla.alpha);
  variant.b = kChinchilla.b * std::pow(s, -kChinchilla.beta);
  for (const char* allocation : {"rule", "optimal"}) {
    std::optional<double> multiplier = LawMultiplier(variant, kChinchilla, 1e20, allocation, 20);
    ASSERT_TRUE(multiplier.has_value()) << allocation;
    EXPECT_NEAR(*multiplier, s * s, 1e-9) << allocation;
  }
  EXPECT_NEAR(*LawMultiplier(kChinchilla, kChinchilla, 1e20, "rule", 20), 1.0, 1e-12);
  // Below the baseline's E the baseline never gets there.
  ChinchillaLaw better = kChinchilla;
  better.e = 1.0;
  EXPECT_FALSE(LawMultiplier(better, kChinchilla, 1e30, "optimal", 20).has_value());
}

TEST(LawRunsCsv, NamesTheRowOfANonPositiveLossAndAMissingColumn) {
  StatusOr<LawRuns> bad = ParseLawRunsCsv("n,d,loss\n1e7,1e9,3.1\n1e8,1e9,-2\n", "laws.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "laws.csv:3: loss must be a positive number, got -2");
  StatusOr<LawRuns> missing = ParseLawRunsCsv("n,loss\n1e7,3.1\n", "laws.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("laws.csv:1: missing column 'd'"), std::string::npos);
  StatusOr<LawRuns> text = ParseLawRunsCsv("n,d,loss,variant\n1e7,x,3.1,rope\n", "laws.csv");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), "laws.csv:2: column 'd': 'x' is not a number");
  StatusOr<LawRuns> good = ParseLawRunsCsv("# runs\nN,D,Loss\n1e7,1e9,3.1\n", "laws.csv");
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_EQ(good->runs[0].variant, "all");
  EXPECT_EQ(good->runs[0].origin, "laws.csv:3");
}

TEST(LawReport, RolloutPredictsTheLargestSizeOfNoiselessRunsExactly) {
  LawRuns runs;
  runs.source = "synthetic";
  runs.metric = "val_loss";
  runs.runs = GridRuns("rope", kChinchilla, 0.0, 1);
  for (double d : {3e8, 3e9, 3e10}) runs.runs.push_back({"rope", 2e8, d, kChinchilla.Predict(2e8, d)});
  LawOptions options;
  options.bootstrap = 0;
  StatusOr<LawReport> report = FitLaws(runs, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_TRUE(report->rollout.has_value());
  EXPECT_EQ(report->rollout->why, "");
  ASSERT_EQ(report->rollout->held_out_n, std::vector<double>{1e9});
  EXPECT_EQ(report->rollout->points.size(), 4u);
  EXPECT_LT(report->rollout->mean_relative_error, 1e-4);
  EXPECT_EQ(report->parameter_basis.why, "no bootstrap replicates were asked for");
}

TEST(LawReport, IntervalsRestOnRunsAndCoverTheTruthOfANoisyGrid) {
  LawRuns runs;
  runs.source = "synthetic";
  runs.runs = GridRuns("rope", kChinchilla, 0.005, 7);
  LawOptions options;
  options.bootstrap = 60;
  options.rollout = 0;
  options.isoflop = false;
  StatusOr<LawReport> report = FitLaws(runs, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->parameter_basis.construction, "percentile bootstrap");
  EXPECT_EQ(report->parameter_basis.unit, "runs");
  EXPECT_EQ(report->parameter_basis.units, 20);
  EXPECT_GT(report->parameter_basis.used, 50);
  const LawParameterIntervals& intervals = report->variants[0].intervals;
  ASSERT_TRUE(intervals.alpha && intervals.beta && intervals.e);
  EXPECT_LT(intervals.alpha->low, intervals.alpha->high);
  EXPECT_LE(intervals.e->low, report->variants[0].law.e);
  EXPECT_GE(intervals.e->high, report->variants[0].law.e);
  EXPECT_EQ(report->prediction_basis.construction, "residual bootstrap");
}

TEST(LawReport, TooFewUnitsGiveNoIntervalAndSayWhy) {
  LawRuns runs;
  runs.source = "synthetic";
  for (LawRun run : GridRuns("rope", kChinchilla, 0.0, 1)) {
    if (run.n > 1e8 || run.d > 1e10) continue;  // 3 sizes x 3 token counts: 9 runs
    runs.runs.push_back(run);
  }
  runs.runs.pop_back();
  runs.runs.pop_back();  // 7 runs
  LawOptions options;
  options.rollout = 0;
  StatusOr<LawReport> report = FitLaws(runs, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->parameter_basis.construction, "");
  EXPECT_EQ(report->parameter_basis.why, "7 runs of a variant: a percentile bootstrap needs 8");
  EXPECT_FALSE(report->variants[0].intervals.alpha.has_value());
}

TEST(IsoflopProfile, FindsTheLawsOptimumOnAnIsoflopGrid) {
  LawRuns runs;
  runs.source = "synthetic";
  for (double c : {1e18, 1e19, 1e20}) {
    const double centre = kChinchilla.OptimalN(c);
    for (double factor : {0.25, 0.5, 1.0, 2.0, 4.0}) {
      const double n = centre * factor, d = c / (6 * n);
      runs.runs.push_back({"rope", n, d, kChinchilla.Predict(n, d)});
    }
  }
  IsoflopOptions options;
  options.bootstrap = 0;
  StatusOr<IsoflopReport> report = FitIsoflopProfiles(runs, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->variants.size(), 1u);
  const IsoflopVariant& rope = report->variants[0];
  ASSERT_EQ(rope.budgets.size(), 3u);
  for (const IsoflopBudget& budget : rope.budgets) {
    ASSERT_TRUE(budget.n_opt.has_value()) << budget.why;
    // A parabola in ln N is the profile's second-order approximation: within a few percent.
    EXPECT_NEAR(std::log(*budget.n_opt), std::log(kChinchilla.OptimalN(budget.compute)), 0.05);
  }
  ASSERT_TRUE(rope.a.has_value());
  EXPECT_NEAR(*rope.a, kChinchilla.beta / (kChinchilla.alpha + kChinchilla.beta), 0.02);
  EXPECT_NEAR(*rope.b, 1 - *rope.a, 1e-12);
  EXPECT_EQ(report->intervals_why, "no bootstrap replicates were asked for");
}

TEST(IsoflopProfile, SaysWhyWithoutThreeSizesAtABudget) {
  LawRuns runs;
  runs.source = "synthetic";
  runs.runs = {{"rope", 1e7, 1e9, 3.0}, {"rope", 1e8, 1e9, 2.9}};
  StatusOr<IsoflopReport> report = FitIsoflopProfiles(runs, IsoflopOptions());
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("no variant ran 3 distinct sizes at one compute budget"),
            std::string::npos)
      << report.status().message();
}

}  // namespace
}  // namespace rung::fit
