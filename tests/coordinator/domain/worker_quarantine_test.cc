// Worker quarantine (coordinator/domain/worker_quarantine.h): which endings count against a worker,
// when a run of them quarantines it, what the quarantine gives back to the trials, and what lifts
// it. Real database files, a ManualClock (nothing sleeps).
#include "coordinator/domain/worker_quarantine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

using store_testing::Cell;
using store_testing::Submission;
using ::testing::HasSubstr;

class WorkerQuarantineTest : public store_testing::StoreTest {
 protected:
  // Leases the next trial for `worker`, marks it running and ends it FAILED with `exit_code`; the
  // trial's state afterwards.
  TrialState RunAndFail(const std::string& worker, int exit_code, int64_t* trial_id = nullptr) {
    std::optional<Lease> lease = LeaseFor(worker);
    EXPECT_TRUE(lease.has_value()) << "nothing to lease";
    if (!lease) return TrialState::kPending;
    if (trial_id != nullptr) *trial_id = lease->trial_id;
    EXPECT_TRUE(trials().MarkRunning(lease->trial_id, lease->attempt, {{"commit", "abc"}}).ok());
    AttemptEnding ending;
    ending.worker_id = worker;
    ending.outcome = TrialState::kFailed;
    ending.reason = "rung-train failed";
    ending.exit_code = exit_code;
    StatusOr<EndingAck> ack = trials().EndAttempt(lease->trial_id, lease->attempt, ending);
    EXPECT_TRUE(ack.ok()) << ack.status().ToString();
    return ack.ok() ? ack->trial_state : TrialState::kPending;
  }

  // Leases the next trial for `worker` and completes it.
  void RunAndSucceed(const std::string& worker) {
    std::optional<Lease> lease = LeaseFor(worker);
    ASSERT_TRUE(lease.has_value());
    ASSERT_OK(trials().MarkRunning(lease->trial_id, lease->attempt, {{"commit", "abc"}}));
    TrialResults results;
    results.summaries = {{"val_loss", 3.0, 10}};
    ASSERT_OK(trials().Complete(lease->trial_id, lease->attempt, results));
  }

  bool Quarantined(const std::string& worker) {
    StatusOr<WorkerRecord> record = workers().Get(worker);
    EXPECT_TRUE(record.ok()) << record.status().ToString();
    return record.ok() && record->quarantined_at.has_value();
  }

  int64_t Failures(int64_t trial_id) {
    StatusOr<TrialRecord> trial = trials().Get(trial_id);
    EXPECT_TRUE(trial.ok()) << trial.status().ToString();
    return trial.ok() ? trial->failures : -1;
  }

  int64_t SubmitCells(int count, int64_t max_retries) {
    PolicyConfig policy;
    policy.max_retries = max_retries;
    policy.max_failed = 100;
    std::vector<TrialCell> cells;
    for (int index = 0; index < count; ++index) cells.push_back(Cell("c" + std::to_string(index)));
    return Submit(Submission("s", std::move(cells), policy));
  }
};

TEST_F(WorkerQuarantineTest, OnlyTheMachinesExitCodesCountAgainstAWorker) {
  EXPECT_TRUE(domain::IsWorkerFault(TrialState::kFailed, 127));  // could not start
  EXPECT_TRUE(domain::IsWorkerFault(TrialState::kFailed, -9));   // a signal the worker did not send
  EXPECT_TRUE(domain::IsWorkerFault(TrialState::kFailed, 1));
  EXPECT_TRUE(domain::IsWorkerFault(TrialState::kFailed, 4));
  EXPECT_FALSE(domain::IsWorkerFault(TrialState::kFailed, 2));  // the trial's config
  EXPECT_FALSE(domain::IsWorkerFault(TrialState::kFailed, 3));  // the trial's training
  EXPECT_FALSE(domain::IsWorkerFault(TrialState::kFailed, 0));
  EXPECT_FALSE(domain::IsWorkerFault(TrialState::kPreempted, -15));
  EXPECT_FALSE(domain::IsWorkerFault(TrialState::kSucceeded, 0));
}

TEST_F(WorkerQuarantineTest, ATrainerThatCannotStartQuarantinesTheWorkerAndBurnsNoRetries) {
  RegisterWorker("broken");
  const int64_t sweep_id = SubmitCells(2, /*max_retries=*/1);
  int64_t first = 0, second = 0, third = 0;
  EXPECT_EQ(RunAndFail("broken", 127, &first), TrialState::kPending);
  // The worker takes the other trial next: a trial it failed for a worker's reason comes last.
  EXPECT_EQ(RunAndFail("broken", 127, &second), TrialState::kPending);
  EXPECT_NE(first, second);
  EXPECT_FALSE(Quarantined("broken"));
  // The third fault in a row (the first trial again: nothing else is left), which would have been
  // its second failure and its last: quarantined instead, and every fault of the run given back.
  EXPECT_EQ(RunAndFail("broken", 127, &third), TrialState::kPending);
  EXPECT_EQ(third, first);
  EXPECT_TRUE(Quarantined("broken"));
  EXPECT_EQ(Failures(first), 0);
  EXPECT_EQ(Failures(second), 0);
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kActive);
  ASSERT_OK_AND_ASSIGN(WorkerRecord worker, workers().Get("broken"));
  EXPECT_THAT(worker.quarantine_reason, HasSubstr("3 attempts in a row failed for reasons of the worker"));
  EXPECT_THAT(worker.quarantine_reason, HasSubstr("(exit 127)"));
  EXPECT_THAT(worker.quarantine_reason, HasSubstr("rung workers --release broken"));

  // A healthy worker then runs both trials to the end.
  RegisterWorker("healthy");
  RunAndSucceed("healthy");
  RunAndSucceed("healthy");
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kSucceeded);
}

