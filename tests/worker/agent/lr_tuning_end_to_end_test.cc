// tests/worker/agent/lr_tuning_end_to_end_test.cc
//
// The learning-rate search and early stopping with real processes: rung-coordinator (a temporary
// database), rung-worker agents whose trainer is rung-stand-in playing a loss surface
// (tests/support/stand_in_trainer), the user API over gRPC. The surface's optimum is the same grid
// value for every model (exponent 0), so each test knows where every cell must close.
//   - a centre four grid steps below the optimum walks to it: every cell ends bracketed, each in the
//     fewest trials the rule allows, the second seed runs at the best, the sweep succeeds;
//   - a coordinator killed at a crash point between a result and its decision, or just after the
//     decision, makes that decision exactly once after its restart;
//   - resubmitting the spec keeps the trials the search added and goes on from there;
//   - successive halving stops the worse start values of a cell, and not the best or its other seed;
//   - divergence stopping ends a diverging trial EARLY_STOPPED with its partial curve, and a
//     non-finite loss in a tuned sweep ends EARLY_STOPPED (non_finite), not FAILED, and is not retried.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "proto/config_value.h"
#include "coordinator/domain/crash_point.h"
#include "coordinator/store/event_log.h"
#include "coordinator/store/store.h"
#include "core/common/token_file.h"
#include "proto/rung.grpc.pb.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::agent {
namespace {

using testing::BearerContext;
using testing::GetSweepExpectingOk;
using testing::ListTrialsExpectingOk;
using testing::SubmitSpecExpectingOk;
using testing::ChildProcess;
using testing::FileText;
using ::testing::HasSubstr;
using testing::ScratchDir;

// 2^(-8): a grid value of the default grid (ratio sqrt 2, anchor 1), index -16.
constexpr double kOptimum = 0.00390625;
constexpr int64_t kOptimumIndex = -16;

// Two rungs x two variants, two seeds; the search starts four grid steps below the optimum.
std::string TunedSpec(const std::string& name, const std::string& extra_tune = "", const std::string& extra = "") {
  return "name: " + name +
         "\n"
         "metric: {name: val_loss, goal: minimize}\n"
         "data: {source: builtin, seq_len: 32}\n"
         "train: {steps: 20, batch_size: 8, eval_every: 5}\n"
         "resources: {cpus: 1}\n"
         "ladder:\n"
         "  rungs: [{layers: 1, d_model: 32, heads: 2}, {layers: 2, d_model: 32, heads: 2}]\n"
         "sweep:\n"
         "  position.variant: [rope, nope]\n"
         "  seed: [0, 1]\n"
         "tune:\n"
         "  train.lr:\n"
         "    center: 0.0009765625\n" +  // 2^-10: index -20
         extra_tune + extra;
}

// The stand-in's surface: the optimum kOptimum for every model, no noise, nothing diverges.
const char kSurface[] = R"({"lr_ref": 0.00390625, "exponent": 0, "noise": 0, "diverge_above_lr": 1.0})";

class LrTuningEndToEndTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (auto& worker : workers_) {
      worker->Signal(SIGTERM);
      worker->Wait(std::chrono::seconds(30));
    }
    StopCoordinator();
  }

  // Starts rung-coordinator on the scratch database; `crash_point` arms RUNG_CRASH_POINT.
  void StartCoordinator(const std::string& crash_point = "") {
    std::vector<std::string> argv = {"/usr/bin/env"};
    if (!crash_point.empty()) argv.push_back("RUNG_CRASH_POINT=" + crash_point);
    for (const std::string& arg :
         {std::string(RUNG_COORDINATOR_BINARY), std::string("--listen"), std::string("127.0.0.1:0"),
          std::string("--db"), scratch_.Path("rung.db"), std::string("--user-token-file"), scratch_.Path("user.token"),
          std::string("--worker-token-file"), scratch_.Path("worker.token"),
          // short leases: an attempt whose ending a dead coordinator never answered is requeued soon
          std::string("--lease-seconds"), std::string("2"), std::string("--restart-grace-seconds"), std::string("1")}) {
      argv.push_back(arg);
    }
    coordinator_ = std::make_unique<ChildProcess>(argv, scratch_.path().string(),
                                                  scratch_.Path("coordinator-" + std::to_string(starts_++) + ".log"));
    const std::string listening = coordinator_->ReadLine(std::chrono::seconds(60));
    ASSERT_EQ(listening.rfind("listening on ", 0), 0u) << "rung-coordinator did not start:\n" << Logs();
    address_ = listening.substr(std::string("listening on ").size());
    StatusOr<std::string> token = ReadBearerTokenFile(scratch_.Path("user.token"));
    ASSERT_TRUE(token.ok());
    user_token_ = *token;
    users_ = v1::UserService::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }

  void StopCoordinator() {
    if (!coordinator_) return;
    coordinator_->Signal(SIGTERM);
    coordinator_->Wait(std::chrono::seconds(30));
    coordinator_.reset();
  }

  // A rung-worker with `cpus` slots whose trainer is the stand-in playing `surface`.
  // `environment`: more NAME=VALUE settings for it (and so for its trainers).
  void StartWorker(const std::string& id, int cpus = 1, const std::string& surface = kSurface,
                   const std::vector<std::string>& environment = {}) {
    std::vector<std::string> argv = {"/usr/bin/env", "RUNG_STAND_IN_SURFACE=" + surface};
    argv.insert(argv.end(), environment.begin(), environment.end());
    for (const std::string& arg : {std::string(RUNG_WORKER_BINARY), std::string("--coordinator"), address_,
                                   std::string("--worker-token-file"), scratch_.Path("worker.token"),
                                   std::string("--cpus"), std::to_string(cpus), std::string("--worker-id"), id,
                                   std::string("--trainer"), std::string(RUNG_STAND_IN_BINARY),
                                   std::string("--work-dir"), scratch_.Path("work-" + id),
                                   std::string("--heartbeat-seconds"), std::string("0.2")}) {
      argv.push_back(arg);
    }
    workers_.push_back(
        std::make_unique<ChildProcess>(argv, scratch_.path().string(), scratch_.Path("worker-" + id + ".log")));
    ASSERT_TRUE(workers_.back()->started());
  }

  // SIGTERM: the workers preempt their trainers and report; SIGKILL: they die on the spot.
  void StopWorkers(int signal_number = SIGTERM) {
    for (auto& worker : workers_) {
      worker->Signal(signal_number);
      worker->Wait(std::chrono::seconds(30));
    }
    workers_.clear();
  }

  std::string Logs() {
    std::string logs;
    for (int start = 0; start < starts_; ++start) {
      logs += "coordinator " + std::to_string(start) + ":\n" +
              FileText(scratch_.Path("coordinator-" + std::to_string(start) + ".log")) + "\n";
    }
    for (const char* id : {"a", "b", "c"}) logs += std::string("worker ") + id + ":\n" + FileText(scratch_.Path(std::string("worker-") + id + ".log")) + "\n";
    return logs;
  }

  v1::SubmitSweepResponse Submit(const std::string& spec) {
    return SubmitSpecExpectingOk(*users_, user_token_, spec, "tuned.yaml");
  }
  v1::Sweep GetSweep(int64_t sweep_id) { return GetSweepExpectingOk(*users_, user_token_, sweep_id); }
  std::vector<v1::Trial> Trials(int64_t sweep_id) { return ListTrialsExpectingOk(*users_, user_token_, sweep_id); }

  v1::GetTuningResponse Tuning(int64_t sweep_id) {
    v1::GetTuningRequest request;
    request.set_sweep_id(sweep_id);
    v1::GetTuningResponse tuning;
    grpc::Status status = users_->GetTuning(BearerContext(user_token_).get(), request, &tuning);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return tuning;
  }

  // Polls (bounded) until the sweep has finished; false (and a failed expectation) if it does not.
  bool WaitForFinish(int64_t sweep_id, std::chrono::seconds limit = std::chrono::seconds(120)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      const v1::SweepState state = GetSweep(sweep_id).state();
      if (state == v1::SWEEP_STATE_SUCCEEDED || state == v1::SWEEP_STATE_FAILED) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "sweep " << sweep_id << " did not finish\n" << Logs();
    return false;
  }

  // The coordinator's exit status after it died at a crash point (bounded wait).
  int WaitForCrash() {
    const int status = coordinator_->Wait(std::chrono::seconds(60));
    coordinator_.reset();
    return status;
  }

  // The sweep's events of `kind`, read from the database while no coordinator holds it.
  std::vector<EventRecord> EventsOfKind(int64_t sweep_id, const std::string& kind) {
    SystemClock clock;
    StatusOr<std::unique_ptr<Store>> store = Store::Open(scratch_.Path("rung.db"), clock);
    EXPECT_TRUE(store.ok()) << store.status().message();
    if (!store.ok()) return {};
    EventFilter filter;
    filter.sweep_id = sweep_id;
    filter.limit = 100000;
    StatusOr<std::vector<EventRecord>> events = EventLog(**store).List(filter);
    EXPECT_TRUE(events.ok());
    std::vector<EventRecord> matching;
    for (const EventRecord& event : *events) {
      if (event.kind == kind) matching.push_back(event);
    }
    return matching;
  }

  ScratchDir scratch_;
  std::unique_ptr<ChildProcess> coordinator_;
  std::vector<std::unique_ptr<ChildProcess>> workers_;
  int starts_ = 0;
  std::string address_;
  std::string user_token_;
  std::unique_ptr<v1::UserService::Stub> users_;
};

