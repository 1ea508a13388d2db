// Trial lifecycle: leasing by priority and resources, heartbeats, lease expiry, attempt fencing,
// idempotent reports, retries and max_failed, pause, cancel, restart reconciliation. Time moves
// only by ManualClock; nothing sleeps.
#include "coordinator/domain/trial_lifecycle.h"

#include <mutex>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

using store_testing::Cell;
using store_testing::kLease;
using store_testing::Submission;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class TrialLifecycleTest : public store_testing::StoreTest {
 protected:
  // The trial id of the cell with `identity` in `sweep_id`.
  int64_t TrialId(int64_t sweep_id, const std::string& identity) {
    StatusOr<std::vector<TrialRecord>> listed = trials().List(sweep_id);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (!listed.ok()) return 0;
    for (const TrialRecord& trial : *listed) {
      if (trial.cell.identity == identity) return trial.id;
    }
    ADD_FAILURE() << "no trial " << identity;
    return 0;
  }

  // Leases the next trial for `worker` and marks it running; returns the lease.
  Lease StartNext(const std::string& worker) {
    std::optional<Lease> lease = LeaseFor(worker);
    EXPECT_TRUE(lease.has_value());
    if (!lease) return Lease();
    EXPECT_TRUE(trials().MarkRunning(lease->trial_id, lease->attempt, {{"commit", "abc"}}).ok());
    return *lease;
  }

  TrialResults Results(double val_loss) {
    TrialResults results;
    results.summaries = {{"val_loss", val_loss, 100}, {"tokens_per_sec", 5000, std::nullopt}};
    return results;
  }
};

TEST_F(TrialLifecycleTest, LeasesTheHighestPriorityTrialThatFitsOldestFirst) {
  RegisterWorker("w");
  PolicyConfig low;
  low.priority = 0;
  PolicyConfig high;
  high.priority = 5;
  const int64_t low_id = Submit(Submission("low", {Cell("a"), Cell("b")}, low));
  const int64_t high_id = Submit(Submission("high", {Cell("c", 4, 1), Cell("d", 1, 0)}, high));

  // c is the first high-priority trial but needs 4 cpus and a GPU: d fits.
  std::optional<Lease> first = LeaseFor("w", /*cpus=*/2, /*gpus=*/0);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->trial_id, TrialId(high_id, "d"));
  EXPECT_EQ(first->attempt, 1);
  EXPECT_EQ(first->sweep_name, "high");
  EXPECT_EQ(first->trial_index, 1);
  EXPECT_EQ(first->checkpoint_dir, (folder_ / "artifacts" / "high" / "1" / "attempt-1").string());
  EXPECT_TRUE(first->resume_from.empty());
  EXPECT_EQ(nlohmann::json::parse(first->config_json), Cell("d").config);
  EXPECT_EQ(first->lease_expires_at, clock_.Now() + kLease);
  EXPECT_EQ(StateOf(first->trial_id), TrialState::kLeased);

  std::optional<Lease> second = LeaseFor("w", 8, 1);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->trial_id, TrialId(high_id, "c"));
  EXPECT_EQ(LeaseFor("w", 8, 1)->trial_id, TrialId(low_id, "a"));
  EXPECT_EQ(LeaseFor("w", 8, 1)->trial_id, TrialId(low_id, "b"));
  EXPECT_FALSE(LeaseFor("w", 8, 1).has_value());

  ASSERT_OK_AND_ASSIGN(std::vector<AttemptRecord> attempts, trials().Attempts(first->trial_id));
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].worker_id, "w");
  EXPECT_EQ(attempts[0].state, TrialState::kLeased);
  EXPECT_THAT(TrialTransitions(first->trial_id), ElementsAre("PENDING->LEASED"));

  StatusOr<std::optional<Lease>> stranger = trials().LeaseNextTrial("stranger", 8, 1);
  EXPECT_EQ(stranger.status().code(), StatusCode::kNotFound);
}

