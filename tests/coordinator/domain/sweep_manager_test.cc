// Sweeps: submission, resubmission by identity (succeeded cells are never rerun), validation, tags.
#include "coordinator/domain/sweep_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/store/trial_cells.h"
#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

// What a trainer's final record gives the store: at least its validation loss.
TrialResults FinalResults() {
  TrialResults results;
  results.summaries = {{"val_loss", 2.0, 10}};
  return results;
}

using store_testing::Cell;
using store_testing::Submission;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class SweepManagerTest : public store_testing::StoreTest {
 protected:
  std::map<std::string, TrialRecord> TrialsByIdentity(int64_t sweep_id) {
    std::map<std::string, TrialRecord> by_identity;
    StatusOr<std::vector<TrialRecord>> listed = trials().List(sweep_id);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (listed.ok()) {
      for (const TrialRecord& trial : *listed) by_identity[trial.cell.identity] = trial;
    }
    return by_identity;
  }
};

TEST_F(SweepManagerTest, SubmitStoresEveryTrialPendingWithAnEvent) {
  PolicyConfig policy;
  policy.priority = 3;
  ASSERT_OK_AND_ASSIGN(SubmitResult result,
                       sweeps().Submit(Submission("study", {Cell("a"), Cell("b"), Cell("a")}, policy), "user:ada"));
  EXPECT_TRUE(result.created);
  EXPECT_THAT(result.added, ElementsAre("a", "b"));
  EXPECT_THAT(result.duplicates, ElementsAre("a"));

  ASSERT_OK_AND_ASSIGN(SweepRecord sweep, sweeps().Get(result.sweep_id));
  EXPECT_EQ(sweep.name, "study");
  EXPECT_EQ(sweep.state, SweepState::kActive);
  EXPECT_EQ(sweep.policy.priority, 3);
  EXPECT_EQ(sweep.baseline, nlohmann::json({{"position.variant", "rope"}}));
  EXPECT_EQ(sweep.created_at, clock_.Now());
  ASSERT_OK_AND_ASSIGN(SweepRecord by_name, sweeps().FindByName("study"));
  EXPECT_EQ(by_name.id, sweep.id);
  EXPECT_EQ(sweeps().FindByName("nope").status().code(), StatusCode::kNotFound);

  ASSERT_OK_AND_ASSIGN(std::vector<TrialRecord> listed, trials().List(result.sweep_id));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].trial_index, 0);
  EXPECT_EQ(listed[1].trial_index, 1);
  EXPECT_EQ(listed[1].state, TrialState::kPending);
  EXPECT_EQ(listed[1].priority, 3);
  EXPECT_EQ(listed[1].attempt, 0);
  EXPECT_EQ(listed[1].cell.config, Cell("b").config);
  EXPECT_EQ(listed[1].cell.n_nonembedding, 1000);
  EXPECT_EQ(listed[1].cell.assignments, Cell("b").assignments);
  ASSERT_OK_AND_ASSIGN(auto counts, sweeps().CountTrialsByState(result.sweep_id));
  EXPECT_EQ(counts, (std::map<TrialState, int64_t>{{TrialState::kPending, 2}}));

  EventFilter filter;
  filter.sweep_id = result.sweep_id;
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> log, events().List(filter));
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].kind, event_kind::kSweepSubmitted);
  EXPECT_EQ(log[0].actor, "user:ada");
  EXPECT_THAT(log[0].reason, HasSubstr("2 trials"));
}

