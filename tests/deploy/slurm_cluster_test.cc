// tests/deploy/slurm_cluster_test.cc
//
// deploy/README.md's SLURM section, run as written, on a real one-node SLURM cluster
// (slurm_cluster.h: slurmctld, slurmd and munge from Debian 12). The README's blocks marked
// `<!-- slurm-cluster-test: NAME -->` run in one shell session (variables carry from block to
// block), from the repository root, with only the variables a user sets themselves given by the test
// (RUNG_SHARED, RUNG_PREFIX, RUNG_COORDINATOR_NODE, RUNG_PORT, RUNG_DB, and SBATCH_OUTPUT so that
// the jobs' output goes to the scratch folder instead of the clone). In between, the test watches
// the coordinator over TLS, as a user's `rung` would:
//   1. start: `make install`, a certificate naming the node, the coordinator job, two one-CPU worker
//      jobs; submit: sweeps/examples/cluster-check.yaml (six trials, a checkpoint every 20 steps);
//   2. preempt: `scancel --signal=TERM` of the worker job running a trial past its third checkpoint:
//      that attempt ends PREEMPTED, the job ends, and the trial resumes from its checkpoint on the
//      other job's worker; requeue: `scontrol requeue` brings the job back with the same worker id;
//   3. stop: `scancel --name=rung-workers` while trials run: every running attempt ends PREEMPTED (not
//      STALE: reported before the SIGKILL), and no rung-worker or rung-train of the test is left;
//   4. short-allocation: a one-minute workers job with --end-margin 40: its worker reads the job's end
//      from squeue and stops by itself 40 s before it (the attempt it runs then PREEMPTED with the
//      allocation as its reason, not SLURM's signal), the job requeues itself, and its allocations
//      finish the sweep;
//   then every trial SUCCEEDED with one train_loss value per logged step.
// It prints the times deploy/README.md quotes: sbatch to the first step, SIGTERM to the trial
// resumed elsewhere, SIGTERM to the requeued job's worker back.
// Where a cluster cannot start (not root, slurm-wlm missing, a daemon that does not come up) the test
// is skipped and says why; ctest reports it as skipped, never as passed.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "core/common/loopback_port.h"
#include "core/common/token_file.h"
#include "proto/rung.grpc.pb.h"
#include "tests/deploy/readme_blocks.h"
#include "tests/deploy/slurm_cluster.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::deploy_test {
namespace {

namespace fs = std::filesystem;
using agent::testing::BearerContext;
using agent::testing::FileText;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

const fs::path kSource = RUNG_SOURCE_DIR;
constexpr int64_t kSteps = 1000, kLogEvery = 5, kCheckpointEvery = 20;  // sweeps/examples/cluster-check.yaml
constexpr int64_t kTrials = 6;


double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }


// The pids of this test's rung-worker and rung-train processes: those whose command line names the
// scratch folder (their work folders and install prefix are under it).
std::vector<std::string> LeftoverProcesses(const fs::path& scratch) {
  std::vector<std::string> found;
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.empty() || !std::isdigit(static_cast<unsigned char>(pid[0]))) continue;
    std::string cmdline = FileText((entry.path() / "cmdline").string());
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(scratch.string()) == std::string::npos) continue;
    if (cmdline.find("rung-worker") != std::string::npos || cmdline.find("rung-train") != std::string::npos) {
      found.push_back(pid + ": " + cmdline);
    }
  }
  return found;
}

class SlurmClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<SlurmCluster>> cluster = SlurmCluster::Start(scratch_.path() / "slurm", 16);
    if (!cluster.ok()) GTEST_SKIP() << "no SLURM cluster can start here: " << cluster.status().message();
    cluster_ = std::move(*cluster);
    fs::create_directories(scratch_.path() / "tmp");
    StatusOr<int> port = FreeLoopbackPort();
    ASSERT_TRUE(port.ok());
    environment_ = {"RUNG_SHARED=" + Scratch("shared"), "RUNG_PREFIX=" + Scratch("install"),
                    "RUNG_COORDINATOR_NODE=" + cluster_->node(), "RUNG_PORT=" + std::to_string(*port),
                    "RUNG_DB=" + Scratch("coordinator-disk/rung.db"), "SBATCH_OUTPUT=" + Scratch("%x-%j.out"),
                    // The workers' work folders (rung-worker-task.sh: $TMPDIR/rung-work-...).
                    "TMPDIR=" + Scratch("tmp"),
                    // make install builds (a no-op) into this build folder, not the default one.
                    "BUILD=" + std::string(RUNG_BINARY_DIR), "MAKEFLAGS=", "MAKELEVEL=", "MFLAGS="};
    blocks_ = ReadmeBlocks(kSource / "deploy" / "README.md", "slurm-cluster-test");
  }

  void TearDown() override {
    if (HasFailure() && cluster_) {
      std::cerr << "--- the jobs' output and the cluster's logs\n" << JobLogs() << cluster_->LogTails(40);
    }
  }

  // What a command of the cluster printed, or why it could not run: for failure messages.
  std::string Shell(const std::string& command) const {
    StatusOr<CommandOutput> output = cluster_->Run(command, seconds(20));
    return output.ok() ? output->text : output.status().ToString();
  }

  std::string Scratch(const std::string& name) const { return (scratch_.path() / name).string(); }

  // Runs the README block `name` in the session, after `prefix` (e.g. "job=12"): its output, and a
  // test failure when it exits non-zero.
  std::string RunBlock(const std::string& name, const std::string& prefix = "") {
    EXPECT_EQ(blocks_.count(name), 1u) << "deploy/README.md has no block <!-- slurm-cluster-test: " << name << " -->";
    const std::string state = Scratch("session.env");
    const std::string script = "set -e -a\n[ -f '" + state + "' ] && . '" + state + "'\ncd '" + kSource.string() +
                               "'\n" + prefix + "\n" + blocks_[name] + "export -p > '" + state + "'\n";
    StatusOr<CommandOutput> output = cluster_->Run(script, seconds(300), environment_, kSource.string());
    EXPECT_TRUE(output.ok()) << output.status().ToString();
    if (!output.ok()) return "";
    EXPECT_EQ(output->exit_code, 0) << "block '" << name << "' failed:\n" << output->text;
    return output->text;
  }

  std::string JobLogs() const {
    std::string text;
    for (const fs::directory_entry& entry : fs::directory_iterator(scratch_.path())) {
      if (entry.path().extension() == ".out") {
        text += "--- " + entry.path().filename().string() + ":\n" + FileText(entry.path().string());
      }
    }
    return text;
  }

  // A TLS channel to the address the coordinator job published, as the README's users dial it.
  void ConnectUser() {
    const std::string address = FileText(Scratch("shared/coordinator.address"));
    ASSERT_FALSE(address.empty());
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = FileText(Scratch("shared/tls/ca.crt"));
    users_ = v1::UserService::NewStub(
        grpc::CreateChannel(address.substr(0, address.find('\n')), grpc::SslCredentials(tls)));
    StatusOr<std::string> token = ReadBearerTokenFile(Scratch("shared/tokens/user.token"));
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    token_ = *token;
  }

  std::vector<v1::Trial> Trials() {
    v1::ListTrialsRequest request;
    request.set_sweep_id(1);
    request.set_view(v1::TRIAL_VIEW_FULL);
    v1::ListTrialsResponse listed;
    const grpc::Status status = users_->ListTrials(BearerContext(token_).get(), request, &listed);
    if (!status.ok()) return {};
    return {listed.trials().begin(), listed.trials().end()};
  }

  v1::Trial Trial(int64_t trial_id) {
    v1::GetTrialRequest request;
    request.set_trial_id(trial_id);
    request.set_view(v1::TRIAL_VIEW_FULL);
    v1::Trial trial;
    const grpc::Status status = users_->GetTrial(BearerContext(token_).get(), request, &trial);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return trial;
  }

  std::vector<v1::MetricPoint> TrainLoss(int64_t trial_id) {
    v1::GetMetricsRequest request;
    request.set_trial_id(trial_id);
    v1::GetMetricsResponse metrics;
    const grpc::Status status = users_->GetMetrics(BearerContext(token_).get(), request, &metrics);
    EXPECT_TRUE(status.ok()) << status.error_message();
    for (const v1::MetricSeries& series : metrics.series()) {
      if (series.name() == "train_loss") return {series.points().begin(), series.points().end()};
    }
    return {};
  }

  // The newest attempt of a trial.
  v1::TrialAttempt LastAttempt(int64_t trial_id) {
    const v1::Trial trial = Trial(trial_id);
    return trial.attempts_size() == 0 ? v1::TrialAttempt() : trial.attempts(trial.attempts_size() - 1);
  }

  static std::string JobPrefix(int64_t job) { return "slurm-" + std::to_string(job) + "-"; }

  // A trial RUNNING on a worker of `job` at `step` or later, or 0.
  int64_t TrialRunningOn(int64_t job, int64_t step) {
    for (const v1::Trial& trial : Trials()) {
      if (trial.state() != v1::TRIAL_STATE_RUNNING || trial.latest_step() < step) continue;
      if (LastAttempt(trial.trial_id()).worker_id().rfind(JobPrefix(job), 0) == 0) return trial.trial_id();
    }
    return 0;
  }

  // Each trial's state and step, and its attempts: worker, state, why it ended.
  std::string Progress() {
    std::string text;
    for (const v1::Trial& listed : Trials()) {
      text += Attempts(listed.trial_id());
    }
    return text;
  }

  std::string Attempts(int64_t trial_id) {
    const v1::Trial trial = Trial(trial_id);
    std::string text = "trial " + std::to_string(trial_id) + " " + v1::TrialState_Name(trial.state()) + " step " +
                       std::to_string(trial.latest_step()) + "\n";
    for (const v1::TrialAttempt& attempt : trial.attempts()) {
      text += "  attempt " + std::to_string(attempt.attempt()) + " on " + attempt.worker_id() + ": " +
              v1::TrialState_Name(attempt.state()) + " " + attempt.exit_reason() + "\n";
    }
    return text;
  }

  agent::testing::ScratchDir scratch_;  // destroyed last
  std::unique_ptr<SlurmCluster> cluster_;
  std::vector<std::string> environment_;
  std::map<std::string, std::string> blocks_;
  std::unique_ptr<v1::UserService::Stub> users_;
  std::string token_;
};

