// tests/system/fault_injection_test.cc
//
// Fault injection with real processes only: a rung-coordinator (temporary database, token files,
// --lease-seconds 2), rung-worker agents (--heartbeat-seconds 0.3) running the real rung-train on the
// builtin corpus, and sweeps submitted through the UserService. Each trial trains long enough to be
// interrupted (600 steps, a checkpoint every 20, a step record every 5), and then:
//   1. kill -9 of the worker running it: the attempt goes STALE after its lease, a second worker
//      leases attempt 2 and resumes from the checkpoint, the sweep SUCCEEDS, one value per step;
//   2. kill -9 of the coordinator, restarted on the same database and port: the workers re-attach,
//      every trial SUCCEEDS exactly once, no metric acknowledged before the kill is lost;
//   3. SIGTERM to the worker running it: the attempt is PREEMPTED, another worker resumes it from its
//      checkpoint and it SUCCEEDS;
//   4. kill -9 of one rank of a data-parallel trial (world_size 2, both ranks on one worker): the
//      worker stops the other rank, the attempt FAILS, and the retry resumes from the checkpoint and
//      SUCCEEDS;
//   5. SIGTERM to the worker running a data-parallel trial: both ranks stop at the same step after
//      rank 0's checkpoint, the attempt is PREEMPTED, and another worker resumes it;
//   6. a data-parallel trial no single worker can hold runs as a gang across two workers (one rank
//      each, rendezvous at rank 0's worker on loopback) and follows the one-rank curve;
//   7. kill -9 of the worker running one rank of such a gang: the other worker stops its rank, the
//      trial is requeued and a new gang (with a third worker) resumes it from rank 0's checkpoint;
//   8. the worker running it cut off from the coordinator (a blackhole, tcp_relay.h) for longer than
//      its lease while it trains on: attempt 1 goes STALE, a second worker resumes from attempt 1's
//      newest checkpoint, and every step attempt 1 trained but never delivered is still stored;
//   9. the coordinator killed and kept down for three leases, then restarted: every worker finds it
//      within the restart grace, no attempt goes STALE, one value per step.
// Every wait is a bounded poll of the coordinator; no fixed sleeps.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/common/loopback_port.h"
#include "core/common/token_file.h"
#include "proto/rung.grpc.pb.h"
#include "tests/system/tcp_relay.h"
#include "tests/worker/agent/agent_test_util.h"

#if defined(RUNG_TRAIN_BINARY)
constexpr bool kHaveTrainer = true;
#else
constexpr bool kHaveTrainer = false;
#define RUNG_TRAIN_BINARY ""
#endif

namespace rung::system_test {
namespace {

using agent::testing::BearerContext;
using agent::testing::ChildProcess;
using agent::testing::FileText;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int64_t kSteps = 600;
constexpr int64_t kLogEvery = 5;
constexpr int64_t kCheckpointEvery = 20;
// The interruptions happen once a trial reported a step this far: past its first checkpoint.
constexpr int64_t kInterruptAfterStep = 3 * kCheckpointEvery;

// About 15 ms a step on one core: long enough to interrupt, short enough to run twice.
std::string Spec(const std::string& name, const std::string& seeds, const std::string& resources = "{cpus: 1}",
                 int64_t steps = kSteps) {
  return "name: " + name + R"(
metric: {name: val_loss, goal: minimize}
data: {source: builtin, seq_len: 64}
model: {layers: 2, d_model: 64, heads: 2}
train: {steps: )" + std::to_string(steps) +
         R"(, batch_size: 16, lr: 3.0e-3, schedule: {name: cosine, warmup_steps: 2}, eval_every: 100,
        eval_batches: 2, log_every: )" +
         std::to_string(kLogEvery) + ", checkpoint_every: " + std::to_string(kCheckpointEvery) + R"(,
        diagnostics_sequences: 0}
resources: )" + resources + R"(
sweep:
  seed: )" + seeds + "\n";
}

std::set<int64_t> EveryLoggedStep() {
  std::set<int64_t> steps;
  for (int64_t step = kLogEvery; step <= kSteps; step += kLogEvery) steps.insert(step);
  return steps;
}

class FaultInjectionTrainingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kHaveTrainer) GTEST_SKIP() << "rung-train is not built (RUNG_WITH_TORCH=OFF)";
  }

  // Starts rung-coordinator on `port` (0: a free one) with the test's database and token files, and
  // gangs' rendezvous ports in a range starting at a free loopback port.
  void StartCoordinator(int port) {
    if (rendezvous_first_port_ == 0) {
      StatusOr<int> free_port = FreeLoopbackPort();
      ASSERT_TRUE(free_port.ok()) << free_port.status().ToString();
      rendezvous_first_port_ = std::min(*free_port, 65535 - kRendezvousPorts);
    }
    coordinator_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{RUNG_COORDINATOR_BINARY, "--listen", "127.0.0.1:" + std::to_string(port), "--db",
                                 scratch_.Path("rung.db"), "--user-token-file", scratch_.Path("user.token"),
                                 "--worker-token-file", scratch_.Path("worker.token"), "--lease-seconds", "2",
                                 "--rendezvous-ports",
                                 std::to_string(rendezvous_first_port_) + "-" +
                                     std::to_string(rendezvous_first_port_ + kRendezvousPorts - 1)},
        scratch_.path().string(), scratch_.Path("coordinator.log"));
    const std::string listening = coordinator_->ReadLine(seconds(60));
    ASSERT_EQ(listening.rfind("listening on ", 0), 0u) << "rung-coordinator did not start\n" << Logs();
    address_ = listening.substr(std::string("listening on ").size());
    port_ = std::stoi(address_.substr(address_.rfind(':') + 1));
    StatusOr<std::string> token = ReadBearerTokenFile(scratch_.Path("user.token"));
    ASSERT_TRUE(token.ok());
    user_token_ = *token;
    users_ = v1::UserService::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }

  // `through`: the address the worker reaches the coordinator at ("": the coordinator's own).
  void StartWorker(const std::string& id, int cpus = 1, const std::string& through = "") {
    worker_ids_.push_back(id);
    workers_[id] = std::make_unique<ChildProcess>(
        std::vector<std::string>{RUNG_WORKER_BINARY, "--coordinator", through.empty() ? address_ : through, "--worker-token-file",
                                 scratch_.Path("worker.token"), "--cpus", std::to_string(cpus), "--worker-id", id, "--trainer",
                                 RUNG_TRAIN_BINARY, "--work-dir", scratch_.Path("work-" + id), "--heartbeat-seconds",
                                 "0.3", "--grace-seconds", "60", "--host", "127.0.0.1"},
        scratch_.path().string(), scratch_.Path(id + ".log"));
    ASSERT_TRUE(workers_[id]->started());
  }

  std::string Logs() const {
    std::string logs = "coordinator:\n" + FileText(scratch_.Path("coordinator.log"));
    for (const std::string& id : worker_ids_) logs += "\n" + id + ":\n" + FileText(scratch_.Path(id + ".log"));
    return logs;
  }

  int64_t Submit(const std::string& name, const std::string& seeds, int64_t trials,
                 const std::string& resources = "{cpus: 1}", int64_t steps = kSteps) {
    v1::SubmitSweepRequest submit;
    submit.set_spec_text(Spec(name, seeds, resources, steps));
    submit.set_spec_file_name(name + ".yaml");
    v1::SubmitSweepResponse submitted;
    const grpc::Status status = users_->SubmitSweep(BearerContext(user_token_).get(), submit, &submitted);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(submitted.trial_count(), trials);
    return submitted.sweep_id();
  }

  v1::Sweep GetSweep(int64_t sweep_id) {
    v1::GetSweepRequest request;
    request.set_sweep_id(sweep_id);
    v1::Sweep sweep;
    const grpc::Status status = users_->GetSweep(BearerContext(user_token_).get(), request, &sweep);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return sweep;
  }

  std::vector<v1::Trial> ListTrials(int64_t sweep_id) {
    v1::ListTrialsRequest request;
    request.set_sweep_id(sweep_id);
    request.set_view(v1::TRIAL_VIEW_FULL);
    v1::ListTrialsResponse listed;
    const grpc::Status status = users_->ListTrials(BearerContext(user_token_).get(), request, &listed);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return {listed.trials().begin(), listed.trials().end()};
  }

  // With its attempts (ListTrials leaves them out even with TRIAL_VIEW_FULL).
  v1::Trial GetTrial(int64_t trial_id) {
    v1::GetTrialRequest request;
    request.set_trial_id(trial_id);
    request.set_view(v1::TRIAL_VIEW_FULL);
    v1::Trial trial;
    const grpc::Status status = users_->GetTrial(BearerContext(user_token_).get(), request, &trial);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return trial;
  }

  // name -> points, by step.
  std::map<std::string, std::vector<v1::MetricPoint>> Metrics(int64_t trial_id) {
    v1::GetMetricsRequest request;
    request.set_trial_id(trial_id);
    v1::GetMetricsResponse metrics;
    const grpc::Status status = users_->GetMetrics(BearerContext(user_token_).get(), request, &metrics);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::map<std::string, std::vector<v1::MetricPoint>> series;
    for (const v1::MetricSeries& one : metrics.series()) series[one.name()].assign(one.points().begin(), one.points().end());
    return series;
  }

  // Polls `condition` every 100 ms until it holds or `timeout` passes.
  static bool Poll(const std::function<bool()>& condition, milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (condition()) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(milliseconds(100));
    }
  }

  // Waits until every trial of the sweep reported a step of at least `step`; false if one failed or
  // finished first, or on timeout.
  bool WaitForProgress(int64_t sweep_id, int64_t step, std::vector<v1::Trial>* trials) {
    bool finished_early = false;
    const bool reached = Poll(
        [&] {
          *trials = ListTrials(sweep_id);
          if (trials->empty()) return false;
          for (const v1::Trial& trial : *trials) {
            if (trial.state() == v1::TRIAL_STATE_FAILED || trial.state() == v1::TRIAL_STATE_SUCCEEDED) {
              finished_early = true;
              return true;
            }
          }
          return std::all_of(trials->begin(), trials->end(), [&](const v1::Trial& trial) {
            return trial.state() == v1::TRIAL_STATE_RUNNING && trial.latest_step() >= step;
          });
        },
        seconds(180));
    return reached && !finished_early;
  }

  // WaitForProgress past kInterruptAfterStep for a sweep of one trial: that trial (a test failure
  // if it did not get going or the sweep has more).
  void WaitForTheOnlyTrial(int64_t sweep_id, v1::Trial* trial) {
    std::vector<v1::Trial> trials;
    ASSERT_TRUE(WaitForProgress(sweep_id, kInterruptAfterStep, &trials)) << "the trial did not get going\n" << Logs();
    ASSERT_EQ(trials.size(), 1u);
    *trial = trials[0];
  }

  // Waits until the sweep is SUCCEEDED (or FAILED/CANCELLED: false).
  bool WaitForSweepEnd(int64_t sweep_id, seconds timeout, v1::Sweep* sweep) {
    Poll(
        [&] {
          *sweep = GetSweep(sweep_id);
          return sweep->state() != v1::SWEEP_STATE_ACTIVE && sweep->state() != v1::SWEEP_STATE_UNSPECIFIED;
        },
        timeout);
    return sweep->state() == v1::SWEEP_STATE_SUCCEEDED;
  }

  // A coordinator, a sweep `name` of two trials (seeds 0 and 1) and workers "one" and "two", until
  // both trials are past kInterruptAfterStep; `trials` as they were listed then.
  void RunTwoTrialsPastTheirFirstCheckpoints(const std::string& name, int64_t* sweep_id,
                                             std::vector<v1::Trial>* trials) {
    ASSERT_NO_FATAL_FAILURE(StartCoordinator(0));
    *sweep_id = Submit(name, "[0, 1]", 2);
    ASSERT_NO_FATAL_FAILURE(StartWorker("one"));
    ASSERT_NO_FATAL_FAILURE(StartWorker("two"));
    ASSERT_TRUE(WaitForProgress(*sweep_id, kInterruptAfterStep, trials)) << "the trials did not get going\n"
                                                                          << Logs();
    ASSERT_EQ(trials->size(), 2u);
  }

  // kill -9 of the coordinator, `down` without one, and a new one on the same database and port.
  void KillAndRestartCoordinator(seconds down) {
    const int port = port_;
    coordinator_->Signal(SIGKILL);
    ASSERT_NE(coordinator_->Wait(seconds(30)), -1);
    std::this_thread::sleep_for(down);
    ASSERT_NO_FATAL_FAILURE(StartCoordinator(port));
    ASSERT_EQ(port_, port);
  }

  // The train_loss curve: exactly one point per logged step, 5 .. kSteps.
  // The one trial of the sweep ran twice: attempt 1 on worker "first" ended in `first_attempt_state`,
  // attempt 2 on "second" resumed from a checkpoint and SUCCEEDED, with one value per logged step.
  void ExpectResumedBySecondWorker(int64_t sweep_id, int64_t trial_id, v1::TrialState first_attempt_state) {
    v1::Sweep sweep;
    ASSERT_TRUE(WaitForSweepEnd(sweep_id, seconds(300), &sweep))
        << "sweep state " << v1::SweepState_Name(sweep.state()) << ": " << sweep.state_reason() << "\n" << Logs();
    const v1::Trial trial = GetTrial(trial_id);
    EXPECT_EQ(trial.state(), v1::TRIAL_STATE_SUCCEEDED);
    ASSERT_EQ(trial.attempts_size(), 2) << trial.DebugString();
    EXPECT_EQ(trial.attempts(0).worker_id(), "first");
    EXPECT_EQ(trial.attempts(0).state(), first_attempt_state) << trial.attempts(0).DebugString();
    EXPECT_EQ(trial.attempts(1).worker_id(), "second");
    EXPECT_EQ(trial.attempts(1).state(), v1::TRIAL_STATE_SUCCEEDED);
    EXPECT_GT(FirstStepOf(trial_id, 2), kCheckpointEvery) << "attempt 2 did not resume from a checkpoint";
    EXPECT_GT(FirstStepOf(trial_id, 1), 0) << "attempt 1's points are gone";
    ExpectOneValuePerLoggedStep(trial_id);
  }

  void ExpectOneValuePerLoggedStep(int64_t trial_id) {
    const auto series = Metrics(trial_id);
    ASSERT_EQ(series.count("train_loss"), 1u) << "no train_loss series";
    std::map<int64_t, int> per_step;
    for (const v1::MetricPoint& point : series.at("train_loss")) ++per_step[point.step()];
    std::set<int64_t> steps;
    for (const auto& [step, count] : per_step) {
      EXPECT_EQ(count, 1) << "train_loss at step " << step << " stored " << count << " times";
      steps.insert(step);
    }
    EXPECT_EQ(steps, EveryLoggedStep()) << "train_loss: not exactly the logged steps";
  }

  // The first step attempt `attempt` reported (train_loss), or -1 if none.
  int64_t FirstStepOf(int64_t trial_id, int64_t attempt) {
    const auto series = Metrics(trial_id);
    if (series.count("train_loss") == 0) return -1;
    int64_t first = -1;
    for (const v1::MetricPoint& point : series.at("train_loss")) {
      if (point.attempt() == attempt && (first < 0 || point.step() < first)) first = point.step();
    }
    return first;
  }

  static constexpr int kRendezvousPorts = 20;

  // Destroyed last: the processes below are killed before their folder goes.
  agent::testing::ScratchDir scratch_;
  int rendezvous_first_port_ = 0;
  std::unique_ptr<ChildProcess> coordinator_;
  std::map<std::string, std::unique_ptr<ChildProcess>> workers_;
  std::vector<std::string> worker_ids_;
  std::string address_;
  int port_ = 0;
  std::string user_token_;
  std::unique_ptr<v1::UserService::Stub> users_;
};

