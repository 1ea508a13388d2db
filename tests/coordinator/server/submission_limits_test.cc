// What the coordinator refuses before doing the work a request asks for: a spec that expands to
// more trials than --max-trials-per-submission (submitted or dry run), a spec whose aliases would
// expand past the document limits, a fit with more bootstrap replicates than the limit. Each is
// INVALID_ARGUMENT with the limit, nothing is stored, and the coordinator keeps serving.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "coordinator/server/grpc_server.h"
#include "proto/rung.grpc.pb.h"
#include "tests/coordinator/server/service_fixture.h"

namespace rung::server {
namespace {

using testing::ContextWithToken;
using testing::CoordinatorServiceTest;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::TinySpec;

TEST_F(CoordinatorServiceTest, ASpecOverTheTrialLimitIsRefusedWithTheFlagThatRaisesIt) {
  options_.max_trials_per_submission = 1;
  RestartServer();
  for (const bool dry_run : {true, false}) {
    v1::SubmitSweepResponse response;
    const grpc::Status status = TrySubmit(TinySpec("two"), "two.yaml", &response, dry_run);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << dry_run;
    EXPECT_THAT(status.error_message(),
                HasSubstr("two.yaml:12:1: error: sweep: the spec expands to 2 trials (1 rung(s) x 2 cells), more than "
                          "the limit of 1 trials (raise it with rung-coordinator --max-trials-per-submission N)"));
  }
  EXPECT_THAT(ListSweeps(), SizeIs(0));

  options_.max_trials_per_submission = 2;
  RestartServer();
  EXPECT_EQ(Submit(TinySpec("two"), /*dry_run=*/true).trial_count(), 2);
}

TEST_F(CoordinatorServiceTest, ASpecWhoseAliasesWouldExplodeIsRefusedAndTheCoordinatorKeepsServing) {
  std::string spec = "name: laughs\na: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char level = 'b'; level <= 'i'; ++level) {
    spec += std::string(1, level) + ": &" + level + " [";
    for (int copy = 0; copy < 9; ++copy)
      spec += std::string(copy == 0 ? "" : ", ") + "*" + static_cast<char>(level - 1);
    spec += "]\n";
  }
  v1::SubmitSweepResponse response;
  const grpc::Status status = TrySubmit(spec, "laughs.yaml", &response, /*dry_run=*/true);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("laughs.yaml:8:8: alias *f expands to 597871 nodes"));
  EXPECT_EQ(Submit(TinySpec("after")).trial_count(), 2);
}

TEST_F(CoordinatorServiceTest, AFitWithMoreBootstrapReplicatesThanTheLimitIsRefused) {
  const v1::SubmitSweepResponse submitted = Submit(TinySpec("fit"));
  v1::FitRequest request;
  request.set_sweep_id(submitted.sweep_id());
  request.set_bootstrap(100000000);
  v1::FitResponse response;
  const grpc::Status status = users_->Fit(ContextWithToken(user_token_).get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("bootstrap: 100000000 replicates are more than the fixed limit of 100000"));
}

}  // namespace
}  // namespace rung::server
