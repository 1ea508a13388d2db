// tests/worker/agent/agent_test.cc
//
// The agent loop against a real gRPC WorkerService on loopback, with fake trainers (real processes),
// its own times on a ManualClock: slot accounting (leases only while slots are free, the next trial
// when one ends), registration through a coordinator outage, the shutdown that preempts every
// trainer and reports it, and the allocation's end: its stop time registered, and the same shutdown
// at that time. Then rung-worker itself, as SLURM starts it: squeue asked (a script first on its
// PATH), the stop registered and made on real time, and an --until already past refused.
#include "proto/config_value.h"
#include "worker/agent/agent.h"

#include <cstdlib>
#include <filesystem>
#include <future>

#include <gmock/gmock.h>
#include <google/protobuf/util/time_util.h>
#include <gtest/gtest.h>

#include "tests/worker/agent/agent_test_util.h"

namespace rung::agent {
namespace {

using testing::ScratchDir;
using testing::TestCoordinator;
using ::testing::HasSubstr;

constexpr char kStoppableTrainer[] = R"(i=0
trap 'echo "{\"type\":\"preempted\",\"step\":$i,\"signal\":15,\"checkpoint\":null}"; exit 75' TERM
echo '{"type":"provenance"}'
while true; do i=$((i+1)); echo '{"type":"step","step":'$i',"train_loss":1.0}'; sleep 0.02; done
)";

constexpr char kQuickTrainer[] = R"(echo '{"type":"provenance"}'
echo '{"type":"step","step":1,"train_loss":1.0}'
echo '{"type":"final","step":1,"val_loss":1.0}'
)";

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override { coordinator_.set_heartbeat_interval(std::chrono::milliseconds(100)); }

  void Connect(const std::string& address) {
    client_ = std::move(CoordinatorClient::Connect(testing::QuickClientOptions(address), clock_)).value();
  }

  AgentOptions Options(int cpu_slots, const std::string& script) {
    return testing::QuickAgentOptions(scratch_, cpu_slots, script);
  }

  static v1::TrialLease Lease(int64_t trial_id, int cpu_slots) {
    v1::TrialLease lease;
    lease.set_trial_id(trial_id);
    lease.set_attempt(1);
    *lease.mutable_config() = wire::ToConfigObject(nlohmann::json::parse("{}"));
    lease.set_cpu_slots(cpu_slots);
    return lease;
  }

  ManualClock clock_;
  ScratchDir scratch_;
  TestCoordinator coordinator_;
  std::unique_ptr<CoordinatorClient> client_;
};

