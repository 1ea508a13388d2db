// tests/coordinator/store/gang_leases_test.cc: data-parallel trials leased to several workers as a
// gang (gang_leases.h) on a real database with a ManualClock: reservation, formation, release on
// timeout, all-or-nothing endings, and the waiting reason of a trial that can never fit.
#include "coordinator/domain/gang_leases.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/store/overviews.h"
#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

using store_testing::Cell;
using store_testing::kLease;
using store_testing::Submission;
using ::testing::HasSubstr;

// A data-parallel cell: `world` ranks of `rank_cpus` slots each.
TrialCell GangCell(const std::string& identity, int64_t world, int64_t rank_cpus) {
  TrialCell cell = Cell(identity, rank_cpus * world);
  cell.config["resources"] = {{"cpus", rank_cpus}, {"gpus", 0}, {"world_size", world}};
  cell.world_size = world;
  return cell;
}

class GangLeasesTest : public store_testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    gangs_ = std::make_unique<GangLeases>(*store_);
  }
  void TearDown() override {
    gangs_.reset();
    StoreTest::TearDown();
  }

  GangPoll Join(const std::string& worker, int64_t free_cpus) {
    StatusOr<GangPoll> poll = gangs_->Join(worker, free_cpus, 0);
    EXPECT_TRUE(poll.ok()) << poll.status().ToString();
    return poll.ok() ? std::move(poll).value() : GangPoll{};
  }
  GangPoll Poll(const std::string& worker) {
    StatusOr<GangPoll> poll = gangs_->Poll(worker);
    EXPECT_TRUE(poll.ok()) << poll.status().ToString();
    return poll.ok() ? std::move(poll).value() : GangPoll{};
  }
  std::vector<std::string> EventKinds(int64_t trial_id) {
    EventFilter filter;
    filter.trial_id = trial_id;
    StatusOr<std::vector<EventRecord>> listed = events().List(filter);
    EXPECT_TRUE(listed.ok());
    std::vector<std::string> kinds;
    if (listed.ok()) {
      for (const EventRecord& event : *listed) kinds.push_back(event.kind);
    }
    return kinds;
  }
  std::string StateReason(int64_t trial_id) {
    Overviews overviews(*store_);
    StatusOr<TrialOverview> overview = overviews.Trial(trial_id);
    EXPECT_TRUE(overview.ok()) << overview.status().ToString();
    return overview.ok() ? overview->state_reason : "";
  }
  // Registers two 2-slot workers and submits one 2-rank trial of 2 slots per rank; its id.
  int64_t TwoWorkersAndAGang() {
    RegisterWorker("a", 2, 0);
    RegisterWorker("b", 2, 0);
    const int64_t sweep = Submit(Submission("gang", {GangCell("g", 2, 2)}));
    StatusOr<std::vector<TrialRecord>> listed = trials().List(sweep);
    EXPECT_TRUE(listed.ok() && listed->size() == 1);
    return listed.ok() && !listed->empty() ? listed->front().id : 0;
  }
  // Forms the gang of TwoWorkersAndAGang: a is rank 0, b rank 1; returns b's lease.
  Lease Form(int64_t trial_id) {
    EXPECT_TRUE(Join("a", 2).reserved);
    GangPoll second = Join("b", 2);
    EXPECT_TRUE(second.formed);
    EXPECT_TRUE(second.lease.has_value());
    EXPECT_EQ(StateOf(trial_id), TrialState::kLeased);
    return second.lease.value_or(Lease{});
  }

  std::unique_ptr<GangLeases> gangs_;
};

TEST_F(GangLeasesTest, ATrialNoWorkerHoldsAloneIsLeasedToTwoWorkersOnceBothReserved) {
  const int64_t trial_id = TwoWorkersAndAGang();
  EXPECT_FALSE(LeaseFor("a", 2, 0).has_value());  // 4 slots fit no single worker

  const GangPoll first = Join("a", 2);
  EXPECT_TRUE(first.reserved);
  EXPECT_FALSE(first.lease.has_value());
  EXPECT_EQ(StateOf(trial_id), TrialState::kPending);
  EXPECT_TRUE(Poll("a").reserved);            // waits; takes nothing else
  EXPECT_FALSE(Poll("a").lease.has_value());

  const GangPoll second = Join("b", 2);
  ASSERT_TRUE(second.lease.has_value());
  EXPECT_TRUE(second.formed);
  EXPECT_EQ(second.lease->rank, 1);
  EXPECT_EQ(second.lease->world_size, 2);
  EXPECT_EQ(second.lease->cpus, 2);  // one rank's slots
  EXPECT_EQ(second.lease->attempt, 1);
  EXPECT_THAT(second.lease->rendezvous, HasSubstr("host-a:"));  // rank 0's worker host
  EXPECT_EQ(StateOf(trial_id), TrialState::kLeased);

  const GangPoll rank0 = Poll("a");
  ASSERT_TRUE(rank0.lease.has_value());
  EXPECT_EQ(rank0.lease->rank, 0);
  EXPECT_EQ(rank0.lease->rendezvous, second.lease->rendezvous);
  EXPECT_EQ(rank0.lease->checkpoint_dir, second.lease->checkpoint_dir);
  EXPECT_FALSE(Poll("a").lease.has_value());  // handed out once
  EXPECT_FALSE(Poll("a").reserved);
  EXPECT_THAT(EventKinds(trial_id), ::testing::Contains(std::string(event_kind::kGangReserved)));
  EXPECT_THAT(StateReason(trial_id), HasSubstr("rank 1 on worker b"));

  ASSERT_OK_AND_ASSIGN(std::vector<AttemptRecord> attempts, trials().Attempts(trial_id));
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].worker_id, "a");
  for (const char* member : {"a", "b"}) {  // `rung workers` shows the trial on both
    ASSERT_OK_AND_ASSIGN(WorkerRecord worker, workers().Get(member));
    EXPECT_EQ(worker.live_trial_ids, std::vector<int64_t>{trial_id}) << member;
  }
}