TEST_F(TrialLifecycleTest, HeartbeatsRenewTheLease) {
  RegisterWorker("w");
  Submit(Submission("s", {Cell("a")}));
  const Lease lease = StartNext("w");

  clock_.Advance(std::chrono::seconds(50));
  ASSERT_OK_AND_ASSIGN(HeartbeatReply reply, trials().Heartbeat(lease.trial_id, lease.attempt));
  EXPECT_FALSE(reply.cancel);
  EXPECT_EQ(reply.lease_expires_at, clock_.Now() + kLease);

  clock_.Advance(std::chrono::seconds(50));  // 100 s after the lease, 50 s after the heartbeat
  ASSERT_OK_AND_ASSIGN(std::vector<AttemptKey> expired, trials().ExpireLeases());
  EXPECT_TRUE(expired.empty());
  EXPECT_EQ(StateOf(lease.trial_id), TrialState::kRunning);
  ASSERT_OK_AND_ASSIGN(std::optional<Timestamp> next, trials().NextLeaseExpiry());
  EXPECT_EQ(next, reply.lease_expires_at);

  clock_.Advance(std::chrono::seconds(11));
  ASSERT_OK_AND_ASSIGN(expired, trials().ExpireLeases());
  EXPECT_THAT(expired, ElementsAre(AttemptKey{lease.trial_id, 1}));
}

TEST_F(TrialLifecycleTest, ExpiredLeaseGoesStaleThenPendingAndTheNextAttemptResumesFromIt) {
  RegisterWorker("w1");
  RegisterWorker("w2");
  Submit(Submission("s", {Cell("a")}));
  const Lease first = StartNext("w1");

  clock_.Advance(kLease);  // expiry is inclusive
  ASSERT_OK_AND_ASSIGN(std::vector<AttemptKey> expired, trials().ExpireLeases());
  EXPECT_THAT(expired, ElementsAre(AttemptKey{first.trial_id, 1}));
  EXPECT_EQ(StateOf(first.trial_id), TrialState::kPending);
  EXPECT_THAT(TrialTransitions(first.trial_id),
              ElementsAre("PENDING->LEASED", "LEASED->RUNNING", "RUNNING->STALE", "STALE->PENDING"));

  std::optional<Lease> second = LeaseFor("w2");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->trial_id, first.trial_id);
  EXPECT_EQ(second->attempt, 2);
  EXPECT_EQ(second->checkpoint_dir, (folder_ / "artifacts" / "s" / "0" / "attempt-2").string());
  ASSERT_EQ(second->resume_from.size(), 1u);
  EXPECT_EQ(second->resume_from[0].attempt, 1);
  EXPECT_EQ(second->resume_from[0].state, TrialState::kStale);
  EXPECT_EQ(second->resume_from[0].checkpoint_dir, first.checkpoint_dir);

  ASSERT_OK_AND_ASSIGN(std::vector<AttemptRecord> attempts, trials().Attempts(first.trial_id));
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].state, TrialState::kStale);
  EXPECT_THAT(attempts[0].exit_reason, HasSubstr("expired"));
  ASSERT_TRUE(attempts[0].ended_at.has_value());
  EXPECT_EQ(*attempts[0].ended_at, clock_.Now());
  EXPECT_EQ(nlohmann::json::parse(attempts[0].provenance_json), nlohmann::json({{"commit", "abc"}}));
  EXPECT_EQ(attempts[1].state, TrialState::kLeased);
  EXPECT_EQ(attempts[1].worker_id, "w2");
}