TEST_F(FaultInjectionTrainingTest, KillNineOfAWorkerMidTrialIsReleasedAndResumedFromTheCheckpoint) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(0));
  const int64_t sweep_id = Submit("kill-worker", "[0]", 1);
  ASSERT_NO_FATAL_FAILURE(StartWorker("first"));

  v1::Trial running;
  ASSERT_NO_FATAL_FAILURE(WaitForTheOnlyTrial(sweep_id, &running));
  const int64_t trial_id = running.trial_id();
  ASSERT_EQ(running.worker_id(), "first");
  ASSERT_EQ(running.attempt(), 1);

  ASSERT_NO_FATAL_FAILURE(StartWorker("second"));
  workers_["first"]->Signal(SIGKILL);
  ASSERT_NE(workers_["first"]->Wait(seconds(30)), -1);

  ExpectResumedBySecondWorker(sweep_id, trial_id, v1::TRIAL_STATE_STALE);
}

TEST_F(FaultInjectionTrainingTest, KillNineOfTheCoordinatorMidSweepLosesNothingAcknowledged) {
  int64_t sweep_id = 0;
  std::vector<v1::Trial> trials;
  ASSERT_NO_FATAL_FAILURE(RunTwoTrialsPastTheirFirstCheckpoints("kill-coordinator", &sweep_id, &trials));
  // What the coordinator acknowledged before the kill: name -> steps, per trial.
  std::map<int64_t, std::map<std::string, std::set<int64_t>>> acknowledged;
  for (const v1::Trial& trial : trials) {
    for (const auto& [name, points] : Metrics(trial.trial_id())) {
      for (const v1::MetricPoint& point : points) acknowledged[trial.trial_id()][name].insert(point.step());
    }
    ASSERT_FALSE(acknowledged[trial.trial_id()]["train_loss"].empty());
  }

  ASSERT_NO_FATAL_FAILURE(KillAndRestartCoordinator(seconds(0)));

  v1::Sweep sweep;
  ASSERT_TRUE(WaitForSweepEnd(sweep_id, seconds(300), &sweep))
      << "sweep state " << v1::SweepState_Name(sweep.state()) << ": " << sweep.state_reason() << "\n" << Logs();

  trials = ListTrials(sweep_id);
  ASSERT_EQ(trials.size(), 2u);
  for (const v1::Trial& listed : trials) {
    SCOPED_TRACE("trial " + std::to_string(listed.trial_id()));
    const v1::Trial trial = GetTrial(listed.trial_id());
    EXPECT_EQ(trial.state(), v1::TRIAL_STATE_SUCCEEDED);
    int succeeded = 0;
    for (const v1::TrialAttempt& attempt : trial.attempts()) succeeded += attempt.state() == v1::TRIAL_STATE_SUCCEEDED;
    EXPECT_EQ(succeeded, 1) << trial.DebugString();

    const auto after = Metrics(trial.trial_id());
    for (const auto& [name, steps] : acknowledged[trial.trial_id()]) {
      ASSERT_EQ(after.count(name), 1u) << "series " << name << " is gone";
      std::set<int64_t> stored;
      for (const v1::MetricPoint& point : after.at(name)) stored.insert(point.step());
      for (int64_t step : steps) EXPECT_EQ(stored.count(step), 1u) << name << " at step " << step << " was lost";
    }
    ExpectOneValuePerLoggedStep(trial.trial_id());
  }
}

