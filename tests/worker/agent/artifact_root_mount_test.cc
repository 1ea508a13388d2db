// tests/worker/agent/artifact_root_mount_test.cc
//
// A worker that does not see the coordinator's artifact root leases nothing: rung-coordinator as a
// real process (its root a scratch folder, marked at its start), the agent in this process on a
// ManualClock with a fake trainer. With the root's marker moved away (the worker's host "without the
// mount") the agent registers, says once that the root is not mounted here, and asks for no trial
// while one waits PENDING, checking again every 10 s; with the marker back, it says so and leases
// the trial at the next check.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "core/common/artifact_root_marker.h"
#include "core/common/token_file.h"
#include "proto/rung.grpc.pb.h"
#include "tests/worker/agent/agent_test_util.h"
#include "worker/agent/agent.h"
#include "worker/agent/artifact_root_check.h"

namespace rung::agent {
namespace {

using testing::ChildProcess;
using testing::FileText;
using testing::ScratchDir;
using ::testing::HasSubstr;

constexpr char kOneTrialSpec[] = R"(name: mount
metric: {name: val_loss, goal: minimize}
data: {source: builtin, seq_len: 32}
model: {layers: 1, d_model: 32, heads: 2}
train: {steps: 20, batch_size: 8, lr: 3.0e-3}
resources: {cpus: 1}
sweep:
  seed: [0]
)";

// Trains until SIGTERM, then stops as a preempted trainer does.
constexpr char kWaitingTrainer[] = R"(trap 'exit 75' TERM
while true; do sleep 0.05; done
)";

size_t Occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

class ArtifactRootMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = scratch_.Path("artifacts");
    coordinator_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{RUNG_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--db", scratch_.Path("rung.db"),
                                 "--artifact-root", root_, "--user-token-file", scratch_.Path("user.token"),
                                 "--worker-token-file", scratch_.Path("worker.token")},
        scratch_.path().string(), scratch_.Path("coordinator.log"));
    const std::string listening = coordinator_->ReadLine(std::chrono::seconds(60));
    ASSERT_EQ(listening.rfind("listening on ", 0), 0u)
        << "rung-coordinator did not start:\n" << FileText(scratch_.Path("coordinator.log"));
    address_ = listening.substr(std::string("listening on ").size());
    StatusOr<std::string> user_token = ReadBearerTokenFile(scratch_.Path("user.token"));
    StatusOr<std::string> worker_token = ReadBearerTokenFile(scratch_.Path("worker.token"));
    ASSERT_TRUE(user_token.ok() && worker_token.ok());
    user_token_ = *user_token;
    users_ = v1::UserService::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
    client_ =
        std::move(CoordinatorClient::Connect(testing::QuickClientOptions(address_, *worker_token), clock_)).value();
  }

  void TearDown() override {
    if (!coordinator_) return;
    coordinator_->Signal(SIGTERM);
    coordinator_->Wait(std::chrono::seconds(30));
  }

  AgentOptions Options() {
    AgentOptions options = testing::QuickAgentOptions(scratch_, /*cpu_slots=*/1, kWaitingTrainer);
    options.worker_id = "unmounted";
    return options;
  }

  v1::Trial OnlyTrial(int64_t sweep_id) {
    const std::vector<v1::Trial> trials = testing::ListTrialsExpectingOk(*users_, user_token_, sweep_id);
    EXPECT_EQ(trials.size(), 1u);
    return trials.empty() ? v1::Trial() : trials[0];
  }

  ManualClock clock_;
  ScratchDir scratch_;
  std::string root_;
  std::unique_ptr<ChildProcess> coordinator_;
  std::string address_;
  std::string user_token_;
  std::unique_ptr<v1::UserService::Stub> users_;
  std::unique_ptr<CoordinatorClient> client_;
};

