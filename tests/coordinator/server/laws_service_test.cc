// tests/coordinator/server/laws_service_test.cc: UserService.GetLaws on a real coordinator: the
// scaling laws of a sweep's finished trials (an IsoFLOP grid whose losses follow a known law), and
// the sweeps and requests it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "coordinator/server/auth.h"
#include "coordinator/server/user_service.h"
#include "sweeps/fit/chinchilla_law.h"
#include "tests/coordinator/server/service_fixture.h"

namespace rung::server {
namespace {

using ::testing::HasSubstr;
using testing::ContextWithToken;

// Two variants on 4 sizes x 2 IsoFLOP budgets: 16 trials.
std::string IsoflopSpec() {
  return "name: laws\n"
         "metric: {name: val_loss, goal: minimize}\n"
         "baseline: {position.variant: rope}\n"
         "data: {source: builtin, seq_len: 16}\n"
         "model: {mlp: gelu}\n"
         "train: {batch_size: 2, lr: 1.0e-3}\n"
         "resources: {cpus: 1}\n"
         "ladder:\n"
         "  rungs:\n"
         "    - {layers: 1, d_model: 16, heads: 2}\n"
         "    - {layers: 2, d_model: 16, heads: 2}\n"
         "    - {layers: 2, d_model: 32, heads: 2}\n"
         "    - {layers: 3, d_model: 32, heads: 2}\n"
         "  isoflop_budgets: [2.0e8, 6.0e8]\n"
         "sweep:\n"
         "  position.variant: [rope, lerope]\n";
}

// The losses: rope on a known law, lerope on the same law at (1.2 N, 1.2 D): a compute multiplier of 1.44.
const fit::ChinchillaLaw kRope{1.5, 40.0, 60.0, 0.4, 0.3};

double LossOf(const v1::Trial& trial, const std::string& variant) {
  const double d = static_cast<double>(trial.tokens());
  const double n = trial.flops() / (6.0 * d);
  const double scale = variant == "lerope" ? 1.2 : 1.0;
  return kRope.Predict(scale * n, scale * d);
}

class LawsServiceTest : public testing::CoordinatorServiceTest {
 protected:
  // Runs every trial of `sweep` to success with its law's loss.
  void RunAll(int64_t sweep) {
    Register("w1", 8);
    for (const v1::Trial& listed : ListTrials(sweep)) {
      (void)listed;
      std::optional<v1::TrialLease> lease = Lease("w1");
      ASSERT_TRUE(lease.has_value());
      const v1::Trial trial = GetTrial(lease->trial_id());
      std::string variant;
      for (const v1::ConfigEntry& entry : trial.assignments()) {
        if (entry.key() == "position.variant") variant = entry.value().text();
      }
      RunToSuccess("w1", *lease, LossOf(trial, variant));
    }
  }

  // The server again, with a viewer token (viewer_).
  void RestartServerWithViewer() {
    options_.viewer_token_file = scratch_.Path("viewer.token");
    StatusOr<std::string> viewer = WriteFreshTokenFile(options_.viewer_token_file);
    ASSERT_TRUE(viewer.ok()) << viewer.status().ToString();
    viewer_ = *viewer;
    RestartServer();
  }

  std::string viewer_;

