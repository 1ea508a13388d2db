#include "sweeps/fit/power_law.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace rung::fit {
namespace {

constexpr double kRef = 1e13;

// Points on L = a * (C / kRef)^-alpha + e at `count` computes from 1e11 to 1e15, each loss
// multiplied by exp(noise * N(0, 1)).
std::vector<CurvePoint> Ladder(double a, double alpha, double e, int count, double noise, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<CurvePoint> points;
  for (int index = 0; index < count; ++index) {
    double compute = 1e11 * std::pow(1e4, index / double(count - 1));
    double loss = a * std::pow(compute / kRef, -alpha) + e;
    points.push_back({compute, loss * std::exp(noise * normal(generator)), "r" + std::to_string(index + 1)});
  }
  return points;
}

TEST(PowerLaw, PredictAndComputeAtAreInverses) {
  PowerLaw law{std::log(2.0), 0.5, 1.0, 1e12};
  EXPECT_DOUBLE_EQ(law.Predict(4e12), 2.0);  // 2 * 4^-0.5 + 1
  EXPECT_NEAR(law.ComputeAt(2.0).value(), 4e12, 1e-3);
  EXPECT_NEAR(law.A(), 2e6, 1e-6);               // 2 * (1e12)^0.5
  EXPECT_FALSE(law.ComputeAt(1.0).has_value());  // at E: never reached
  EXPECT_FALSE(law.ComputeAt(0.9).has_value());  // below E
}

TEST(PowerLaw, FixedEFitIsExactOnNoiselessData) {
  std::vector<CurvePoint> points = Ladder(2.0, 0.3, 1.5, 5, 0.0, 1);
  StatusOr<PowerLawFit> fit = FitPowerLaw(points, 1.5, kRef, PowerLawFitOptions());
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_NEAR(fit->law.log_a, std::log(2.0), 1e-6);
  EXPECT_NEAR(fit->law.alpha, 0.3, 1e-6);
  EXPECT_DOUBLE_EQ(fit->law.e, 1.5);
  EXPECT_LT(fit->rmse, 1e-8);
  EXPECT_EQ(fit->mode, EMode::kFixed);
}

TEST(PowerLaw, FreeEFitRecoversKnownParametersFromNoisyData) {
  // Ten noisy ladders of 8 points, 0.2% noise (0.004 to 0.013 nats): alpha, E and the curve come back.
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::vector<CurvePoint> points = Ladder(1.2, 0.3, 1.7, 8, 0.002, seed);
    StatusOr<PowerLawFit> fit = FitPowerLaw(points, std::nullopt, kRef, PowerLawFitOptions());
    ASSERT_TRUE(fit.ok()) << fit.status().message();
    EXPECT_NEAR(fit->law.alpha, 0.3, 0.06) << "seed " << seed;
    EXPECT_NEAR(fit->law.e, 1.7, 0.12) << "seed " << seed;
    EXPECT_LT(fit->rmse, 0.02) << "seed " << seed;
    for (double compute : {1e11, 1e13, 1e15}) {
      double truth = 1.2 * std::pow(compute / kRef, -0.3) + 1.7;
      EXPECT_NEAR(fit->law.Predict(compute), truth, 0.005 * truth) << "seed " << seed;
    }
  }
}

TEST(PowerLaw, SharedEFitRecoversOneEAndEachCurvesSlope) {
  std::vector<std::vector<CurvePoint>> curves = {
      Ladder(1.2, 0.30, 1.7, 6, 0.002, 11), Ladder(1.0, 0.32, 1.7, 6, 0.002, 12), Ladder(1.5, 0.28, 1.7, 6, 0.002, 13)};
  StatusOr<std::vector<PowerLawFit>> fits = FitPowerLawSharedE(curves, kRef, PowerLawFitOptions());
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  ASSERT_EQ(fits->size(), 3u);
  const double alphas[] = {0.30, 0.32, 0.28};
  const double as[] = {1.2, 1.0, 1.5};
  for (size_t index = 0; index < 3; ++index) {
    EXPECT_EQ((*fits)[index].mode, EMode::kShared);
    EXPECT_DOUBLE_EQ((*fits)[index].law.e, (*fits)[0].law.e);
    EXPECT_NEAR((*fits)[index].law.alpha, alphas[index], 0.04) << index;
    EXPECT_NEAR(std::exp((*fits)[index].law.log_a), as[index], 0.1) << index;
    EXPECT_LT((*fits)[index].rmse, 0.02);
  }
  EXPECT_NEAR((*fits)[0].law.e, 1.7, 0.08);
}