TEST_F(TrialLifecycleTest, FencesLateReportsFromASupersededAttempt) {
  RegisterWorker("w1");
  RegisterWorker("w2");
  Submit(Submission("s", {Cell("a")}));
  const Lease first = StartNext("w1");
  clock_.Advance(kLease + std::chrono::seconds(1));
  ASSERT_OK(trials().ExpireLeases());

  // Before anyone else leased it: the attempt is over.
  StatusOr<HeartbeatReply> late = trials().Heartbeat(first.trial_id, 1);
  EXPECT_EQ(late.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(late.status().message(), HasSubstr("already ended STALE"));

  const Lease second = StartNext("w2");
  ASSERT_EQ(second.attempt, 2);
  Status complete = trials().Complete(first.trial_id, 1, Results(2.0));
  EXPECT_EQ(complete.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(complete.message(), HasSubstr("from attempt 1"));
  EXPECT_THAT(complete.message(), HasSubstr("the current attempt is 2"));
  EXPECT_THAT(complete.message(), HasSubstr("sweep 's', index 0"));
  EXPECT_EQ(trials().Heartbeat(first.trial_id, 1).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(trials().MarkRunning(first.trial_id, 1, nullptr).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(trials().Fail(first.trial_id, 1, "boom").status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(trials().Preempted(first.trial_id, 1, "sigterm").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(trials()
                .ReportBatch(store_testing::PointsBatch(first.trial_id, 1, 1, {store_testing::Point(5, "train_loss", 3.0)}))
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(trials().Heartbeat(first.trial_id, 3).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(trials().Heartbeat(first.trial_id + 100, 1).status().code(), StatusCode::kNotFound);

  // The current attempt is untouched and carries on.
  EXPECT_EQ(StateOf(first.trial_id), TrialState::kRunning);
  ASSERT_OK(trials().Complete(second.trial_id, 2, Results(2.5)));
  ASSERT_OK_AND_ASSIGN(std::vector<SummaryValue> summaries, metrics().Summaries(first.trial_id));
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[1].name, "val_loss");
  EXPECT_DOUBLE_EQ(summaries[1].value, 2.5);
}

TEST_F(TrialLifecycleTest, IdenticalDuplicateReportsAreAcknowledgedOnce) {
  RegisterWorker("w");
  Submit(Submission("s", {Cell("a"), Cell("b")}));
  const Lease lease = StartNext("w");
  ASSERT_OK(trials().MarkRunning(lease.trial_id, lease.attempt, nullptr));  // again: no change

  ASSERT_OK(trials().Complete(lease.trial_id, lease.attempt, Results(2.0)));
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> before, events().List({}));
  ASSERT_OK(trials().Complete(lease.trial_id, lease.attempt, Results(2.0)));
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> after, events().List({}));
  EXPECT_EQ(after.size(), before.size());
  EXPECT_EQ(StateOf(lease.trial_id), TrialState::kSucceeded);

  // A repeat is recognised by its last batch's sequence: its content is not applied again.
  ASSERT_OK(trials().Complete(lease.trial_id, lease.attempt, Results(1.0)));
  ASSERT_OK_AND_ASSIGN(std::vector<SummaryValue> summaries, metrics().Summaries(lease.trial_id));
  EXPECT_DOUBLE_EQ(summaries[1].value, 2.0);
  // Another ending of the attempt is no repeat: the attempt is over.
  Status failed = trials().Fail(lease.trial_id, lease.attempt, "boom").status();
  EXPECT_EQ(failed.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(failed.message(), HasSubstr("already ended SUCCEEDED"));
}

TEST_F(TrialLifecycleTest, PreemptedTrialsGoBackToPendingWithoutCountingAsFailures) {
  RegisterWorker("w");
  Submit(Submission("s", {Cell("a")}));
  const Lease first = StartNext("w");
  ASSERT_OK(trials().Preempted(first.trial_id, 1, "SIGTERM from SLURM"));
  ASSERT_OK(trials().Preempted(first.trial_id, 1, "SIGTERM from SLURM"));  // resent: acknowledged
  EXPECT_THAT(TrialTransitions(first.trial_id),
              ElementsAre("PENDING->LEASED", "LEASED->RUNNING", "RUNNING->PREEMPTED", "PREEMPTED->PENDING"));
  ASSERT_OK_AND_ASSIGN(TrialRecord trial, trials().Get(first.trial_id));
  EXPECT_EQ(trial.failures, 0);

  std::optional<Lease> second = LeaseFor("w");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->attempt, 2);
  ASSERT_EQ(second->resume_from.size(), 1u);
  EXPECT_EQ(second->resume_from[0].state, TrialState::kPreempted);
}

TEST_F(TrialLifecycleTest, FailuresAreRetriedThenCountAgainstTheSweepUntilItFails) {
  RegisterWorker("w");
  PolicyConfig policy;
  policy.max_retries = 1;
  policy.max_failed = 2;
  const int64_t sweep_id = Submit(Submission("s", {Cell("a"), Cell("b"), Cell("c")}, policy));
  const int64_t a = TrialId(sweep_id, "a");
  const int64_t b = TrialId(sweep_id, "b");

  // a: one retry, then failed for good; the sweep carries on (1 < max_failed).
  Lease lease = StartNext("w");
  ASSERT_EQ(lease.trial_id, a);
  ASSERT_OK_AND_ASSIGN(TrialState after, trials().Fail(a, 1, "exit 4: data unusable"));
  EXPECT_EQ(after, TrialState::kPending);
  lease = StartNext("w");
  ASSERT_EQ(lease.trial_id, a);
  ASSERT_EQ(lease.attempt, 2);
  ASSERT_OK_AND_ASSIGN(after, trials().Fail(a, 2, "exit 4: data unusable"));
  EXPECT_EQ(after, TrialState::kFailed);
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kActive);
  EXPECT_THAT(TrialTransitions(a), ElementsAre("PENDING->LEASED", "LEASED->RUNNING", "RUNNING->FAILED",
                                               "FAILED->PENDING", "PENDING->LEASED", "LEASED->RUNNING",
                                               "RUNNING->FAILED"));

  // b fails twice too: max_failed reached, the sweep FAILED, c is not leased.
  for (int64_t attempt = 1; attempt <= 2; ++attempt) {
    lease = StartNext("w");
    ASSERT_EQ(lease.trial_id, b);
    ASSERT_OK(trials().Fail(b, attempt, "exit 3: non-finite loss"));
  }
  EXPECT_EQ(StateOf(b), TrialState::kFailed);
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kFailed);
  EXPECT_FALSE(LeaseFor("w").has_value());
  ASSERT_OK_AND_ASSIGN(after, trials().Fail(b, 2, "exit 3: non-finite loss"));  // resent
  EXPECT_EQ(after, TrialState::kFailed);

  // Retrying one trial brings the sweep below max_failed: ACTIVE again.
  EXPECT_EQ(trials().Retry(TrialId(sweep_id, "c"), "user:test").code(), StatusCode::kFailedPrecondition);
  ASSERT_OK(trials().Retry(a, "user:test"));
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kActive);
  ASSERT_OK_AND_ASSIGN(TrialRecord retried, trials().Get(a));
  EXPECT_EQ(retried.state, TrialState::kPending);
  EXPECT_EQ(retried.failures, 0);
  ASSERT_OK_AND_ASSIGN(int64_t requeued, sweeps().RetryFailed(sweep_id, "user:test"));
  EXPECT_EQ(requeued, 1);  // b
  EXPECT_EQ(StateOf(b), TrialState::kPending);
  ASSERT_OK_AND_ASSIGN(std::optional<Lease> next, trials().LeaseNextTrial("w", 8, 0));
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->trial_id, a);
  EXPECT_EQ(next->attempt, 3);
}

TEST_F(TrialLifecycleTest, PauseStopsNewLeasesWhileRunningTrialsCarryOn) {
  RegisterWorker("w");
  const int64_t sweep_id = Submit(Submission("s", {Cell("a"), Cell("b")}));
  const Lease running = StartNext("w");
  ASSERT_OK(sweeps().Pause(sweep_id, "user:test", "maintenance"));
  ASSERT_OK(sweeps().Pause(sweep_id, "user:test"));
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kPaused);
  EXPECT_FALSE(LeaseFor("w").has_value());

  clock_.Advance(std::chrono::seconds(30));
  ASSERT_OK_AND_ASSIGN(HeartbeatReply reply, trials().Heartbeat(running.trial_id, running.attempt));
  EXPECT_FALSE(reply.cancel);
  ASSERT_OK(trials().ReportBatch(
      store_testing::PointsBatch(running.trial_id, running.attempt, 1, {store_testing::Point(1, "train_loss", 4.0)})));
  ASSERT_OK(trials().Complete(running.trial_id, running.attempt, Results(2.0)));
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kPaused);

  ASSERT_OK(sweeps().Resume(sweep_id, "user:test"));
  ASSERT_OK(sweeps().Resume(sweep_id, "user:test"));
  std::optional<Lease> next = LeaseFor("w");
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->trial_id, TrialId(sweep_id, "b"));
  ASSERT_OK(trials().Complete(next->trial_id, next->attempt, Results(2.1)));
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kSucceeded);
  EXPECT_EQ(sweeps().Pause(sweep_id, "user:test").code(), StatusCode::kFailedPrecondition);
}

