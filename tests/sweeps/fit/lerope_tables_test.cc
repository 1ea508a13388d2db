// The LeRoPE paper's Tables 5 and 6 from its Table 1 (tests/data/lerope-table1.csv): the compute
// multipliers `rung fit --from-csv` prints, to the paper's three decimals, with the compute axis it
// follows from (6 N_nonembedding D, D = 20 N_total) and its fit (least squares on L in nats).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "sweeps/fit/compute_multipliers.h"
#include "sweeps/fit/ladder_csv.h"

namespace rung::fit {
namespace {

const char* const kLabels[] = {"52M", "217M", "608M", "1.34B", "2.52B"};

LadderResults Table1() {
  StatusOr<LadderResults> ladder = ReadLadderCsv(RUNG_SOURCE_DIR "/tests/data/lerope-table1.csv");
  EXPECT_TRUE(ladder.ok()) << ladder.status().message();
  return ladder.ok() ? *ladder : LadderResults();
}

MultiplierOptions Options(PowerLawResiduals residuals, std::vector<double> e_grid) {
  MultiplierOptions options;
  options.baseline = "rope";
  options.bootstrap = 0;
  options.fit.residuals = residuals;
  options.e_grid = std::move(e_grid);
  return options;
}

std::string Three(std::optional<double> value) {
  if (!value) return "undefined";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", *value);
  return text;
}

// LeRoPE's multipliers of one estimator (or the E-sensitivity rows at one E), by label.
std::vector<std::string> LeRoPE(Estimator estimator, const std::vector<MultiplierRow>& rows,
                                std::optional<double> e = std::nullopt) {
  std::vector<std::string> out;
  for (const char* label : kLabels) {
    for (const MultiplierRow& row : rows) {
      if (row.estimator == estimator && row.variant == "lerope" && row.label == label && (!e || row.e == e)) {
        out.push_back(Three(row.multiplier));
      }
    }
  }
  return out;
}

using Strings = std::vector<std::string>;

TEST(LeRoPETables, ComputeColumnIsSixNonEmbeddingTimesTwentyTotalParameters) {
  // Table 4's architecture: layers x width, MLP 4 x width, vocabulary 32000, untied head.
  const int layers[] = {6, 12, 18, 24, 30};
  const int width[] = {512, 1024, 1536, 2048, 2560};
  const LadderResults ladder = Table1();
  for (int i = 0; i < 5; ++i) {
    const double nonembedding = 12.0 * layers[i] * width[i] * width[i];
    const double total = nonembedding + 2.0 * 32000 * width[i];
    for (const LadderRun& run : ladder.runs) {
      if (run.label == kLabels[i]) EXPECT_DOUBLE_EQ(run.compute, 6.0 * nonembedding * 20.0 * total) << run.label;
    }
  }
}

TEST(LeRoPETables, Table5FollowsFromTable1WithNonEmbeddingCompute) {
  const LadderResults ladder = Table1();
  StatusOr<MultiplierReport> report = ComputeMultipliers(ladder, Options(PowerLawResiduals::kNats, {}));
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(LeRoPE(Estimator::kPiecewise, report->rows), (Strings{"1.071", "1.048", "1.047", "1.032", "1.034"}));
  EXPECT_EQ(LeRoPE(Estimator::kPowerLawFreeE, report->rows),
            (Strings{"1.064", "1.047", "1.039", "1.039", "1.031"}));
  // rung's default fit (ln L, Huber) gives the same efficiency-gain row on this ladder.
  StatusOr<MultiplierReport> log_fit = ComputeMultipliers(ladder, Options(PowerLawResiduals::kLogLoss, {}));
  ASSERT_TRUE(log_fit.ok());
  EXPECT_EQ(LeRoPE(Estimator::kPowerLawFreeE, log_fit->rows),
            (Strings{"1.064", "1.047", "1.039", "1.039", "1.031"}));
}

TEST(LeRoPETables, TotalParameterComputeDoesNotGiveTable5) {
  // The same ladder with C = 6 N_total D: the first piecewise multiplier is 1.058, not the paper's 1.071.
  const int width[] = {512, 1024, 1536, 2048, 2560};
  const int layers[] = {6, 12, 18, 24, 30};
  LadderResults ladder = Table1();
  for (LadderRun& run : ladder.runs) {
    for (int i = 0; i < 5; ++i) {
      if (run.label != kLabels[i]) continue;
      const double nonembedding = 12.0 * layers[i] * width[i] * width[i];
      run.compute *= (nonembedding + 2.0 * 32000 * width[i]) / nonembedding;
    }
  }
  StatusOr<MultiplierReport> report = ComputeMultipliers(ladder, Options(PowerLawResiduals::kNats, {}));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(LeRoPE(Estimator::kPiecewise, report->rows)[0], "1.058");
}

TEST(LeRoPETables, Table6IsTheLeastSquaresFitInNatsAtEachE) {
  const std::vector<double> grid = {0.0, 0.3, 0.5, 0.641, 0.8, 1.0};
  StatusOr<MultiplierReport> report = ComputeMultipliers(Table1(), Options(PowerLawResiduals::kNats, grid));
  ASSERT_TRUE(report.ok()) << report.status().message();
  // Table 6: E, alpha, RMSE, then EG per scale.
  const Strings alpha = {"0.044", "0.050", "0.054", "0.057", "0.062", "0.069"};
  const double rmse[] = {6.4e-3, 3.8e-3, 1.8e-3, 5.3e-4, 2.2e-3, 5.5e-3};
  const std::vector<Strings> gains = {{"1.028", "1.118", "1.090", "1.031", "0.952"},
                                      {"1.043", "1.089", "1.069", "1.034", "0.982"},
                                      {"1.055", "1.065", "1.052", "1.036", "1.008"},
                                      {"1.064", "1.047", "1.039", "1.039", "1.031"},
                                      {"1.075", "1.024", "1.022", "1.043", "1.063"},
                                      {"1.090", "0.989", "0.997", "1.051", "1.118"}};
  ASSERT_EQ(report->e_grid_baseline_alpha.size(), grid.size());
  for (size_t i = 0; i < grid.size(); ++i) {
    EXPECT_EQ(LeRoPE(Estimator::kPowerLawFixedE, report->e_sensitivity, grid[i]), gains[i]) << "E = " << grid[i];
    EXPECT_EQ(Three(report->e_grid_baseline_alpha[i]), alpha[i]) << "E = " << grid[i];
    // RMSE to the paper's two digits; at E = 0 the paper prints 6.4e-3 where the least-squares optimum
    // is 6.35e-3 (its optimiser stopped a little short), so that cell is held to 0.1e-3.
    ASSERT_TRUE(report->e_grid_baseline_rmse[i]);
    const double half_digit = 0.05 * std::pow(10.0, std::floor(std::log10(rmse[i])));
    EXPECT_NEAR(*report->e_grid_baseline_rmse[i], rmse[i], i == 0 ? 1e-4 : half_digit) << "E = " << grid[i];
  }
}

TEST(LeRoPETables, SharedSaturationIsTheParagraphsE) {
  // "The best fit (E = 0.643, joint RMSE 4.7e-4 nats) ... alpha in [0.0573, 0.0576]".
  StatusOr<MultiplierReport> report = ComputeMultipliers(Table1(), Options(PowerLawResiduals::kNats, {}));
  ASSERT_TRUE(report.ok());
  double squares = 0;
  int points = 0;
  for (const FitSummary& summary : report->fits) {
    if (summary.mode != EMode::kShared) continue;
    ASSERT_TRUE(summary.fit);
    EXPECT_EQ(Three(summary.fit->law.e), "0.643");
    EXPECT_GE(summary.fit->law.alpha, 0.05725);
    EXPECT_LT(summary.fit->law.alpha, 0.05765);
    squares += summary.fit->rmse * summary.fit->rmse * summary.fit->points;
    points += summary.fit->points;
  }
  EXPECT_EQ(points, 15);
  EXPECT_NEAR(std::sqrt(squares / points), 4.7e-4, 0.05e-4);
}

}  // namespace
}  // namespace rung::fit