TEST(PowerLaw, HuberLossKeepsOneBadRunFromPullingTheFit) {
  std::vector<CurvePoint> points = Ladder(1.2, 0.3, 1.7, 8, 0.0, 1);
  points[5].loss *= 1.05;  // one run 5% off
  StatusOr<PowerLawFit> robust = FitPowerLaw(points, 1.7, kRef, PowerLawFitOptions());
  PowerLawFitOptions squares;
  squares.huber_delta.reset();  // plain least squares
  StatusOr<PowerLawFit> plain = FitPowerLaw(points, 1.7, kRef, squares);
  ASSERT_TRUE(robust.ok() && plain.ok());
  EXPECT_NEAR(robust->law.alpha, 0.3, 0.003);
  EXPECT_GT(std::fabs(plain->law.alpha - 0.3), 5 * std::fabs(robust->law.alpha - 0.3));
}

TEST(PowerLaw, NatsResidualsMinimiseTheSquaredLossErrorInNats) {
  // The same noisy ladder fitted on ln L and on L (least squares each): the nats fit has the smaller
  // RMSE in nats (what it minimises), and its parameters stay near the truth.
  std::vector<CurvePoint> points = Ladder(2.0, 0.3, 1.5, 7, 0.01, 11);
  PowerLawFitOptions log_options;
  log_options.huber_delta.reset();
  PowerLawFitOptions nats_options = log_options;
  nats_options.residuals = PowerLawResiduals::kNats;
  StatusOr<PowerLawFit> on_log = FitPowerLaw(points, std::nullopt, kRef, log_options);
  StatusOr<PowerLawFit> on_nats = FitPowerLaw(points, std::nullopt, kRef, nats_options);
  ASSERT_TRUE(on_log.ok() && on_nats.ok());
  EXPECT_LT(on_nats->rmse, on_log->rmse);
  EXPECT_NE(on_nats->law.e, on_log->law.e);
  EXPECT_NEAR(on_nats->law.alpha, 0.3, 0.1);
  // On noiseless data both are exact.
  StatusOr<PowerLawFit> exact = FitPowerLaw(Ladder(2.0, 0.3, 1.5, 5, 0.0, 1), 1.5, kRef, nats_options);
  ASSERT_TRUE(exact.ok());
  EXPECT_NEAR(exact->law.alpha, 0.3, 1e-6);
  EXPECT_NEAR(std::exp(exact->law.log_a), 2.0, 1e-6);
}

TEST(PowerLaw, ResidualsParseByName) {
  EXPECT_EQ(ParsePowerLawResiduals("").value(), PowerLawResiduals::kLogLoss);
  EXPECT_EQ(ParsePowerLawResiduals("ln").value(), PowerLawResiduals::kLogLoss);
  EXPECT_EQ(ParsePowerLawResiduals("nats").value(), PowerLawResiduals::kNats);
  EXPECT_FALSE(ParsePowerLawResiduals("huber").ok());
}

TEST(PowerLaw, ParametersStayInsideTheirBounds) {
  // A curve steeper than alpha = 2 and one without an offset.
  StatusOr<PowerLawFit> steep =
      FitPowerLaw(Ladder(1e-3, 3.0, 1.0, 6, 0.0, 1), std::nullopt, kRef, PowerLawFitOptions());
  ASSERT_TRUE(steep.ok()) << steep.status().message();
  EXPECT_LE(steep->law.alpha, 2.0);
  EXPECT_NE(std::find(steep->notes.begin(), steep->notes.end(), "alpha at its upper bound 2"), steep->notes.end());
  std::vector<CurvePoint> pure = Ladder(2.0, 0.2, 0.0, 6, 0.0, 1);
  StatusOr<PowerLawFit> no_offset = FitPowerLaw(pure, std::nullopt, kRef, PowerLawFitOptions());
  ASSERT_TRUE(no_offset.ok());
  EXPECT_GE(no_offset->law.e, 0.0);
  EXPECT_NEAR(no_offset->law.e, 0.0, 1e-3);
  EXPECT_NEAR(no_offset->law.alpha, 0.2, 1e-3);
  double min_loss = pure.back().loss;
  EXPECT_LT(no_offset->law.e, min_loss);
}

TEST(PowerLaw, TooFewPointsOrAnImpossibleFixedEFailPrecondition) {
  std::vector<CurvePoint> two = Ladder(1.2, 0.3, 1.7, 2, 0.0, 1);
  StatusOr<PowerLawFit> free_fit = FitPowerLaw(two, std::nullopt, kRef, PowerLawFitOptions());
  ASSERT_FALSE(free_fit.ok());
  EXPECT_EQ(free_fit.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(free_fit.status().message().find("needs 3 ladder points"), std::string::npos);
  EXPECT_TRUE(FitPowerLaw(two, 1.7, kRef, PowerLawFitOptions()).ok());  // E fixed: 2 suffice
  EXPECT_EQ(FitPowerLaw(two, 5.0, kRef, PowerLawFitOptions()).status().code(), StatusCode::kFailedPrecondition);
  std::vector<std::vector<CurvePoint>> short_curves = {two, two};
  EXPECT_EQ(FitPowerLawSharedE(short_curves, kRef, PowerLawFitOptions()).status().code(),
            StatusCode::kFailedPrecondition);  // 5 parameters, 4 points
}

}  // namespace
}  // namespace rung::fit
