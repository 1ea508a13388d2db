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

// Two seeds whose runs differ only at p1 (the baseline's p2 runs are equal): the gap of v at p1 depends
// on one stratum, p1, and the stratified jackknife is the paired t test of p1's per-seed gaps exactly.
std::vector<TestRun> TwoSeedsDifferingAtOneLabel() {
  return {{"base", "p1", 1e10, 4.05, 0}, {"base", "p1", 1e10, 4.15, 1}, {"base", "p2", 1e11, 3.1, 0},
          {"base", "p2", 1e11, 3.1, 1},  {"v", "p1", 1e10, 3.55, 0},    {"v", "p1", 1e10, 3.75, 1}};
}

TEST(ComputeMultipliers, WithTwoSeedsAtTheOneLabelAGapDependsOnTheIntervalInvertsThePairedTTestOfItsGaps) {
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(TwoSeedsDifferingAtOneLabel()), Options("base"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  const MultiplierRow& row = Row(*report, Estimator::kPiecewise, "v", "p1");
  // Seed means: base (4.1, 3.1), v 3.65: 45% of the first decade, CM = 10^0.45. At CM = 10^u (u in
  // decades above p1) seed s's gap to its own chord (its p1 run to the common p2 at 3.1) is
  // g_0 = 3.55 - (4.05 - 0.95 u) = -0.5 + 0.95 u and g_1 = 3.75 - (4.15 - 1.05 u) = -0.4 + 1.05 u: mean
  // G = u - 0.45, and the paired t's standard error |g_1 - g_0| / 2 = 0.05 |1 + u|.
  // The stratified jackknife: leaving seed 0 out at p1 gives G_(p1,0) = g_1, seed 1 gives g_0, so
  // V_p1 = (1/2) sum (G_(p1,s) - mean)^2 = (g_1 - g_0)^2 / 4, the same; leaving a seed out at p2 changes
  // nothing (V_p2 = 0, the stratum drops out). One stratum of 2 seeds: df = V^2 / (V^2 / 1) = 1, and the
  // interval is the hull of {u : |u - 0.45| <= t 0.05 |1 + u|}, t = t(0.975, 1) = tan(0.475 pi): with
  // k = 0.05 t < 1, nothing below u = -1 is accepted and the hull is [(0.45 - k) / (1 + k),
  // (0.45 + k) / (1 - k)].
  const double t = std::tan(0.475 * M_PI);
  const double k = 0.05 * t;
  ASSERT_TRUE(row.interval.has_value()) << row.interval_note;
  EXPECT_EQ(row.interval->construction, "jackknife gap t");
  EXPECT_EQ(row.interval->unit, "seeds");
  EXPECT_EQ(row.interval->units, 2);
  EXPECT_NEAR(row.interval->df.value(), 1.0, 1e-12);
  EXPECT_NEAR(row.multiplier.value(), std::pow(10.0, 0.45), 1e-9);
  // (The ends are bisected to 1e-10 in ln CM: relative 1e-9.)
  const double low = std::pow(10.0, (0.45 - k) / (1 + k)), high = std::pow(10.0, (0.45 + k) / (1 - k));
  EXPECT_NEAR(row.interval->low, low, 1e-9 * low);
  EXPECT_NEAR(row.interval->high, high, 1e-9 * high);
  // The decomposition at the estimate (u = 0.45): p1 alone, V = (0.1 + 0.1 u)^2 / 4.
  ASSERT_EQ(row.gap_strata.size(), 1u);
  EXPECT_EQ(row.gap_strata[0].label, "p1");
  EXPECT_EQ(row.gap_strata[0].seeds, 2);
  EXPECT_NEAR(row.gap_strata[0].variance, 0.145 * 0.145 / 4, 1e-14);
  // With 2 seeds at the label carrying the variance the interval is the hull, and says so.
  EXPECT_EQ(row.interval_note, "2 seeds at p1 (the most of the gap's variance): the hull of every CM the seeds do "
                               "not reject");
  // p of CM = 1: T(0) = -0.45 / 0.05 = -9 on one degree of freedom (Cauchy): 1 - (2 / pi) atan 9.
  ASSERT_TRUE(row.p_value.has_value());
  EXPECT_NEAR(*row.p_value, 1 - 2 / M_PI * std::atan(9.0), 1e-12);
  // One variant at one point: the Holm family is this row alone.
  EXPECT_DOUBLE_EQ(row.p_holm.value(), *row.p_value);
  // The baseline's rows are 1 by construction: no interval, no p, and a note that says why.
  const MultiplierRow& base = Row(*report, Estimator::kPiecewise, "base", "p1");
  EXPECT_FALSE(base.interval.has_value());
  EXPECT_FALSE(base.p_value.has_value());
  EXPECT_TRUE(base.gap_strata.empty());
  EXPECT_NE(base.interval_note.find("1 by construction"), std::string::npos) << base.interval_note;
  EXPECT_NE(report->intervals.find("stratified jackknife gap t intervals (strata: the 2 ladder labels; units: the "
                                   "seeds within each label, 2 seeds at every label; degrees of freedom per row: the "
                                   "fewest seeds less one among the labels with 10% or more of the gap's variance, a "
                                   "conservative Welch-Satterthwaite)"),
            std::string::npos)
      << report->intervals;
  EXPECT_NE(report->intervals.find("a seed's runs at different labels are independent"), std::string::npos);
  EXPECT_TRUE(report->bootstrap_unit.empty());
  bool noted = false;
  for (const std::string& note : report->notes) noted = noted || note.rfind("2 seeds at every label: ", 0) == 0;
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
// B(e^theta C) (the variant's seed-mean loss, the baseline's curve at CM times the row's compute); each
// G_(l,s) is the same from the report of the ladder without seed s's runs at label l; V_l = (m - 1) / m
// sum_s (G_(l,s) - mean)^2, se^2 = sum_l V_l, df = se^4 / sum_l V_l^2 / (m - 1) at the estimate; the
// interval's ends are where |G| / se = t(df), and its estimate is inside. gap_strata holds the V_l > 0
// at the estimate, summing to se^2 there.
TEST(ComputeMultipliers, WithThreeSeedsTheIntervalEndsAreWhereTheStratifiedJackknifeGapTestRejects) {
  StatusOr<LadderResults> ladder = ReadLadderCsv(RUNG_SOURCE_DIR "/sweeps/examples/ladder-example.csv");
  ASSERT_TRUE(ladder.ok()) << ladder.status().message();
  MultiplierOptions options = Options("rope");
  options.e_sensitivity = false;
  StatusOr<MultiplierReport> report = ComputeMultipliers(*ladder, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  MultiplierOptions welch_options = options;
  welch_options.satterthwaite_df = true;
  StatusOr<MultiplierReport> welch = ComputeMultipliers(*ladder, welch_options);
  ASSERT_TRUE(welch.ok()) << welch.status().message();
  const std::vector<std::string> labels = {"r1", "r2", "r3", "r4"};
  std::vector<std::vector<MultiplierReport>> left_out(labels.size());  // by label, then seed
  for (size_t l = 0; l < labels.size(); ++l) {
    for (int64_t seed : {0, 1, 2}) {
      LadderResults without = *ladder;
      without.runs.erase(std::remove_if(without.runs.begin(), without.runs.end(),
                                        [&](const LadderRun& run) { return run.seed == seed && run.label == labels[l]; }),
                         without.runs.end());
      StatusOr<MultiplierReport> other = ComputeMultipliers(without, options);
      ASSERT_TRUE(other.ok()) << other.status().message();
      left_out[l].push_back(*other);
    }
  }
  for (Estimator estimator : {Estimator::kPiecewise, Estimator::kHermite, Estimator::kPowerLawSharedE}) {
    for (const char* label : {"r2", "r3"}) {
      const MultiplierRow& row = Row(*report, estimator, "lerope", label);
      ASSERT_TRUE(row.interval.has_value()) << row.interval_note;
      auto variances = [&](double cm) {
        const double x = cm * row.compute;
        std::vector<double> by_label;
        for (const std::vector<MultiplierReport>& stratum : left_out) {
          std::vector<double> gaps;
          for (const MultiplierReport& other : stratum) {
            gaps.push_back(Row(other, estimator, "lerope", label).loss - BaselineLossAt(other, estimator, "rope", x));
          }
          const double mean = (gaps[0] + gaps[1] + gaps[2]) / 3;
          double squares = 0;
          for (double value : gaps) squares += (value - mean) * (value - mean);
          by_label.push_back(2.0 / 3.0 * squares);
        }
        return by_label;
      };
      auto statistic = [&](double cm) {
        const double gap = row.loss - BaselineLossAt(*report, estimator, "rope", cm * row.compute);
        double se2 = 0;
        for (double variance : variances(cm)) se2 += variance;
        return gap / std::sqrt(se2);
      };
      // Power laws are refitted from warm starts in the report and from scratch here: agreement to
      // the fits' tolerance.
      const bool power_law = IsPowerLaw(estimator);
      const std::string what = std::string(EstimatorName(estimator)) + " " + label;
      const std::vector<double> at_estimate = variances(row.multiplier.value());
      double se2 = 0, denominator = 0;
      int units = 0;
      std::vector<GapStratum> expected;
      for (size_t l = 0; l < labels.size(); ++l) {
        // (Piecewise and hermite: a label the curve does not reach at the estimate changes nothing.)
        if (!(at_estimate[l] > (power_law ? 1e-14 : 0))) continue;
        se2 += at_estimate[l];
        denominator += at_estimate[l] * at_estimate[l] / 2;
        units += 3;
        expected.push_back({labels[l], 3, at_estimate[l]});
      }
      // The default df: the smallest m_l - 1 among the labels with 10% of se^2 or more (3 seeds each: 2);
      // Welch-Satterthwaite's on request.
      EXPECT_EQ(row.interval->df.value(), 2.0) << what;
      const double df = se2 * se2 / denominator;
      const MultiplierRow& satterthwaite = Row(*welch, estimator, "lerope", label);
      ASSERT_TRUE(satterthwaite.interval.has_value()) << satterthwaite.interval_note;
      EXPECT_NEAR(satterthwaite.interval->df.value(), df, power_law ? 0.05 * df : 1e-6 * df) << what;
      EXPECT_EQ(row.interval->units, units) << what;
      ASSERT_EQ(row.gap_strata.size(), expected.size()) << what;
      double sum = 0;
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(row.gap_strata[i].label, expected[i].label) << what;
        EXPECT_EQ(row.gap_strata[i].seeds, 3) << what;
        EXPECT_NEAR(row.gap_strata[i].variance, expected[i].variance, (power_law ? 0.05 : 1e-6) * se2) << what;
        sum += row.gap_strata[i].variance;
      }
      EXPECT_NEAR(sum, se2, (power_law ? 0.05 : 1e-6) * se2) << what;
      const double t = -StudentTQuantile(0.025, row.interval->df.value());
      const double tolerance = power_law ? 0.05 : 1e-6;
      EXPECT_NEAR(statistic(row.interval->low), -t, tolerance * t) << what;
      EXPECT_NEAR(statistic(row.interval->high), t, tolerance * t) << what;
      EXPECT_NEAR(statistic(row.multiplier.value()), 0, tolerance) << what;
      EXPECT_LT(row.interval->low, row.multiplier.value()) << what;
      EXPECT_GT(row.interval->high, row.multiplier.value()) << what;
    }
  }
}

// Unbalanced seeds: the baseline and v at A (1e10) with 9 seeds, at B (1e11) and C (1e12) with 3. v at B
// is reached on the baseline's chord B-C (CM = 10^0.4, its interval inside it), so its gap depends on
// B and C only: the stratified jackknife gives it df near 2 (B's 3 seeds carry most of its variance)
// and the interval the same ladder with A cut to 3 seeds gives, exactly. (The jackknife over every seed
// id of the ladder gave it n = 9: df 8 and the variance of B's mean scaled by 8/9 instead of 2/3, far
// too narrow.)
std::vector<TestRun> UnbalancedLadder(int seeds_at_a) {
  std::vector<TestRun> runs;
  for (int s = 0; s < seeds_at_a; ++s) {
    const double noise = 0.003 * static_cast<double>(s % 5) - 0.006;
    runs.push_back({"base", "A", 1e10, 4.0 + noise, s});
    runs.push_back({"v", "A", 1e10, 3.9 + 0.5 * noise + 0.001 * static_cast<double>(s % 3), s});
  }
  const double base_b[] = {0.01, -0.004, -0.006}, v_b[] = {0.012, 0.0, -0.012}, base_c[] = {0.002, -0.001, -0.001};
  for (int s = 0; s < 3; ++s) {
    runs.push_back({"base", "B", 1e11, 3.0 + base_b[s], s});
    runs.push_back({"v", "B", 1e11, 2.8 + v_b[s], s});
    runs.push_back({"base", "C", 1e12, 2.5 + base_c[s], s});
    runs.push_back({"v", "C", 1e12, 2.4 + base_c[s], s});
  }
  return runs;
}

TEST(ComputeMultipliers, WithUnbalancedSeedsEachLabelsVarianceIsScaledByItsOwnSeeds) {
  MultiplierOptions options = Options("base");
  options.satterthwaite_df = true;
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(UnbalancedLadder(9)), options);
  StatusOr<MultiplierReport> cut = ComputeMultipliers(Make(UnbalancedLadder(3)), options);
  StatusOr<MultiplierReport> conservative = ComputeMultipliers(Make(UnbalancedLadder(9)), Options("base"));
  ASSERT_TRUE(report.ok() && cut.ok() && conservative.ok());
  const MultiplierRow& row = Row(*report, Estimator::kPiecewise, "v", "B");
  ASSERT_TRUE(row.interval.has_value()) << row.interval_note;
  // By hand: at the estimate, u = log10 CM decades past B on the chord B-C, G = L_v,B - (1 - u) L_b,B - u
  // L_b,C, linear in the seed means: V_B = var_s(v_B,s - (1 - u) b_B,s) / 3, V_C = u^2 var_s(b_C,s) / 3.
  const double u = std::log10(row.multiplier.value());
  EXPECT_NEAR(u, 0.4, 1e-9);
  const double base_b[] = {0.01, -0.004, -0.006}, v_b[] = {0.012, 0.0, -0.012}, base_c[] = {0.002, -0.001, -0.001};
  auto variance_of_mean = [](const double (&values)[3]) {
    const double mean = (values[0] + values[1] + values[2]) / 3;
    double squares = 0;
    for (double value : values) squares += (value - mean) * (value - mean);
    return squares / 2 / 3;
  };
  double d[3], c[3];
  for (int s = 0; s < 3; ++s) {
    d[s] = v_b[s] - (1 - u) * base_b[s];
    c[s] = u * base_c[s];
  }
  const double v_b_stratum = variance_of_mean(d), v_c_stratum = variance_of_mean(c);
  const double df = std::pow(v_b_stratum + v_c_stratum, 2) / (v_b_stratum * v_b_stratum / 2 + v_c_stratum * v_c_stratum / 2);
  EXPECT_NEAR(row.interval->df.value(), df, 1e-6 * df);
  EXPECT_GT(*row.interval->df, 2.0);
  EXPECT_LT(*row.interval->df, 2.3) << "B's 3 seeds carry the variance: about 2 df, not 8";
  // The default (conservative) df: B carries 10% of se^2 or more, C does not: 3 - 1.
  EXPECT_EQ(Row(*conservative, Estimator::kPiecewise, "v", "B").interval->df.value(), 2.0);
  EXPECT_EQ(row.interval->units, 6) << "B's and C's seeds";
  ASSERT_EQ(row.gap_strata.size(), 2u);
  EXPECT_EQ(row.gap_strata[0].label, "B");
  EXPECT_EQ(row.gap_strata[1].label, "C");
  EXPECT_NEAR(row.gap_strata[0].variance, v_b_stratum, 1e-9 * v_b_stratum);
  EXPECT_NEAR(row.gap_strata[1].variance, v_c_stratum, 1e-9 * v_b_stratum);
  // The interval: where |u' - 0.4| * 0.5 = t(df) se(u') in nats (the chord falls 0.5 nats a decade); its ends
  // recover se^2 = sum of gap_strata at the estimate only approximately (se varies with u'), so check it
  // against the ladder with A cut to the same 3 seeds, which gives the same interval exactly.
  const MultiplierRow& same = Row(*cut, Estimator::kPiecewise, "v", "B");
  ASSERT_TRUE(same.interval.has_value()) << same.interval_note;
  EXPECT_NEAR(row.interval->low, same.interval->low, 1e-12);
  EXPECT_NEAR(row.interval->high, same.interval->high, 1e-12);
  EXPECT_DOUBLE_EQ(*row.interval->df, *same.interval->df);
  EXPECT_EQ(row.interval->units, same.interval->units);
  EXPECT_DOUBLE_EQ(row.p_value.value(), same.p_value.value());
  // The interval stays on the chord B-C, and a stretch (not the hull: 3 seeds, df > 2).
  EXPECT_GT(row.interval->low, 1.0);
  EXPECT_LT(row.interval->high, 10.0);
  EXPECT_EQ(row.interval_note, "");
  // The header says the labels' seed counts differ.
  EXPECT_NE(report->intervals.find("3 to 9 seeds per label"), std::string::npos) << report->intervals;
}

// A label with one seed: its noise is not measured. A row whose gap depends on it gets no interval and
// its note names the label; a row whose gap does not (the piecewise row of v at A, read on the chord
// A-B) keeps its interval.
TEST(ComputeMultipliers, ARowThatDependsOnALabelWithOneSeedHasNoIntervalAndSaysWhy) {
  std::vector<TestRun> runs;
  for (const TestRun& run : UnbalancedLadder(3)) {
    if (run.label != "C" || run.seed == 0) runs.push_back(run);
  }
  StatusOr<MultiplierReport> report = ComputeMultipliers(Make(runs), Options("base"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  for (Estimator estimator : {Estimator::kPiecewise, Estimator::kHermite, Estimator::kPowerLawSharedE}) {
    const MultiplierRow& row = Row(*report, estimator, "v", "B");
    EXPECT_FALSE(row.interval.has_value()) << EstimatorName(estimator);
    EXPECT_FALSE(row.p_value.has_value()) << EstimatorName(estimator);
    EXPECT_TRUE(row.gap_strata.empty()) << EstimatorName(estimator);
    EXPECT_EQ(row.interval_note, "label C has one seed: its noise is not measured") << EstimatorName(estimator);
  }
  const MultiplierRow& at_a = Row(*report, Estimator::kPiecewise, "v", "A");
  ASSERT_TRUE(at_a.interval.has_value()) << at_a.interval_note;
  ASSERT_EQ(at_a.gap_strata.size(), 2u);
  EXPECT_EQ(at_a.gap_strata[0].label, "A");
  EXPECT_EQ(at_a.gap_strata[1].label, "B");
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