TEST_F(TrialLifecycleTest, CancelEndsEveryUnfinishedTrialAndTellsItsWorker) {
  RegisterWorker("w");
  const int64_t sweep_id = Submit(Submission("s", {Cell("a"), Cell("b"), Cell("c")}));
  const Lease done = StartNext("w");
  ASSERT_OK(trials().Complete(done.trial_id, done.attempt, Results(2.0)));
  const Lease running = StartNext("w");

  ASSERT_OK(sweeps().Cancel(sweep_id, "user:test", "wrong learning rate"));
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kCancelled);
  EXPECT_EQ(StateOf(done.trial_id), TrialState::kSucceeded);
  EXPECT_EQ(StateOf(running.trial_id), TrialState::kCancelled);
  EXPECT_EQ(StateOf(TrialId(sweep_id, "c")), TrialState::kCancelled);

  ASSERT_OK_AND_ASSIGN(HeartbeatReply reply, trials().Heartbeat(running.trial_id, running.attempt));
  EXPECT_TRUE(reply.cancel);
  EXPECT_EQ(trials().Complete(running.trial_id, running.attempt, Results(2.0)).code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(LeaseFor("w").has_value());
  ASSERT_OK(sweeps().Cancel(sweep_id, "user:test"));  // again: OK
  EXPECT_EQ(sweeps().RetryFailed(sweep_id, "user:test").status().code(), StatusCode::kFailedPrecondition);

  EventFilter filter;
  filter.sweep_id = sweep_id;
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> log, events().List(filter));
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back().kind, event_kind::kSweepState);
  EXPECT_EQ(log.back().to_state, "CANCELLED");
  EXPECT_EQ(log.back().actor, "user:test");
  EXPECT_EQ(log.back().reason, "wrong learning rate");
}

