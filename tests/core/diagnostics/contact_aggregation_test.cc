#include "core/diagnostics/contact_aggregation.h"

#include <cmath>

#include <gtest/gtest.h>

#include "core/diagnostics/synthetic_score_rows.h"

namespace rung {
namespace {

// A simplex row of length n: one score 0, the others -gap (Lambda = ln n / gap, alpha = 1, Delta = gap).
ContactRow SimplexRow(int64_t unit, int64_t n, double gap) {
  std::vector<double> row(static_cast<size_t>(n), -gap);
  row[0] = 0.0;
  return {unit, CountGaps(row)};
}

ContactRow TiedRow(int64_t unit, int64_t n) {
  std::vector<double> row(static_cast<size_t>(n), -1.0);
  row[0] = row[1] = 0.0;
  return {unit, CountGaps(row)};
}

double LogLog(double n) { return std::log(std::log(n)); }

TEST(ContactAggregation, SimplexRowsGiveXiLambdaOneAndXiAlphaXiDeltaZero) {
  ContactFit fit = FitContactExponents(SyntheticContactRows("simplex", PaperDiagnosticLengths(), 1, 0.5, 0), 200, 1);
  ASSERT_TRUE(fit.fitted);
  EXPECT_NEAR(fit.lambda.xi, 1.0, 1e-12);
  EXPECT_NEAR(fit.alpha.xi, 0.0, 1e-12);
  EXPECT_NEAR(fit.delta.xi, 0.0, 1e-12);
  ASSERT_EQ(fit.buckets.size(), 6u);
  EXPECT_NEAR(std::exp(fit.buckets[2].mean_log_lambda), std::log(256.0) / 0.5, 1e-9);
  EXPECT_EQ(fit.ties, 0);
}

TEST(ContactAggregation, GaussianRowsGiveXiLambdaNearSixTenthsWithATightInterval) {
  ContactFit fit = FitContactExponents(SyntheticContactRows("gaussian", PaperDiagnosticLengths(), 3000, 1.0, 11), 200, 5);
  ASSERT_TRUE(fit.fitted);
  // Theory 0.5; at these n, 0.6 to 0.7 (the slope's spread across seeds is about 0.03 at 3000 rows).
  EXPECT_NEAR(fit.lambda.xi, 0.65, 0.1);
  EXPECT_GT(fit.lambda.half_iqr, 0.0);
  EXPECT_LT(fit.lambda.half_iqr, 0.05);
  EXPECT_EQ(fit.units, 6 * 3000);
}

// One layer (unit 0) has only tied rows at n = 8, as a NoPE or ALiBi first layer on repeated tokens can:
// the bucket at n = 8 pools the other layer's rows alone, and the buckets at 16 and 32 pool both.
// Averaging per-layer curves by array index (what rung did before) pairs layer 0's n = 16 with layer 1's
// n = 8 and gets a different slope.
TEST(ContactAggregation, PoolsRowsPerLengthWhenOneLayerDropsALength) {
  std::vector<ContactRow> rows = {TiedRow(0, 8),         SimplexRow(0, 16, 1.0), SimplexRow(0, 32, 1.0),
                                  SimplexRow(1, 8, 2.0), SimplexRow(1, 16, 2.0), SimplexRow(1, 32, 2.0)};
  ContactFit fit = FitContactExponents(rows, 0, 0);
  ASSERT_TRUE(fit.fitted);
  auto log_lambda = [](double n, double gap) { return std::log(std::log(n) / gap); };
  const std::vector<double> means = {log_lambda(8, 2), (log_lambda(16, 1) + log_lambda(16, 2)) / 2,
                                     (log_lambda(32, 1) + log_lambda(32, 2)) / 2};
  ASSERT_EQ(fit.buckets.size(), 3u);
  EXPECT_EQ(fit.buckets[0].rows, 1);
  EXPECT_EQ(fit.buckets[0].ties, 1);
  for (size_t b = 0; b < 3; ++b) EXPECT_NEAR(fit.buckets[b].mean_log_lambda, means[b], 1e-12) << b;
  const double expected = LeastSquaresLine({LogLog(8), LogLog(16), LogLog(32)}, means).first;
  EXPECT_NEAR(fit.lambda.xi, expected, 1e-12);
  // What averaging the layers' curves by index gives: layer 0's curve is {16, 32}, layer 1's {8, 16, 32}.
  const double by_index = LeastSquaresLine({LogLog(8), LogLog(16)},
                                           {(log_lambda(16, 1) + log_lambda(8, 2)) / 2,
                                            (log_lambda(32, 1) + log_lambda(16, 2)) / 2}).first;
  EXPECT_GT(std::abs(fit.lambda.xi - by_index), 0.1);
}

TEST(ContactAggregation, RowsAboveLog10LambdaFiveCountAsTies) {
  // ln 16 / 1e-6 = 2.8e6 (log10 6.4): a tie; ln 16 / 1e-4 = 2.8e4 (log10 4.4): kept.
  EXPECT_TRUE(IsAggregationTie(SimplexRow(0, 16, 1e-6).count));
  EXPECT_FALSE(IsAggregationTie(SimplexRow(0, 16, 1e-4).count));
  EXPECT_TRUE(IsAggregationTie(TiedRow(0, 16).count));
  ContactFit fit = FitContactExponents({SimplexRow(0, 16, 1e-6), SimplexRow(0, 16, 1.0), SimplexRow(0, 32, 1.0)}, 0, 0);
  EXPECT_EQ(fit.ties, 1);
  EXPECT_EQ(fit.rows, 2);
  EXPECT_NEAR(fit.TieShare(), 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(fit.lambda.xi, 1.0, 1e-12);
}

TEST(ContactAggregation, BootstrapResamplesUnitsNotRows) {
  // Every unit identical: any resample of units gives the same slope, however the rows spread.
  std::vector<ContactRow> same;
  for (int64_t unit = 0; unit < 5; ++unit) {
    for (int64_t n : {16, 32, 64}) {
      same.push_back(SimplexRow(unit, n, 1.0));
      same.push_back(SimplexRow(unit, n, 3.0));
    }
  }
  EXPECT_EQ(FitContactExponents(same, 200, 3).lambda.half_iqr, 0.0);
  // Units that differ in their slope give a spread; the same seed gives the same interval.
  std::vector<ContactRow> differ;
  for (int64_t unit = 0; unit < 6; ++unit) {
    for (int64_t n : {16, 32, 64}) differ.push_back(SimplexRow(unit, n, unit % 2 ? 1.0 : 0.05 * static_cast<double>(n)));
  }
  ContactFit first = FitContactExponents(differ, 200, 3);
  EXPECT_GT(first.lambda.half_iqr, 0.01);
  EXPECT_EQ(FitContactExponents(differ, 200, 3).lambda.half_iqr, first.lambda.half_iqr);
}

TEST(ContactAggregation, NeedsTwoLengthsWithRows) {
  EXPECT_FALSE(FitContactExponents({SimplexRow(0, 16, 1.0), TiedRow(0, 32)}, 10, 0).fitted);
  EXPECT_FALSE(FitContactExponents({}, 10, 0).fitted);
}

TEST(DiagnosticGrid, ClipsThePaperGridToTheEvaluatedLength) {
  EXPECT_EQ(ChooseDiagnosticGrid(PaperDiagnosticLengths(), 1024).lengths, PaperDiagnosticLengths());
  EXPECT_FALSE(ChooseDiagnosticGrid(PaperDiagnosticLengths(), 4096).fallback);
  DiagnosticGrid at_512 = ChooseDiagnosticGrid(PaperDiagnosticLengths(), 512);
  EXPECT_EQ(at_512.lengths, (std::vector<int64_t>{64, 128, 256, 512}));
  EXPECT_FALSE(at_512.fallback);
}

TEST(DiagnosticGrid, FallsBackToFourGeometricPointsWithAWarning) {
  DiagnosticGrid at_256 = ChooseDiagnosticGrid(PaperDiagnosticLengths(), 256);
  EXPECT_TRUE(at_256.fallback);
  EXPECT_EQ(at_256.lengths, (std::vector<int64_t>{32, 64, 128, 256}));
  EXPECT_NE(at_256.warning.find("3 of the requested lengths"), std::string::npos) << at_256.warning;
  EXPECT_EQ(ChooseDiagnosticGrid(PaperDiagnosticLengths(), 16).lengths, (std::vector<int64_t>{2, 4, 8, 16}));
  EXPECT_EQ(ChooseDiagnosticGrid(PaperDiagnosticLengths(), 8).lengths, (std::vector<int64_t>{2, 4, 8}));
  EXPECT_EQ(ChooseDiagnosticGrid({100, 20, 20, 50, 1, 70}, 100).lengths, (std::vector<int64_t>{20, 50, 70, 100}));
}

}  // namespace
}  // namespace rung
