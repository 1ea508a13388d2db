// Compute multipliers of made-up ladders against values computed by hand.
#include "sweeps/fit/compute_multipliers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sweeps/fit/hermite.h"
#include "sweeps/fit/ladder_csv.h"
#include "sweeps/fit/student_t.h"

namespace rung::fit {
namespace {

struct TestRun {
  std::string variant, label;
  double compute, loss;
  std::optional<int64_t> seed = std::nullopt;
  std::optional<double> seconds = std::nullopt;
};

LadderResults Make(const std::vector<TestRun>& runs) {
  LadderResults ladder;
  ladder.source = "test";
  for (const TestRun& run : runs) {
    ladder.runs.push_back({run.variant, run.label, run.compute, run.loss, run.seed, run.seconds, ""});
  }
  return ladder;
}

const MultiplierRow& Row(const MultiplierReport& report, Estimator estimator, const std::string& variant,
                         const std::string& label) {
  for (const MultiplierRow& row : report.rows) {
    if (row.estimator == estimator && row.variant == variant && row.label == label) return row;
  }
  static MultiplierRow none;
  ADD_FAILURE() << "no row " << EstimatorName(estimator) << " " << variant << " " << label;
  return none;
}

MultiplierOptions Options(const std::string& baseline) {
  MultiplierOptions options;
  options.baseline = baseline;
  options.bootstrap = 0;
  return options;
}

// Baseline "base": -1 nat over the first decade, -0.5 over the second (as in piecewise_test.cc).
std::vector<TestRun> HandLadder() {
  return {{"base", "p1", 1e10, 4.0}, {"base", "p2", 1e11, 3.0}, {"base", "p3", 1e12, 2.5}, {"v", "p1", 1e10, 3.5},
          {"v", "p2", 1e11, 2.75},   {"v", "p3", 1e12, 2.0},    {"w", "p1", 1e10, 4.5}};
}

TEST(ComputeMultipliers, PiecewiseMultipliersMatchHandValues) {
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(HandLadder()), Options("base"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->variants, (std::vector<std::string>{"base", "v", "w"}));
  const double root10 = std::sqrt(10.0);
  // v at p1: base reaches 3.5 at 10^10.5, v spent 1e10: CM = 10^0.5.
  EXPECT_NEAR(Row(*report, Estimator::kPiecewise, "v", "p1").multiplier.value(), root10, 1e-9);
  EXPECT_NEAR(Row(*report, Estimator::kPiecewise, "v", "p1").baseline_compute.value(), 1e10 * root10, 1e-3);
  // v at p2: 2.75 is reached at 10^11.5: CM = 10^0.5.
  EXPECT_NEAR(Row(*report, Estimator::kPiecewise, "v", "p2").multiplier.value(), root10, 1e-9);
  // v at p3: 2.0 is below the range; the last segment continued reaches it at 1e13: CM = 10.
  const MultiplierRow& extrapolated = Row(*report, Estimator::kPiecewise, "v", "p3");
  EXPECT_NEAR(extrapolated.multiplier.value(), 10.0, 1e-9);
  EXPECT_EQ(extrapolated.how, "continues p2-p3 beyond p3");
  // w at p1: 4.5 is above the range; the first segment continued reaches it at 10^9.5: CM = 10^-0.5.
  EXPECT_NEAR(Row(*report, Estimator::kPiecewise, "w", "p1").multiplier.value(), 1 / root10, 1e-9);
  // The baseline against itself.
  for (const char* label : {"p1", "p2", "p3"}) {
    EXPECT_DOUBLE_EQ(Row(*report, Estimator::kPiecewise, "base", label).multiplier.value(), 1.0) << label;
  }
  // Loss gaps: variant minus baseline at the same label, one run each.
  EXPECT_NEAR(Row(*report, Estimator::kPiecewise, "v", "p1").loss_gap->mean, -0.5, 1e-12);
  EXPECT_EQ(Row(*report, Estimator::kPiecewise, "v", "p1").loss_gap->n, 1);
  // One run per point: no paired multipliers.
  EXPECT_FALSE(Row(*report, Estimator::kPiecewise, "v", "p1").paired_multiplier.has_value());
}

TEST(ComputeMultipliers, UndefinedRowsSayWhy) {
  // The baseline flattens out between p2 and p3.
  std::vector<TestRun> runs = {{"base", "p1", 1e10, 4.0},
                               {"base", "p2", 1e11, 3.0},
                               {"base", "p3", 1e12, 3.0},
                               {"v", "p1", 1e10, 3.5},
                               {"v", "p3", 1e12, 2.9}};
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(runs), Options("base"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  const MultiplierRow& below = Row(*report, Estimator::kPiecewise, "v", "p3");
  EXPECT_FALSE(below.multiplier.has_value());
  EXPECT_NE(below.why.find("last segment (p2-p3) is flat"), std::string::npos) << below.why;
  EXPECT_TRUE(Row(*report, Estimator::kPiecewise, "v", "p1").multiplier.has_value());
  // Loss 3.0 lies on the flat stretch: the baseline's own p2 and p3 are ambiguous.
  EXPECT_FALSE(Row(*report, Estimator::kPiecewise, "base", "p2").multiplier.has_value());
  bool noted = false;
  for (const std::string& note : report->notes) noted |= note.find("does not fall at p2 -> p3") != std::string::npos;
  EXPECT_TRUE(noted);
  // Three baseline points but the v curve has two: free-E fit of v fails and says so, others go on.
  bool fit_noted = false;
  for (const std::string& note : report->notes)
    fit_noted |= note.find("power_law_free_e fit of v failed") != std::string::npos;
  EXPECT_TRUE(fit_noted);
}

TEST(ComputeMultipliers, MoreBootstrapReplicatesThanTheLimitAreInvalidArgument) {
  MultiplierOptions options = Options("base");
  options.bootstrap = static_cast<int>(kMaxBootstrapReplicates) + 1;
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(HandLadder()), options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(report.status().message().find("100001 replicates are more than the fixed limit of 100000"),
            std::string::npos)
      << report.status().message();
}

TEST(ComputeMultipliers, AnUnknownBaselineIsInvalidArgumentListingTheVariants) {
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(HandLadder()), Options("rope"));
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(report.status().message().find("baseline 'rope' is not a variant of test (variants: base, v, w)"),
            std::string::npos)
      << report.status().message();
}

TEST(ComputeMultipliers, PowerLawMultipliersRecoverAKnownComputeShift) {
  // The variant's curve is the baseline's at 1.3 times the compute: L_v(C) = L_b(1.3 C).
  auto baseline = [](double compute) { return 1.2 * std::pow(compute / 1e12, -0.25) + 1.5; };
  std::vector<TestRun> runs;
  for (int index = 0; index < 6; ++index) {
    double compute = 1e11 * std::pow(10.0, index * 0.6);
    runs.push_back({"base", "r" + std::to_string(index), compute, baseline(compute)});
    runs.push_back({"v", "r" + std::to_string(index), compute, baseline(1.3 * compute)});
  }
  MultiplierOptions options = Options("base");
  options.fixed_e = 1.5;
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(runs), options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  for (Estimator estimator : {Estimator::kPowerLawSharedE, Estimator::kPowerLawFreeE, Estimator::kPowerLawFixedE}) {
    for (int index = 0; index < 6; ++index) {
      const MultiplierRow& row = Row(*report, estimator, "v", "r" + std::to_string(index));
      ASSERT_TRUE(row.multiplier.has_value()) << row.why;
      EXPECT_NEAR(row.multiplier.value(), 1.3, 2e-3) << EstimatorName(estimator) << " r" << index;
      EXPECT_LT(row.fit_rmse.value(), 1e-4);
      EXPECT_NEAR(Row(*report, estimator, "base", "r" + std::to_string(index)).multiplier.value(), 1.0, 2e-3);
    }
  }
  // The piecewise estimator reads the shift off chords of a convex curve: above it, not far.
  double piecewise = Row(*report, Estimator::kPiecewise, "v", "r3").multiplier.value();
  EXPECT_GT(piecewise, 1.3);
  EXPECT_LT(piecewise, 1.4);
  // The E-sensitivity table at the true E gives the shift back too.
  MultiplierOptions grid = Options("base");
  grid.e_grid = {0.0, 1.5};
  StatusOr<MultiplierReport> sensitivity = ComputeMultipliers(Make(runs), grid);
  ASSERT_TRUE(sensitivity.ok());
  ASSERT_EQ(sensitivity->e_grid, (std::vector<double>{0.0, 1.5}));
  ASSERT_EQ(sensitivity->e_sensitivity.size(), 2u * 12u);
  const MultiplierRow& at_true_e = sensitivity->e_sensitivity[12 + 6 + 2];  // E = 1.5, v, r2
  EXPECT_EQ(at_true_e.variant, "v");
  EXPECT_EQ(at_true_e.label, "r2");
  EXPECT_DOUBLE_EQ(at_true_e.e.value(), 1.5);
  EXPECT_NEAR(at_true_e.multiplier.value(), 1.3, 1e-3);
  EXPECT_LT(sensitivity->e_grid_baseline_rmse[1].value(), 1e-6);
  EXPECT_GT(sensitivity->e_grid_baseline_rmse[0].value(), 1e-3);  // a pure power law misfits
}

TEST(ComputeMultipliers, APowerLawCannotInvertALossAtOrBelowE) {
  auto baseline = [](double compute) { return 1.2 * std::pow(compute / 1e12, -0.25) + 1.5; };
  std::vector<TestRun> runs;
  for (int index = 0; index < 4; ++index) {
    double compute = 1e11 * std::pow(10.0, index);
    runs.push_back({"base", "r" + std::to_string(index), compute, baseline(compute)});
  }
  runs.push_back({"v", "r3", 1e14, 1.45});
  MultiplierOptions options = Options("base");
  options.fixed_e = 1.5;
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(runs), options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const MultiplierRow& row = Row(*report, Estimator::kPowerLawFixedE, "v", "r3");
  EXPECT_FALSE(row.multiplier.has_value());
  EXPECT_NE(row.why.find("loss 1.4500 is at or below the baseline fit's E = 1.5000"), std::string::npos) << row.why;
  // E values at or above the baseline's smallest loss are bad input.
  options.fixed_e = 2.0;
  EXPECT_EQ(ComputeMultipliers(Make(runs), options).status().code(), StatusCode::kInvalidArgument);
  MultiplierOptions grid = Options("base");
  grid.e_grid = {0.5, 9.0};
  EXPECT_EQ(ComputeMultipliers(Make(runs), grid).status().code(), StatusCode::kInvalidArgument);
}

// Two seeds; the baseline's seed curves are shifted by 0.2 nat.
std::vector<TestRun> SeededLadder() {
  return {{"base", "p1", 1e10, 4.0, 0, 100.0}, {"base", "p2", 1e11, 3.0, 0, 1000.0},
          {"base", "p1", 1e10, 4.2, 1, 100.0}, {"base", "p2", 1e11, 3.2, 1, 1000.0},
          {"v", "p1", 1e10, 3.5, 0, 200.0},    {"v", "p1", 1e10, 3.8, 1, 200.0}};
}

TEST(ComputeMultipliers, PairedSeedMultipliersMatchHandValues) {
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(SeededLadder()), Options("base"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  const MultiplierRow& row = Row(*report, Estimator::kPiecewise, "v", "p1");
  // Seed means: base (4.1, 3.1), v 3.65 -> 45% of the first decade: CM = 10^0.45.
  EXPECT_NEAR(row.loss, 3.65, 1e-12);
  EXPECT_NEAR(row.multiplier.value(), std::pow(10.0, 0.45), 1e-9);
  // Seed 0: 3.5 on (4.0, 3.0) -> 10^0.5; seed 1: 3.8 on (4.2, 3.2) -> 10^0.4.
  const double s0 = std::pow(10.0, 0.5), s1 = std::pow(10.0, 0.4);
  ASSERT_TRUE(row.paired_multiplier.has_value());
  EXPECT_EQ(row.paired_multiplier->n, 2);
  EXPECT_NEAR(row.paired_multiplier->mean, (s0 + s1) / 2, 1e-9);
  EXPECT_NEAR(row.paired_multiplier->sd, std::fabs(s0 - s1) / std::sqrt(2.0), 1e-9);
  // Paired loss gaps: -0.5 and -0.4.
  EXPECT_NEAR(row.loss_gap->mean, -0.45, 1e-12);
  EXPECT_NEAR(row.loss_gap->sd, 0.1 / std::sqrt(2.0), 1e-12);
  EXPECT_EQ(row.loss_gap->n, 2);
}

TEST(ComputeMultipliers, WallClockMultiplierIsPiecewiseInLogSeconds) {
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(SeededLadder()), Options("base"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  // The baseline reaches 3.65 at 10^(2 + 0.45) seconds; v took 200.
  const MultiplierRow& row = Row(*report, Estimator::kPiecewise, "v", "p1");
  EXPECT_NEAR(row.wallclock_multiplier.value(), std::pow(10.0, 2.45) / 200.0, 1e-9);
  EXPECT_DOUBLE_EQ(row.seconds.value(), 200.0);
  EXPECT_FALSE(Row(*report, Estimator::kPowerLawSharedE, "v", "p1").wallclock_multiplier.has_value());
}

TEST(ComputeMultipliers, WithTwoSeedsTheIntervalInvertsThePairedTTestOfTheLossGaps) {
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(SeededLadder()), Options("base"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  const MultiplierRow& row = Row(*report, Estimator::kPiecewise, "v", "p1");
  // At CM = 10^u (u in decades above p1) seed 0's gap to its own baseline line is 3.5 - (4.0 - u) =
  // u - 0.5 and seed 1's 3.8 - (4.2 - u) = u - 0.4: mean u - 0.45, standard error sd / sqrt(2) = 0.05.
  // The test accepts |u - 0.45| <= t 0.05 with t(0.975, 1 df) = tan(0.475 pi) = 12.7062.
  const double se = 0.05 * std::log(10.0);
  const double t = std::tan(0.475 * M_PI);
  ASSERT_TRUE(row.interval.has_value()) << row.interval_note;
  EXPECT_EQ(row.interval->construction, "jackknife gap t");
  EXPECT_EQ(row.interval->unit, "seeds");
  EXPECT_EQ(row.interval->units, 2);
  EXPECT_EQ(row.interval->df, 1.0);
  EXPECT_NEAR(row.interval->low, std::pow(10.0, 0.45) * std::exp(-t * se), 1e-8);
  EXPECT_NEAR(row.interval->high, std::pow(10.0, 0.45) * std::exp(t * se), 1e-8);
  // With 2 seeds the interval is the hull of every accepted CM (here one stretch), and says so.
  EXPECT_EQ(row.interval_note, "2 seeds: the hull of every CM the seeds do not reject");
  // p of CM = 1: T(0) = -0.45 / 0.05 = -9 on one degree of freedom (Cauchy): 1 - (2 / pi) atan 9.
  ASSERT_TRUE(row.p_value.has_value());
  EXPECT_NEAR(*row.p_value, 1 - 2 / M_PI * std::atan(9.0), 1e-12);
  // One variant at one point: the Holm family is this row alone.
  EXPECT_DOUBLE_EQ(row.p_holm.value(), *row.p_value);
  // The baseline's rows are 1 by construction: no interval, no p, and a note that says why.
  const MultiplierRow& base = Row(*report, Estimator::kPiecewise, "base", "p1");
  EXPECT_FALSE(base.interval.has_value());
  EXPECT_FALSE(base.p_value.has_value());
  EXPECT_NE(base.interval_note.find("1 by construction"), std::string::npos) << base.interval_note;
  EXPECT_NE(report->intervals.find("jackknife gap t intervals over the seeds (2 seeds, 1 degree of freedom)"),
            std::string::npos)
      << report->intervals;
  EXPECT_TRUE(report->bootstrap_unit.empty());
  bool noted = false;
  for (const std::string& note : report->notes) noted = noted || note.rfind("2 seeds: every interval", 0) == 0;
  EXPECT_TRUE(noted) << "two seeds are said to give wide intervals";
}

// The baseline's curve at compute x as one report of `estimator` draws it: the chords or the monotone
// cubic through the baseline's seed-mean points, or its fitted power law.
double BaselineLossAt(const MultiplierReport& report, Estimator estimator, const std::string& baseline, double x) {
  if (IsPowerLaw(estimator)) {
    const EMode mode = estimator == Estimator::kPowerLawSharedE ? EMode::kShared : EMode::kFree;
    for (const FitSummary& summary : report.fits) {
      if (summary.variant == baseline && summary.mode == mode) return summary.fit.value().law.Predict(x);
    }
    ADD_FAILURE() << "no fit of " << baseline;
    return NAN;
  }
  std::vector<CurvePoint> points;
  for (const MultiplierRow& row : report.rows) {
    if (row.estimator == estimator && row.variant == baseline) points.push_back({row.compute, row.loss, row.label});
  }
  return HermiteCurve(points, estimator == Estimator::kHermite).At(x);
}

// The interval from its definition, through the public API: at theta = ln CM the loss gap is G = L -
// B(e^theta C) (the variant's seed-mean loss, the baseline's curve at CM times the row's compute);
// each leave-one-seed-out G_i is the same from the report of the ladder without seed i; the interval's
// ends are where |G| / se = t, se = sqrt((n - 1) / n sum (G_i - mean G_i)^2), and its estimate is inside.
TEST(ComputeMultipliers, WithThreeSeedsTheIntervalEndsAreWhereTheJackknifeGapTestRejects) {
  StatusOr<LadderResults> ladder = ReadLadderCsv(RUNG_SOURCE_DIR "/sweeps/examples/ladder-example.csv");
  ASSERT_TRUE(ladder.ok()) << ladder.status().message();
  MultiplierOptions options = Options("rope");
  StatusOr<MultiplierReport> report = ComputeMultipliers(*ladder, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  std::vector<MultiplierReport> left_out;
  for (int64_t seed : {0, 1, 2}) {
    LadderResults without = *ladder;
    without.runs.erase(std::remove_if(without.runs.begin(), without.runs.end(),
                                      [&](const LadderRun& run) { return run.seed == seed; }),
                       without.runs.end());
    StatusOr<MultiplierReport> other = ComputeMultipliers(without, options);
    ASSERT_TRUE(other.ok()) << other.status().message();
    left_out.push_back(*other);
  }
  const double t = 4.302652729911275;  // t(0.975, 2 df), SciPy
  for (Estimator estimator : {Estimator::kPiecewise, Estimator::kHermite, Estimator::kPowerLawSharedE}) {
    for (const char* label : {"r2", "r3"}) {
      const MultiplierRow& row = Row(*report, estimator, "lerope", label);
      ASSERT_TRUE(row.interval.has_value()) << row.interval_note;
      EXPECT_EQ(row.interval->units, 3);
      auto statistic = [&](double cm) {
        const double x = cm * row.compute;
        const double gap = row.loss - BaselineLossAt(*report, estimator, "rope", x);
        std::vector<double> gaps;
        for (const MultiplierReport& other : left_out) {
          gaps.push_back(Row(other, estimator, "lerope", label).loss - BaselineLossAt(other, estimator, "rope", x));
        }
        const double mean = (gaps[0] + gaps[1] + gaps[2]) / 3;
        double squares = 0;
        for (double value : gaps) squares += (value - mean) * (value - mean);
        return gap / std::sqrt(2.0 / 3.0 * squares);
      };
      // Power laws are refitted from warm starts in the report and from scratch here: agreement to
      // the fits' tolerance.
      const double tolerance = IsPowerLaw(estimator) ? 0.05 : 1e-6;
      const std::string what = std::string(EstimatorName(estimator)) + " " + label;
      EXPECT_NEAR(statistic(row.interval->low), -t, tolerance) << what;
      EXPECT_NEAR(statistic(row.interval->high), t, tolerance) << what;
      EXPECT_NEAR(statistic(row.multiplier.value()), 0, tolerance) << what;
      EXPECT_LT(row.interval->low, row.multiplier.value()) << what;
      EXPECT_GT(row.interval->high, row.multiplier.value()) << what;
    }
  }
}

// With seeds the power laws fit the seed-mean curves by least squares (the Huber loss only for one
// seed): the report's shared-E fit is FitPowerLawSharedE's least-squares fit of the mean curves.
TEST(ComputeMultipliers, WithSeedsThePowerLawsFitTheSeedMeansByLeastSquares) {
  StatusOr<LadderResults> ladder = ReadLadderCsv(RUNG_SOURCE_DIR "/sweeps/examples/ladder-example.csv");
  ASSERT_TRUE(ladder.ok()) << ladder.status().message();
  StatusOr<MultiplierReport> report = ComputeMultipliers(*ladder, Options("rope"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(SeedMeanFitsAreLeastSquares(*report));
  std::vector<std::vector<CurvePoint>> curves;  // the seed-mean curves, baseline first
  for (const std::string& variant : report->variants) {
    curves.emplace_back();
    for (const MultiplierRow& row : report->rows) {
      if (row.estimator == Estimator::kPiecewise && row.variant == variant)
        curves.back().push_back({row.compute, row.loss, row.label});
    }
  }
  PowerLawFitOptions least_squares, huber;
  least_squares.huber_delta.reset();
  StatusOr<std::vector<PowerLawFit>> expected = FitPowerLawSharedE(curves, report->c_ref, least_squares);
  StatusOr<std::vector<PowerLawFit>> robust = FitPowerLawSharedE(curves, report->c_ref, huber);
  ASSERT_TRUE(expected.ok() && robust.ok());
  const FitSummary* fitted = nullptr;
  for (const FitSummary& summary : report->fits) {
    if (summary.variant == "rope" && summary.mode == EMode::kShared) fitted = &summary;
  }
  ASSERT_TRUE(fitted && fitted->fit);
  EXPECT_NEAR(fitted->fit->law.e, (*expected)[0].law.e, 1e-6);
  EXPECT_NEAR(fitted->fit->law.alpha, (*expected)[0].law.alpha, 1e-6);
  EXPECT_GT(std::fabs((*robust)[0].law.e - (*expected)[0].law.e), 1e-4) << "the two losses differ on this ladder";
  // One seed per point: the Huber loss.
  LadderResults one_seed = *ladder;
  one_seed.runs.erase(std::remove_if(one_seed.runs.begin(), one_seed.runs.end(),
                                     [](const LadderRun& run) { return run.seed != 0; }),
                      one_seed.runs.end());
  StatusOr<MultiplierReport> single = ComputeMultipliers(one_seed, Options("rope"));
  ASSERT_TRUE(single.ok()) << single.status().message();
  EXPECT_FALSE(SeedMeanFitsAreLeastSquares(*single));
}

// A baseline whose loss falls 0.4 nats in its first decade and 0.005 in each of the next two, which no
// power law with E below the smallest loss follows: the fits pin E at the smallest loss, and the power
// laws give no interval there (the jackknife does not measure a fit at a bound), saying why; the
// interpolating estimators still do.
TEST(ComputeMultipliers, APowerLawWhoseEIsAtTheSmallestLossGivesNoInterval) {
  std::vector<TestRun> runs;
  const double base[] = {2.0, 1.6, 1.595, 1.59};
  for (int64_t seed : {0, 1, 2}) {
    const double shift = 0.001 * static_cast<double>(seed - 1);
    for (int k = 0; k < 4; ++k) {
      const std::string label = "p" + std::to_string(k);
      const double compute = 1e10 * std::pow(10.0, k);
      runs.push_back({"base", label, compute, base[k] + shift, seed});
      runs.push_back({"v", label, compute, base[k] + 0.02 + shift + 0.0005 * static_cast<double>(k % 2), seed});
    }
  }
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(runs), Options("base"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  for (Estimator estimator : {Estimator::kPowerLawSharedE, Estimator::kPowerLawFreeE}) {
    const FitSummary* fitted = nullptr;
    for (const FitSummary& summary : report->fits) {
      if (summary.variant == "base" && summary.mode == (estimator == Estimator::kPowerLawSharedE ? EMode::kShared
                                                                                                  : EMode::kFree))
        fitted = &summary;
    }
    ASSERT_TRUE(fitted && fitted->fit) << EstimatorName(estimator);
    ASSERT_TRUE(fitted->fit->e_at_upper_bound) << EstimatorName(estimator) << " E = " << fitted->fit->law.e;
    const MultiplierRow& row = Row(*report, estimator, "v", "p1");
    EXPECT_FALSE(row.interval.has_value()) << EstimatorName(estimator);
    EXPECT_FALSE(row.p_value.has_value()) << EstimatorName(estimator);
    EXPECT_NE(row.interval_note.find("E sits at its upper bound"), std::string::npos) << row.interval_note;
  }
  EXPECT_TRUE(Row(*report, Estimator::kHermite, "v", "p1").interval.has_value());
}

TEST(ComputeMultipliers, HolmAdjustsThePValuesOfEveryVariantAndPointOfAnEstimator) {
  StatusOr<LadderResults> ladder = ReadLadderCsv(RUNG_SOURCE_DIR "/sweeps/examples/ladder-example.csv");
  ASSERT_TRUE(ladder.ok()) << ladder.status().message();
  MultiplierOptions options = Options("rope");
  options.e_sensitivity = false;
  StatusOr<MultiplierReport> report = ComputeMultipliers(ladder.value(), options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  for (Estimator estimator : {Estimator::kPiecewise, Estimator::kHermite, Estimator::kPowerLawSharedE}) {
    std::vector<double> p_values, holm;
    for (const MultiplierRow& row : report->rows) {
      if (row.estimator != estimator || !row.p_value) continue;
      EXPECT_NE(row.variant, "rope");
      p_values.push_back(*row.p_value);
      holm.push_back(row.p_holm.value());
    }
    ASSERT_EQ(p_values.size(), 8u) << EstimatorName(estimator) << ": lerope and nope at 4 points";
    EXPECT_EQ(holm, HolmAdjust(p_values)) << EstimatorName(estimator);
  }
}

// A one-seed ladder of `points` points per curve: a power law and the variant at 1.2x its compute.
std::vector<TestRun> OneSeedLadder(int points) {
  std::vector<TestRun> runs;
  for (int index = 0; index < points; ++index) {
    double compute = 1e11 * std::pow(10.0, index * 0.5);
    double wobble = index % 2 ? 0.004 : -0.004;
    runs.push_back(
        {"base", "r" + std::to_string(index), compute, 1.2 * std::pow(compute / 1e12, -0.25) + 1.5 + wobble});
    runs.push_back({"v", "r" + std::to_string(index), compute, 1.2 * std::pow(1.2 * compute / 1e12, -0.25) + 1.5});
  }
  return runs;
}

TEST(ComputeMultipliers, WithOneSeedTheBootstrapResamplesRunsForThePowerLawsOnly) {
  MultiplierOptions options = Options("base");
  options.bootstrap = 100;
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(OneSeedLadder(kMinBootstrapUnits)), options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->bootstrap_unit, "runs");
  const MultiplierRow& piecewise = Row(*report, Estimator::kPiecewise, "v", "r2");
  EXPECT_FALSE(piecewise.interval.has_value());
  EXPECT_NE(piecewise.interval_note.find("nothing to resample"), std::string::npos);
  const MultiplierRow& shared = Row(*report, Estimator::kPowerLawSharedE, "v", "r2");
  ASSERT_TRUE(shared.interval.has_value()) << shared.interval_note;
  EXPECT_LT(shared.interval->low, shared.interval->high);
  EXPECT_EQ(shared.interval->construction, "percentile bootstrap");
  EXPECT_EQ(shared.interval->units, kMinBootstrapUnits);
  EXPECT_FALSE(shared.p_value.has_value());
}

TEST(ComputeMultipliers, APercentileBootstrapIsNeverRunOnFewerThanEightUnits) {
  MultiplierOptions options = Options("base");
  options.bootstrap = 100;
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(OneSeedLadder(kMinBootstrapUnits - 1)), options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(report->bootstrap_unit.empty());
  EXPECT_TRUE(report->intervals.empty());
  for (const MultiplierRow& row : report->rows) {
    EXPECT_FALSE(row.interval.has_value()) << row.variant << " " << row.label;
    EXPECT_EQ(row.interval_note,
              "one seed and 7 ladder points on a curve: an interval needs 2 seeds (or 8 points per curve for the "
              "power laws' bootstrap)");
  }
}

TEST(ComputeMultipliers, TheExampleLadderHasLeropeAheadOfRopeAndNopeBehind) {
  // The example was made with LeRoPE worth 1.10x to 1.18x of RoPE's compute and NoPE 0.80x to 0.70x.
  StatusOr<LadderResults> ladder = ReadLadderCsv(RUNG_SOURCE_DIR "/sweeps/examples/ladder-example.csv");
  ASSERT_TRUE(ladder.ok());
  MultiplierOptions options = Options("rope");
  StatusOr<MultiplierReport> report = ComputeMultipliers(ladder.value(), options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  for (const char* label : {"r1", "r2", "r3", "r4"}) {
    for (Estimator estimator : {Estimator::kPiecewise, Estimator::kPowerLawSharedE}) {
      double lerope = Row(*report, estimator, "lerope", label).multiplier.value();
      double nope = Row(*report, estimator, "nope", label).multiplier.value();
      EXPECT_GT(lerope, 1.05) << label;
      EXPECT_LT(lerope, 1.25) << label;
      EXPECT_GT(nope, 0.65) << label;
      EXPECT_LT(nope, 0.85) << label;
    }
  }
  // The shared E lands near the E the ladder was made with (1.05).
  for (const FitSummary& summary : report->fits) {
    if (summary.mode == EMode::kShared) EXPECT_NEAR(summary.fit->law.e, 1.05, 0.05);
  }
  // The default E grid: 0 .. 0.95 of the smallest loss, 11 values.
  EXPECT_EQ(report->e_grid.size(), 11u);
  EXPECT_DOUBLE_EQ(report->e_grid.front(), 0.0);
  EXPECT_EQ(report->e_sensitivity.size(), 11u * 12u);
}

TEST(ComputeMultipliers, ACallerThatStopsWantingTheFitStopsItWithItsStatus) {
  // A one-seed ladder resampled by runs: a bootstrap of the most replicates allowed is stopped by
  // the third question.
  MultiplierOptions options = Options("base");
  options.bootstrap = static_cast<int>(kMaxBootstrapReplicates);
  int asked = 0;
  options.keep_going = [&]() -> Status {
    return ++asked < 3 ? Status::Ok() : Status::Cancelled("the fit stopped: the caller went away");
  };
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(OneSeedLadder(kMinBootstrapUnits)), options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(asked, 3);
}

}  // namespace
}  // namespace rung::fit
