// tests/worker/agent/precision_end_to_end_test.cc
//
// A precision-aimed sweep (the spec's `precision` block) with real processes: rung-coordinator (a
// temporary database), rung-worker agents whose trainer is rung-stand-in playing a loss surface
// (tests/support/stand_in_trainer), the user API over gRPC. The surface falls with model size, gives
// lerope a fixed 0.01 nats below rope, and draws a paired seed noise per (seed, variant, N) that is
// small at the small rung and six times larger at the big one; so the first design's multiplier
// interval is narrow at `small` and wider than the target at `big`, and every draw is deterministic:
//   - the aim adds seeds at `big` only, each with a precision_decision naming it, until every interval
//     is met; one precision_complete; the sweep succeeds;
//   - a budget the first design leaves too little of closes `budget`, naming the FLOPs left, and the
//     sweep still succeeds;
//   - a coordinator killed at precision.before_decision, or at precision.after_decision, takes that
//     decision exactly once after its restart and ends where an uninterrupted sweep ends;
//   - resubmitting the spec after the aim closed keeps every trial it added and closes it again at
//     once, adding nothing;
//   - a sweep cancelled with a pair the aim added still pending, then resubmitted, requeues that pair
//     (the aim asks for it again) and goes on to met.
// The surface's draws fix every decision: the first design misses the target at big (half width
// 0.128 against 0.06) and meets it at small; the aim then adds seeds 3, 4, 5 at big, one pair a
// decision. The assertions hold the structure (where, in what order, how many events), not that count.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "coordinator/domain/crash_point.h"
#include "coordinator/store/event_log.h"
#include "coordinator/store/store.h"
#include "core/common/token_file.h"
#include "proto/config_value.h"
#include "proto/rung.grpc.pb.h"
#include "tests/worker/agent/agent_test_util.h"