TEST_F(ArtifactRootMountTest, AWorkerWithoutTheRootsMarkerLeasesNothingUntilItIsBack) {
  const std::string marker = ArtifactRootMarkerPath(root_);
  ASSERT_TRUE(std::filesystem::exists(marker)) << "the coordinator marks its root at start";
  std::filesystem::rename(marker, scratch_.Path("marker-elsewhere"));
  const v1::SubmitSweepResponse submitted = testing::SubmitSpecExpectingOk(*users_, user_token_, kOneTrialSpec,
                                                                           "mount.yaml");
  ASSERT_EQ(submitted.trial_count(), 1);

  ::testing::internal::CaptureStderr();
  Agent agent(client_.get(), Options(), clock_);
  auto run = std::async(std::launch::async, [&] { return agent.Run(); });

  // Registered, checked, and asleep until the next check: no Lease call in between.
  const Clock::TimePoint start = clock_.Now();
  const bool waits_to_check_again = clock_.AwaitWaiter(start + kArtifactRootRecheckInterval);
  EXPECT_TRUE(waits_to_check_again) << "the agent did not wait for its next check";
  EXPECT_EQ(OnlyTrial(submitted.sweep_id()).state(), v1::TRIAL_STATE_PENDING);
  // Checked again and still missing: no lease, no second line.
  if (waits_to_check_again) {
    clock_.Advance(kArtifactRootRecheckInterval);
    EXPECT_TRUE(clock_.AwaitWaiter(start + 2 * kArtifactRootRecheckInterval));
  }
  EXPECT_EQ(OnlyTrial(submitted.sweep_id()).state(), v1::TRIAL_STATE_PENDING);

  // Mounted: the next check finds it, and the trial is leased.
  std::filesystem::rename(scratch_.Path("marker-elsewhere"), marker);
  clock_.Advance(kArtifactRootRecheckInterval);
  EXPECT_TRUE(testing::WaitUntil(
      [&] { return OnlyTrial(submitted.sweep_id()).state() != v1::TRIAL_STATE_PENDING; }, std::chrono::seconds(20)))
      << "the trial was not leased once the root was back";

  agent.Shutdown("test over");
  EXPECT_TRUE(testing::AdvanceUntil(clock_, [&] {
    return run.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(run.get().ok());
  const std::string missing = "the coordinator's artifact root " + root_ +
                              " is not mounted here (no .rung-artifact-root: No such file or directory): this "
                              "worker leases nothing until it is; checked again every 10 s";
  EXPECT_EQ(Occurrences(log, missing), 1u) << log;
  EXPECT_EQ(Occurrences(log, "is not mounted here"), 1u) << "one line, not one per check:\n" << log;
  EXPECT_EQ(Occurrences(log, "the coordinator's artifact root " + root_ + " is mounted here again: leasing resumes"),
            1u)
      << log;
  EXPECT_THAT(log, HasSubstr("leased trial "));
  EXPECT_LT(log.find(missing), log.find("is mounted here again")) << log;
  EXPECT_LT(log.find("is mounted here again"), log.find("leased trial ")) << log;
}

TEST_F(ArtifactRootMountTest, AWorkerThatSeesAnotherRootsMarkerSaysWhichIdsDiffer) {
  const std::string marker = ArtifactRootMarkerPath(root_);
  StatusOr<ArtifactRootMarker> coordinators = ReadArtifactRootMarker(root_);
  ASSERT_TRUE(coordinators.ok()) << coordinators.status().ToString();
  const std::string other_id = "0123456789abcdef0123456789abcdef";
  testing::WriteFile(marker, R"({"id": ")" + other_id + R"(", "created_at": "2024-05-01 10:00:00Z"})");
  const v1::SubmitSweepResponse submitted = testing::SubmitSpecExpectingOk(*users_, user_token_, kOneTrialSpec,
                                                                           "mount.yaml");

  ::testing::internal::CaptureStderr();
  Agent agent(client_.get(), Options(), clock_);
  auto run = std::async(std::launch::async, [&] { return agent.Run(); });
  EXPECT_TRUE(clock_.AwaitWaiter(clock_.Now() + kArtifactRootRecheckInterval));
  EXPECT_EQ(OnlyTrial(submitted.sweep_id()).state(), v1::TRIAL_STATE_PENDING);
  agent.Shutdown("test over");
  EXPECT_TRUE(testing::AdvanceUntil(clock_, [&] {
    return run.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(run.get().ok());
  EXPECT_THAT(log, HasSubstr("the coordinator's artifact root " + root_ + " is not mounted here (it holds id " +
                             other_id + ", the coordinator's is " + coordinators->id +
                             "): this worker leases nothing until it is; checked again every 10 s"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("leased trial ")));
}

}  // namespace
}  // namespace rung::agent
