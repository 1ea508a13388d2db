// tests/support/loss_surface_test.cc
//
// The stand-in trainer's loss surface (tests/support/stand_in_trainer/loss_surface.h) is the formula
// its header states: the optimum in lr where lr_opt(N) says, moving with model size, the curve from
// its initial to its final value, the seed's noise reproducible and resumable, divergence above the
// threshold, and overrides that refuse what they do not know.
#include "tests/support/stand_in_trainer/loss_surface.h"

#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/model_arithmetic.h"

namespace rung::stand_in {
namespace {

using ::testing::HasSubstr;

TrialConfig Trial(double lr, int64_t d_model = 64, uint64_t seed = 0, const std::string& variant = "rope") {
  nlohmann::json json = {{"seed", seed},
                         {"model", {{"layers", 2}, {"d_model", d_model}, {"heads", 4}}},
                         {"position", {{"variant", variant}}},
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
  EXPECT_THAT(message(R"({"x": 1})"), HasSubstr("variant_noise_exponent, variant_offset)"));
  EXPECT_THAT(message(R"({"variant_offset": 1})"), HasSubstr("'variant_offset' must be an object"));
  EXPECT_THAT(message(R"({"variant_offset": {"lerope": "x"}})"), HasSubstr("'variant_offset.lerope' must be a finite number"));
  EXPECT_THAT(message(R"({"variant_noise": -0.1})"), HasSubstr("'variant_noise' must be >= 0"));
  EXPECT_THAT(message(R"({"size_gain": -1})"), HasSubstr("'size_gain' must be >= 0"));
}

TEST(LossSurfaceTest, TheDefaultsAddNoSizeOrVariantTermAndWriteNoneOfTheirKeys) {
  const LossSurface surface;
  const TrialCurve rope = CurveForTrial(surface, Trial(1e-3, 64, 3, "rope"), 100);
  const TrialCurve lerope = CurveForTrial(surface, Trial(1e-3, 64, 3, "lerope"), 100);
  EXPECT_EQ(rope.target, lerope.target);
  EXPECT_EQ(rope.final_loss, lerope.final_loss) << "no variant noise by default";
  // Exactly the parabola plus the seed's offset, as before the terms existed.
  const double distance = std::log(1e-3) - std::log(OptimalLearningRate(surface, rope.n));
  EXPECT_EQ(rope.target, surface.floor + surface.curvature * distance * distance);
  EXPECT_EQ(rope.final_loss, rope.target + surface.noise * OffsetDraw(3));
  const nlohmann::json written = LossSurfaceToJson(surface);
  for (const char* key : {"size_gain", "size_exponent", "variant_offset", "variant_noise", "variant_noise_exponent"}) {
    EXPECT_FALSE(written.contains(key)) << key;
  }
}

TEST(LossSurfaceTest, TheSizeTermMakesALargerModelReachALowerLoss) {
  StatusOr<LossSurface> surface = ParseLossSurface(R"({"exponent": 0, "noise": 0, "size_gain": 0.5, "size_exponent": 0.5})");
  ASSERT_TRUE(surface.ok()) << surface.status().ToString();
  EXPECT_NEAR(TargetLoss(*surface, surface->lr_ref, surface->n_ref), 2.0 + 0.5, 1e-12);
  EXPECT_NEAR(TargetLoss(*surface, surface->lr_ref, 4 * surface->n_ref), 2.0 + 0.25, 1e-12) << "4x N: half the term";
  const TrialCurve small = CurveForTrial(*surface, Trial(surface->lr_ref, 64), 100);
  const TrialCurve large = CurveForTrial(*surface, Trial(surface->lr_ref, 128), 100);
  EXPECT_LT(large.final_loss, small.final_loss);
  EXPECT_NEAR(small.final_loss, 2.0 + 0.5 * std::pow(small.n / surface->n_ref, -0.5), 1e-12);
}

TEST(LossSurfaceTest, AVariantOffsetMovesOnlyItsVariantsTarget) {
  StatusOr<LossSurface> surface = ParseLossSurface(R"({"noise": 0, "variant_offset": {"lerope": -0.01}})");
  ASSERT_TRUE(surface.ok()) << surface.status().ToString();
  const TrialCurve rope = CurveForTrial(*surface, Trial(1e-3, 64, 0, "rope"), 100);
  const TrialCurve lerope = CurveForTrial(*surface, Trial(1e-3, 64, 0, "lerope"), 100);
  EXPECT_EQ(lerope.variant, "lerope");
  EXPECT_NEAR(lerope.final_loss - rope.final_loss, -0.01, 1e-12);
  EXPECT_NEAR(TargetLoss(*surface, 1e-3, rope.n, "lerope") - TargetLoss(*surface, 1e-3, rope.n), -0.01, 1e-12);
  StatusOr<LossSurface> again = ParseLossSurface(LossSurfaceToJson(*surface).dump());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->variant_offset, surface->variant_offset);
}

TEST(LossSurfaceTest, VariantNoiseIsAReproducibleDrawPerSeedVariantAndSizeScaledByTheSize) {
  StatusOr<LossSurface> surface =
      ParseLossSurface(R"({"noise": 0, "variant_noise": 0.01, "variant_noise_exponent": 1})");
  ASSERT_TRUE(surface.ok()) << surface.status().ToString();
  const TrialCurve rope = CurveForTrial(*surface, Trial(1e-3, 64, 0, "rope"), 100);
  const TrialCurve lerope = CurveForTrial(*surface, Trial(1e-3, 64, 0, "lerope"), 100);
  EXPECT_EQ(rope.target, lerope.target);
  EXPECT_NE(rope.final_loss, lerope.final_loss) << "each variant of a seed draws its own";
  EXPECT_EQ(CurveForTrial(*surface, Trial(1e-3, 64, 0, "rope"), 100).final_loss, rope.final_loss) << "reproducible";
  EXPECT_NE(CurveForTrial(*surface, Trial(1e-3, 64, 1, "rope"), 100).final_loss, rope.final_loss) << "per seed";
  EXPECT_DOUBLE_EQ(rope.final_loss, rope.target + VariantNoise(*surface, rope.n) * VariantDraw(0, "rope", rope.n));
  EXPECT_NE(VariantDraw(0, "rope", rope.n), VariantDraw(0, "rope", 2 * rope.n)) << "per size";
  EXPECT_DOUBLE_EQ(VariantNoise(*surface, 2 * surface->n_ref), 0.02) << "the exponent scales it with N";
  EXPECT_DOUBLE_EQ(VariantNoise(LossSurface(), 1e5), 0.0);
  // The draws are standard normal.
  double sum = 0, squares = 0;
  const int count = 20000;
  for (int seed = 0; seed < count; ++seed) {
    const double z = VariantDraw(static_cast<uint64_t>(seed), "lerope", 12345);
    sum += z;
    squares += z * z;
  }
  EXPECT_NEAR(sum / count, 0.0, 0.05);
  EXPECT_NEAR(squares / count, 1.0, 0.05);
}

}  // namespace
}  // namespace rung::stand_in