// The harness's own contract: a cluster stopped while a job runs (one that ignores SIGTERM, and has
// started a process of its own session that SLURM no longer tracks) leaves no process of it behind.
TEST(SlurmClusterHarnessTest, StoppingTheClusterLeavesNoProcessOfItsJobs) {
  agent::testing::ScratchDir scratch;
  StatusOr<std::unique_ptr<SlurmCluster>> cluster = SlurmCluster::Start(scratch.path() / "slurm", 4);
  if (!cluster.ok()) GTEST_SKIP() << "no SLURM cluster can start here: " << cluster.status().message();
  const std::string marker = "rung-harness-test-" + std::to_string(::getpid());
  const std::string job = agent::testing::WriteScript(
      scratch.Path("job.sh"), "setsid bash -c 'exec -a " + marker + "-escaped sleep 300' &\ntrap '' TERM\nexec bash -c 'exec -a " + marker + " sleep 300'\n");
  StatusOr<CommandOutput> submitted = (*cluster)->Run("sbatch --output=/dev/null " + job, seconds(30));
  ASSERT_TRUE(submitted.ok() && submitted->exit_code == 0) << (submitted.ok() ? submitted->text : "");
  const auto running = [&] {
    SubprocessOptions pgrep;
    pgrep.argv = {"pgrep", "-f", marker};
    pgrep.stdout_to = Redirect::Pipe();
    StatusOr<SubprocessResult> found = Subprocess::Run(pgrep, seconds(10));
    return found.ok() && found->exit.Succeeded();
  };
  ASSERT_TRUE(PollUntil(running, seconds(30))) << "the job did not start";
  cluster->reset();
  EXPECT_FALSE(running()) << "a process of the job outlived the cluster";
}

