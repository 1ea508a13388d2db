// Metrics and results as committed batches leave them: the curve across attempts, non-finite
// values, summaries, learned parameters and diagnostics. (Batches themselves, their idempotence and
// fencing: tests/coordinator/domain/reports_test.cc.)
#include "coordinator/store/metric_store.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

using store_testing::Cell;
using store_testing::kLease;
using store_testing::Point;
using store_testing::PointsBatch;
using store_testing::Submission;

class MetricStoreTest : public store_testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    RegisterWorker("w");
    Submit(Submission("s", {Cell("a")}));
    std::optional<Lease> lease = LeaseFor("w");
    ASSERT_TRUE(lease.has_value());
    lease_ = *lease;
  }

  // Expires the current lease and leases the trial again: the next attempt.
  Lease NextAttempt() {
    clock_.Advance(kLease);
    EXPECT_TRUE(trials().ExpireLeases().ok());
    std::optional<Lease> lease = LeaseFor("w");
    EXPECT_TRUE(lease.has_value());
    return lease.value_or(Lease());
  }

  std::vector<MetricPoint> Steps(int64_t from, int64_t to, double offset) {
    std::vector<MetricPoint> points;
    for (int64_t step = from; step <= to; ++step) points.push_back(Point(step, "val_loss", offset + step));
    return points;
  }

  Lease lease_;
};

TEST_F(MetricStoreTest, ABatchsPointsMakeTheCurveAndTheNames) {
  const std::vector<MetricPoint> batch = {Point(1, "train_loss", 4.0), Point(1, "val_loss", 4.2),
                                          Point(2, "train_loss", 3.5)};
  ASSERT_OK(trials().ReportBatch(PointsBatch(lease_.trial_id, lease_.attempt, 1, batch)));
  ASSERT_OK_AND_ASSIGN(BatchAck again, trials().ReportBatch(PointsBatch(lease_.trial_id, lease_.attempt, 1, batch)));
  EXPECT_TRUE(again.duplicate);
  ASSERT_OK_AND_ASSIGN(std::vector<CurvePoint> curve, metrics().Curve(lease_.trial_id, "train_loss"));
  ASSERT_EQ(curve.size(), 2u);
  EXPECT_EQ(curve[0].point.step, 1);
  EXPECT_DOUBLE_EQ(curve[0].point.value, 4.0);
  EXPECT_EQ(curve[0].point.tokens, 128);
  EXPECT_DOUBLE_EQ(curve[1].point.wall_time, 0.02);
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> names, metrics().MetricNames(lease_.trial_id));
  EXPECT_THAT(names, ::testing::ElementsAre("train_loss", "val_loss"));
}

TEST_F(MetricStoreTest, TheCurveTakesEachStepFromTheNewestAttemptThatReportedIt) {
  // Attempt 1 reports steps 0..5; attempt 2 resumes from its checkpoint at step 3 and reports 4..7.
  ASSERT_OK(trials().ReportBatch(PointsBatch(lease_.trial_id, 1, 1, Steps(0, 5, 10.0))));
  const Lease second = NextAttempt();
  ASSERT_EQ(second.attempt, 2);
  ASSERT_OK(trials().ReportBatch(PointsBatch(second.trial_id, 2, 1, Steps(4, 7, 100.0))));

  ASSERT_OK_AND_ASSIGN(std::vector<CurvePoint> curve, metrics().Curve(lease_.trial_id, "val_loss"));
  ASSERT_EQ(curve.size(), 8u);
  for (const CurvePoint& point : curve) {
    const bool from_second = point.point.step >= 4;
    EXPECT_EQ(point.attempt, from_second ? 2 : 1) << point.point.step;
    EXPECT_DOUBLE_EQ(point.point.value, (from_second ? 100.0 : 10.0) + static_cast<double>(point.point.step));
  }
}

TEST_F(MetricStoreTest, AReplayedValueFillsOnlyTheStepsNoAttemptStored) {
  // Attempt 1 stored steps 0..2 before it was cut off; its trainer went on to step 7 and
  // checkpointed there. Attempt 2 resumes from that checkpoint: it replays 0..7 and trains 8..9.
  ASSERT_OK(trials().ReportBatch(PointsBatch(lease_.trial_id, 1, 1, Steps(0, 2, 10.0))));
  const Lease second = NextAttempt();
  std::vector<MetricPoint> replay = Steps(0, 7, 10.0);
  for (MetricPoint& point : replay) point.replayed = true;
  ASSERT_OK(trials().ReportBatch(PointsBatch(second.trial_id, 2, 1, replay)));
  ASSERT_OK(trials().ReportBatch(PointsBatch(second.trial_id, 2, 2, Steps(8, 9, 10.0))));
  // A replay sent again (the answer was lost) changes nothing.
  ASSERT_OK(trials().ReportBatch(PointsBatch(second.trial_id, 2, 1, replay)));

  ASSERT_OK_AND_ASSIGN(std::vector<CurvePoint> curve, metrics().Curve(lease_.trial_id, "val_loss"));
  ASSERT_EQ(curve.size(), 10u);
  for (const CurvePoint& point : curve) {
    EXPECT_EQ(point.attempt, point.point.step <= 2 ? 1 : 2) << "step " << point.point.step;
    EXPECT_DOUBLE_EQ(point.point.value, 10.0 + static_cast<double>(point.point.step));
  }
}

TEST_F(MetricStoreTest, NonFiniteValuesAreKeptAsNan) {
  ASSERT_OK(trials().ReportBatch(
      PointsBatch(lease_.trial_id, 1, 1, {Point(1, "train_loss", std::nan("")), Point(2, "train_loss", INFINITY)})));
  ASSERT_OK_AND_ASSIGN(std::vector<CurvePoint> curve, metrics().Curve(lease_.trial_id, "train_loss"));
  ASSERT_EQ(curve.size(), 2u);
  EXPECT_TRUE(std::isnan(curve[0].point.value));
  EXPECT_TRUE(std::isinf(curve[1].point.value));
}

