// tests/coordinator/server/curves_service_test.cc
//
// What a dashboard asks of the coordinator, end to end on a real server on loopback and a real
// database file, with the worker's calls made as rung-worker makes them: GetCurves (many trials in
// one call, the default metric, the x axes, min/max downsampling keeping a spike, the hostile
// values: negative, huge and tiny max_points, unknown metrics, sweeps and trials), StreamMetrics
// (a metric batch reaches the follower within 2 s of its acknowledgement; names filter; an unknown
// sweep), and the viewer token (queries yes, control no, with the fix in the message).
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/server/auth.h"
#include "coordinator/server/proto_convert.h"
#include "tests/coordinator/server/service_fixture.h"

namespace rung::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ContextWithToken;
using testing::TinySpec;

class CurvesServiceTest : public testing::CoordinatorServiceTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::LoopbackServerOptions(scratch_, &options_, &user_token_, &worker_token_));
    options_.lease_duration = testing::kLease;
    options_.viewer_token_file = scratch_.Path("viewer.token");
    StatusOr<std::string> viewer = WriteFreshTokenFile(options_.viewer_token_file);
    ASSERT_TRUE(viewer.ok()) << viewer.status().ToString();
    viewer_token_ = *viewer;
    StartServer();
  }

  // Every curve GetCurves answers, or the call's error in `status`.
  std::vector<v1::Curve> Curves(const v1::GetCurvesRequest& request, grpc::Status* status,
                                const std::string& token = "") {
    std::unique_ptr<grpc::ClientContext> context = ContextWithToken(token.empty() ? user_token_ : token);
    std::unique_ptr<grpc::ClientReader<v1::Curve>> reader = users_->GetCurves(context.get(), request);
    std::vector<v1::Curve> curves;
    v1::Curve curve;
    while (reader->Read(&curve)) curves.push_back(curve);
    *status = reader->Finish();
    return curves;
  }

  std::vector<v1::Curve> Curves(const v1::GetCurvesRequest& request) {
    grpc::Status status;
    std::vector<v1::Curve> curves = Curves(request, &status);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return curves;
  }

  // Two trials (rope, nope) of one sweep: trial 1 ran to success (val_loss at steps 5 and 10),
  // trial 2 reported `steps` step records of train_loss and val_loss, with a spike at step 77.
  void TwoTrialsReported(int steps) {
    FirstTrialSucceeded(TinySpec("tiny"));
    std::optional<v1::TrialLease> second = Lease("w1");
    ASSERT_TRUE(second.has_value());
    second_ = *second;
    std::vector<std::string> records = {testing::ProvenanceRecord()};
    for (int step = 1; step <= steps; ++step) {
      const double loss = step == 77 ? 40.0 : 4.0 - 0.001 * step;
      records.push_back(testing::StepRecord(step, loss + 0.1, loss));
    }
    grpc::Status reported = Report("w1", second_, 1, records);
    ASSERT_TRUE(reported.ok()) << reported.error_message();
  }

  std::string viewer_token_;
  v1::TrialLease second_;
};

TEST_F(CurvesServiceTest, TheCurvesOfEveryTrialComeInOneCallAsGetMetricsHasThem) {
  TwoTrialsReported(20);
  v1::GetCurvesRequest request;
  request.set_sweep_id(1);
  const std::vector<v1::Curve> curves = Curves(request);  // the sweep's metric: val_loss
  ASSERT_EQ(curves.size(), 2u);
  for (const v1::Curve& curve : curves) {
    EXPECT_EQ(curve.name(), "val_loss");
    EXPECT_EQ(curve.x_axis(), v1::CURVE_AXIS_STEP);
    const std::map<int64_t, double> expected = Curve(curve.trial_id(), "val_loss");
    ASSERT_EQ(curve.steps_size(), static_cast<int>(expected.size())) << curve.trial_id();
    EXPECT_EQ(curve.stored_points(), static_cast<int64_t>(expected.size()));
    for (int i = 0; i < curve.steps_size(); ++i) {
      EXPECT_DOUBLE_EQ(curve.values(i), expected.at(curve.steps(i)));
      EXPECT_DOUBLE_EQ(curve.x(i), static_cast<double>(curve.steps(i)));
    }
  }
  EXPECT_EQ(curves[0].trial_id(), 1);
  EXPECT_THAT(curves[0].steps(), ElementsAre(5, 10));
  EXPECT_EQ(curves[1].trial_id(), 2);
}