TEST_F(FaultInjectionTrainingTest, SigtermOfAWorkerMidTrialPreemptsAndAnotherWorkerResumes) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(0));
  const int64_t sweep_id = Submit("sigterm-worker", "[0]", 1);
  ASSERT_NO_FATAL_FAILURE(StartWorker("first"));

  v1::Trial running;
  ASSERT_NO_FATAL_FAILURE(WaitForTheOnlyTrial(sweep_id, &running));
  const int64_t trial_id = running.trial_id();
  ASSERT_EQ(running.worker_id(), "first");

  ASSERT_NO_FATAL_FAILURE(StartWorker("second"));
  workers_["first"]->Signal(SIGTERM);
  const int wait_status = workers_["first"]->Wait(seconds(90));
  ASSERT_NE(wait_status, -1) << "rung-worker did not exit after SIGTERM\n" << Logs();
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << "wait status " << wait_status;

  ExpectResumedBySecondWorker(sweep_id, trial_id, v1::TRIAL_STATE_PREEMPTED);
}

// The pids of live processes whose command line holds every one of `arguments`, each a run of whole
// consecutive arguments separated by spaces ("--rank 1").
std::vector<pid_t> ProcessesWithArguments(const std::vector<std::string>& arguments) {
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream file(entry.path() / "cmdline", std::ios::binary);
    const std::string command_line = std::string(1, '\0') +
                                     std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const bool all = std::all_of(arguments.begin(), arguments.end(), [&](std::string wanted) {
      std::replace(wanted.begin(), wanted.end(), ' ', '\0');
      return command_line.find('\0' + wanted + '\0') != std::string::npos;
    });
    if (all) pids.push_back(std::stoi(name));
  }
  return pids;
}

