// tests/worker/agent/worker_end_to_end_test.cc
//
// The whole path with real processes: rung-coordinator (a temporary database and token files), a
// two-trial sweep submitted through its UserService, two rung-worker agents each running rung-train,
// until both trials are SUCCEEDED; then every step record each trainer printed (the agents keep a
// copy in records.jsonl) is stored exactly once (GetMetrics), and both agents exit 0 on SIGTERM.
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/common/trainer_blas_kernel.h"
#include "core/common/token_file.h"
#include "proto/rung.grpc.pb.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ChildProcess;
using testing::FileText;
using testing::ScratchDir;

constexpr char kSpec[] = R"(name: worker-end-to-end
metric: {name: val_loss, goal: minimize}
data: {source: builtin, seq_len: 32}
model: {layers: 1, d_model: 32, heads: 2}
train: {steps: 20, batch_size: 8, lr: 3.0e-3, schedule: {name: cosine, warmup_steps: 2}, eval_every: 10,
        eval_batches: 2, log_every: 2, diagnostics_sequences: 0}
resources: {cpus: 1}
sweep:
  seed: [0, 1]
)";

// (name, step) -> value of every numeric field of every step record the trainers of `trial_id`
// printed, from the newest attempt that printed it; `printed` counts the records per (attempt, step).
struct PrintedSteps {
  std::map<std::string, std::map<int64_t, double>> values;
  std::map<std::pair<int64_t, int64_t>, int> printed;
};

PrintedSteps StepsPrinted(const std::vector<std::string>& work_dirs, int64_t trial_id) {
  PrintedSteps steps;
  std::map<std::pair<std::string, int64_t>, int64_t> attempt_of;
  for (const std::string& work_dir : work_dirs) {
    const fs::path trial_dir = fs::path(work_dir) / ("trial-" + std::to_string(trial_id));
    if (!fs::is_directory(trial_dir)) continue;
    for (const auto& attempt_dir : fs::directory_iterator(trial_dir)) {
      const int64_t attempt = std::stoll(attempt_dir.path().filename().string().substr(std::string("attempt-").size()));
      for (const std::string& line : testing::ReadLines((attempt_dir.path() / "records.jsonl").string())) {
        const json record = json::parse(line, nullptr, false);
        if (!record.is_object() || record.value("type", "") != "step") continue;
        const int64_t step = record.at("step").get<int64_t>();
        ++steps.printed[{attempt, step}];
        for (const auto& [name, value] : record.items()) {
          if (name == "step" || !value.is_number()) continue;
          auto& newest = attempt_of[{name, step}];
          if (attempt >= newest) {
            newest = attempt;
            steps.values[name][step] = value.get<double>();
          }
        }
      }
    }
  }
  return steps;
}

class WorkerEndToEndTrainingTest : public ::testing::Test {};