TEST_F(CurvesServiceTest, TheXAxisIsTokensFlopsOrWallTime) {
  TwoTrialsReported(3);
  v1::GetCurvesRequest request;
  request.set_sweep_id(1);
  request.add_trial_ids(2);
  request.add_names("train_loss");
  request.set_x_axis(v1::CURVE_AXIS_TOKENS);
  std::vector<v1::Curve> curves = Curves(request);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].x_axis(), v1::CURVE_AXIS_TOKENS);
  EXPECT_THAT(curves[0].x(), ElementsAre(32, 64, 96));  // StepRecord: 32 tokens a step
  request.set_x_axis(v1::CURVE_AXIS_FLOPS);
  curves = Curves(request);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_DOUBLE_EQ(curves[0].x(2), 6.0 * 3072 * 96);
  request.set_x_axis(v1::CURVE_AXIS_WALL_TIME);
  curves = Curves(request);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_DOUBLE_EQ(curves[0].x(1), 0.02);
}

TEST_F(CurvesServiceTest, ALongCurveIsDownsampledKeepingItsSpikeAndEnds) {
  TwoTrialsReported(300);
  v1::GetCurvesRequest request;
  request.set_sweep_id(1);
  request.add_trial_ids(2);
  request.set_max_points(10);
  const std::vector<v1::Curve> curves = Curves(request);
  ASSERT_EQ(curves.size(), 1u);
  const v1::Curve& curve = curves[0];
  EXPECT_EQ(curve.stored_points(), 300);
  EXPECT_LE(curve.steps_size(), 10);
  EXPECT_EQ(curve.steps(0), 1);
  EXPECT_EQ(curve.steps(curve.steps_size() - 1), 300);
  EXPECT_THAT(curve.steps(), ::testing::Contains(77));
  EXPECT_THAT(curve.values(), ::testing::Contains(40.0));
  EXPECT_EQ(curve.x_size(), curve.steps_size());
  EXPECT_EQ(curve.values_size(), curve.steps_size());
}

TEST_F(CurvesServiceTest, HostileMaxPointsAreRefusedOrClipped) {
  TwoTrialsReported(300);
  v1::GetCurvesRequest request;
  request.set_sweep_id(1);
  request.add_trial_ids(2);
  request.set_max_points(-1);
  grpc::Status status;
  Curves(request, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("GetCurvesRequest.max_points -1 is negative"));

  request.set_max_points(std::numeric_limits<int32_t>::max());  // clipped to 5000: the whole curve
  std::vector<v1::Curve> curves = Curves(request);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].steps_size(), 300);
  request.set_max_points(1);  // raised to 4: the ends and one bucket
  curves = Curves(request);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_LE(curves[0].steps_size(), 4);
  EXPECT_GE(curves[0].steps_size(), 3);

  StatusOr<CurvesQuery> huge = CurvesQueryFromProto(request);
  v1::GetCurvesRequest clipped = request;
  clipped.set_max_points(std::numeric_limits<int32_t>::max());
  huge = CurvesQueryFromProto(clipped);
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(huge->max_points, kMaxCurvePoints);
  clipped.set_max_points(0);
  EXPECT_EQ(CurvesQueryFromProto(clipped)->max_points, kDefaultCurvePoints);
}