TEST_F(FaultInjectionTrainingTest, KillNineOfOneRankStopsTheGangAndTheRetryResumesFromTheCheckpoint) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(0));
  const int64_t sweep_id = Submit("kill-rank", "[0]", 1, "{cpus: 1, world_size: 2}");
  ASSERT_NO_FATAL_FAILURE(StartWorker("gang", /*cpus=*/2));

  v1::Trial running;
  ASSERT_NO_FATAL_FAILURE(WaitForTheOnlyTrial(sweep_id, &running));
  const int64_t trial_id = running.trial_id();
  ASSERT_EQ(running.attempt(), 1);
  const std::string config = scratch_.Path("work-gang") + "/trial-" + std::to_string(trial_id) + "/attempt-1/trial.json";
  ASSERT_TRUE(std::filesystem::exists(config)) << config;
  const std::vector<pid_t> rank1 = ProcessesWithArguments({RUNG_TRAIN_BINARY, config, "--rank 1"});
  ASSERT_EQ(rank1.size(), 1u) << "rank 1 of attempt 1 is not running\n" << Logs();
  ASSERT_EQ(ProcessesWithArguments({RUNG_TRAIN_BINARY, config, "--rank 0"}).size(), 1u);
  ASSERT_EQ(kill(rank1[0], SIGKILL), 0);

  v1::Sweep sweep;
  ASSERT_TRUE(WaitForSweepEnd(sweep_id, seconds(400), &sweep))
      << "sweep state " << v1::SweepState_Name(sweep.state()) << ": " << sweep.state_reason() << "\n" << Logs();
  EXPECT_TRUE(ProcessesWithArguments({RUNG_TRAIN_BINARY, config}).empty()) << "a rank of attempt 1 outlived it";
  const v1::Trial trial = GetTrial(trial_id);
  EXPECT_EQ(trial.state(), v1::TRIAL_STATE_SUCCEEDED);
  ASSERT_EQ(trial.attempts_size(), 2) << trial.DebugString();
  EXPECT_EQ(trial.attempts(0).state(), v1::TRIAL_STATE_FAILED) << trial.attempts(0).DebugString();
  EXPECT_NE(trial.attempts(0).exit_reason().find("rank 1 killed by signal 9"), std::string::npos)
      << trial.attempts(0).DebugString();
  EXPECT_EQ(trial.attempts(1).state(), v1::TRIAL_STATE_SUCCEEDED);
  EXPECT_GT(FirstStepOf(trial_id, 2), kCheckpointEvery) << "attempt 2 did not resume from a checkpoint";
  ExpectOneValuePerLoggedStep(trial_id);
  EXPECT_EQ(Metrics(trial_id).count("val_loss"), 1u);
}