TEST_F(SweepManagerTest, ResubmissionNeverRerunsSucceededCellsAndReportsWhatChanged) {
  RegisterWorker("w");
  PolicyConfig policy;
  policy.max_retries = 0;
  policy.max_failed = 10;
  const int64_t sweep_id = Submit(Submission("study", {Cell("a"), Cell("b"), Cell("c"), Cell("d")}, policy));
  // a SUCCEEDED, b FAILED for good, c RUNNING, d PENDING.
  std::optional<Lease> a = LeaseFor("w");
  ASSERT_OK(trials().Complete(a->trial_id, a->attempt, FinalResults()));
  std::optional<Lease> b = LeaseFor("w");
  ASSERT_OK(trials().Fail(b->trial_id, b->attempt, "exit 3"));
  std::optional<Lease> c = LeaseFor("w");
  ASSERT_OK(trials().MarkRunning(c->trial_id, c->attempt, nullptr));

  // d is gone from the new spec, e is new.
  SweepSubmission again = Submission("study", {Cell("a"), Cell("b"), Cell("c"), Cell("e")}, policy);
  again.spec_hash = "second";
  ASSERT_OK_AND_ASSIGN(SubmitResult result, sweeps().Submit(again, "user:ada"));
  EXPECT_FALSE(result.created);
  EXPECT_EQ(result.sweep_id, sweep_id);
  EXPECT_THAT(result.added, ElementsAre("e"));
  EXPECT_THAT(result.skipped_succeeded, ElementsAre("a"));
  EXPECT_THAT(result.requeued, ElementsAre("b"));
  EXPECT_THAT(result.unchanged, ElementsAre("c"));
  EXPECT_THAT(result.removed, ElementsAre("d"));
  EXPECT_THAT(result.duplicates, IsEmpty());

  std::map<std::string, TrialRecord> trials_now = TrialsByIdentity(sweep_id);
  EXPECT_EQ(trials_now["a"].state, TrialState::kSucceeded);
  EXPECT_EQ(trials_now["a"].attempt, 1);
  EXPECT_EQ(trials_now["b"].state, TrialState::kPending);
  EXPECT_EQ(trials_now["b"].failures, 0);
  EXPECT_EQ(trials_now["c"].state, TrialState::kRunning);
  EXPECT_EQ(trials_now["d"].state, TrialState::kCancelled);
  EXPECT_EQ(trials_now["e"].state, TrialState::kPending);
  EXPECT_EQ(trials_now["e"].trial_index, 4);
  ASSERT_OK_AND_ASSIGN(SweepRecord sweep, sweeps().Get(sweep_id));
  EXPECT_EQ(sweep.spec_hash, "second");
  EXPECT_EQ(sweep.state, SweepState::kActive);

  EventFilter filter;
  filter.sweep_id = sweep_id;
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> log, events().List(filter));
  bool resubmitted = false;
  for (const EventRecord& event : log) {
    if (event.kind == event_kind::kSweepResubmitted) {
      resubmitted = true;
      EXPECT_THAT(event.reason, HasSubstr("1 new, 1 succeeded (skipped), 1 requeued, 1 unchanged, 1 removed"));
    }
  }
  EXPECT_TRUE(resubmitted);
}

// A spec whose trials failed for good, fixed and resubmitted: the failed cells it no longer has are
// cancelled and stop counting against max_failed, so the sweep runs its new cells.
TEST_F(SweepManagerTest, AFixedSpecResubmittedToAFailedSweepRunsItsNewCells) {
  RegisterWorker("w");
  PolicyConfig policy;
  policy.max_retries = 0;
  policy.max_failed = 2;
  const int64_t sweep_id = Submit(Submission("study", {Cell("a"), Cell("b"), Cell("c")}, policy));
  for (int trial = 0; trial < 2; ++trial) {
    std::optional<Lease> lease = LeaseFor("w");
    ASSERT_TRUE(lease.has_value());
    ASSERT_OK(trials().Fail(lease->trial_id, lease->attempt, "bad config (exit code 2)"));
  }
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kFailed);
  EXPECT_FALSE(LeaseFor("w").has_value());

  SweepSubmission fixed = Submission("study", {Cell("d"), Cell("e"), Cell("f")}, policy);
  fixed.spec_hash = "fixed";
  ASSERT_OK_AND_ASSIGN(SubmitResult result, sweeps().Submit(fixed, "user:ada"));
  EXPECT_THAT(result.added, ElementsAre("d", "e", "f"));
  EXPECT_THAT(result.removed, ElementsAre("a", "b", "c"));
  std::map<std::string, TrialRecord> now = TrialsByIdentity(sweep_id);
  EXPECT_EQ(now["a"].state, TrialState::kCancelled);
  EXPECT_EQ(now["b"].state, TrialState::kCancelled);
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kActive);
  EXPECT_TRUE(LeaseFor("w").has_value());
}

TEST_F(SweepManagerTest, ResubmittingAFinishedSpecRunsNothing) {
  RegisterWorker("w");
  const int64_t sweep_id = Submit(Submission("study", {Cell("a"), Cell("b")}));
  for (int trial = 0; trial < 2; ++trial) {
    std::optional<Lease> lease = LeaseFor("w");
    ASSERT_OK(trials().Complete(lease->trial_id, lease->attempt, FinalResults()));
  }
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kSucceeded);
  ASSERT_OK_AND_ASSIGN(SubmitResult result, sweeps().Submit(Submission("study", {Cell("a"), Cell("b")}), "user:ada"));
  EXPECT_THAT(result.skipped_succeeded, ElementsAre("a", "b"));
  EXPECT_THAT(result.added, IsEmpty());
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kSucceeded);
  EXPECT_FALSE(LeaseFor("w").has_value());
}

