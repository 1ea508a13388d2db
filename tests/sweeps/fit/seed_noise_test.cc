// tests/sweeps/fit/seed_noise_test.cc
#include "sweeps/fit/seed_noise.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sweeps/fit/synthetic_ladder.h"

namespace rung::fit {
namespace {

SyntheticLadderModel Model(int seeds, double sigma, double rho) {
  SyntheticLadderModel model;
  model.baseline_law = {std::log(30.0), 0.15, 1.5, 1.0};
  for (const char* name : {"rope", "lerope", "nope"}) {
    model.variants.push_back({name, name == std::string("rope") ? 1.0 : 1.04,
                              {{"L0", 1e15}, {"L1", 1e16}, {"L2", 1e17}}});
  }
  model.seeds = seeds;
  model.sigma = sigma;
  model.rho = rho;
  return model;
}

TEST(SeedNoise, RecoversTheModelsSigmaAndPairingFromALadderOfManySeeds) {
  const LadderResults ladder = DrawSyntheticLadder(Model(400, 0.01, 0.7), 3);
  StatusOr<SeedNoise> noise = MeasureSeedNoise(ladder, "rope");
  ASSERT_TRUE(noise.ok()) << noise.status().message();
  EXPECT_EQ(noise->cells, 9);
  EXPECT_EQ(noise->df, 9 * 399);
  EXPECT_EQ(noise->pairs, 2 * 3 * 400);
  EXPECT_NEAR(noise->sigma, 0.01, 0.0005);
  EXPECT_NEAR(noise->rho, 0.7, 0.04);
  EXPECT_DOUBLE_EQ(noise->ModelRho(), noise->rho);
  ASSERT_EQ(noise->per_cell.size(), 9u);
  EXPECT_EQ(noise->per_cell[0].seeds, 400);
  // Per label: 3 cells of 400 seeds, 2 variants paired with the baseline.
  ASSERT_EQ(noise->per_label.size(), 3u);
  const PooledNoise& l1 = noise->per_label.at("L1");
  EXPECT_EQ(l1.cells, 3);
  EXPECT_EQ(l1.df, 3 * 399);
  EXPECT_EQ(l1.pairs, 800);
  EXPECT_EQ(l1.paired_cells, 2);
  EXPECT_EQ(l1.OwnDf(), 798);
  EXPECT_NEAR(l1.sigma, 0.01, 0.0008);
  EXPECT_NEAR(l1.rho, 0.7, 0.06);
}

TEST(SeedNoise, RungsWithDifferentNoiseAreMeasuredApart) {
  SyntheticLadderModel model = Model(300, 0.01, 0.5);
  model.label_noise["L2"] = {0.03, 0.95};
  StatusOr<SeedNoise> noise = MeasureSeedNoise(DrawSyntheticLadder(model, 9), "rope");
  ASSERT_TRUE(noise.ok()) << noise.status().message();
  EXPECT_NEAR(noise->per_label.at("L0").sigma, 0.01, 0.001);
  EXPECT_NEAR(noise->per_label.at("L2").sigma, 0.03, 0.003);
  EXPECT_NEAR(noise->per_label.at("L0").rho, 0.5, 0.08);
  EXPECT_NEAR(noise->per_label.at("L2").rho, 0.95, 0.02);
}

TEST(SeedNoise, WorksOutSigmaByHandOnTwoSeeds) {
  LadderResults ladder;
  ladder.source = "hand";
  ladder.runs = {{"rope", "a", 1e10, 3.0, 0, std::nullopt, ""}, {"rope", "a", 1e10, 3.2, 1, std::nullopt, ""},
                 {"v", "a", 1e10, 2.9, 0, std::nullopt, ""},    {"v", "a", 1e10, 3.3, 1, std::nullopt, ""}};
  StatusOr<SeedNoise> noise = MeasureSeedNoise(ladder, "rope");
  ASSERT_TRUE(noise.ok()) << noise.status().message();
  // Squares about the cell means: rope 2 x 0.1^2, v 2 x 0.2^2; 2 df.
  EXPECT_NEAR(noise->sigma, std::sqrt((0.02 + 0.08) / 2), 1e-12);
  // Residuals (-0.1, 0.1) and (-0.2, 0.2): perfectly paired.
  EXPECT_NEAR(noise->rho, 1.0, 1e-12);
}

TEST(SeedNoise, EachVariantsPairedGapSdIsMeasuredAgainstTheBaseline) {
  LadderResults ladder;
  ladder.source = "hand";
  ladder.runs = {{"rope", "a", 1e10, 3.0, 0, std::nullopt, ""}, {"rope", "a", 1e10, 3.2, 1, std::nullopt, ""},
                 {"rope", "a", 1e10, 3.1, 2, std::nullopt, ""}, {"v", "a", 1e10, 2.9, 0, std::nullopt, ""},
                 {"v", "a", 1e10, 3.3, 1, std::nullopt, ""},    {"v", "a", 1e10, 3.0, 2, std::nullopt, ""}};
  StatusOr<SeedNoise> noise = MeasureSeedNoise(ladder, "rope");
  ASSERT_TRUE(noise.ok()) << noise.status().message();
  ASSERT_EQ(noise->per_cell.size(), 2u);
  EXPECT_EQ(noise->per_cell[0].gap_pairs, 0);  // the baseline's own cell
  const CellNoise& v = noise->per_cell[1];
  // Gaps -0.1, 0.1, -0.1: mean -1/30, sd sqrt(((-1/15)^2 + (2/15)^2 + (-1/15)^2) / 2).
  EXPECT_EQ(v.gap_pairs, 3);
  EXPECT_NEAR(v.gap_sd, std::sqrt((1.0 / 225 + 4.0 / 225 + 1.0 / 225) / 2), 1e-12);
}

TEST(SeedNoise, ANegativePairingIsReportedAsMeasuredAndUsedAsZero) {
  SeedNoise noise;
  noise.rho = -0.3;
  EXPECT_EQ(noise.ModelRho(), 0.0);
  noise.rho = std::nan("");
  EXPECT_EQ(noise.ModelRho(), 0.0);
}

TEST(SeedNoise, ALadderWithoutTwoSeedsInACellIsRefusedWithItsName) {
  StatusOr<SeedNoise> one_seed = MeasureSeedNoise(DrawSyntheticLadder(Model(1, 0.01, 0.5), 1), "rope");
  ASSERT_FALSE(one_seed.ok());
  EXPECT_EQ(one_seed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(one_seed.status().message().find("synthetic"), std::string::npos) << one_seed.status().message();
  EXPECT_NE(one_seed.status().message().find("2+ seeds"), std::string::npos) << one_seed.status().message();
  StatusOr<SeedNoise> no_baseline = MeasureSeedNoise(DrawSyntheticLadder(Model(3, 0.01, 0.5), 1), "alibi");
  ASSERT_FALSE(no_baseline.ok());
  EXPECT_NE(no_baseline.status().message().find("alibi"), std::string::npos);
}

TEST(SeedNoise, TheBaselineLawIsFittedWithEFreeOnThreePointsAndEZeroOnTwo) {
  StatusOr<LossLaw> three = FitBaselineLossLaw(DrawSyntheticLadder(Model(2, 0, 0), 1), "rope");
  ASSERT_TRUE(three.ok()) << three.status().message();
  EXPECT_NEAR(three->law.Predict(3e15), 1.5 + 30 * std::pow(3e15, -0.15), 1e-4);
  EXPECT_NE(three->how.find("E free"), std::string::npos) << three->how;

  SyntheticLadderModel two_points = Model(2, 0, 0);
  for (SyntheticVariant& variant : two_points.variants) variant.points.pop_back();
  StatusOr<LossLaw> two = FitBaselineLossLaw(DrawSyntheticLadder(two_points, 1), "rope");
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_EQ(two->law.e, 0.0);
  // Through both points exactly.
  EXPECT_NEAR(two->law.Predict(1e15), 1.5 + 30 * std::pow(1e15, -0.15), 1e-6);
  EXPECT_NEAR(two->law.Predict(1e16), 1.5 + 30 * std::pow(1e16, -0.15), 1e-6);
  EXPECT_NE(two->how.find("E fixed at 0"), std::string::npos) << two->how;
}

}  // namespace
}  // namespace rung::fit