TEST_F(FaultInjectionTrainingTest, SigtermOfAWorkerRunningTwoRanksPreemptsBothAndAnotherWorkerResumes) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(0));
  const int64_t sweep_id = Submit("sigterm-gang", "[0]", 1, "{cpus: 1, world_size: 2}");
  ASSERT_NO_FATAL_FAILURE(StartWorker("first", /*cpus=*/2));

  v1::Trial running;
  ASSERT_NO_FATAL_FAILURE(WaitForTheOnlyTrial(sweep_id, &running));
  const int64_t trial_id = running.trial_id();
  ASSERT_EQ(running.worker_id(), "first");

  ASSERT_NO_FATAL_FAILURE(StartWorker("second", /*cpus=*/2));
  workers_["first"]->Signal(SIGTERM);
  const int wait_status = workers_["first"]->Wait(seconds(90));
  ASSERT_NE(wait_status, -1) << "rung-worker did not exit after SIGTERM\n" << Logs();
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << "wait status " << wait_status;
  // Both ranks agreed on the stop: rank 1 exited 75 like rank 0 (its log would say why otherwise).
  const std::string rank1_log =
      FileText(scratch_.Path("work-first") + "/trial-" + std::to_string(trial_id) + "/attempt-1/trainer-rank1.log");
  EXPECT_NE(rank1_log.find("stopped after a checkpoint (preempted)"), std::string::npos) << rank1_log;

  ExpectResumedBySecondWorker(sweep_id, trial_id, v1::TRIAL_STATE_PREEMPTED);
}

// The train_loss points of a trial, by step.
std::map<int64_t, double> LossByStep(const std::vector<v1::MetricPoint>& points) {
  std::map<int64_t, double> losses;
  for (const v1::MetricPoint& point : points) losses[point.step()] = point.value();
  return losses;
}