TEST_F(TrialLifecycleTest, RestartReconcileGivesLeasesTheRestartGraceWhenItIsLongerThanALease) {
  RegisterWorker("w");
  Submit(Submission("s", {Cell("a")}));
  const Lease running = StartNext("w");
  Close();
  clock_.Advance(2 * kLease);  // down for two leases
  restart_grace_ = 3 * kLease;
  Open();
  ASSERT_OK_AND_ASSIGN(int64_t renewed, trials().RestartReconcile());
  EXPECT_EQ(renewed, 1);
  clock_.Advance(3 * kLease - std::chrono::seconds(1));
  ASSERT_OK_AND_ASSIGN(std::vector<AttemptKey> expired, trials().ExpireLeases());
  EXPECT_TRUE(expired.empty()) << "the lease lasts the grace, not one lease";
  EXPECT_EQ(StateOf(running.trial_id), TrialState::kRunning);
  clock_.Advance(std::chrono::seconds(2));
  ASSERT_OK_AND_ASSIGN(expired, trials().ExpireLeases());
  EXPECT_THAT(expired, ElementsAre(AttemptKey{running.trial_id, 1}));
}

TEST_F(TrialLifecycleTest, RestartReconcileGivesEveryLiveLeaseAFullFreshPeriod) {
  RegisterWorker("w");
  Submit(Submission("s", {Cell("a"), Cell("b"), Cell("c")}));
  const Lease running = StartNext("w");
  const std::optional<Lease> leased = LeaseFor("w");
  ASSERT_TRUE(leased.has_value());

  clock_.Advance(std::chrono::seconds(50));
  Close();                                    // the coordinator goes down...
  clock_.Advance(std::chrono::seconds(30));   // ...for longer than what was left of the leases
  Open();
  ASSERT_OK_AND_ASSIGN(int64_t renewed, trials().RestartReconcile());
  EXPECT_EQ(renewed, 2);
  ASSERT_OK_AND_ASSIGN(std::vector<AttemptKey> expired, trials().ExpireLeases());
  EXPECT_TRUE(expired.empty());
  EXPECT_EQ(StateOf(running.trial_id), TrialState::kRunning);
  EXPECT_EQ(StateOf(leased->trial_id), TrialState::kLeased);

  clock_.Advance(kLease - std::chrono::seconds(1));
  ASSERT_OK_AND_ASSIGN(expired, trials().ExpireLeases());
  EXPECT_TRUE(expired.empty());
  ASSERT_OK(trials().Heartbeat(running.trial_id, running.attempt));  // this worker reconnected
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_OK_AND_ASSIGN(expired, trials().ExpireLeases());
  EXPECT_THAT(expired, ElementsAre(AttemptKey{leased->trial_id, 1}));  // this one never came back

  EventFilter everything;
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> log, events().List(everything));
  bool reconciled = false;
  for (const EventRecord& event : log) reconciled |= event.kind == event_kind::kLeasesReconciled;
  EXPECT_TRUE(reconciled);
}