TEST_F(WorkerQuarantineTest, TrialsThatFailedForGoodBecauseOfTheWorkerAreRequeued) {
  RegisterWorker("broken");
  const int64_t sweep_id = SubmitCells(3, /*max_retries=*/0);
  int64_t first = 0, second = 0;
  EXPECT_EQ(RunAndFail("broken", 4, &first), TrialState::kFailed);
  EXPECT_EQ(RunAndFail("broken", 4, &second), TrialState::kFailed);
  EXPECT_EQ(RunAndFail("broken", 4), TrialState::kPending);  // the third: quarantined
  EXPECT_TRUE(Quarantined("broken"));
  EXPECT_EQ(StateOf(first), TrialState::kPending);
  EXPECT_EQ(StateOf(second), TrialState::kPending);
  EXPECT_EQ(Failures(first), 0);
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kActive);
}

TEST_F(WorkerQuarantineTest, ExitOneAgainAndAgainOnTheOnlyTrialIsThatTrialsOwn) {
  RegisterWorker("w");
  SubmitCells(1, /*max_retries=*/2);
  EXPECT_EQ(RunAndFail("w", 1), TrialState::kPending);
  EXPECT_EQ(RunAndFail("w", 1), TrialState::kPending);
  EXPECT_EQ(RunAndFail("w", 1), TrialState::kFailed);  // max_retries is 2: failed for good
  EXPECT_FALSE(Quarantined("w"));
}

TEST_F(WorkerQuarantineTest, CannotStartAgainAndAgainOnTheOnlyTrialIsTheWorkers) {
  RegisterWorker("w");
  SubmitCells(1, /*max_retries=*/2);
  EXPECT_EQ(RunAndFail("w", 127), TrialState::kPending);
  EXPECT_EQ(RunAndFail("w", -11), TrialState::kPending);
  EXPECT_EQ(RunAndFail("w", 127), TrialState::kPending);
  EXPECT_TRUE(Quarantined("w"));
}

TEST_F(WorkerQuarantineTest, ATrialsOwnExitCodesNeverQuarantine) {
  RegisterWorker("w");
  SubmitCells(3, /*max_retries=*/0);
  EXPECT_EQ(RunAndFail("w", 2), TrialState::kFailed);
  EXPECT_EQ(RunAndFail("w", 3), TrialState::kFailed);
  EXPECT_EQ(RunAndFail("w", 2), TrialState::kFailed);
  EXPECT_FALSE(Quarantined("w"));
}

TEST_F(WorkerQuarantineTest, ASuccessBreaksARunOfFaults) {
  RegisterWorker("w");
  SubmitCells(4, /*max_retries=*/0);
  RunAndFail("w", 4);
  RunAndFail("w", 4);
  RunAndSucceed("w");
  RunAndFail("w", 4);
  EXPECT_FALSE(Quarantined("w"));
}

TEST_F(WorkerQuarantineTest, FaultsFurtherApartThanTheWindowDoNotQuarantine) {
  RegisterWorker("w");
  SubmitCells(4, /*max_retries=*/0);
  RunAndFail("w", 1);
  clock_.Advance(std::chrono::minutes(6));
  RunAndFail("w", 1);
  clock_.Advance(std::chrono::minutes(6));
  RunAndFail("w", 1);  // three in a row, but 12 minutes from the first to the last
  EXPECT_FALSE(Quarantined("w"));
  clock_.Advance(std::chrono::minutes(1));
  RunAndFail("w", 1);  // the newest three: 7 minutes
  EXPECT_TRUE(Quarantined("w"));
}

TEST_F(WorkerQuarantineTest, AReleaseOrARegistrationLiftsTheQuarantine) {
  RegisterWorker("w");
  SubmitCells(6, /*max_retries=*/5);
  for (int fault = 0; fault < 3; ++fault) RunAndFail("w", -9);
  ASSERT_TRUE(Quarantined("w"));

  ASSERT_OK_AND_ASSIGN(WorkerRecord released, workers().Release("w", "user:test"));
  EXPECT_FALSE(released.quarantined_at.has_value());
  EXPECT_FALSE(Quarantined("w"));
  EXPECT_EQ(workers().Release("w", "user:test").status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(workers().Release("nobody", "user:test").status().code(), StatusCode::kNotFound);

  // The faults before the release were given back: three new ones form a new run.
  RunAndFail("w", -9);
  RunAndFail("w", -9);
  EXPECT_FALSE(Quarantined("w"));
  RunAndFail("w", -9);
  ASSERT_TRUE(Quarantined("w"));
  RegisterWorker("w");  // its agent restarted
  EXPECT_FALSE(Quarantined("w"));

  EventFilter filter;
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> listed, events().List(filter));
  int quarantines = 0, releases = 0;
  for (const EventRecord& event : listed) {
    quarantines += event.kind == event_kind::kWorkerQuarantined;
    releases += event.kind == event_kind::kWorkerReleased;
  }
  EXPECT_EQ(quarantines, 2);
  EXPECT_EQ(releases, 2);
}

TEST_F(WorkerQuarantineTest, TheQuarantineSurvivesARestartOfTheCoordinator) {
  RegisterWorker("w");
  SubmitCells(3, /*max_retries=*/5);
  for (int fault = 0; fault < 3; ++fault) RunAndFail("w", 127);
  Reopen();
  EXPECT_TRUE(Quarantined("w"));
}

}  // namespace
}  // namespace rung