TEST_F(FaultInjectionTrainingTest, ADataParallelTrialNoWorkerHoldsRunsAsAGangOfTwoWorkersWithTheOneRankCurve) {
  constexpr int64_t kShortSteps = 100;
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(0));
  ASSERT_NO_FATAL_FAILURE(StartWorker("one", /*cpus=*/1));
  ASSERT_NO_FATAL_FAILURE(StartWorker("two", /*cpus=*/1));
  // 2 ranks x 1 slot: neither 1-slot worker holds it; each holds one rank.
  const int64_t gang_sweep = Submit("gang", "[0]", 1, "{cpus: 1, world_size: 2}", kShortSteps);
  v1::Sweep sweep;
  ASSERT_TRUE(WaitForSweepEnd(gang_sweep, seconds(300), &sweep))
      << "sweep state " << v1::SweepState_Name(sweep.state()) << ": " << sweep.state_reason() << "\n" << Logs();
  const int64_t single_sweep = Submit("single", "[0]", 1, "{cpus: 1}", kShortSteps);
  ASSERT_TRUE(WaitForSweepEnd(single_sweep, seconds(300), &sweep))
      << "sweep state " << v1::SweepState_Name(sweep.state()) << ": " << sweep.state_reason() << "\n" << Logs();

  const v1::Trial gang = GetTrial(ListTrials(gang_sweep).at(0).trial_id());
  ASSERT_EQ(gang.attempts_size(), 1) << gang.DebugString();
  EXPECT_EQ(gang.attempts(0).state(), v1::TRIAL_STATE_SUCCEEDED);
  // One rank ran on each worker, meeting at rank 0's worker on loopback.
  const std::string rank0_worker = gang.attempts(0).worker_id();
  const std::string rank1_worker = rank0_worker == "one" ? "two" : "one";
  EXPECT_NE(FileText(scratch_.Path(rank0_worker + ".log")).find("rank 0 of 2 at 127.0.0.1:"), std::string::npos)
      << Logs();
  EXPECT_NE(FileText(scratch_.Path(rank1_worker + ".log")).find("rank 1 of 2 at 127.0.0.1:"), std::string::npos)
      << Logs();

  const auto gang_metrics = Metrics(gang.trial_id());
  const auto single_metrics = Metrics(ListTrials(single_sweep).at(0).trial_id());
  ASSERT_EQ(gang_metrics.count("train_loss"), 1u);
  ASSERT_EQ(single_metrics.count("train_loss"), 1u);
  const std::map<int64_t, double> actual = LossByStep(gang_metrics.at("train_loss"));
  const std::map<int64_t, double> expected = LossByStep(single_metrics.at("train_loss"));
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_EQ(expected.size(), static_cast<size_t>(kShortSteps / kLogEvery));
  for (const auto& [step, want] : expected) {
    ASSERT_EQ(actual.count(step), 1u) << step;
    EXPECT_NEAR(actual.at(step), want, 1e-3 * std::max(1.0, std::fabs(want))) << "train_loss at step " << step;
  }
}

TEST_F(FaultInjectionTrainingTest, KillNineOfAGangMembersWorkerStopsTheOtherRankAndANewGangCompletesTheTrial) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(0));
  ASSERT_NO_FATAL_FAILURE(StartWorker("one", /*cpus=*/1));
  ASSERT_NO_FATAL_FAILURE(StartWorker("two", /*cpus=*/1));
  const int64_t sweep_id = Submit("kill-gang-member", "[0]", 1, "{cpus: 1, world_size: 2}");

  v1::Trial running;
  ASSERT_NO_FATAL_FAILURE(WaitForTheOnlyTrial(sweep_id, &running));
  const int64_t trial_id = running.trial_id();
  ASSERT_EQ(running.attempt(), 1);
  const std::string rank0_worker = running.worker_id();  // the attempt's holder runs rank 0
  const std::string rank1_worker = rank0_worker == "one" ? "two" : "one";
  const std::string rank0_config =
      scratch_.Path("work-" + rank0_worker) + "/trial-" + std::to_string(trial_id) + "/attempt-1/trial.json";
  ASSERT_EQ(ProcessesWithArguments({RUNG_TRAIN_BINARY, rank0_config, "--rank 0"}).size(), 1u) << Logs();

  workers_[rank1_worker]->Signal(SIGKILL);  // its rank dies with it (parent-death signal)
  ASSERT_NE(workers_[rank1_worker]->Wait(seconds(30)), -1);
  ASSERT_NO_FATAL_FAILURE(StartWorker("three", /*cpus=*/1));

  v1::Sweep sweep;
  ASSERT_TRUE(WaitForSweepEnd(sweep_id, seconds(400), &sweep))
      << "sweep state " << v1::SweepState_Name(sweep.state()) << ": " << sweep.state_reason() << "\n" << Logs();
  EXPECT_TRUE(ProcessesWithArguments({RUNG_TRAIN_BINARY, rank0_config}).empty()) << "rank 0 of attempt 1 outlived it";
  const v1::Trial trial = GetTrial(trial_id);
  EXPECT_EQ(trial.state(), v1::TRIAL_STATE_SUCCEEDED);
  ASSERT_GE(trial.attempts_size(), 2) << trial.DebugString();
  const v1::TrialState first_end = trial.attempts(0).state();
  EXPECT_TRUE(first_end == v1::TRIAL_STATE_FAILED || first_end == v1::TRIAL_STATE_STALE) << trial.DebugString();
  const v1::TrialAttempt& last = trial.attempts(trial.attempts_size() - 1);
  EXPECT_EQ(last.state(), v1::TRIAL_STATE_SUCCEEDED);
  EXPECT_NE(last.worker_id(), rank1_worker);
  EXPECT_GT(FirstStepOf(trial_id, last.attempt()), kCheckpointEvery) << "the new gang did not resume from a checkpoint";
  ExpectOneValuePerLoggedStep(trial_id);
}