TEST_F(TrialLifecycleTest, ConcurrentWorkersNeverLeaseTheSameTrialTwice) {
  std::vector<TrialCell> cells;
  for (int cell = 0; cell < 24; ++cell) cells.push_back(Cell("cell-" + std::to_string(cell)));
  Submit(Submission("s", cells));
  constexpr int kWorkers = 4;
  for (int worker = 0; worker < kWorkers; ++worker) RegisterWorker("w" + std::to_string(worker));

  std::mutex mutex;
  std::vector<int64_t> leased;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int worker = 0; worker < kWorkers; ++worker) {
    threads.emplace_back([&, worker] {
      const std::string id = "w" + std::to_string(worker);
      while (true) {
        StatusOr<std::optional<Lease>> lease = trials().LeaseNextTrial(id, 8, 0);
        Status reported = lease.ok() && *lease
                              ? trials()
                                    .ReportBatch(store_testing::PointsBatch((*lease)->trial_id, (*lease)->attempt, 1,
                                                                            {store_testing::Point(1, "loss", 1.0)}))
                                    .status()
                              : lease.status();
        std::lock_guard<std::mutex> lock(mutex);
        if (!reported.ok()) errors.push_back(reported.ToString());
        if (!lease.ok() || !*lease) return;
        leased.push_back((*lease)->trial_id);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(errors, ::testing::IsEmpty());
  EXPECT_EQ(leased.size(), cells.size());
  EXPECT_EQ(std::set<int64_t>(leased.begin(), leased.end()).size(), cells.size());
}

}  // namespace
}  // namespace rung