TEST_F(SlurmClusterTest, ReadmeRunsASweepThroughPreemptionRequeueTheAllocationsEndAndATimeLimit) {
  // 1. start and submit.
  const std::string started = RunBlock("start");
  ASSERT_FALSE(HasFailure());
  const auto workers_submitted = Clock::now();
  std::vector<int64_t> worker_jobs;
  const std::regex submitted(R"(Submitted batch job (\d+))");
  for (std::sregex_iterator it(started.begin(), started.end(), submitted), end; it != end; ++it) {
    worker_jobs.push_back(std::stoll((*it)[1]));
  }
  ASSERT_EQ(worker_jobs.size(), 2u) << started;
  const int64_t job_a = worker_jobs[0], job_b = worker_jobs[1];
  const std::string submit = RunBlock("submit");
  ASSERT_FALSE(HasFailure());
  EXPECT_NE(submit.find("submitted sweep 1: 6 trials"), std::string::npos) << submit;
  ASSERT_NO_FATAL_FAILURE(ConnectUser());

  ASSERT_TRUE(PollUntil([&] {
    for (const v1::Trial& trial : Trials()) {
      if (trial.latest_step() > 0) return true;
    }
    return false;
  }, seconds(180))) << "no trial reported a step\n" << JobLogs();
  const double first_step_seconds = SecondsSince(workers_submitted);

  // 2. preempt a worker job mid-trial, see the trial resume on the other job's worker, requeue the job.
  int64_t preempted = 0;
  ASSERT_TRUE(PollUntil([&] { return (preempted = TrialRunningOn(job_a, 3 * kCheckpointEvery)) != 0; }, seconds(120)))
      << "no trial got past its third checkpoint on job " << job_a << "\n" << Progress() << JobLogs();
  const v1::TrialAttempt before = LastAttempt(preempted);
  const auto signalled = Clock::now();
  RunBlock("preempt", "job=" + std::to_string(job_a));
  ASSERT_TRUE(PollUntil([&] { return Trial(preempted).attempts_size() > before.attempt() &&
                                LastAttempt(preempted).worker_id().rfind(JobPrefix(job_b), 0) == 0 &&
                                Trial(preempted).state() == v1::TRIAL_STATE_RUNNING; },
                   seconds(120)))
      << "trial " << preempted << " did not resume on job " << job_b << "'s worker\n" << Attempts(preempted)
      << JobLogs();
  const double resumed_seconds = SecondsSince(signalled);
  {
    const v1::Trial trial = Trial(preempted);
    const v1::TrialAttempt& ended = trial.attempts(static_cast<int>(before.attempt()) - 1);
    EXPECT_EQ(ended.state(), v1::TRIAL_STATE_PREEMPTED) << Attempts(preempted);
    EXPECT_EQ(ended.worker_id(), before.worker_id());
  }
  EXPECT_TRUE(PollUntil([&] { return cluster_->Job(job_a).state == "COMPLETED"; }, seconds(60)))
      << "job " << job_a << " is " << cluster_->Job(job_a).state;
  RunBlock("requeue", "job=" + std::to_string(job_a));
  ASSERT_TRUE(PollUntil([&] {
    const SlurmCluster::JobInfo info = cluster_->Job(job_a);
    if (info.state != "RUNNING" || info.restarts < 1) return false;
    // Its worker, under the same id, took a trial again.
    for (const v1::Trial& trial : Trials()) {
      if (trial.state() == v1::TRIAL_STATE_RUNNING &&
          LastAttempt(trial.trial_id()).worker_id() == before.worker_id()) {
        return true;
      }
    }
    return false;
  }, seconds(120))) << "job " << job_a << " did not come back to work\n" << Progress() << JobLogs();
  const double requeued_seconds = SecondsSince(signalled);

  // 3. every workers job ends while trials run: they are PREEMPTED and nothing is left running.
  std::vector<int64_t> running;
  for (const v1::Trial& trial : Trials()) {
    if (trial.state() == v1::TRIAL_STATE_RUNNING) running.push_back(trial.trial_id());
  }
  ASSERT_FALSE(running.empty()) << "the sweep finished before the allocations ended\n" << Progress();
  RunBlock("stop");
  EXPECT_TRUE(PollUntil([&] {
    for (int64_t job : {job_a, job_b}) {
      const std::string state = cluster_->Job(job).state;
      if (state == "RUNNING" || state == "COMPLETING" || state == "PENDING") return false;
    }
    return true;
  }, seconds(60))) << "the workers jobs did not end: " << Shell("scontrol -o show job; ps -ef");
  EXPECT_TRUE(PollUntil([&] { return LeftoverProcesses(scratch_.path()).empty(); }, seconds(20)));
  for (const std::string& leftover : LeftoverProcesses(scratch_.path())) ADD_FAILURE() << "left running: " << leftover;
  for (int64_t trial_id : running) {
    EXPECT_TRUE(PollUntil([&] { return LastAttempt(trial_id).state() == v1::TRIAL_STATE_PREEMPTED; }, seconds(30)))
        << "trial " << trial_id << "'s attempt did not end PREEMPTED\n" << Attempts(trial_id);
  }

  // 4. one-minute allocations: the worker stops by itself before the end, the job requeues itself,
  // and such jobs finish the sweep.
  const auto short_submitted = Clock::now();
  const std::string short_job = RunBlock("short-allocation");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(short_job, match, submitted)) << short_job;
  const int64_t job_c = std::stoll(match[1]);
  // Each of its allocations stops 20 s after it starts, mid-trial as a rule (a trial that ends just
  // before then, with the next one too long to reach its checkpoint in time, leaves nothing to
  // preempt: the next allocation then shows it). Its attempts end SUCCEEDED or PREEMPTED by the
  // allocation's end, never by SLURM's signal or a lost lease.
  std::string stop_reason;
  double stopped_seconds = 0;
  v1::Sweep sweep;
  ASSERT_TRUE(PollUntil([&] {
    if (stop_reason.empty()) {
      for (const v1::Trial& listed : Trials()) {
        const v1::Trial trial = Trial(listed.trial_id());
        for (const v1::TrialAttempt& attempt : trial.attempts()) {
          if (attempt.worker_id().rfind(JobPrefix(job_c), 0) == 0 && attempt.state() == v1::TRIAL_STATE_PREEMPTED) {
            stop_reason = attempt.exit_reason();
            stopped_seconds = SecondsSince(short_submitted);
          }
        }
      }
    }
    v1::GetSweepRequest request;
    request.set_sweep_id(1);
    return users_->GetSweep(BearerContext(token_).get(), request, &sweep).ok() &&
           sweep.state() != v1::SWEEP_STATE_ACTIVE;
  }, seconds(300))) << Progress() << JobLogs();
  EXPECT_NE(stop_reason, "") << "no attempt on job " << job_c << " was preempted by its allocation's end\n"
                             << Progress() << JobLogs();
  EXPECT_GE(cluster_->Job(job_c).restarts, 1) << "job " << job_c << " did not requeue itself\n" << JobLogs();
  for (const v1::Trial& listed : Trials()) {
    const v1::Trial trial = Trial(listed.trial_id());
    for (const v1::TrialAttempt& attempt : trial.attempts()) {
      if (attempt.worker_id().rfind(JobPrefix(job_c), 0) != 0) continue;
      if (attempt.state() == v1::TRIAL_STATE_SUCCEEDED) continue;
      EXPECT_EQ(attempt.state(), v1::TRIAL_STATE_PREEMPTED) << Attempts(listed.trial_id());
      EXPECT_NE(attempt.exit_reason().find("allocation ends at"), std::string::npos) << Attempts(listed.trial_id());
    }
  }
  EXPECT_EQ(sweep.state(), v1::SWEEP_STATE_SUCCEEDED) << sweep.state_reason();

  // Every trial SUCCEEDED, one train_loss value per logged step, whatever its attempts.
  const std::vector<v1::Trial> trials = Trials();
  EXPECT_EQ(static_cast<int64_t>(trials.size()), kTrials);
  std::set<int64_t> logged;
  for (int64_t step = kLogEvery; step <= kSteps; step += kLogEvery) logged.insert(step);
  for (const v1::Trial& trial : trials) {
    EXPECT_EQ(trial.state(), v1::TRIAL_STATE_SUCCEEDED) << Attempts(trial.trial_id());
    std::map<int64_t, int> per_step;
    for (const v1::MetricPoint& point : TrainLoss(trial.trial_id())) ++per_step[point.step()];
    std::set<int64_t> steps;
    for (const auto& [step, count] : per_step) {
      EXPECT_EQ(count, 1) << "trial " << trial.trial_id() << ": train_loss at step " << step << " stored " << count
                          << " times";
      steps.insert(step);
    }
    EXPECT_EQ(steps, logged) << "trial " << trial.trial_id() << ": not exactly the logged steps";
  }
  std::printf("slurm: sbatch to the first step %.1f s; SIGTERM to the trial resumed on the other job %.1f s; "
              "SIGTERM to the requeued job's worker training again %.1f s (requeue delay cred_expire=10 s)\n",
              first_step_seconds, resumed_seconds, requeued_seconds);
  std::printf("slurm: a one-minute allocation's worker stopped by itself %.1f s after its sbatch: %s\n",
              stopped_seconds, stop_reason.c_str());
}

}  // namespace
}  // namespace rung::deploy_test
