// tests/support/loss_surface_test.cc
//
// The stand-in trainer's loss surface (tests/support/stand_in_trainer/loss_surface.h) is the formula
// its header states: the optimum in lr where lr_opt(N) says, moving with model size, the curve from
// its initial to its final value, the seed's noise reproducible and resumable, divergence above the
// threshold, and overrides that refuse what they do not know.
#include "tests/support/stand_in_trainer/loss_surface.h"

#include <cmath>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/model_arithmetic.h"

namespace rung::stand_in {
namespace {

using ::testing::HasSubstr;

TrialConfig Trial(double lr, int64_t d_model = 64, uint64_t seed = 0) {
  nlohmann::json json = {{"seed", seed},
                         {"model", {{"layers", 2}, {"d_model", d_model}, {"heads", 4}}},
                         {"train", {{"steps", 100}, {"lr", lr}}}};
  StatusOr<TrialConfig> trial = TrialConfigFromJson(json);
  EXPECT_TRUE(trial.ok()) << trial.status().ToString();
  return trial.ok() ? *trial : TrialConfig{};
}

TEST(LossSurfaceTest, DefaultsPutTheOptimumAtLrRefForAModelOfNRef) {
  const LossSurface surface;
  EXPECT_DOUBLE_EQ(OptimalLearningRate(surface, 1e5), 3e-3);
  EXPECT_DOUBLE_EQ(TargetLoss(surface, 3e-3, 1e5), 2.0);
  // A quarter of the optimum's lr: curvature * (ln 4)^2 above the floor.
  EXPECT_NEAR(TargetLoss(surface, 3e-3 / 4, 1e5), 2.0 + 0.3 * std::log(4.0) * std::log(4.0), 1e-12);
}

TEST(LossSurfaceTest, TheParabolaInLogLrIsSymmetricAroundTheOptimum) {
  const LossSurface surface;
  const double n = 4e5;
  const double optimum = OptimalLearningRate(surface, n);
  for (double factor : {1.5, 3.0, 10.0}) {
    EXPECT_NEAR(TargetLoss(surface, optimum * factor, n), TargetLoss(surface, optimum / factor, n), 1e-12);
    EXPECT_GT(TargetLoss(surface, optimum * factor, n), TargetLoss(surface, optimum, n));
  }
}

TEST(LossSurfaceTest, ALargerModelHasItsOptimumAtASmallerLr) {
  LossSurface surface;
  surface.exponent = 0.5;
  EXPECT_NEAR(OptimalLearningRate(surface, 4e5), 3e-3 / 2, 1e-15) << "4x the parameters: half the lr";
  const TrialCurve small = CurveForTrial(surface, Trial(3e-3, 64), 100);
  const TrialCurve large = CurveForTrial(surface, Trial(3e-3, 128), 100);
  EXPECT_EQ(small.n, static_cast<double>(CountParameters(Trial(3e-3, 64).model).nonembedding()));
  EXPECT_GT(large.n, small.n);
  EXPECT_LT(large.lr_opt, small.lr_opt);
  EXPECT_DOUBLE_EQ(large.lr_opt, OptimalLearningRate(surface, large.n));
}

TEST(LossSurfaceTest, TheCurveRunsFromTheInitialLossToTheFinalOneAndFallsOnTheWay) {
  const LossSurface surface;
  const TrialConfig trial = Trial(1e-3);
  const TrialCurve curve = CurveForTrial(surface, trial, 50);
  EXPECT_DOUBLE_EQ(curve.initial, std::log(256.0)) << "builtin bytes: a uniform guess over 256";
  EXPECT_DOUBLE_EQ(curve.ValLoss(0), curve.initial);
  EXPECT_EQ(curve.ValLoss(50), curve.final_loss);
  EXPECT_DOUBLE_EQ(curve.final_loss, TargetLoss(surface, 1e-3, curve.n) + surface.noise * OffsetDraw(trial.seed));
  for (int64_t step = 1; step <= 50; ++step) EXPECT_LT(curve.ValLoss(step), curve.ValLoss(step - 1)) << step;
  EXPECT_DOUBLE_EQ(curve.TrainLoss(10, 0.5), curve.ValLoss(10) + surface.noise * 0.5);
}

TEST(LossSurfaceTest, TheSeedMovesTheWholeCurveButNotWhereItsMinimumInLrLies) {
  const LossSurface surface;
  const TrialCurve seed0 = CurveForTrial(surface, Trial(1e-3, 64, 0), 100);
  const TrialCurve seed1 = CurveForTrial(surface, Trial(1e-3, 64, 1), 100);
  EXPECT_NE(seed0.final_loss, seed1.final_loss);
  EXPECT_EQ(seed0.target, seed1.target);
  const TrialCurve other_lr = CurveForTrial(surface, Trial(2e-3, 64, 0), 100);
  EXPECT_DOUBLE_EQ(other_lr.final_loss - other_lr.target, seed0.final_loss - seed0.target)
      << "one offset per seed, shared by every lr";
}

TEST(LossSurfaceTest, NormalStreamIsReproducibleAndContinuesFromItsState) {
  NormalStream first(7), second(7);
  std::vector<double> draws;
  for (int index = 0; index < 5; ++index) {
    draws.push_back(first.Next());
    EXPECT_EQ(second.Next(), draws.back());
  }
  NormalStream resumed = NormalStream::FromState(first.state());
  EXPECT_EQ(resumed.Next(), first.Next());
  EXPECT_NE(NormalStream(8).Next(), draws.front());

  NormalStream many(1);
  double sum = 0, squares = 0;
  const int count = 20000;
  for (int index = 0; index < count; ++index) {
    const double z = many.Next();
    ASSERT_TRUE(std::isfinite(z));
    sum += z;
    squares += z * z;
  }
  EXPECT_NEAR(sum / count, 0.0, 0.05);
  EXPECT_NEAR(squares / count, 1.0, 0.05);
}

TEST(LossSurfaceTest, AnLrAboveTheThresholdDivergesAtItsStep) {
  LossSurface surface;
  surface.diverge_above_lr = 0.1;
  surface.diverge_at = 0.3;
  EXPECT_FALSE(Diverges(surface, 0.1));
  EXPECT_TRUE(Diverges(surface, 0.2));
  EXPECT_EQ(DivergenceStep(surface, 10), 3);
  EXPECT_EQ(DivergenceStep(surface, 1), 1);
  const TrialCurve curve = CurveForTrial(surface, Trial(0.2), 10);
  ASSERT_TRUE(curve.divergence_step.has_value());
  EXPECT_TRUE(std::isfinite(curve.TrainLoss(2, 0.0)));
  EXPECT_TRUE(std::isnan(curve.TrainLoss(3, 0.0)));
  EXPECT_FALSE(CurveForTrial(surface, Trial(0.05), 10).divergence_step.has_value());
}

TEST(LossSurfaceTest, OverridesChangeOnlyTheirParametersAndReadBack) {
  StatusOr<LossSurface> surface = ParseLossSurface(R"({"lr_ref": 1e-2, "noise": 0, "initial": 9})");
  ASSERT_TRUE(surface.ok()) << surface.status().ToString();
  EXPECT_EQ(surface->lr_ref, 1e-2);
  EXPECT_EQ(surface->noise, 0.0);
  EXPECT_EQ(surface->initial, 9.0);
  EXPECT_EQ(surface->curvature, LossSurface().curvature);
  StatusOr<LossSurface> again = ParseLossSurface(LossSurfaceToJson(*surface).dump());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(LossSurfaceToJson(*again), LossSurfaceToJson(*surface));
  EXPECT_TRUE(ParseLossSurface("").ok());
  EXPECT_TRUE(ParseLossSurface("  \n").ok());
}

TEST(LossSurfaceTest, OverridesRefuseUnknownKeysWrongTypesAndValuesOutOfRange) {
  auto message = [](const char* text) { return ParseLossSurface(text).status().message(); };
  EXPECT_THAT(message(R"({"lr_rfe": 1})"), HasSubstr("no parameter 'lr_rfe' (known: lr_ref, n_ref"));
  EXPECT_THAT(message(R"({"noise": "low"})"), HasSubstr("'noise' must be a number, not string"));
  EXPECT_THAT(message(R"({"noise": -1})"), HasSubstr("'noise' must be >= 0"));
  EXPECT_THAT(message(R"({"lr_ref": 0})"), HasSubstr("'lr_ref' must be > 0"));
  EXPECT_THAT(message(R"({"diverge_at": 1.5})"), HasSubstr("'diverge_at' must be in (0, 1]"));
  EXPECT_THAT(message("[1]"), HasSubstr("must be a JSON object"));
  EXPECT_THAT(message("{"), HasSubstr("must be a JSON object"));
  EXPECT_EQ(ParseLossSurface(R"({"x": 1})").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rung::stand_in