TEST_F(SweepManagerTest, ResubmittingACancelledSweepRunsItsUnfinishedCellsAgain) {
  RegisterWorker("w");
  const int64_t sweep_id = Submit(Submission("study", {Cell("a"), Cell("b")}));
  std::optional<Lease> a = LeaseFor("w");
  ASSERT_OK(trials().Complete(a->trial_id, a->attempt, FinalResults()));
  ASSERT_OK(sweeps().Cancel(sweep_id, "user:ada"));
  ASSERT_OK_AND_ASSIGN(SubmitResult result, sweeps().Submit(Submission("study", {Cell("a"), Cell("b")}), "user:ada"));
  EXPECT_THAT(result.skipped_succeeded, ElementsAre("a"));
  EXPECT_THAT(result.requeued, ElementsAre("b"));
  EXPECT_EQ(SweepStateOf(sweep_id), SweepState::kActive);
  std::optional<Lease> b = LeaseFor("w");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->trial_index, 1);
}

TEST_F(SweepManagerTest, PendingCellsTakeTheResubmittedSpecsResources) {
  RegisterWorker("w");
  const int64_t sweep_id = Submit(Submission("study", {Cell("a", /*cpus=*/1)}));
  Submit(Submission("study", {Cell("a", /*cpus=*/16)}));
  std::map<std::string, TrialRecord> by_identity = TrialsByIdentity(sweep_id);
  EXPECT_EQ(by_identity["a"].cell.cpus, 16);
  EXPECT_FALSE(LeaseFor("w", /*cpus=*/8, 0).has_value());
  EXPECT_TRUE(LeaseFor("w", /*cpus=*/16, 0).has_value());
}

TEST_F(SweepManagerTest, RejectsSubmissionsItCannotStore) {
  Status bad_name = sweeps().Submit(Submission("../escape", {Cell("a")}), "user:ada").status();
  EXPECT_EQ(bad_name.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_name.message(), HasSubstr("checkpoint folder"));
  EXPECT_EQ(sweeps().Submit(Submission("empty", {}), "user:ada").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sweeps().Submit(Submission("anon", {Cell("")}), "user:ada").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sweeps().Submit(Submission("neg", {Cell("a", -1)}), "user:ada").status().code(),
            StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(std::vector<SweepRecord> listed, sweeps().List());
  EXPECT_THAT(listed, IsEmpty());
  EXPECT_EQ(sweeps().Pause(42, "user:ada").code(), StatusCode::kNotFound);
}

TEST_F(SweepManagerTest, TagsLabelASweep) {
  const int64_t sweep_id = Submit(Submission("study", {Cell("a")}));
  ASSERT_OK(sweeps().SetTag(sweep_id, "owner", "ada"));
  ASSERT_OK(sweeps().SetTag(sweep_id, "paper", "lerope"));
  ASSERT_OK(sweeps().SetTag(sweep_id, "owner", "grace"));
  ASSERT_OK_AND_ASSIGN(auto tags, sweeps().Tags(sweep_id));
  EXPECT_EQ(tags, (std::map<std::string, std::string>{{"owner", "grace"}, {"paper", "lerope"}}));
  EXPECT_EQ(sweeps().SetTag(sweep_id + 1, "owner", "ada").code(), StatusCode::kNotFound);
}

TEST_F(SweepManagerTest, SubmitsARealExpandedSpec) {
  const std::string spec =
      "name: real\n"
      "data: {source: builtin, seq_len: 32}\n"
      "model: {layers: 1, d_model: 16, heads: 2}\n"
      "train: {steps: 10, batch_size: 4}\n"
      "resources: {cpus: 2}\n"
      "policy: {max_retries: 1, max_failed: 3, priority: 7}\n"
      "sweep:\n"
      "  position.variant: [rope, nope]\n"
      "  inverse_temperature: [{form: none}, {form: log_power, xi: 0.5}]\n";
  StatusOr<ExpandedSweep> expanded = ExpandSweepSpecText(spec, "real.yaml");
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  SweepSubmission submission = MakeSubmission(*expanded, spec);
  ASSERT_EQ(submission.trials.size(), 4u);
  EXPECT_EQ(submission.policy.priority, 7);
  ASSERT_OK_AND_ASSIGN(SubmitResult result, sweeps().Submit(submission, "user:ada"));
  EXPECT_EQ(result.added.size(), 4u);
  ASSERT_OK_AND_ASSIGN(std::vector<TrialRecord> listed, trials().List(result.sweep_id));
  ASSERT_EQ(listed.size(), 4u);
  int with_xi = 0;
  for (const TrialRecord& trial : listed) {
    EXPECT_EQ(trial.cell.cpus, 2);
    EXPECT_EQ(trial.priority, 7);
    EXPECT_GT(trial.cell.n_nonembedding, 0);
    EXPECT_GT(trial.cell.flops, 0);
    EXPECT_EQ(trial.cell.identity.size(), 64u);
    if (trial.cell.xi) {
      ++with_xi;
      EXPECT_DOUBLE_EQ(*trial.cell.xi, 0.5);
    }
  }
  EXPECT_EQ(with_xi, 2);
}

}  // namespace
}  // namespace rung