TEST_F(LrTuningEndToEndTest, AnOffCentreSearchWalksToTheOptimumAndEveryCellEndsBracketed) {
  StartCoordinator();
  const v1::SubmitSweepResponse submitted = Submit(TunedSpec("walk"));
  ASSERT_GT(submitted.sweep_id(), 0);
  EXPECT_EQ(submitted.trial_count(), 6);  // the smallest rung: 2 cells x 3 values x the first seed
  StartWorker("a");
  StartWorker("b");
  ASSERT_TRUE(WaitForFinish(submitted.sweep_id()));
  EXPECT_EQ(GetSweep(submitted.sweep_id()).state(), v1::SWEEP_STATE_SUCCEEDED) << Logs();

  const v1::GetTuningResponse tuning = Tuning(submitted.sweep_id());
  EXPECT_EQ(tuning.tuning(), "complete");
  ASSERT_EQ(tuning.cells_size(), 4);
  for (const v1::TuningCell& cell : tuning.cells()) {
    EXPECT_EQ(cell.status(), "bracketed") << wire::FromConfigEntries(cell.cell()).dump() << ": " << cell.reason();
    EXPECT_TRUE(cell.bracketed());
    EXPECT_EQ(cell.best_index(), kOptimumIndex) << wire::FromConfigEntries(cell.cell()).dump();
    EXPECT_NEAR(cell.best(), kOptimum, 1e-12);
    // The smallest rung walks from -21..-19 up to -15: 7 values; the next rung starts on its best: 3.
    EXPECT_EQ(cell.tried_size(), cell.rung() == 0 ? 7 : 3) << wire::FromConfigEntries(cell.cell()).dump();
  }
  // 2 variants x (7 + 1 second seed + 3 + 1): the fewest trials the rule allows
  const std::vector<v1::Trial> trials = Trials(submitted.sweep_id());
  EXPECT_EQ(trials.size(), 24u);
  std::set<std::string> identities;
  for (const v1::Trial& trial : trials) {
    EXPECT_EQ(trial.state(), v1::TRIAL_STATE_SUCCEEDED) << trial.trial_id() << ": " << trial.state_reason();
    identities.insert(trial.identity());
  }
  EXPECT_EQ(identities.size(), trials.size());

  // The fit stands each ladder point on its cell's best value, and says which; --lr-policy value=X on X.
  v1::FitRequest fit_request;
  fit_request.set_sweep_id(submitted.sweep_id());
  fit_request.set_baseline("rope");
  fit_request.set_bootstrap(-1);
  v1::FitResponse fit;
  grpc::Status status = users_->Fit(BearerContext(user_token_).get(), fit_request, &fit);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_FALSE(fit.stored().report().empty());
  for (const v1::FitReportRow& row : fit.stored().report()) {
    EXPECT_DOUBLE_EQ(row.lr(), kOptimum) << row.ShortDebugString();
    EXPECT_TRUE(row.lr_bracketed()) << row.ShortDebugString();
    EXPECT_FALSE(row.lr_extrapolated());
  }
  EXPECT_NE(fit.stored().report_text().find("Tuned train.lr (best)"), std::string::npos) << fit.stored().report_text();
  fit_request.set_tuned_value(kOptimum * 1.4142135623730951);  // the next grid value, tried in every cell
  status = users_->Fit(BearerContext(user_token_).get(), fit_request, &fit);
  ASSERT_TRUE(status.ok()) << status.error_message();
  for (const v1::FitReportRow& row : fit.stored().report()) {
    EXPECT_NEAR(row.lr(), kOptimum * 1.4142135623730951, 1e-12) << row.ShortDebugString();
    EXPECT_EQ(row.lr_status(), "fixed");
  }
}