TEST_F(GangLeasesTest, APartialGangIsReleasedAfterTheFormationTimeout) {
  const int64_t trial_id = TwoWorkersAndAGang();
  EXPECT_TRUE(Join("a", 2).reserved);
  clock_.Advance(kLease - std::chrono::seconds(1));
  EXPECT_TRUE(Poll("a").reserved);
  clock_.Advance(std::chrono::seconds(2));  // 61 s after the reservation: the gang did not fill
  EXPECT_FALSE(Poll("a").reserved);
  EXPECT_EQ(StateOf(trial_id), TrialState::kPending);
  EXPECT_THAT(EventKinds(trial_id), ::testing::Contains(std::string(event_kind::kGangReleased)));
  // The freed worker reserves afresh, and the gang forms when the second joins in time.
  EXPECT_FALSE(Poll("b").reserved);  // b polls again: alive
  EXPECT_TRUE(Join("a", 2).reserved);
  EXPECT_TRUE(Join("b", 2).formed);
}

TEST_F(GangLeasesTest, AWorkerWithoutARanksRoomDoesNotReserve) {
  TwoWorkersAndAGang();
  EXPECT_FALSE(Join("a", 1).reserved);
  EXPECT_FALSE(Poll("a").reserved);
}

TEST_F(GangLeasesTest, ARankThatFailsEndsTheAttemptForEveryRankAndRequeuesTheTrial) {
  const int64_t trial_id = TwoWorkersAndAGang();
  const Lease rank1 = Form(trial_id);
  ASSERT_TRUE(Poll("a").lease.has_value());
  ASSERT_OK(trials().Heartbeat(trial_id, 1, "a"));
  ASSERT_OK(trials().Heartbeat(trial_id, 1, "b"));  // a member heartbeats its own rank

  AttemptEnding failed;
  failed.worker_id = "b";
  failed.outcome = TrialState::kFailed;
  failed.reason = "rung-train killed by signal 9";
  ASSERT_OK_AND_ASSIGN(EndingAck ack, trials().EndAttempt(trial_id, rank1.attempt, failed));
  EXPECT_EQ(ack.trial_state, TrialState::kPending);
  StatusOr<HeartbeatReply> fenced = trials().Heartbeat(trial_id, 1, "a");  // rank 0 is told to stop
  ASSERT_FALSE(fenced.ok());
  EXPECT_EQ(fenced.status().code(), StatusCode::kFailedPrecondition);
  ASSERT_OK_AND_ASSIGN(std::vector<AttemptRecord> attempts, trials().Attempts(trial_id));
  EXPECT_THAT(attempts[0].exit_reason, HasSubstr("rank 1 on worker b"));

  // The next gang resumes from the earlier attempt's folder (rank 0's checkpoints).
  EXPECT_TRUE(Join("b", 2).reserved);
  GangPoll again = Join("a", 2);
  ASSERT_TRUE(again.lease.has_value());
  EXPECT_EQ(again.lease->attempt, 2);
  EXPECT_EQ(again.lease->rank, 1);  // b reserved first this time: rank 0
  ASSERT_EQ(again.lease->resume_from.size(), 1u);
  EXPECT_EQ(again.lease->resume_from[0].checkpoint_dir, attempts[0].checkpoint_dir);
}