TEST_F(FaultInjectionTrainingTest, AWorkerCutOffForLongerThanItsLeaseLosesNoStepItTrained) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(0));
  StatusOr<std::unique_ptr<TcpRelay>> relay = TcpRelay::Start(port_);
  ASSERT_TRUE(relay.ok()) << relay.status().ToString();
  const int64_t sweep_id = Submit("cut-off-worker", "[0]", 1);
  ASSERT_NO_FATAL_FAILURE(StartWorker("first", 1, "127.0.0.1:" + std::to_string((*relay)->port())));

  v1::Trial running;
  ASSERT_NO_FATAL_FAILURE(WaitForTheOnlyTrial(sweep_id, &running));
  const int64_t trial_id = running.trial_id();
  ASSERT_EQ(running.worker_id(), "first");
  const int64_t cut_at_step = GetTrial(trial_id).latest_step();

  // Cut off, "first" trains on and checkpoints; its lease expires and "second" resumes the trial
  // from the newest checkpoint "first" wrote. The cut heals only once attempt 2 has gone past it.
  (*relay)->Cut();
  ASSERT_NO_FATAL_FAILURE(StartWorker("second"));
  const bool resumed = Poll(
      [&] {
        const v1::Trial trial = GetTrial(trial_id);
        return trial.attempt() == 2 && trial.state() == v1::TRIAL_STATE_RUNNING &&
               trial.latest_step() > kInterruptAfterStep + kCheckpointEvery;
      },
      seconds(180));
  (*relay)->Restore();
  ASSERT_TRUE(resumed) << "attempt 2 did not get going\n" << Logs();
  ExpectResumedBySecondWorker(sweep_id, trial_id, v1::TRIAL_STATE_STALE);
  // Attempt 2 started past the last step the coordinator had heard of before the cut: the steps in
  // between were trained by attempt 1 and never delivered by it, and are stored all the same.
  EXPECT_GT(GetTrial(trial_id).attempts(1).provenance().start_step(), cut_at_step) << "attempt 2 did not resume from a "
                                                                        "checkpoint attempt 1 wrote while cut off";
}

TEST_F(FaultInjectionTrainingTest, ACoordinatorDownForThreeLeasesFindsEveryWorkerBackWithinTheRestartGrace) {
  int64_t sweep_id = 0;
  std::vector<v1::Trial> trials;
  ASSERT_NO_FATAL_FAILURE(RunTwoTrialsPastTheirFirstCheckpoints("coordinator-away", &sweep_id, &trials));
  // Three leases of 2 s: the workers' backoffs grow to their bound.
  ASSERT_NO_FATAL_FAILURE(KillAndRestartCoordinator(seconds(6)));

  v1::Sweep sweep;
  ASSERT_TRUE(WaitForSweepEnd(sweep_id, seconds(300), &sweep))
      << "sweep state " << v1::SweepState_Name(sweep.state()) << ": " << sweep.state_reason() << "\n" << Logs();
  for (const v1::Trial& listed : ListTrials(sweep_id)) {
    SCOPED_TRACE("trial " + std::to_string(listed.trial_id()));
    const v1::Trial trial = GetTrial(listed.trial_id());
    EXPECT_EQ(trial.state(), v1::TRIAL_STATE_SUCCEEDED);
    EXPECT_EQ(trial.attempts_size(), 1) << "a worker did not come back within the restart grace\n"
                                        << trial.DebugString();
    ExpectOneValuePerLoggedStep(trial.trial_id());
  }
}

}  // namespace
}  // namespace rung::system_test