TEST_F(LrTuningEndToEndTest, ACoordinatorKilledBetweenAResultAndItsDecisionDecidesOnceAfterRestart) {
  for (const char* point : {"tuner.before_decision", "tuner.after_decision"}) {
    SCOPED_TRACE(point);
    const std::string name = std::string("crash-") + (std::string(point) == "tuner.before_decision" ? "before" : "after");
    // start 1: each cell starts with its centre alone, so the first ending decides the next value;
    // the centre is the optimum, so each cell closes after the values on either side.
    StartCoordinator(point);
    std::string spec = TunedSpec(name, "    start: 1\n");
    spec.replace(spec.find("0.0009765625"), std::string("0.0009765625").size(), "0.00390625");
    const v1::SubmitSweepResponse submitted = Submit(spec);
    ASSERT_EQ(submitted.trial_count(), 2);  // the centre of each cell of the smallest rung
    StartWorker("a", /*cpus=*/1);
    // The first ending's decision kills the coordinator at the point.
    const int status = WaitForCrash();
    ASSERT_TRUE(WIFEXITED(status)) << Logs();
    ASSERT_EQ(WEXITSTATUS(status), kCrashPointExitCode) << Logs();
    StopWorkers(SIGKILL);  // it would keep trying to report to the dead coordinator
    const size_t decided_before_restart = EventsOfKind(submitted.sweep_id(), event_kind::kTuneDecision).size();
    EXPECT_EQ(decided_before_restart, std::string(point) == "tuner.before_decision" ? 0u : 1u);

    // The restart takes the pending decision at once, before any worker reports, and only once.
    StartCoordinator();
    const std::vector<v1::Trial> after_restart = Trials(submitted.sweep_id());
    int64_t ended = 0;
    for (const v1::Trial& trial : after_restart) ended += trial.state() == v1::TRIAL_STATE_SUCCEEDED ? 1 : 0;
    ASSERT_EQ(ended, 1) << Logs();
    // The value below the centre of the cell whose centre ended (start 1: its best is on both edges).
    EXPECT_EQ(after_restart.size(), 3u) << Logs();
    StopCoordinator();
    EXPECT_EQ(EventsOfKind(submitted.sweep_id(), event_kind::kTuneDecision).size(), 1u) << Logs();

    // And the search then runs to the end as an uninterrupted one would (once: the run after either
    // point is the same run).
    if (std::string(point) != "tuner.before_decision") continue;
    StartCoordinator();
    StartWorker("a", 2);
    ASSERT_TRUE(WaitForFinish(submitted.sweep_id(), std::chrono::seconds(180)));
    const v1::GetTuningResponse tuning = Tuning(submitted.sweep_id());
    for (const v1::TuningCell& cell : tuning.cells()) {
      EXPECT_EQ(cell.status(), "bracketed") << wire::FromConfigEntries(cell.cell()).dump();
      EXPECT_EQ(cell.best_index(), kOptimumIndex);
      EXPECT_EQ(cell.tried_size(), 3);
    }
    std::map<std::string, int> per_value;
    for (const v1::Trial& trial : Trials(submitted.sweep_id())) {
      per_value[trial.rung_label() + " " + wire::FromConfigEntries(trial.assignments()).dump()] += 1;
    }
    for (const auto& [assignments, count] : per_value) EXPECT_EQ(count, 1) << assignments;
    StopWorkers();
    StopCoordinator();
  }
}