TEST_F(MetricStoreTest, CompletionStoresSummariesLearnedParametersAndDiagnostics) {
  TrialResults results;
  results.summaries = {{"val_loss", 2.25, 100}, {"best_val_loss", 2.2, 80}};
  results.learned_params = {{100, "positional.lerope_log_scale", 0, -1, 0, 0.5},
                            {100, "positional.lerope_log_scale", 1, -1, 0, 0.75},
                            {100, "inverse_temperature.s", 0, 3, 0, 1.25}};
  results.diagnostics = {{"attention", {{"layers", 2}, {"pooled", {{"xi_lambda", 0.4}}}}}};
  ASSERT_OK(trials().Complete(lease_.trial_id, lease_.attempt, results));

  ASSERT_OK_AND_ASSIGN(std::vector<SummaryValue> summaries, metrics().Summaries(lease_.trial_id));
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[0].name, "best_val_loss");
  EXPECT_EQ(summaries[0].step, 80);
  EXPECT_DOUBLE_EQ(summaries[1].value, 2.25);

  ASSERT_OK_AND_ASSIGN(std::vector<LearnedParamValue> learned, metrics().LearnedParams(lease_.trial_id));
  ASSERT_EQ(learned.size(), 3u);
  EXPECT_EQ(learned[0].name, "inverse_temperature.s");
  EXPECT_EQ(learned[0].head, 3);
  EXPECT_EQ(learned[2].layer, 1);
  EXPECT_DOUBLE_EQ(learned[2].value, 0.75);

  ASSERT_OK_AND_ASSIGN(std::vector<Diagnostic> diagnostics, metrics().Diagnostics(lease_.trial_id));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].name, "attention");
  EXPECT_EQ(diagnostics[0].value.at("pooled").at("xi_lambda"), 0.4);
}

// ForEachSweepCurve's curves, collected.
std::vector<TrialCurve> SweepCurves(const MetricStore& metrics, int64_t sweep_id, std::vector<std::string> names,
                                    std::vector<int64_t> trial_ids, Status* status) {
  std::vector<TrialCurve> curves;
  *status = metrics.ForEachSweepCurve(sweep_id, names, trial_ids, [&](TrialCurve&& curve) {
    curves.push_back(std::move(curve));
    return Status::Ok();
  });
  return curves;
}

TEST_F(MetricStoreTest, ASweepsCurvesComeByTrialThenNameEachStepFromTheNewestAttempt) {
  RegisterWorker("w2");
  // A second trial of another sweep, whose points must not appear.
  const int64_t other_sweep = Submit(Submission("other", {Cell("b")}));
  std::optional<Lease> other = LeaseFor("w2");
  ASSERT_TRUE(other.has_value());
  ASSERT_OK(trials().ReportBatch(PointsBatch(other->trial_id, other->attempt, 1, Steps(0, 3, 50.0))));

  std::vector<MetricPoint> first = Steps(0, 5, 10.0);
  first.push_back(Point(2, "train_loss", 7.0));
  ASSERT_OK(trials().ReportBatch(PointsBatch(lease_.trial_id, 1, 1, first)));
  const Lease second = NextAttempt();
  ASSERT_OK(trials().ReportBatch(PointsBatch(second.trial_id, 2, 1, Steps(4, 7, 100.0))));

  Status status;
  std::vector<TrialCurve> curves = SweepCurves(metrics(), 1, {"val_loss", "train_loss"}, {}, &status);
  ASSERT_OK(status);
  ASSERT_EQ(curves.size(), 2u);
  EXPECT_EQ(curves[0].trial_id, lease_.trial_id);
  EXPECT_EQ(curves[0].name, "train_loss");
  ASSERT_EQ(curves[0].points.size(), 1u);
  EXPECT_EQ(curves[1].name, "val_loss");
  ASSERT_EQ(curves[1].points.size(), 8u);
  for (const CurvePoint& point : curves[1].points) {
    const bool from_second = point.point.step >= 4;
    EXPECT_EQ(point.attempt, from_second ? 2 : 1) << point.point.step;
    EXPECT_DOUBLE_EQ(point.point.value, (from_second ? 100.0 : 10.0) + static_cast<double>(point.point.step));
    EXPECT_EQ(point.point.tokens, point.point.step * 128);
  }

  // Only the trials asked for; a name nobody reported has no curve.
  curves = SweepCurves(metrics(), other_sweep, {"val_loss", "nothing"}, {other->trial_id}, &status);
  ASSERT_OK(status);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].trial_id, other->trial_id);
  EXPECT_EQ(curves[0].points.size(), 4u);
}

TEST_F(MetricStoreTest, ASweepsCurvesRefuseATrialOfAnotherSweepAndAnUnknownSweep) {
  Status status;
  SweepCurves(metrics(), 1, {"val_loss"}, {lease_.trial_id, 99}, &status);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("trial 99 is not a trial of sweep 1"));
  SweepCurves(metrics(), 42, {"val_loss"}, {}, &status);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
}

TEST_F(MetricStoreTest, AVisitorsErrorEndsTheRead) {
  ASSERT_OK(trials().ReportBatch(PointsBatch(lease_.trial_id, 1, 1, Steps(0, 2, 1.0))));
  const Status status = metrics().ForEachSweepCurve(1, {"val_loss"}, {}, [](TrialCurve&&) {
    return Status::Cancelled("the caller left");
  });
  EXPECT_EQ(status.code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace rung