  grpc::Status Laws(v1::GetLawsRequest request, v1::GetLawsResponse* response, const std::string& token = "") {
    return users_->GetLaws(ContextWithToken(token.empty() ? user_token_ : token).get(), request, response);
  }
};

TEST_F(LawsServiceTest, AnIsoflopSweepsLawsRecoverTheLawItsLossesFollowAndPredictTheMultiplier) {
  const int64_t sweep = Submit(IsoflopSpec()).sweep_id();
  RunAll(sweep);
  v1::GetLawsRequest request;
  request.set_sweep_id(sweep);
  request.set_bootstrap(-1);
  request.add_at(1e12);
  v1::GetLawsResponse response;
  grpc::Status status = Laws(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const v1::LawReport& report = response.report();
  EXPECT_EQ(report.source(), "sweep laws");
  EXPECT_EQ(report.unit(), "nats");
  EXPECT_EQ(report.baseline(), "rope");  // the spec's baseline
  ASSERT_EQ(report.variants_size(), 2);
  for (const v1::VariantLaw& law : report.variants()) {
    EXPECT_EQ(law.points(), 8) << law.variant();
    EXPECT_NEAR(law.alpha(), kRope.alpha, 1e-3) << law.variant();
    EXPECT_NEAR(law.beta(), kRope.beta, 1e-3) << law.variant();
    EXPECT_NEAR(law.e(), kRope.e, 1e-3) << law.variant();
  }
  EXPECT_EQ(report.runs_size(), 16);
  EXPECT_THAT(report.runs(0).origin(), HasSubstr("trial "));
  // lerope's law is rope's at (1.2 N, 1.2 D): CM = 1.44 at any compute, both ways.
  ASSERT_EQ(report.multipliers_size(), 2);
  for (const v1::PredictedMultiplier& multiplier : report.multipliers()) {
    EXPECT_EQ(multiplier.variant(), "lerope");
    ASSERT_TRUE(multiplier.has_multiplier()) << multiplier.why();
    EXPECT_NEAR(multiplier.multiplier(), 1.44, 1e-3) << multiplier.allocation();
    EXPECT_TRUE(multiplier.extrapolated());
  }
  ASSERT_TRUE(report.has_isoflop());
  EXPECT_EQ(report.isoflop().variants_size(), 2);
  ASSERT_TRUE(report.has_rollout());
  EXPECT_EQ(report.rollout().why(), "") << report.rollout().why();
  EXPECT_EQ(report.parameter_basis().why(), "no bootstrap replicates were asked for");
  EXPECT_EQ(response.unfinished(), 0);
}

TEST_F(LawsServiceTest, ASweepOnOneAllocationRuleIsRefusedSayingWhatToRun) {
  const std::string spec =
      "name: rule\nmetric: {name: val_loss, goal: minimize}\nbaseline: {position.variant: rope}\n"
      "data: {source: builtin, seq_len: 16}\nmodel: {mlp: gelu}\ntrain: {batch_size: 2, lr: 1.0e-3}\n"
      "resources: {cpus: 1}\nladder:\n  depths: [1, 2, 3, 4, 5]\n  head_dim: 8\n  tokens_per_param: 20\n"
      "sweep:\n  position.variant: [rope]\n";
  const int64_t sweep = Submit(spec).sweep_id();
  v1::GetLawsRequest request;
  request.set_sweep_id(sweep);
  v1::GetLawsResponse response;
  grpc::Status status = Laws(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("no finished run of sweep rule"));
  RunAll(sweep);
  status = Laws(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("ran on one allocation rule"));
  EXPECT_THAT(status.error_message(), HasSubstr("ladder.isoflop_budgets"));
}

TEST_F(LawsServiceTest, BadRequestsAreRefusedNamingTheField) {
  const int64_t sweep = Submit(IsoflopSpec()).sweep_id();
  v1::GetLawsResponse response;
  v1::GetLawsRequest request;
  EXPECT_EQ(Laws(request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.set_sweep_id(sweep + 100);
  EXPECT_EQ(Laws(request, &response).error_code(), grpc::StatusCode::NOT_FOUND);
  request.set_sweep_id(sweep);
  request.set_sharing("alpha");
  grpc::Status status = Laws(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("GetLawsRequest.sharing: unknown sharing 'alpha'"));
  request.clear_sharing();
  request.set_rollout(-1);
  EXPECT_EQ(Laws(request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.clear_rollout();
  request.set_baseline("ropee");
  RunAll(sweep);
  status = Laws(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("'ropee'; its variants: lerope, rope"));
  request.clear_baseline();
  request.set_bootstrap(20000);
  RestartServerWithViewer();
  status = Laws(request, &response, viewer_);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  request.add_at(-1);
  request.set_bootstrap(-1);
  status = Laws(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("a compute to predict at must be a positive number"));
}

}  // namespace
}  // namespace rung::server