TEST_F(LrTuningEndToEndTest, ResubmittingTheSpecKeepsTheTrialsTheSearchAddedAndGoesOn) {
  StartCoordinator();
  const std::string spec = TunedSpec("resubmit");
  const v1::SubmitSweepResponse submitted = Submit(spec);
  StartWorker("a", 2);
  // Wait until the search has added a value beyond the start ones, then stop the workers.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (Trials(submitted.sweep_id()).size() < 8 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  StopWorkers();
  const std::vector<v1::Trial> before = Trials(submitted.sweep_id());
  ASSERT_GE(before.size(), 8u) << Logs();

  const v1::SubmitSweepResponse again = Submit(spec);
  EXPECT_FALSE(again.created());
  for (const v1::SubmittedCell& cell : again.cells()) {
    EXPECT_NE(cell.outcome(), v1::SubmittedCell::OUTCOME_REMOVED) << wire::FromConfigEntries(cell.assignments()).dump();
  }
  const std::vector<v1::Trial> after = Trials(submitted.sweep_id());
  ASSERT_GE(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].identity(), before[i].identity());
    EXPECT_NE(after[i].state(), v1::TRIAL_STATE_CANCELLED) << wire::FromConfigEntries(after[i].assignments()).dump();
  }
  StartWorker("a", 2);
  ASSERT_TRUE(WaitForFinish(submitted.sweep_id()));
  EXPECT_EQ(Trials(submitted.sweep_id()).size(), 24u);  // as if never resubmitted
}