// A namespace of its own: the unity build compiles this file in one unit with the other agent tests.
namespace rung::agent::precision_end_to_end {
namespace {

using testing::BearerContext;
using testing::GetSweepExpectingOk;
using testing::ListTrialsExpectingOk;
using testing::SubmitSpecExpectingOk;
using testing::ChildProcess;
using testing::FileText;
using ::testing::HasSubstr;
using testing::ScratchDir;

// The stand-in's surface: at train.lr (= lr_ref, exponent 0) the loss is floor + 0.5 (N / n_ref)^-0.5,
// lerope 0.01 nats lower; each (seed, variant, N) draws its own noise of sd 0.0015 (N / n_ref)^2.6
// (n_ref = 12288, the small rung's non-embedding N: sd 0.0015 there and 0.009 at the big rung, 2x N).
const char kSurface[] =
    R"({"lr_ref": 0.001, "exponent": 0, "noise": 0, "n_ref": 12288, "size_gain": 0.5, "size_exponent": 0.5,)"
    R"( "variant_offset": {"lerope": -0.01}, "variant_noise": 0.0015, "variant_noise_exponent": 2.6})";

constexpr double kTarget = 0.06;  // the target half width: met at small by the first design, not at big

// Two rungs x rope/lerope x seeds 0-2 (the first design: 12 trials), aiming at every rung's interval
// with one trial pair in flight at a time (so each decision sees every earlier one's result: the
// decisions, and so the trials, are the same in every run of the test).
std::string PrecisionSpec(const std::string& name, double budget_flops = 1e15) {
  char budget[64];
  std::snprintf(budget, sizeof(budget), "%.17g", budget_flops);
  return "name: " + name +
         "\n"
         "baseline: {position.variant: rope}\n"
         "metric: {name: val_loss, goal: minimize}\n"
         "data: {source: builtin, seq_len: 32}\n"
         "train: {steps: 20, batch_size: 8, eval_every: 10, lr: 0.001}\n"
         "resources: {cpus: 1}\n"
         "ladder:\n"
         "  rungs: [{label: small, layers: 1, d_model: 32, heads: 2}, {label: big, layers: 2, d_model: 32, heads: 2}]\n"
         "sweep:\n"
         "  position.variant: [rope, lerope]\n"
         "  seed: [0, 1, 2]\n"
         "precision:\n"
         "  estimator: hermite\n"
         "  target_half_width: " +
         std::to_string(kTarget) +
         "\n"
         "  budget_flops: " +
         budget +
         "\n"
         "  in_flight: 1\n";
}

constexpr int kFirstDesign = 12;

// A trial as the final state compares it: its rung, assignments and state (not its sweep or id).
std::string CellText(const v1::Trial& trial) {
  return trial.rung_label() + " " + wire::FromConfigEntries(trial.assignments()).dump() + " " +
         v1::TrialState_Name(trial.state());
}

std::string Short(double value) {  // as the coordinator's reasons write numbers
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", value);
  return text;
}

class PrecisionEndToEndTest : public ::testing::Test {
 protected:
  void TearDown() override {
    StopWorkers();
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

  // A rung-worker with `cpus` slots whose trainer is the stand-in playing kSurface.
  void StartWorker(const std::string& id, int cpus = 2) {
    std::vector<std::string> argv = {"/usr/bin/env", std::string("RUNG_STAND_IN_SURFACE=") + kSurface};
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
    logs += "worker a:\n" + FileText(scratch_.Path("worker-a.log")) + "\n";
    return logs;
  }

  v1::SubmitSweepResponse Submit(const std::string& spec, bool dry_run = false) {
    return SubmitSpecExpectingOk(*users_, user_token_, spec, "precision.yaml", dry_run);
  }
  v1::Sweep GetSweep(int64_t sweep_id) { return GetSweepExpectingOk(*users_, user_token_, sweep_id); }
  std::vector<v1::Trial> Trials(int64_t sweep_id) { return ListTrialsExpectingOk(*users_, user_token_, sweep_id); }

  v1::GetPrecisionResponse Precision(int64_t sweep_id) {
    v1::GetPrecisionRequest request;
    request.set_sweep_id(sweep_id);
    v1::GetPrecisionResponse precision;
    grpc::Status status = users_->GetPrecision(BearerContext(user_token_).get(), request, &precision);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return precision;
  }

  // Polls (bounded) until the sweep has finished; false (and a failed expectation) if it does not.
  bool WaitForFinish(int64_t sweep_id, std::chrono::seconds limit = std::chrono::seconds(90)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      const v1::SweepState state = GetSweep(sweep_id).state();
      if (state == v1::SWEEP_STATE_SUCCEEDED || state == v1::SWEEP_STATE_FAILED) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "sweep " << sweep_id << " did not finish\n"
                  << Precision(sweep_id).ShortDebugString() << "\n"
                  << Logs();
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

  // The final state of a sweep, as compared across runs: every trial's cell and state, sorted.
  std::multiset<std::string> FinalCells(int64_t sweep_id) {
    std::multiset<std::string> cells;
    for (const v1::Trial& trial : Trials(sweep_id)) cells.insert(CellText(trial));
    return cells;
  }

  // Runs an aim to its close (a coordinator is up): workers, the finish, the workers stopped.
  void RunToTheEnd(int64_t sweep_id) {
    StartWorker("a");
    ASSERT_TRUE(WaitForFinish(sweep_id));
    StopWorkers();
  }

  ScratchDir scratch_;
  std::unique_ptr<ChildProcess> coordinator_;
  std::vector<std::unique_ptr<ChildProcess>> workers_;
  int starts_ = 0;
  std::string address_;
  std::string user_token_;
  std::unique_ptr<v1::UserService::Stub> users_;
};

// What a met aim's trials and events must be: every trial succeeded, seeds added only at `big`, in
// pairs and in order, each named by one precision_decision, one decision per pair (in_flight 1), one
// precision_complete saying met. `requeued_pairs`: the first added pairs were cancelled and then
// requeued by a later decision, which names them again. Returns the number of decision steps.
size_t ExpectMetOnlyAtTheNoisyRung(const std::vector<v1::Trial>& trials, const std::vector<EventRecord>& decisions,
                                   const std::vector<EventRecord>& completes, int64_t requeued_pairs = 0) {
  std::map<int64_t, std::set<std::string>> added_by_seed;  // seed -> variants added at big
  std::set<std::string> identities;
  for (const v1::Trial& trial : trials) {
    identities.insert(trial.identity());
    EXPECT_EQ(trial.state(), v1::TRIAL_STATE_SUCCEEDED) << CellText(trial) << ": " << trial.state_reason();
    const nlohmann::json assignments = wire::FromConfigEntries(trial.assignments());
    const int64_t seed = assignments.at("seed").get<int64_t>();
    if (seed <= 2) continue;  // the first design
    EXPECT_EQ(trial.rung_label(), "big") << "a seed added where no target asked for one: " << CellText(trial);
    const std::string variant = assignments.at("position.variant").get<std::string>();
    added_by_seed[seed].insert(variant);
    // Its decision names it: "-> added <variant> at big seed <seed> (trial <index>)[, ...]".
    const std::string named = variant + " at big seed " + std::to_string(seed) + " (trial ";
    int naming = 0, naming_requeued = 0;
    for (const EventRecord& event : decisions) {
      for (const std::string& before : {std::string("added "), std::string(", ")}) {
        const size_t at = event.reason.find(before + named);
        if (at == std::string::npos) continue;
        ++naming;
        const size_t close = event.reason.find(')', at);
        naming_requeued += event.reason.substr(at, close - at).find(", requeued") != std::string::npos ? 1 : 0;
      }
    }
    const bool requeued = seed < 3 + requeued_pairs;
    EXPECT_EQ(naming, requeued ? 2 : 1) << named;
    EXPECT_EQ(naming_requeued, requeued ? 1 : 0) << named;
  }
  EXPECT_EQ(identities.size(), trials.size()) << "a trial identity twice";
  EXPECT_FALSE(added_by_seed.empty()) << "the first design was expected to miss the target at big";
  int64_t expected_seed = 3;
  for (const auto& [seed, variants] : added_by_seed) {
    EXPECT_EQ(seed, expected_seed++) << "seeds are added in order, none skipped";
    EXPECT_EQ(variants, (std::set<std::string>{"lerope", "rope"})) << "seed " << seed << ": the pair";
  }
  EXPECT_EQ(trials.size(), static_cast<size_t>(kFirstDesign) + 2 * added_by_seed.size());
  // in_flight 1: every decision step adds (or requeues) one pair, and writes one event.
  EXPECT_EQ(static_cast<int64_t>(decisions.size()), static_cast<int64_t>(added_by_seed.size()) + requeued_pairs);
  for (const EventRecord& event : decisions) {
    EXPECT_THAT(event.reason, HasSubstr("lerope at big (half width"));
    EXPECT_THAT(event.reason, HasSubstr("a seed at big"));
  }
  EXPECT_EQ(completes.size(), 1u);
  if (!completes.empty()) EXPECT_EQ(completes[0].reason.rfind("met: ", 0), 0u) << completes[0].reason;
  return decisions.size();
}

TEST_F(PrecisionEndToEndTest, TheAimAddsSeedsOnlyAtTheNoisyRungUntilEveryTargetIsMetThenAResubmissionKeepsThem) {
  StartCoordinator();
  const std::string spec = PrecisionSpec("met");
  const v1::SubmitSweepResponse submitted = Submit(spec);
  ASSERT_GT(submitted.sweep_id(), 0);
  EXPECT_EQ(submitted.trial_count(), kFirstDesign);
  const int64_t id = submitted.sweep_id();
  RunToTheEnd(id);
  const v1::Sweep sweep = GetSweep(id);
  EXPECT_EQ(sweep.state(), v1::SWEEP_STATE_SUCCEEDED) << Logs();
  EXPECT_EQ(sweep.precision(), "met");

  const std::vector<v1::Trial> trials = Trials(id);
  const int64_t added_pairs = static_cast<int64_t>(trials.size() - kFirstDesign) / 2;
  const v1::GetPrecisionResponse precision = Precision(id);
  EXPECT_EQ(precision.precision(), "met");
  EXPECT_EQ(precision.status(), "met") << precision.why();
  EXPECT_EQ(precision.unfinished(), 0);
  EXPECT_EQ(precision.baseline(), "rope");
  EXPECT_THAT(precision.closed_reason(), HasSubstr("met: every one of 2 target intervals"));
  ASSERT_EQ(precision.rows_size(), 2) << precision.ShortDebugString();
  for (const v1::PrecisionRow& row : precision.rows()) {
    EXPECT_EQ(row.variant(), "lerope");
    EXPECT_TRUE(row.met()) << row.ShortDebugString();
    ASSERT_TRUE(row.has_half_width()) << row.ShortDebugString();
    EXPECT_LE(row.half_width(), kTarget);
    ASSERT_TRUE(row.has_multiplier());
    EXPECT_GT(row.multiplier(), 1.0) << "lerope is 0.01 nats better: it needs less compute";
    EXPECT_EQ(row.seeds(), row.rung_label() == "small" ? 3 : 3 + added_pairs) << row.ShortDebugString();
  }
  EXPECT_EQ(precision.next_size(), 0) << "a closed aim adds nothing";

  StopCoordinator();
  const size_t steps = ExpectMetOnlyAtTheNoisyRung(trials, EventsOfKind(id, event_kind::kPrecisionDecision),
                                                   EventsOfKind(id, event_kind::kPrecisionComplete));
  ASSERT_GT(steps, 0u);

  // Resubmitted as it is: the aim opens again, keeps every seed it added, and closes again as met at
  // once (nothing runs, so no ending would decide) without adding any.
  StartCoordinator();
  const v1::SubmitSweepResponse again = Submit(spec);
  EXPECT_FALSE(again.created());
  EXPECT_EQ(again.sweep_id(), id);
  for (const v1::SubmittedCell& cell : again.cells()) {
    EXPECT_NE(cell.outcome(), v1::SubmittedCell::OUTCOME_REMOVED) << wire::FromConfigEntries(cell.assignments()).dump();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (GetSweep(id).precision() != "met" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(GetSweep(id).precision(), "met") << "the reopened aim was not closed again\n"
                                             << Precision(id).ShortDebugString();
  EXPECT_EQ(GetSweep(id).state(), v1::SWEEP_STATE_SUCCEEDED);
  const std::vector<v1::Trial> after = Trials(id);
  ASSERT_EQ(after.size(), trials.size()) << "a met aim adds nothing when resubmitted";
  for (size_t i = 0; i < trials.size(); ++i) {
    EXPECT_EQ(after[i].identity(), trials[i].identity());
    EXPECT_EQ(after[i].state(), v1::TRIAL_STATE_SUCCEEDED) << CellText(after[i]);
  }
  StopCoordinator();
  EXPECT_EQ(EventsOfKind(id, event_kind::kPrecisionDecision).size(), steps);
  EXPECT_EQ(EventsOfKind(id, event_kind::kPrecisionComplete).size(), 2u) << "one close per time the aim was open";
}

TEST_F(PrecisionEndToEndTest, ABudgetTooSmallForTheTargetClosesOnTheBudgetAndTheSweepSucceeds) {
  StartCoordinator();
  // The first design's FLOPs, from a dry run; the budget leaves less than any one trial (a baseline
  // seed at small narrows big's interval too: its slope reads small).
  const v1::SubmitSweepResponse dry = Submit(PrecisionSpec("budget"), /*dry_run=*/true);
  ASSERT_EQ(dry.trials_size(), kFirstDesign);
  double first_design = 0, big_trial = 0, small_trial = 0;
  for (const v1::Trial& trial : dry.trials()) {
    first_design += trial.flops();
    (trial.rung_label() == "big" ? big_trial : small_trial) = trial.flops();
  }
  ASSERT_GT(big_trial, 0);
  ASSERT_GT(small_trial, 0);
  const double budget = first_design + 0.5 * small_trial;
  const v1::SubmitSweepResponse submitted = Submit(PrecisionSpec("budget", budget));
  ASSERT_GT(submitted.sweep_id(), 0);
  const int64_t id = submitted.sweep_id();
  RunToTheEnd(id);
  const v1::Sweep sweep = GetSweep(id);
  EXPECT_EQ(sweep.state(), v1::SWEEP_STATE_SUCCEEDED) << "a budget close is no failure\n" << Logs();
  EXPECT_EQ(sweep.precision(), "budget");
  EXPECT_EQ(Trials(id).size(), static_cast<size_t>(kFirstDesign)) << "nothing fits the budget";
  const v1::GetPrecisionResponse precision = Precision(id);
  EXPECT_EQ(precision.precision(), "budget");
  EXPECT_THAT(precision.closed_reason(), HasSubstr("lerope at big"));
  // The FLOPs left, and what the cheapest seed that narrows it needs.
  EXPECT_THAT(precision.closed_reason(),
              HasSubstr(" FLOPs for one more seed and " + Short(budget - first_design) + " of budget_flops " +
                        Short(budget) + " are left"))
      << precision.closed_reason();
  bool small_met = false, big_met = true;
  for (const v1::PrecisionRow& row : precision.rows()) {
    (row.rung_label() == "small" ? small_met : big_met) = row.met();
  }
  EXPECT_TRUE(small_met);
  EXPECT_FALSE(big_met) << "the budget stopped the aim short of the target at big";
  StopCoordinator();
  EXPECT_TRUE(EventsOfKind(id, event_kind::kPrecisionDecision).empty());
  const std::vector<EventRecord> completes = EventsOfKind(id, event_kind::kPrecisionComplete);
  ASSERT_EQ(completes.size(), 1u);
  EXPECT_EQ(completes[0].reason.rfind("budget: ", 0), 0u) << completes[0].reason;
}

TEST_F(PrecisionEndToEndTest, ACoordinatorKilledAroundADecisionTakesItOnceAndEndsAsAnUninterruptedAim) {
  // The uninterrupted aim, for the final state to compare with.
  StartCoordinator();
  const int64_t reference = Submit(PrecisionSpec("reference")).sweep_id();
  RunToTheEnd(reference);
  const std::multiset<std::string> expected = FinalCells(reference);
  const int64_t expected_steps = static_cast<int64_t>(expected.size() - kFirstDesign) / 2;
  ASSERT_GT(expected_steps, 0) << "the first design was expected to miss the target at big";
  StopCoordinator();

  for (const char* point : {"precision.before_decision", "precision.after_decision"}) {
    SCOPED_TRACE(point);
    const bool before = std::string(point) == "precision.before_decision";
    // The first decision comes when the first design has ended (in_flight 1): it kills the coordinator.
    StartCoordinator(point);
    const int64_t id = Submit(PrecisionSpec(before ? "crash-before" : "crash-after")).sweep_id();
    StartWorker("a");
    const int status = WaitForCrash();
    ASSERT_TRUE(WIFEXITED(status)) << Logs();
    ASSERT_EQ(WEXITSTATUS(status), kCrashPointExitCode) << Logs();
    StopWorkers(SIGKILL);  // it would keep trying to report to the dead coordinator
    EXPECT_EQ(EventsOfKind(id, event_kind::kPrecisionDecision).size(), before ? 0u : 1u);

    // The restart takes the pending decision at once, before any worker reports, and only once.
    StartCoordinator();
    const std::vector<v1::Trial> after_restart = Trials(id);
    EXPECT_EQ(after_restart.size(), static_cast<size_t>(kFirstDesign) + 2) << Logs();
    StopCoordinator();
    EXPECT_EQ(EventsOfKind(id, event_kind::kPrecisionDecision).size(), 1u) << Logs();

    // And the aim then runs to the end as the uninterrupted one did.
    StartCoordinator();
    RunToTheEnd(id);
    EXPECT_EQ(GetSweep(id).state(), v1::SWEEP_STATE_SUCCEEDED);
    EXPECT_EQ(GetSweep(id).precision(), "met") << Precision(id).closed_reason();
    std::set<std::string> identities;
    const std::vector<v1::Trial> trials = Trials(id);
    for (const v1::Trial& trial : trials) identities.insert(trial.identity());
    EXPECT_EQ(identities.size(), trials.size()) << "a decision repeated";
    EXPECT_EQ(FinalCells(id), expected);
    StopCoordinator();
    EXPECT_EQ(static_cast<int64_t>(EventsOfKind(id, event_kind::kPrecisionDecision).size()), expected_steps);
    EXPECT_EQ(EventsOfKind(id, event_kind::kPrecisionComplete).size(), 1u);
  }
}

TEST_F(PrecisionEndToEndTest, ACancelledAimResubmittedRunsTheSeedsItHadAddedAndGoesOnToMet) {
  // The coordinator dies just after the first decision: the pair it added is PENDING, no worker runs.
  StartCoordinator("precision.after_decision");
  const std::string spec = PrecisionSpec("cancelled");
  const int64_t id = Submit(spec).sweep_id();
  StartWorker("a");
  const int status = WaitForCrash();
  ASSERT_TRUE(WIFEXITED(status)) << Logs();
  ASSERT_EQ(WEXITSTATUS(status), kCrashPointExitCode) << Logs();
  StopWorkers(SIGKILL);
  // Cancelled by its user: the pair is CANCELLED with the sweep.
  StartCoordinator();
  v1::CancelSweepRequest cancel;
  cancel.set_sweep_id(id);
  cancel.set_reason("stopped for the night");
  v1::Sweep cancelled;
  ASSERT_TRUE(users_->CancelSweep(BearerContext(user_token_).get(), cancel, &cancelled).ok());
  int64_t cancelled_trials = 0;
  for (const v1::Trial& trial : Trials(id)) cancelled_trials += trial.state() == v1::TRIAL_STATE_CANCELLED ? 1 : 0;
  ASSERT_EQ(cancelled_trials, 2) << "the pair the aim added";

  // Resubmitted: the spec's trials had all succeeded; the aim asks for the pair it had added again,
  // and runs those trials (not new seeds), then goes on to met as if never cancelled.
  const v1::SubmitSweepResponse again = Submit(spec);
  EXPECT_FALSE(again.created());
  RunToTheEnd(id);
  EXPECT_EQ(GetSweep(id).state(), v1::SWEEP_STATE_SUCCEEDED);
  EXPECT_EQ(GetSweep(id).precision(), "met") << Precision(id).ShortDebugString();
  const std::vector<v1::Trial> trials = Trials(id);
  StopCoordinator();
  // Every trial succeeded: the cancelled pair was requeued by a decision of its own, not left CANCELLED
  // beside two new ones, nor asked for again and again while the sweep sat ACTIVE.
  ExpectMetOnlyAtTheNoisyRung(trials, EventsOfKind(id, event_kind::kPrecisionDecision),
                              EventsOfKind(id, event_kind::kPrecisionComplete), /*requeued_pairs=*/1);
}

}  // namespace
}  // namespace rung::agent::precision_end_to_end