TEST_F(WorkerEndToEndTrainingTest, TwoWorkersRunATwoTrialSweepAndEveryStepIsStoredOnce) {
#if !defined(RUNG_TRAIN_BINARY)
  GTEST_SKIP() << "rung-train is not built (RUNG_WITH_TORCH=OFF)";
#else
  ScratchDir scratch;
  const std::string user_token_file = scratch.Path("user.token"), worker_token_file = scratch.Path("worker.token");
  ChildProcess coordinator({RUNG_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--db", scratch.Path("rung.db"),
                            "--user-token-file", user_token_file, "--worker-token-file", worker_token_file},
                           scratch.path().string(), scratch.Path("coordinator.log"));
  const std::string listening = coordinator.ReadLine(std::chrono::seconds(60));
  ASSERT_EQ(listening.rfind("listening on ", 0), 0u) << "rung-coordinator did not start:\n"
                                                     << FileText(scratch.Path("coordinator.log"));
  const std::string address = listening.substr(std::string("listening on ").size());
  StatusOr<std::string> user_token = ReadBearerTokenFile(user_token_file);
  StatusOr<std::string> worker_token = ReadBearerTokenFile(worker_token_file);
  ASSERT_TRUE(user_token.ok() && worker_token.ok());
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto users = v1::UserService::NewStub(channel);
  auto workers = v1::WorkerService::NewStub(channel);

  // The coordinator must serve what the agents and this test call; a build that does not yet is
  // reported as such instead of failing somewhere in the middle.
  {
    v1::HeartbeatRequest probe;
    probe.set_worker_id("end-to-end-probe");
    v1::HeartbeatResponse ignored;
    grpc::Status status = workers->Heartbeat(testing::BearerContext(*worker_token).get(), probe, &ignored);
    if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      GTEST_SKIP() << "rung-coordinator does not serve the WorkerService yet: " << status.error_message();
    }
  }
  v1::SubmitSweepRequest submit;
  submit.set_spec_text(kSpec);
  submit.set_spec_file_name("worker-end-to-end.yaml");
  v1::SubmitSweepResponse submitted;
  grpc::Status status = users->SubmitSweep(testing::BearerContext(*user_token).get(), submit, &submitted);
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    GTEST_SKIP() << "rung-coordinator does not serve SubmitSweep yet: " << status.error_message();
  }
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(submitted.trial_count(), 2);
  const int64_t sweep_id = submitted.sweep_id();

  std::vector<std::string> work_dirs;
  std::vector<std::unique_ptr<ChildProcess>> agents;
  for (int index = 1; index <= 2; ++index) {
    work_dirs.push_back(scratch.Path("work-" + std::to_string(index)));
    agents.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{RUNG_WORKER_BINARY, "--coordinator", address, "--worker-token-file",
                                 worker_token_file, "--cpus", "1", "--worker-id", "end-to-end-" + std::to_string(index),
                                 "--trainer", RUNG_TRAIN_BINARY, "--work-dir", work_dirs.back(),
                                 "--heartbeat-seconds", "0.5"},
        scratch.path().string(), scratch.Path("worker-" + std::to_string(index) + ".log")));
    ASSERT_TRUE(agents.back()->started());
  }
  const auto logs = [&] {
    return "coordinator:\n" + FileText(scratch.Path("coordinator.log")) + "\nworker 1:\n" +
           FileText(scratch.Path("worker-1.log")) + "\nworker 2:\n" + FileText(scratch.Path("worker-2.log"));
  };

  // Poll the coordinator (bounded) until both trials succeeded.
  std::vector<v1::Trial> trials;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  for (;;) {
    v1::ListTrialsRequest list;
    list.set_sweep_id(sweep_id);
    v1::ListTrialsResponse listed;
    status = users->ListTrials(testing::BearerContext(*user_token).get(), list, &listed);
    ASSERT_TRUE(status.ok()) << status.error_message();
    trials.assign(listed.trials().begin(), listed.trials().end());
    int succeeded = 0;
    for (const v1::Trial& trial : trials) {
      ASSERT_NE(trial.state(), v1::TRIAL_STATE_FAILED) << "trial " << trial.trial_id() << ": " << trial.state_reason()
                                                       << "\n" << logs();
      if (trial.state() == v1::TRIAL_STATE_SUCCEEDED) ++succeeded;
    }
    if (succeeded == 2 && trials.size() == 2) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the trials did not finish\n" << logs();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }

  for (const v1::Trial& trial : trials) {
    SCOPED_TRACE("trial " + std::to_string(trial.trial_id()));
    const PrintedSteps printed = StepsPrinted(work_dirs, trial.trial_id());
    ASSERT_FALSE(printed.values.empty()) << "no step records found in the work dirs\n" << logs();
    EXPECT_EQ(printed.values.at("train_loss").size(), 10u) << "20 steps, a record every 2";
    for (const auto& [attempt_step, count] : printed.printed) EXPECT_EQ(count, 1) << "step " << attempt_step.second;

    v1::GetMetricsRequest request;
    request.set_trial_id(trial.trial_id());
    v1::GetMetricsResponse metrics;
    status = users->GetMetrics(testing::BearerContext(*user_token).get(), request, &metrics);
    ASSERT_TRUE(status.ok()) << status.error_message();
    std::map<std::string, const v1::MetricSeries*> series;
    for (const v1::MetricSeries& one : metrics.series()) series[one.name()] = &one;
    for (const auto& [name, by_step] : printed.values) {
      ASSERT_EQ(series.count(name), 1u) << "no series " << name;
      std::map<int64_t, int> stored;
      for (const v1::MetricPoint& point : series[name]->points()) {
        ++stored[point.step()];
        auto printed_value = by_step.find(point.step());
        ASSERT_NE(printed_value, by_step.end()) << name << " at step " << point.step() << " was never printed";
        EXPECT_DOUBLE_EQ(point.value(), printed_value->second) << name << " at step " << point.step();
      }
      EXPECT_EQ(stored.size(), by_step.size()) << name << ": printed steps missing";
      for (const auto& [step, count] : stored) EXPECT_EQ(count, 1) << name << " at step " << step << " stored twice";
    }
  }

  // Each worker registered the kernel its trainer runs on (rung workers shows it).
  StatusOr<TrainerBlasKernel> kernel = AskTrainerForBlasKernel(RUNG_TRAIN_BINARY);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  v1::ListWorkersRequest list_workers;
  v1::ListWorkersResponse registered;
  status = users->ListWorkers(testing::BearerContext(*user_token).get(), list_workers, &registered);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(registered.workers_size(), 2);
  for (const v1::Worker& worker : registered.workers()) {
    EXPECT_EQ(worker.blas_kernel(), kernel->Short()) << worker.worker_id();
    EXPECT_NE(worker.blas_kernel(), "") << worker.worker_id();
  }

  for (auto& agent : agents) agent->Signal(SIGTERM);
  for (auto& agent : agents) {
    const int wait_status = agent->Wait(std::chrono::seconds(60));
    ASSERT_NE(wait_status, -1) << "rung-worker did not exit after SIGTERM\n" << logs();
    EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << "wait status " << wait_status << "\n"
                                                                         << logs();
  }
  coordinator.Signal(SIGTERM);
  EXPECT_NE(coordinator.Wait(std::chrono::seconds(30)), -1);
#endif
}

}  // namespace
}  // namespace rung::agent