TEST_F(LrTuningEndToEndTest, ANonFiniteLossInATunedSweepEndsEarlyStoppedAndClosesTheBracketAbove) {
  StartCoordinator();
  // The optimum is 2^-7 (index -14); every value above 0.008 diverges: the stand-in's NaN, exit 3.
  const std::string surface = R"({"lr_ref": 0.0078125, "exponent": 0, "noise": 0, "diverge_above_lr": 0.008})";
  std::string spec = TunedSpec("non-finite", "", "    predict: none\n");
  spec.replace(spec.find("0.0009765625"), std::string("0.0009765625").size(), "0.0078125");
  const v1::SubmitSweepResponse submitted = Submit(spec);
  StartWorker("a", 2, surface);
  ASSERT_TRUE(WaitForFinish(submitted.sweep_id()));
  EXPECT_EQ(GetSweep(submitted.sweep_id()).state(), v1::SWEEP_STATE_SUCCEEDED) << Logs();
  int64_t stopped = 0;
  for (const v1::Trial& trial : Trials(submitted.sweep_id())) {
    const double lr = wire::FromConfigEntries(trial.assignments()).at("train.lr").get<double>();
    if (lr > 0.008) {
      EXPECT_EQ(trial.state(), v1::TRIAL_STATE_EARLY_STOPPED) << trial.state_reason();
      EXPECT_THAT(trial.state_reason(), HasSubstr("non_finite"));
      // Not retried: one attempt ran. (An attempt leased to a Lease call the worker cancelled, to ask
      // again with the slots an ending freed, is handed back before it runs: no retry.)
      v1::GetTrialRequest request;
      request.set_trial_id(trial.trial_id());
      v1::Trial full;
      ASSERT_TRUE(users_->GetTrial(BearerContext(user_token_).get(), request, &full).ok());
      int ran = 0;
      for (const v1::TrialAttempt& attempt : full.attempts()) {
        if (attempt.exit_reason().rfind("handed back", 0) != 0) ++ran;
      }
      EXPECT_EQ(ran, 1) << "a non-finite loss is not retried\n" << full.ShortDebugString();
      ++stopped;
    } else {
      EXPECT_EQ(trial.state(), v1::TRIAL_STATE_SUCCEEDED) << trial.state_reason();
    }
  }
  EXPECT_EQ(stopped, 4);  // the value above the optimum, in each of the 4 cells
  const v1::GetTuningResponse tuning = Tuning(submitted.sweep_id());
  for (const v1::TuningCell& cell : tuning.cells()) {
    EXPECT_EQ(cell.status(), "bracketed") << wire::FromConfigEntries(cell.cell()).dump() << ": " << cell.reason();
    EXPECT_EQ(cell.best_index(), -14);
    ASSERT_EQ(cell.tried_size(), 3);
    EXPECT_EQ(cell.tried(2).state(), "diverged");
  }
}