TEST_F(CurvesServiceTest, UnknownMetricsSweepsAndTrialsAreRefusedWithWhatExists) {
  TwoTrialsReported(3);
  v1::GetCurvesRequest request;
  request.set_sweep_id(1);
  request.add_names("val_los");
  grpc::Status status;
  Curves(request, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("no trial of sweep 1 reported a metric 'val_los'"));
  EXPECT_THAT(status.error_message(), HasSubstr("train_loss"));

  request.clear_names();
  request.add_trial_ids(99);
  Curves(request, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("trial 99 is not a trial of sweep 1"));

  request.clear_trial_ids();
  request.add_trial_ids(-3);
  Curves(request, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  request.clear_trial_ids();
  request.set_sweep_id(42);
  Curves(request, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  request.set_sweep_id(0);
  Curves(request, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("GetCurvesRequest.sweep_id is required"));

  request.set_sweep_id(1);
  request.add_names("");
  Curves(request, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("empty name"));
  request.clear_names();
  for (int i = 0; i < 65; ++i) request.add_names("m" + std::to_string(i));
  Curves(request, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("at most 64"));
}

TEST_F(CurvesServiceTest, AJustSubmittedSweepHasNoCurvesAndNoError) {
  Submit(TinySpec("tiny"));
  v1::GetCurvesRequest request;
  request.set_sweep_id(1);
  request.add_names("anything");
  EXPECT_TRUE(Curves(request).empty());
}

TEST_F(CurvesServiceTest, AMetricBatchReachesTheFollowerWithinTwoSecondsOfItsAcknowledgement) {
  const int64_t sweep_id = Submit(TinySpec("tiny")).sweep_id();
  Register("w1");
  std::optional<v1::TrialLease> lease = Lease("w1");
  ASSERT_TRUE(lease.has_value());

  v1::StreamMetricsRequest request;
  request.set_sweep_id(sweep_id);
  request.add_names("val_loss");
  std::unique_ptr<grpc::ClientContext> context = ContextWithToken(viewer_token_);  // a dashboard's token
  std::unique_ptr<grpc::ClientReader<v1::MetricArrivals>> stream = users_->StreamMetrics(context.get(), request);
  v1::MetricArrivals message;
  ASSERT_TRUE(stream->Read(&message));
  EXPECT_TRUE(message.subscribed());
  EXPECT_EQ(message.arrivals_size(), 0);

  ASSERT_TRUE(Report("w1", *lease, 1, {testing::ProvenanceRecord(), testing::StepRecord(5, 2.5, 2.75)}).ok());
  const auto acknowledged = std::chrono::steady_clock::now();
  ASSERT_TRUE(stream->Read(&message));
  EXPECT_LT(std::chrono::steady_clock::now() - acknowledged, std::chrono::seconds(2));
  EXPECT_FALSE(message.resync());
  ASSERT_EQ(message.arrivals_size(), 1);  // train_loss is filtered out
  EXPECT_EQ(message.arrivals(0).trial_id(), lease->trial_id());
  EXPECT_EQ(message.arrivals(0).name(), "val_loss");
  EXPECT_EQ(message.arrivals(0).point().step(), 5);
  EXPECT_DOUBLE_EQ(message.arrivals(0).point().value(), 2.75);
  EXPECT_EQ(message.arrivals(0).point().attempt(), lease->attempt());
  EXPECT_EQ(message.arrivals(0).point().tokens(), 160);

  // The last batch, before the ending, is streamed too.
  ASSERT_TRUE(Report("w1", *lease, 2, {testing::StepRecord(10, 1.9, 1.5), testing::FinalRecord(1.5)}).ok());
  v1::CompleteResponse completed;
  grpc::Status status = Complete(Completion("w1", *lease, v1::OUTCOME_SUCCEEDED, 2), &completed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(stream->Read(&message));
  ASSERT_EQ(message.arrivals_size(), 1);
  EXPECT_EQ(message.arrivals(0).point().step(), 10);

  context->TryCancel();
  while (stream->Read(&message)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(CurvesServiceTest, StreamMetricsOfAnUnknownSweepIsNotFound) {
  v1::StreamMetricsRequest request;
  request.set_sweep_id(42);
  std::unique_ptr<grpc::ClientContext> context = ContextWithToken(user_token_);
  std::unique_ptr<grpc::ClientReader<v1::MetricArrivals>> stream = users_->StreamMetrics(context.get(), request);
  v1::MetricArrivals message;
  EXPECT_FALSE(stream->Read(&message));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(CurvesServiceTest, TheViewerTokenQueriesButCannotChangeAnything) {
  const int64_t sweep_id = Submit(TinySpec("tiny")).sweep_id();
  v1::ServerInfo info;
  ASSERT_TRUE(users_->GetServerInfo(ContextWithToken(viewer_token_).get(), v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.caller_role(), v1::ROLE_VIEWER);
  v1::ListSweepsResponse sweeps;
  grpc::Status status = users_->ListSweeps(ContextWithToken(viewer_token_).get(), v1::ListSweepsRequest(), &sweeps);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(sweeps.sweeps_size(), 1);
  v1::GetCurvesRequest curves;
  curves.set_sweep_id(sweep_id);
  Curves(curves, &status, viewer_token_);
  EXPECT_TRUE(status.ok()) << status.error_message();

  v1::CancelSweepRequest cancel;
  cancel.set_sweep_id(sweep_id);
  v1::Sweep sweep;
  status = users_->CancelSweep(ContextWithToken(viewer_token_).get(), cancel, &sweep);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("CancelSweep changes the coordinator's state and needs the user token"));
  v1::SubmitSweepResponse submitted;
  std::unique_ptr<grpc::ClientContext> context = ContextWithToken(viewer_token_);
  EXPECT_EQ(TrySubmit(TinySpec("other"), "other.yaml", &submitted, false, context.get()).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(GetSweep(sweep_id).state(), v1::SWEEP_STATE_ACTIVE);  // unchanged
}

}  // namespace
}  // namespace rung::server