TEST_F(AgentTest, LeasesWhileSlotsAreFreeAndPreemptsEveryTrainerOnShutdown) {
  Connect(coordinator_.Start());
  for (int64_t trial = 1; trial <= 3; ++trial) coordinator_.QueueLease(Lease(trial, 1));
  AgentOptions options = Options(/*cpu_slots=*/2, kStoppableTrainer);
  options.attempt.relay.batch_lines = 3;  // a running trainer fills one every 60 ms
  Agent agent(client_.get(), options, clock_);
  auto run = std::async(std::launch::async, [&] { return agent.Run(); });

  ASSERT_TRUE(coordinator_.WaitFor(
      [](const TestCoordinator& c) { return !c.committed_batches(1).empty() && !c.committed_batches(2).empty(); },
      std::chrono::seconds(20)))
      << "two trials on two slots";
  EXPECT_EQ(coordinator_.queued_leases(), 1u) << "the third waits for a free slot";
  ASSERT_EQ(coordinator_.registrations().size(), 1u);
  EXPECT_EQ(coordinator_.registrations()[0].cpu_slots(), 2);
  EXPECT_EQ(coordinator_.registrations()[0].worker_id(), "agent-test");
  EXPECT_FALSE(coordinator_.registrations()[0].has_stops_at()) << "no allocation end known";
  for (const v1::LeaseRequest& request : coordinator_.lease_requests()) {
    EXPECT_GE(request.free().cpu_slots(), 1) << "never asks without a free slot";
    EXPECT_LE(request.free().cpu_slots(), 2);
  }

  agent.Shutdown("SIGTERM");
  ASSERT_EQ(run.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(run.get().ok());
  std::vector<v1::CompleteRequest> completes = coordinator_.completes();
  ASSERT_EQ(completes.size(), 2u);
  for (const v1::CompleteRequest& complete : completes) {
    EXPECT_EQ(complete.outcome(), v1::OUTCOME_PREEMPTED);
    EXPECT_EQ(complete.exit_code(), 75);
    EXPECT_THAT(complete.reason(), HasSubstr("worker shutting down (SIGTERM)"));
  }
  EXPECT_EQ(coordinator_.queued_leases(), 1u);
}

TEST_F(AgentTest, TheNextTrialStartsWhenASlotIsFreed) {
  Connect(coordinator_.Start());
  for (int64_t trial = 1; trial <= 3; ++trial) coordinator_.QueueLease(Lease(trial, 1));
  Agent agent(client_.get(), Options(/*cpu_slots=*/1, kQuickTrainer), clock_);
  auto run = std::async(std::launch::async, [&] { return agent.Run(); });
  ASSERT_TRUE(coordinator_.WaitFor([](const TestCoordinator& c) { return c.completes().size() == 3; },
                                   std::chrono::seconds(30)));
  agent.Shutdown("test over");
  ASSERT_EQ(run.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(run.get().ok());
  for (const v1::CompleteRequest& complete : coordinator_.completes()) {
    EXPECT_EQ(complete.outcome(), v1::OUTCOME_SUCCEEDED);
  }
}

// A trainer that prints its provenance, waits for the file "go" next to the script, then ends.
constexpr char kGatedTrainer[] = R"(echo '{"type":"provenance"}'
while [ ! -f "$(dirname "$0")/go" ]; do sleep 0.01; done
echo '{"type":"step","step":1,"train_loss":1.0}'
echo '{"type":"final","step":1,"val_loss":1.0}'
)";

TEST_F(AgentTest, AnEndingTrialReportsItsLastBatchThenCompletesAndLeasesTheNext) {
  Connect(coordinator_.Start());
  for (int64_t trial = 1; trial <= 3; ++trial) coordinator_.QueueLease(Lease(trial, 1));
  AgentOptions options = Options(/*cpu_slots=*/1, kGatedTrainer);
  options.attempt.relay.batch_delay = std::chrono::seconds(30);  // only the provenance goes early
  Agent agent(client_.get(), options, clock_);
  auto run = std::async(std::launch::async, [&] { return agent.Run(); });

  // Trial 1 runs: its provenance goes in a batch of its own once it has waited provenance_delay.
  ASSERT_TRUE(testing::WaitUntil(
      [&] { return testing::ReadLines(scratch_.Path("work/trial-1/attempt-1/records.jsonl")).size() == 1; },
      std::chrono::seconds(20)));
  EXPECT_TRUE(coordinator_.committed_batches(1).empty()) << "not before its delay";
  clock_.Advance(options.attempt.relay.provenance_delay);
  ASSERT_TRUE(coordinator_.WaitFor([](const TestCoordinator& c) { return c.committed_batches(1).size() == 1; },
                                   std::chrono::seconds(20)));
  testing::WriteFile(scratch_.Path("go"), "");
  ASSERT_TRUE(coordinator_.WaitFor([](const TestCoordinator& c) { return c.completes().size() == 3; },
                                   std::chrono::seconds(30)));
  agent.Shutdown("test over");
  ASSERT_EQ(run.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(run.get().ok());

  const std::vector<v1::CompleteRequest> completes = coordinator_.completes();
  for (size_t index = 0; index < completes.size(); ++index) {
    const v1::CompleteRequest& complete = completes[index];
    EXPECT_EQ(complete.trial_id(), static_cast<int64_t>(index + 1));
    EXPECT_EQ(complete.outcome(), v1::OUTCOME_SUCCEEDED);
    EXPECT_EQ(complete.last_batch_sequence(),
              static_cast<int64_t>(coordinator_.committed_batches(complete.trial_id()).size()))
        << "every batch acknowledged before the ending";
  }
  // Trial 1: batch 1 the provenance, batch 2 the step and the final record (drained at the end).
  const std::vector<TestCoordinator::Batch> first = coordinator_.committed_batches(1);
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(first[1].request.batch().stdout_size(), 2) << "the step and the final record, typed, once";
  EXPECT_TRUE(first[1].request.batch().stdout(0).record().has_step());
  EXPECT_TRUE(first[1].request.batch().stdout(1).record().has_final());
  // Every trial's lines reached the coordinator exactly once, whichever way they went.
  for (int64_t trial = 1; trial <= 3; ++trial) {
    int records = 0;
    for (const TestCoordinator::Batch& batch : coordinator_.committed_batches(trial)) {
      records += batch.request.batch().stdout_size();
    }
    EXPECT_EQ(records, 3) << "trial " << trial;
  }
}

TEST_F(AgentTest, RegistersOnceTheCoordinatorComesUp) {
  const std::string address = coordinator_.Start();
  const int port = coordinator_.port();
  coordinator_.Stop();
  Connect(address);
  Agent agent(client_.get(), Options(/*cpu_slots=*/1, kQuickTrainer), clock_);
  auto run = std::async(std::launch::async, [&] { return agent.Run(); });
  EXPECT_EQ(run.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  coordinator_.QueueLease(Lease(1, 1));
  coordinator_.Start(port);
  ASSERT_TRUE(testing::AdvanceUntil(clock_, [&] { return coordinator_.completes().size() == 1; }))
      << "registration is tried again as its backoff passes";
  agent.Shutdown("test over");
  ASSERT_EQ(run.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(run.get().ok());
}

TEST_F(AgentTest, AShutdownDuringRegistrationEndsAtOnce) {
  const std::string address = coordinator_.Start();
  coordinator_.Stop();
  Connect(address);
  Agent agent(client_.get(), Options(/*cpu_slots=*/1, kQuickTrainer), clock_);
  auto run = std::async(std::launch::async, [&] { return agent.Run(); });
  agent.Shutdown("SIGINT");
  ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(run.get().ok());
}

TEST_F(AgentTest, ARefusedTokenEndsTheAgentWithAnError) {
  CoordinatorClientOptions options;
  options.address = coordinator_.Start();
  options.token = "a-token-the-coordinator-does-not-know";
  client_ = std::move(CoordinatorClient::Connect(options, clock_)).value();
  Agent agent(client_.get(), Options(/*cpu_slots=*/1, kQuickTrainer), clock_);
  Status status = agent.Run();
  EXPECT_EQ(status.code(), StatusCode::kUnauthenticated) << status.ToString();
  EXPECT_THAT(status.message(), HasSubstr("--worker-token-file"));
}

int64_t UnixMilliseconds(WallTime time) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
}

TEST_F(AgentTest, AWorkerThatKnowsItsAllocationsEndRegistersWhenItStops) {
  Connect(coordinator_.Start());
  AgentOptions options = Options(/*cpu_slots=*/1, kQuickTrainer);
  const WallTime end = std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now()) +
                       std::chrono::hours(1);
  options.allocation_end = AllocationEnd{end, "--until test"};
  options.end_margin = std::chrono::seconds(150);
  Agent agent(client_.get(), options, clock_);
  auto run = std::async(std::launch::async, [&] { return agent.Run(); });
  ASSERT_TRUE(coordinator_.WaitFor([](const TestCoordinator& c) { return c.registrations().size() == 1; },
                                   std::chrono::seconds(20)));
  const v1::RegisterRequest registration = coordinator_.registrations()[0];
  ASSERT_TRUE(registration.has_stops_at());
  EXPECT_EQ(google::protobuf::util::TimeUtil::TimestampToMilliseconds(registration.stops_at()),
            UnixMilliseconds(end - std::chrono::seconds(150)))
      << "its end less its margin, on the wall clock";
  agent.Shutdown("test over");
  ASSERT_EQ(run.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(run.get().ok());
}

TEST_F(AgentTest, AtItsStopTimeBeforeTheAllocationsEndTheAgentPreemptsItsTrialsAsOnShutdown) {
  Connect(coordinator_.Start());
  coordinator_.QueueLease(Lease(1, 1));
  coordinator_.QueueLease(Lease(2, 1));
  AgentOptions options = Options(/*cpu_slots=*/1, kStoppableTrainer);
  options.attempt.relay.batch_lines = 3;
  options.allocation_end = AllocationEnd{std::chrono::system_clock::now() + std::chrono::minutes(11), "SLURM test"};
  options.end_margin = std::chrono::minutes(1);  // stops 10 minutes from now, on the agent's clock
  Agent agent(client_.get(), options, clock_);
  auto run = std::async(std::launch::async, [&] { return agent.Run(); });
  ASSERT_TRUE(coordinator_.WaitFor([](const TestCoordinator& c) { return !c.committed_batches(1).empty(); },
                                   std::chrono::seconds(20)))
      << "trial 1 runs";

  clock_.Advance(std::chrono::minutes(9));
  EXPECT_EQ(run.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout) << "not before its stop time";
  EXPECT_TRUE(coordinator_.completes().empty());
  clock_.Advance(std::chrono::minutes(2));
  ASSERT_EQ(run.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(run.get().ok());
  const std::vector<v1::CompleteRequest> completes = coordinator_.completes();
  ASSERT_EQ(completes.size(), 1u);
  EXPECT_EQ(completes[0].trial_id(), 1);
  EXPECT_EQ(completes[0].outcome(), v1::OUTCOME_PREEMPTED);
  EXPECT_EQ(completes[0].exit_code(), 75) << "the trainer checkpointed and stopped";
  EXPECT_THAT(completes[0].reason(), HasSubstr("worker shutting down (allocation ends at "));
  EXPECT_THAT(completes[0].reason(), HasSubstr(" (SLURM test): stopping 60 s before it)"));
  EXPECT_EQ(coordinator_.queued_leases(), 1u) << "no new lease once stopping";
}

// rung-worker as a process, its stderr in `log`; the test's environment plus `environment`.
std::unique_ptr<Subprocess> StartWorker(const std::vector<std::string>& arguments,
                                        const std::vector<std::string>& environment, const std::string& log) {
  SubprocessOptions options;
  options.argv = {RUNG_WORKER_BINARY};
  options.argv.insert(options.argv.end(), arguments.begin(), arguments.end());
  options.environment = environment;
  options.stdin_from = Redirect::Null();
  options.stdout_to = Redirect::AppendTo(log);
  options.stderr_to = Redirect::ToStdout();
  StatusOr<std::unique_ptr<Subprocess>> worker = Subprocess::Start(options);
  EXPECT_TRUE(worker.ok()) << worker.status().ToString();
  return worker.ok() ? std::move(worker).value() : nullptr;
}

TEST_F(AgentTest, RungWorkerUnderSlurmAsksSqueueRegistersItsStopAndStopsByItself) {
  const std::string address = coordinator_.Start();
  coordinator_.QueueLease(Lease(1, 1));
  testing::WriteFile(scratch_.Path("worker.token"), testing::kTestToken, 0600);
  // The trainer says no BLAS kernel (rung-worker asks it at start), then trains until SIGTERM.
  const std::string trainer =
      testing::WriteScript(scratch_.Path("trainer.sh"), std::string("[ \"$1\" = --blas-kernel ] && exit 1\n") +
                                                            kStoppableTrainer);
  // squeue (SLURM 22.05 sets no SLURM_JOB_END_TIME) says the job ends 14 s from now, in local time:
  // the worker stops 12 s from now, time enough to start on a loaded machine.
  const int64_t end = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count() + 14;
  std::filesystem::create_directories(scratch_.Path("bin"));
  testing::WriteScript(scratch_.Path("bin/squeue"),
                       "[ \"$*\" = \"-h -j 42 -o %e\" ] || exit 1\ndate -d @" + std::to_string(end) +
                           " +%Y-%m-%dT%H:%M:%S\n");
  const char* path = std::getenv("PATH");
  std::unique_ptr<Subprocess> worker =
      StartWorker({"--coordinator", address, "--worker-token-file", scratch_.Path("worker.token"), "--worker-id",
                   "slurm-42", "--trainer", trainer, "--work-dir", scratch_.Path("work"), "--end-margin", "2"},
                  {"SLURM_JOB_ID=42", "SLURM_JOB_END_TIME=",
                   "PATH=" + scratch_.Path("bin") + ":" + (path != nullptr ? path : "/usr/bin:/bin")},
                  scratch_.Path("worker.log"));
  ASSERT_NE(worker, nullptr);
  const auto log = [&] { return testing::FileText(scratch_.Path("worker.log")); };

  ASSERT_TRUE(coordinator_.WaitFor([](const TestCoordinator& c) { return c.completes().size() == 1; },
                                   std::chrono::seconds(60)))
      << log();
  StatusOr<ExitStatus> exit = worker->Wait(std::chrono::seconds(60));
  ASSERT_TRUE(exit.ok()) << exit.status().ToString() << "\n" << log();
  EXPECT_EQ(exit->ShellCode(), 5) << "stopped by itself before the allocation's end: " << exit->Describe() << "\n" << log();

  ASSERT_EQ(coordinator_.registrations().size(), 1u);
  EXPECT_EQ(google::protobuf::util::TimeUtil::TimestampToMilliseconds(coordinator_.registrations()[0].stops_at()),
            (end - 2) * 1000);
  const v1::CompleteRequest complete = coordinator_.completes()[0];
  EXPECT_EQ(complete.outcome(), v1::OUTCOME_PREEMPTED);
  EXPECT_THAT(complete.reason(), HasSubstr("(squeue for SLURM job 42): stopping 2 s before it"));
  EXPECT_THAT(log(), HasSubstr(" (squeue for SLURM job 42): stops by itself at "));
  EXPECT_THAT(log(), HasSubstr("shutting down (allocation ends at "));
}

TEST_F(AgentTest, RungWorkerRefusesAnUntilAlreadyPastNamingTheFlagAndItsValue) {
  testing::WriteFile(scratch_.Path("worker.token"), testing::kTestToken, 0600);
  std::unique_ptr<Subprocess> worker =
      StartWorker({"--worker-token-file", scratch_.Path("worker.token"), "--trainer", "/bin/sh", "--work-dir",
                   scratch_.Path("work"), "--until", "2000-01-01T00:00:00Z"},
                  {}, scratch_.Path("worker.log"));
  ASSERT_NE(worker, nullptr);
  StatusOr<ExitStatus> exit = worker->Wait(std::chrono::seconds(30));
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_EQ(exit->ShellCode(), 2) << "bad usage";
  EXPECT_THAT(testing::FileText(scratch_.Path("worker.log")),
              HasSubstr("rung-worker: --until 2000-01-01T00:00:00Z: the allocation ends at "));
  EXPECT_THAT(testing::FileText(scratch_.Path("worker.log")), HasSubstr("which is past"));
}

TEST(AgentOptionsTest, BadOptionsNameTheirFlag) {
  AgentOptions options;
  options.worker_id = "node 7";
  options.attempt.trainer_path = "/bin/sh";
  options.attempt.work_dir = "work";
  EXPECT_THAT(ValidateAgentOptions(options).message(), HasSubstr("--worker-id"));
  options.worker_id = "node-7";
  options.cpu_slots = 0;
  EXPECT_THAT(ValidateAgentOptions(options).message(), HasSubstr("--cpus"));
  options.cpu_slots = 1;
  options.attempt.trainer_path = "/no/such/rung-train";
  EXPECT_THAT(ValidateAgentOptions(options).message(), HasSubstr("--trainer"));
  options.attempt.trainer_path = "/bin/sh";
  EXPECT_THAT(ValidateAgentOptions(options).message(), HasSubstr("--host"));  // the default here is empty
  options.host = "node7";
  EXPECT_TRUE(ValidateAgentOptions(options).ok());
  options.end_margin = std::chrono::milliseconds(-1);
  EXPECT_THAT(ValidateAgentOptions(options).message(), HasSubstr("--end-margin"));
}

}  // namespace
}  // namespace rung::agent