TEST_F(LrTuningEndToEndTest, SuccessiveHalvingStopsTheWorseStartValuesOfACellAndNoOtherTrial) {
  StartCoordinator();
  // One rung, one variant: one cell of the first seed, centred on the optimum. Its three start values
  // run together (a worker of 3 slots, paced over 4 s); at half of training ASHA keeps the best one.
  const std::string spec =
      "name: halving\n"
      "metric: {name: val_loss, goal: minimize}\n"
      "data: {source: builtin, seq_len: 32}\n"
      "model: {layers: 1, d_model: 32, heads: 2}\n"
      "train: {steps: 40, batch_size: 8, eval_every: 5, log_every: 1}\n"
      "resources: {cpus: 1}\n"
      "sweep:\n"
      "  seed: [0, 1]\n"
      "tune:\n"
      "  train.lr: {center: 0.00390625, predict: none}\n"
      "early_stop:\n"
      "  asha: {metric: val_loss, reduction: 3, at: [0.5]}\n";
  const v1::SubmitSweepResponse submitted = Submit(spec);
  ASSERT_EQ(submitted.trial_count(), 3);
  StartWorker("a", 3, kSurface, {"RUNG_STAND_IN_SECONDS=4"});
  ASSERT_TRUE(WaitForFinish(submitted.sweep_id()));
  EXPECT_EQ(GetSweep(submitted.sweep_id()).state(), v1::SWEEP_STATE_SUCCEEDED) << Logs();
  int64_t stopped = 0;
  for (const v1::Trial& trial : Trials(submitted.sweep_id())) {
    const double lr = wire::FromConfigEntries(trial.assignments()).at("train.lr").get<double>();
    if (std::fabs(lr / kOptimum - 1) < 1e-9) {
      EXPECT_EQ(trial.state(), v1::TRIAL_STATE_SUCCEEDED) << "the best value (and its second seed) runs to the end";
    } else {
      EXPECT_EQ(trial.state(), v1::TRIAL_STATE_EARLY_STOPPED) << lr << ": " << trial.state_reason();
      EXPECT_THAT(trial.state_reason(), HasSubstr("asha: val_loss"));
      EXPECT_THAT(trial.state_reason(), HasSubstr("ranks"));
      EXPECT_LT(trial.latest_step(), 40);
      ++stopped;
    }
  }
  EXPECT_EQ(stopped, 2);
  const v1::GetTuningResponse tuning = Tuning(submitted.sweep_id());
  ASSERT_EQ(tuning.cells_size(), 1);
  EXPECT_EQ(tuning.cells(0).status(), "bracketed") << "an ASHA stop ranks after the best, so it closes the bracket";
  EXPECT_EQ(tuning.cells(0).best_index(), kOptimumIndex);
}

TEST_F(LrTuningEndToEndTest, DivergenceStoppingEndsARisingCurveEarlyAndKeepsItsPartialCurve) {
  StartCoordinator();
  // A curve that rises from 1 nat towards 5: its evaluations pass 1.5x the first one mid-run.
  const std::string surface =
      R"({"lr_ref": 0.00390625, "exponent": 0, "noise": 0, "floor": 5.0, "initial": 1.0, "rate": 0.1})";
  const std::string spec =
      "name: rising\n"
      "data: {source: builtin, seq_len: 32}\n"
      "model: {layers: 1, d_model: 32, heads: 2}\n"
      "train: {steps: 40, batch_size: 8, eval_every: 5, log_every: 1}\n"
      "resources: {cpus: 1}\n"
      "early_stop:\n"
      "  divergence: {factor: 1.5}\n";
  const v1::SubmitSweepResponse submitted = Submit(spec);
  ASSERT_EQ(submitted.trial_count(), 1);
  StartWorker("a", 1, surface, {"RUNG_STAND_IN_SECONDS=8"});
  ASSERT_TRUE(WaitForFinish(submitted.sweep_id()));
  const std::vector<v1::Trial> trials = Trials(submitted.sweep_id());
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].state(), v1::TRIAL_STATE_EARLY_STOPPED) << Logs();
  EXPECT_THAT(trials[0].state_reason(), HasSubstr("exceeds 1.5 x its first evaluation"));
  EXPECT_GT(trials[0].latest_step(), 5);
  EXPECT_LT(trials[0].latest_step(), 40) << "the partial curve ends where it was stopped";
  EXPECT_EQ(GetSweep(submitted.sweep_id()).state(), v1::SWEEP_STATE_SUCCEEDED) << "an early stop is no failure";
}

}  // namespace
}  // namespace rung::agent
