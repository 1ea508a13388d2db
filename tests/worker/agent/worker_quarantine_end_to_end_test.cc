// tests/worker/agent/worker_quarantine_end_to_end_test.cc
//
// A broken worker does not burn a sweep, with real processes: rung-coordinator (a temporary database
// and token files) and a rung-worker whose trainer is /bin/false (it exits 1 at once, on every
// trial). Within a few attempts the coordinator quarantines the worker: it leases nothing more,
// ListWorkers says why, and no trial has used up its retries (none is FAILED, the sweep is ACTIVE).
// ReleaseWorker lifts the quarantine, and the worker leases (and is quarantined) again.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "core/common/token_file.h"
#include "proto/rung.grpc.pb.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::agent {
namespace {

using testing::BearerContext;
using testing::ChildProcess;
using testing::FileText;
using ::testing::HasSubstr;
using testing::ScratchDir;

constexpr char kBrokenWorkerSpec[] = R"(name: broken-worker
metric: {name: val_loss, goal: minimize}
data: {source: builtin, seq_len: 32}
model: {layers: 1, d_model: 32, heads: 2}
train: {steps: 20, batch_size: 8, lr: 3.0e-3}
resources: {cpus: 1}
policy: {max_retries: 1, max_failed: 1}
sweep:
  seed: [0, 1, 2]
)";

class WorkerQuarantineEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    coordinator_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{RUNG_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--db", scratch_.Path("rung.db"),
                                 "--user-token-file", scratch_.Path("user.token"), "--worker-token-file",
                                 scratch_.Path("worker.token")},
        scratch_.path().string(), scratch_.Path("coordinator.log"));
    const std::string listening = coordinator_->ReadLine(std::chrono::seconds(60));
    ASSERT_EQ(listening.rfind("listening on ", 0), 0u) << "rung-coordinator did not start:\n" << Logs();
    address_ = listening.substr(std::string("listening on ").size());
    StatusOr<std::string> token = ReadBearerTokenFile(scratch_.Path("user.token"));
    ASSERT_TRUE(token.ok());
    user_token_ = *token;
    users_ = v1::UserService::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (worker_) worker_->Signal(SIGTERM);
    if (worker_) worker_->Wait(std::chrono::seconds(30));
    if (coordinator_) coordinator_->Signal(SIGTERM);
    if (coordinator_) coordinator_->Wait(std::chrono::seconds(30));
  }

  std::string Logs() {
    return "coordinator:\n" + FileText(scratch_.Path("coordinator.log")) + "\nworker:\n" +
           FileText(scratch_.Path("worker.log"));
  }

  v1::Worker WorkerNamed(const std::string& id) {
    v1::ListWorkersResponse listed;
    grpc::Status status = users_->ListWorkers(BearerContext(user_token_).get(), v1::ListWorkersRequest(), &listed);
    EXPECT_TRUE(status.ok()) << status.error_message();
    for (const v1::Worker& worker : listed.workers()) {
      if (worker.worker_id() == id) return worker;
    }
    return v1::Worker();
  }

  // Polls (bounded) until the worker is quarantined; false (and a failed expectation) if it is not.
  bool WaitForQuarantine(const std::string& id) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (WorkerNamed(id).has_quarantined_at()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "worker " << id << " was not quarantined\n" << Logs();
    return false;
  }

  ScratchDir scratch_;
  std::unique_ptr<ChildProcess> coordinator_;
  std::unique_ptr<ChildProcess> worker_;
  std::string address_;
  std::string user_token_;
  std::unique_ptr<v1::UserService::Stub> users_;
};

TEST_F(WorkerQuarantineEndToEndTest, AWorkerWhoseTrainerCannotRunIsQuarantinedBeforeItFailsTheSweep) {
  v1::SubmitSweepRequest submit;
  submit.set_spec_text(kBrokenWorkerSpec);
  submit.set_spec_file_name("broken-worker.yaml");
  v1::SubmitSweepResponse submitted;
  grpc::Status status = users_->SubmitSweep(BearerContext(user_token_).get(), submit, &submitted);
  ASSERT_TRUE(status.ok()) << status.error_message();

  worker_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{RUNG_WORKER_BINARY, "--coordinator", address_, "--worker-token-file",
                               scratch_.Path("worker.token"), "--cpus", "1", "--worker-id", "broken", "--trainer",
                               "/bin/false", "--work-dir", scratch_.Path("work"), "--heartbeat-seconds", "0.5"},
      scratch_.path().string(), scratch_.Path("worker.log"));
  ASSERT_TRUE(worker_->started());
  ASSERT_TRUE(WaitForQuarantine("broken"));
  EXPECT_THAT(WorkerNamed("broken").quarantine_reason(), HasSubstr("(exit 1)"));

  // No trial used up its retries: with max_failed 1, one would have failed the sweep.
  v1::GetSweepRequest get;
  get.set_sweep_id(submitted.sweep_id());
  v1::Sweep sweep;
  ASSERT_TRUE(users_->GetSweep(BearerContext(user_token_).get(), get, &sweep).ok());
  EXPECT_EQ(sweep.state(), v1::SWEEP_STATE_ACTIVE) << Logs();
  v1::ListTrialsRequest list;
  list.set_sweep_id(submitted.sweep_id());
  v1::ListTrialsResponse trials;
  ASSERT_TRUE(users_->ListTrials(BearerContext(user_token_).get(), list, &trials).ok());
  for (const v1::Trial& trial : trials.trials()) {
    EXPECT_EQ(trial.state(), v1::TRIAL_STATE_PENDING) << "trial " << trial.trial_id() << ": " << trial.state_reason();
    EXPECT_EQ(trial.failures(), 0) << "trial " << trial.trial_id();
  }
  EXPECT_THAT(FileText(scratch_.Path("worker.log")), HasSubstr("the coordinator quarantined this worker"));

  // Released, it leases again: and, still broken, is quarantined again.
  v1::ReleaseWorkerRequest release;
  release.set_worker_id("broken");
  v1::Worker released;
  status = users_->ReleaseWorker(BearerContext(user_token_).get(), release, &released);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(released.has_quarantined_at());
  ASSERT_TRUE(WaitForQuarantine("broken"));
  ASSERT_TRUE(users_->GetSweep(BearerContext(user_token_).get(), get, &sweep).ok());
  EXPECT_EQ(sweep.state(), v1::SWEEP_STATE_ACTIVE) << Logs();
}

}  // namespace
}  // namespace rung::agent