TEST_F(GangLeasesTest, AMemberWhoseLeaseExpiresMakesTheAttemptStaleWhileRankZeroHeartbeats) {
  const int64_t trial_id = TwoWorkersAndAGang();
  Form(trial_id);
  ASSERT_TRUE(Poll("a").lease.has_value());
  ASSERT_OK_AND_ASSIGN(std::optional<Timestamp> next, trials().NextLeaseExpiry());
  ASSERT_TRUE(next.has_value());
  for (int beat = 0; beat < 3; ++beat) {
    clock_.Advance(std::chrono::seconds(25));
    if (beat < 2) {
      ASSERT_OK(trials().Heartbeat(trial_id, 1, "a"));  // only rank 0 lives on
      ASSERT_OK_AND_ASSIGN(std::vector<AttemptKey> none, trials().ExpireLeases());
      EXPECT_TRUE(none.empty());
    }
  }
  ASSERT_OK(trials().Heartbeat(trial_id, 1, "a"));
  ASSERT_OK_AND_ASSIGN(std::vector<AttemptKey> expired, trials().ExpireLeases());  // b silent for 75 s
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(StateOf(trial_id), TrialState::kPending);
  EXPECT_FALSE(trials().Heartbeat(trial_id, 1, "a").ok());
  ASSERT_OK_AND_ASSIGN(std::vector<AttemptRecord> attempts, trials().Attempts(trial_id));
  EXPECT_EQ(attempts[0].state, TrialState::kStale);
  EXPECT_THAT(attempts[0].exit_reason, HasSubstr("worker b on rank 1"));
}

TEST_F(GangLeasesTest, RankZeroCompletesTheTrialAfterTheOtherRankFinished) {
  const int64_t trial_id = TwoWorkersAndAGang();
  const Lease rank1 = Form(trial_id);
  ASSERT_TRUE(Poll("a").lease.has_value());
  AttemptEnding done;
  done.worker_id = "b";
  done.outcome = TrialState::kSucceeded;
  ASSERT_OK_AND_ASSIGN(EndingAck ack, trials().EndAttempt(trial_id, rank1.attempt, done));
  EXPECT_EQ(ack.trial_state, TrialState::kLeased);  // rank 0 has not reported
  ASSERT_OK_AND_ASSIGN(EndingAck again, trials().EndAttempt(trial_id, rank1.attempt, done));
  EXPECT_TRUE(again.duplicate);
  // A finished rank's silence does not expire the attempt.
  clock_.Advance(kLease + std::chrono::seconds(1));
  ASSERT_OK(trials().Heartbeat(trial_id, 1, "a"));
  ASSERT_OK_AND_ASSIGN(std::vector<AttemptKey> expired, trials().ExpireLeases());
  EXPECT_TRUE(expired.empty());
  // Rank 0 reports the results (its final record's) and completes the trial.
  MetricBatch last;
  last.worker_id = "a";
  last.trial_id = trial_id;
  last.attempt = rank1.attempt;
  last.sequence = 1;
  last.results.summaries = {{"val_loss", 2.0, 10}};
  done.worker_id = "a";
  done.last_batch_sequence = 1;
  ASSERT_OK(trials().EndAttempt(trial_id, rank1.attempt, done, &last));
  EXPECT_EQ(StateOf(trial_id), TrialState::kSucceeded);
}

TEST_F(GangLeasesTest, AWorkerOutsideTheGangCannotReportAboutIt) {
  const int64_t trial_id = TwoWorkersAndAGang();
  RegisterWorker("c", 2, 0);
  Form(trial_id);
  StatusOr<HeartbeatReply> stranger = trials().Heartbeat(trial_id, 1, "c");
  ASSERT_FALSE(stranger.ok());
  EXPECT_EQ(stranger.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(GangLeasesTest, ATrialThatCanNeverFitSaysWhyInItsStateReason) {
  RegisterWorker("a", 2, 0);
  RegisterWorker("b", 2, 0);
  const int64_t sweep = Submit(Submission("big", {GangCell("g", 3, 2), Cell("small", 1)}));
  ASSERT_OK_AND_ASSIGN(std::vector<TrialRecord> listed, trials().List(sweep));
  EXPECT_FALSE(Join("a", 2).reserved);
  EXPECT_THAT(StateReason(listed[0].id), HasSubstr("only 2 of the 2 registered workers can hold one rank"));
  EXPECT_THAT(StateReason(listed[0].id), HasSubstr("6 CPU slots"));
  EXPECT_THAT(StateReason(listed[1].id), ::testing::Not(HasSubstr("no registered worker")));
  const size_t events = EventKinds(listed[0].id).size();
  Join("b", 2);  // said once
  EXPECT_EQ(EventKinds(listed[0].id).size(), events);

  RegisterWorker("c", 2, 0);  // now three workers can hold a rank each
  EXPECT_TRUE(Join("a", 2).reserved);
  EXPECT_TRUE(Join("b", 2).reserved);
  EXPECT_TRUE(Join("c", 2).formed);
  EXPECT_EQ(StateOf(listed[0].id), TrialState::kLeased);
}

TEST_F(GangLeasesTest, ATrialOneWorkerCanHoldIsNotSplitIntoAGang) {
  RegisterWorker("a", 2, 0);
  RegisterWorker("big", 8, 0);
  Submit(Submission("fits", {GangCell("g", 2, 2)}));
  EXPECT_FALSE(Join("a", 2).reserved);  // waits for the worker that holds it whole
  std::optional<Lease> whole = LeaseFor("big", 8, 0);
  ASSERT_TRUE(whole.has_value());
  EXPECT_TRUE(whole->rendezvous.empty());
  EXPECT_EQ(whole->cpus, 4);
}

}  // namespace
}  // namespace rung
