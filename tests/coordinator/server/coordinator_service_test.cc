// tests/coordinator/server/coordinator_service_test.cc
//
// The coordinator's services on the SQLite store, end to end: a real server on 127.0.0.1 port 0, a
// real database file, real gRPC clients with both tokens, and a ManualClock for leases (nothing
// sleeps to a result; lease expiry is driven by moving the clock). Covers submission (dry run,
// spec errors with file:line:col, resubmission), leasing by priority, metric batches parsed from
// the trainer's records, completion, fencing of a superseded attempt, lease expiry with resume-from,
// a restart on the same database, pause, cancel, retry and the Lease long-poll.
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <google/protobuf/util/time_util.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "proto/config_value.h"
#include "coordinator/server/grpc_server.h"
#include "coordinator/store/clock.h"
#include "proto/rung.grpc.pb.h"
#include "tests/coordinator/server/server_test_util.h"
#include "tests/coordinator/server/service_fixture.h"

namespace rung::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::ContextWithToken;
using testing::LoopbackChannel;
using testing::ScratchDir;
using testing::CoordinatorServiceTest;
using testing::FillBatch;
using testing::FinalRecord;
using testing::kLease;
using testing::ProvenanceRecord;
using testing::StepRecord;
using testing::TinySpec;

// Two errors: an unknown key (line 4, column 9) and an unknown variant (line 10, column 28).
constexpr char kBadSpec[] =
    "name: bad\n"
    "metric: {name: val_loss, goal: minimize}\n"
    "data: {source: builtin, seq_len: 16}\n"
    "model: {mlpp: gelu}\n"
    "train: {batch_size: 2, steps: 10, lr: 1.0e-3}\n"
    "ladder:\n"
    "  rungs:\n"
    "    - {layers: 1, d_model: 16, heads: 2}\n"
    "sweep:\n"
    "  position.variant: [rope, ropee]\n";

TEST_F(CoordinatorServiceTest, SubmitLeaseByPriorityReportCompleteAndRead) {
  const int64_t low = Submit(TinySpec("low", /*priority=*/0)).sweep_id();
  const v1::SubmitSweepResponse submitted = Submit(TinySpec("high", /*priority=*/5));
  const int64_t high = submitted.sweep_id();
  EXPECT_TRUE(submitted.created());
  EXPECT_EQ(submitted.trial_count(), 2);
  EXPECT_EQ(submitted.new_trial_count(), 2);
  ASSERT_THAT(submitted.cells(), SizeIs(2));
  EXPECT_EQ(submitted.cells(0).outcome(), v1::SubmittedCell::OUTCOME_ADDED);
  EXPECT_GT(submitted.cells(0).trial_id(), 0);
  Register("w1");

  // The later sweep leases first: it has the higher priority.
  std::optional<v1::TrialLease> lease = Lease("w1");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->sweep_id(), high);
  EXPECT_EQ(lease->attempt(), 1);
  EXPECT_EQ(lease->cpu_slots(), 1);
  EXPECT_THAT(lease->checkpoint_dir(), ::testing::EndsWith("high/0/attempt-1"));
  EXPECT_THAT(lease->resume_from_dirs(), SizeIs(0));
  EXPECT_EQ(lease->lease_duration().seconds(), 60);
  EXPECT_EQ(wire::FromConfigObject(lease->config())["train"]["steps"], 10);

  // Batch 1 carries the provenance: RUNNING.
  v1::ReportMetricsResponse ack;
  ASSERT_TRUE(Report("w1", *lease, 1, {ProvenanceRecord(), StepRecord(5, 2.5, 2.6)}, &ack).ok());
  EXPECT_EQ(ack.acknowledged_sequence(), 1);
  EXPECT_FALSE(ack.duplicate());
  EXPECT_EQ(GetTrial(lease->trial_id()).state(), v1::TRIAL_STATE_RUNNING);
  ASSERT_TRUE(Report("w1", *lease, 2, {StepRecord(10, 1.9, 1.75), FinalRecord(1.75)}, &ack).ok());
  // A resent batch is acknowledged again, not applied twice; a skipped one is refused.
  ASSERT_TRUE(Report("w1", *lease, 2, {StepRecord(10, 1.9, 1.75), FinalRecord(1.75)}, &ack).ok());
  EXPECT_TRUE(ack.duplicate());
  EXPECT_EQ(ack.acknowledged_sequence(), 2);
  EXPECT_EQ(Report("w1", *lease, 4, {StepRecord(12, 1.0)}).error_code(), grpc::StatusCode::OUT_OF_RANGE);

  // Completion names its last batch; batches not received are refused first.
  v1::CompleteResponse completed;
  grpc::Status early = Complete(Completion("w1", *lease, v1::OUTCOME_SUCCEEDED, 3), &completed);
  EXPECT_EQ(early.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(early.error_message(), HasSubstr("send the missing batches first"));
  const v1::CompleteRequest done = Completion("w1", *lease, v1::OUTCOME_SUCCEEDED, 2);
  ASSERT_TRUE(Complete(done, &completed).ok());
  EXPECT_EQ(completed.trial_state(), v1::TRIAL_STATE_SUCCEEDED);
  EXPECT_FALSE(completed.duplicate());
  // An identical duplicate is acknowledged.
  grpc::Status again = Complete(done, &completed);
  ASSERT_TRUE(again.ok()) << again.error_message();
  EXPECT_TRUE(completed.duplicate());
  EXPECT_EQ(completed.trial_state(), v1::TRIAL_STATE_SUCCEEDED);

  // What users see.
  std::vector<v1::Trial> succeeded = ListTrials(high, {v1::TRIAL_STATE_SUCCEEDED});
  ASSERT_THAT(succeeded, SizeIs(1));
  EXPECT_EQ(succeeded[0].trial_id(), lease->trial_id());
  EXPECT_TRUE(succeeded[0].baseline());
  EXPECT_EQ(succeeded[0].latest_step(), 10);
  EXPECT_EQ(succeeded[0].total_steps(), 10);
  EXPECT_DOUBLE_EQ(succeeded[0].final_metric(), 1.75);
  EXPECT_FALSE(succeeded[0].has_config());  // BASIC view in lists
  EXPECT_EQ(Curve(lease->trial_id(), "val_loss"), (std::map<int64_t, double>{{5, 2.6}, {10, 1.75}}));
  EXPECT_EQ(Curve(lease->trial_id(), "train_loss"), (std::map<int64_t, double>{{5, 2.5}, {10, 1.9}}));
  EXPECT_EQ(Curve(lease->trial_id(), "tokens"), (std::map<int64_t, double>{{5, 160}, {10, 320}}));

  const v1::Trial trial = GetTrial(lease->trial_id());
  EXPECT_FALSE(trial.config().entries().empty());
  ASSERT_THAT(trial.attempts(), SizeIs(1));
  EXPECT_EQ(trial.attempts(0).worker_id(), "w1");
  EXPECT_EQ(trial.attempts(0).state(), v1::TRIAL_STATE_SUCCEEDED);
  EXPECT_EQ(trial.attempts(0).metric_batches(), 2);
  EXPECT_EQ(trial.attempts(0).provenance().commit(), "abc123");

  v1::GetLearnedParametersRequest learned_request;
  learned_request.add_trial_ids(lease->trial_id());
  v1::GetLearnedParametersResponse learned;
  ASSERT_TRUE(users_->GetLearnedParameters(ContextWithToken(user_token_).get(), learned_request, &learned).ok());
  std::map<std::string, v1::LearnedParameter> by_name;
  for (const v1::LearnedParameter& parameter : learned.parameters()) by_name[parameter.tensor().name()] = parameter;
  ASSERT_TRUE(by_name.count("positional.lerope_log_scale"));
  const v1::LearnedParameter& scale = by_name["positional.lerope_log_scale"];
  EXPECT_EQ(scale.kind(), v1::PARAMETER_KIND_LEARNED);
  EXPECT_EQ(scale.step(), 10);
  EXPECT_THAT(scale.tensor().shape(), ElementsAre(2, 2));
  EXPECT_THAT(scale.tensor().values(), ElementsAre(0.1, 0.2, 0.3, 0.4));
  ASSERT_TRUE(by_name.count("frequencies.layer_0"));
  EXPECT_EQ(by_name["frequencies.layer_0"].kind(), v1::PARAMETER_KIND_DIAGNOSTIC);
  ASSERT_TRUE(by_name.count("val_loss_per_position"));
  EXPECT_THAT(by_name["val_loss_per_position"].tensor().values(), ElementsAre(2.0, 1.5, 1.2));

  v1::Sweep sweep = GetSweep(high);
  EXPECT_EQ(sweep.counts().succeeded(), 1);
  EXPECT_EQ(sweep.counts().pending(), 1);
  EXPECT_EQ(sweep.counts().total(), 2);
  EXPECT_EQ(sweep.spec_file_name(), "tiny.yaml");
  EXPECT_EQ(sweep.metric_name(), "val_loss");
  EXPECT_EQ(sweep.priority(), 5);
  EXPECT_FALSE(sweep.spec_text().empty());
  EXPECT_GT(sweep.finished_flops(), 0);

  // The second trial of the high sweep, then the low sweep.
  std::optional<v1::TrialLease> second = Lease("w1");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->sweep_id(), high);
  RunToSuccess("w1", *second);
  EXPECT_EQ(GetSweep(high).state(), v1::SWEEP_STATE_SUCCEEDED);
  std::optional<v1::TrialLease> third = Lease("w1");
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->sweep_id(), low);

  // ListWorkers reads the store: the worker, its details and the trial it holds.
  v1::ListWorkersResponse workers;
  ASSERT_TRUE(users_->ListWorkers(ContextWithToken(user_token_).get(), v1::ListWorkersRequest(), &workers).ok());
  ASSERT_THAT(workers.workers(), SizeIs(1));
  EXPECT_EQ(workers.workers(0).host(), "host-w1");
  EXPECT_EQ(workers.workers(0).build_commit(), "abc123");
  EXPECT_EQ(workers.workers(0).labels().at("rack"), "a");
  EXPECT_THAT(workers.workers(0).running_trial_ids(), ElementsAre(third->trial_id()));
}

TEST_F(CoordinatorServiceTest, ABadSpecIsInvalidArgumentWithEveryLocationAndWritesNothing) {
  v1::SubmitSweepResponse response;
  grpc::ClientContext* context = nullptr;
  std::unique_ptr<grpc::ClientContext> owned = ContextWithToken(user_token_);
  context = owned.get();
  grpc::Status status = TrySubmit(kBadSpec, "bad.yaml", &response, /*dry_run=*/false, context);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("bad.yaml:4:9: error: model.mlpp: unknown key"));
  EXPECT_THAT(status.error_message(), HasSubstr("bad.yaml:10:28"));
  EXPECT_THAT(status.error_message(), HasSubstr("\n"));  // one error per line

  const auto& trailers = context->GetServerTrailingMetadata();
  auto found = trailers.find("rung-spec-diagnostics-bin");
  ASSERT_NE(found, trailers.end());
  v1::SpecDiagnostics diagnostics;
  ASSERT_TRUE(diagnostics.ParseFromString(std::string(found->second.data(), found->second.size())));
  ASSERT_THAT(diagnostics.diagnostics(), SizeIs(2));
  EXPECT_EQ(diagnostics.diagnostics(0).location(), "bad.yaml:4:9");
  EXPECT_EQ(diagnostics.diagnostics(0).path(), "model.mlpp");
  EXPECT_EQ(diagnostics.diagnostics(1).location(), "bad.yaml:10:28");

  EXPECT_THAT(ListSweeps(), SizeIs(0));
}

TEST_F(CoordinatorServiceTest, ADryRunAnswersTheTableAndStoresNothing) {
  const v1::SubmitSweepResponse preview = Submit(TinySpec("tiny"), /*dry_run=*/true);
  EXPECT_EQ(preview.sweep_id(), 0);
  EXPECT_EQ(preview.trial_count(), 2);
  ASSERT_THAT(preview.trials(), SizeIs(2));
  EXPECT_EQ(preview.trials(0).rung_label(), "L1-d16");
  EXPECT_TRUE(preview.trials(0).baseline());
  EXPECT_GT(preview.trials(0).flops(), 0);
  EXPECT_EQ(preview.cells(0).outcome(), v1::SubmittedCell::OUTCOME_ADDED);
  EXPECT_EQ(preview.cells(0).trial_id(), 0);
  EXPECT_THAT(ListSweeps(), SizeIs(0));
}

TEST_F(CoordinatorServiceTest, ResubmissionReportsSkippedUnchangedAndChangedCells) {
  const int64_t sweep_id = Submit(TinySpec("tiny")).sweep_id();
  Register("w1");
  std::optional<v1::TrialLease> lease = Lease("w1");
  ASSERT_TRUE(lease.has_value());
  RunToSuccess("w1", *lease);

  const v1::SubmitSweepResponse same = Submit(TinySpec("tiny"));
  EXPECT_EQ(same.sweep_id(), sweep_id);
  EXPECT_FALSE(same.created());
  EXPECT_EQ(same.new_trial_count(), 0);
  ASSERT_THAT(same.cells(), SizeIs(2));
  EXPECT_EQ(same.cells(0).outcome(), v1::SubmittedCell::OUTCOME_SKIPPED);
  EXPECT_EQ(same.cells(1).outcome(), v1::SubmittedCell::OUTCOME_UNCHANGED);

  // A dry run of a changed spec says what would change, and changes nothing.
  const v1::SubmitSweepResponse preview = Submit(TinySpec("tiny", 0, "2.0e-3"), /*dry_run=*/true);
  EXPECT_EQ(preview.new_trial_count(), 2);
  EXPECT_THAT(ListTrials(sweep_id), SizeIs(2));

  const v1::SubmitSweepResponse changed = Submit(TinySpec("tiny", 0, "2.0e-3"));
  EXPECT_EQ(changed.new_trial_count(), 2);
  ASSERT_THAT(changed.cells(), SizeIs(4));  // two added, two removed
  EXPECT_EQ(changed.cells(0).outcome(), v1::SubmittedCell::OUTCOME_ADDED);
  EXPECT_THAT(changed.cells(0).differences(), ::testing::Contains(HasSubstr("train.lr: 0.001 -> 0.002")));
  EXPECT_FALSE(changed.cells(0).replaces_identity().empty());
  EXPECT_EQ(changed.cells(2).outcome(), v1::SubmittedCell::OUTCOME_REMOVED);
  EXPECT_EQ(changed.cells(2).index(), -1);
  // The removed finished trial keeps its results; the removed pending one is cancelled.
  EXPECT_THAT(ListTrials(sweep_id, {v1::TRIAL_STATE_SUCCEEDED}), SizeIs(1));
  EXPECT_THAT(ListTrials(sweep_id, {v1::TRIAL_STATE_CANCELLED}), SizeIs(1));
  EXPECT_THAT(ListTrials(sweep_id, {v1::TRIAL_STATE_PENDING}), SizeIs(2));
}

TEST_F(CoordinatorServiceTest, LeaseExpiryOnTheClockRequeuesWithTheNextAttemptAndResumeFrom) {
  std::optional<v1::TrialLease> first = OneTrialLeasedToW1AfterAReport();
  ASSERT_TRUE(first.has_value());

  clock_.Advance(kLease - std::chrono::seconds(1));
  EXPECT_EQ(ExpireDueLeases(), 0u);
  clock_.Advance(std::chrono::seconds(2));
  EXPECT_EQ(ExpireDueLeases(), 0u) << "the reaper expired it as the clock moved past the lease";
  const v1::Trial requeued = GetTrial(first->trial_id());
  EXPECT_EQ(requeued.state(), v1::TRIAL_STATE_PENDING);
  EXPECT_THAT(requeued.state_reason(), HasSubstr("requeued after attempt 1 ended STALE"));
  ASSERT_THAT(requeued.attempts(), SizeIs(1));
  EXPECT_EQ(requeued.attempts(0).state(), v1::TRIAL_STATE_STALE);
  EXPECT_THAT(requeued.attempts(0).exit_reason(), HasSubstr("expired without a heartbeat"));

  std::optional<v1::TrialLease> second = Lease("w2");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->trial_id(), first->trial_id());
  EXPECT_EQ(second->attempt(), 2);
  EXPECT_THAT(second->checkpoint_dir(), ::testing::EndsWith("attempt-2"));
  EXPECT_THAT(second->resume_from_dirs(), ElementsAre(first->checkpoint_dir()));
}

TEST_F(CoordinatorServiceTest, ALateReportFromASupersededAttemptIsFencedOff) {
  std::optional<v1::TrialLease> first = OneTrialLeasedToW1AfterAReport();
  ASSERT_TRUE(first.has_value());

  // w1 goes silent past its lease; w2's Lease call expires it first and takes the trial over.
  clock_.Advance(kLease + std::chrono::seconds(1));
  std::optional<v1::TrialLease> second = Lease("w2");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->attempt(), 2);

  grpc::Status late = Report("w1", *first, 2, {StepRecord(10, 1.5)});
  EXPECT_EQ(late.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(late.error_message(), HasSubstr("from attempt 1 rejected"));
  EXPECT_THAT(late.error_message(), HasSubstr("attempt 2 superseded it"));
  ExpectFencedOff("w1", *first);
  // A batch attempt 1 had committed is still acknowledged (its answer may have been lost).
  v1::ReportMetricsResponse ack;
  ASSERT_TRUE(Report("w1", *first, 1, {ProvenanceRecord(), StepRecord(5, 2.5)}, &ack).ok());
  EXPECT_TRUE(ack.duplicate());

  // The new attempt goes on; the curve takes each step from the newest attempt.
  RunToSuccess("w2", *second);
  EXPECT_EQ(Curve(first->trial_id(), "train_loss"), (std::map<int64_t, double>{{5, 2.5}, {10, 1.9}}));
}

TEST_F(CoordinatorServiceTest, ARestartKeepsEveryAcknowledgedWriteAndRenewsLiveLeases) {
  Submit(TinySpec("tiny"));
  Register("w1", /*cpus=*/2);
  std::optional<v1::TrialLease> done = Lease("w1", 2);
  std::optional<v1::TrialLease> running = Lease("w1", 1);
  ASSERT_TRUE(done.has_value() && running.has_value());
  RunToSuccess("w1", *done);
  ASSERT_TRUE(Report("w1", *running, 1, {ProvenanceRecord(), StepRecord(5, 2.5, 2.6)}).ok());

  clock_.Advance(std::chrono::seconds(50));
  RestartServer();

  // 80 s after the lease, 30 s after the restart: the running trial's lease got a fresh period.
  clock_.Advance(std::chrono::seconds(30));
  Register("w2");
  EXPECT_FALSE(Lease("w2").has_value());
  EXPECT_EQ(ExpireDueLeases(), 0u);
  v1::HeartbeatResponse beat;
  grpc::Status status = Heartbeat("w1", *running, &beat);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(beat.action(), v1::HeartbeatResponse::ACTION_CONTINUE);
  EXPECT_EQ(google::protobuf::util::TimeUtil::TimestampToMicroseconds(beat.lease_expires_at()),
            ToUnixMicros(clock_.Now() + kLease));

  // Every acknowledged state and metric is there.
  EXPECT_EQ(GetTrial(done->trial_id()).state(), v1::TRIAL_STATE_SUCCEEDED);
  EXPECT_EQ(GetTrial(running->trial_id()).state(), v1::TRIAL_STATE_RUNNING);
  EXPECT_EQ(Curve(done->trial_id(), "val_loss"), (std::map<int64_t, double>{{5, 2.6}, {10, 1.75}}));
  EXPECT_EQ(Curve(running->trial_id(), "val_loss"), (std::map<int64_t, double>{{5, 2.6}}));
  v1::ReportMetricsResponse ack;
  ASSERT_TRUE(Report("w1", *running, 1, {ProvenanceRecord(), StepRecord(5, 2.5, 2.6)}, &ack).ok());
  EXPECT_TRUE(ack.duplicate());
  ASSERT_TRUE(Report("w1", *running, 2, {StepRecord(10, 1.9, 1.8)}, &ack).ok());
  EXPECT_FALSE(ack.duplicate());
  v1::ListWorkersResponse workers;
  ASSERT_TRUE(users_->ListWorkers(ContextWithToken(user_token_).get(), v1::ListWorkersRequest(), &workers).ok());
  EXPECT_THAT(workers.workers(), SizeIs(2));
}

TEST_F(CoordinatorServiceTest, PauseStopsLeasesAndResumeBringsThemBack) {
  const int64_t sweep_id = Submit(TinySpec("tiny")).sweep_id();
  Register("w1");
  v1::PauseSweepRequest pause;
  pause.set_sweep_id(sweep_id);
  pause.set_reason("cluster maintenance");
  v1::Sweep sweep;
  ASSERT_TRUE(users_->PauseSweep(ContextWithToken(user_token_).get(), pause, &sweep).ok());
  EXPECT_EQ(sweep.state(), v1::SWEEP_STATE_PAUSED);
  EXPECT_EQ(sweep.state_reason(), "cluster maintenance");
  EXPECT_FALSE(Lease("w1").has_value());

  v1::ResumeSweepRequest resume;
  resume.set_sweep_id(sweep_id);
  ASSERT_TRUE(users_->ResumeSweep(ContextWithToken(user_token_).get(), resume, &sweep).ok());
  EXPECT_EQ(sweep.state(), v1::SWEEP_STATE_ACTIVE);
  EXPECT_TRUE(Lease("w1").has_value());
}

TEST_F(CoordinatorServiceTest, CancelAnswersCancelOnTheNextHeartbeat) {
  const int64_t sweep_id = Submit(TinySpec("tiny")).sweep_id();
  Register("w1");
  std::optional<v1::TrialLease> lease = Lease("w1");
  ASSERT_TRUE(lease.has_value());
  v1::HeartbeatResponse beat;
  ASSERT_TRUE(Heartbeat("w1", *lease, &beat).ok());
  EXPECT_EQ(beat.action(), v1::HeartbeatResponse::ACTION_CONTINUE);

  v1::CancelSweepRequest cancel;
  cancel.set_sweep_id(sweep_id);
  cancel.set_reason("wrong learning rate");
  v1::Sweep sweep;
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + user_token_);
  context.AddMetadata("rung-user", "ada");
  context.AddMetadata(wire::kProtocolVersionMetadata, std::to_string(wire::kProtocolVersion));
  ASSERT_TRUE(users_->CancelSweep(&context, cancel, &sweep).ok());
  EXPECT_EQ(sweep.state(), v1::SWEEP_STATE_CANCELLED);
  EXPECT_EQ(sweep.counts().cancelled(), 2);

  ASSERT_TRUE(Heartbeat("w1", *lease, &beat).ok());
  EXPECT_EQ(beat.action(), v1::HeartbeatResponse::ACTION_CANCEL);
  EXPECT_EQ(beat.reason(), "wrong learning rate");
  v1::CompleteResponse completed;
  EXPECT_EQ(Complete(Completion("w1", *lease, v1::OUTCOME_SUCCEEDED, 0), &completed).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_FALSE(Lease("w1").has_value());
}

TEST_F(CoordinatorServiceTest, FailuresRetryThenFailForGoodAndRetryTrialsRequeues) {
  const int64_t sweep_id = Submit(TinySpec("tiny", 0, "1.0e-3", "[rope]")).sweep_id();
  Register("w1");
  std::optional<v1::TrialLease> first = Lease("w1");
  ASSERT_TRUE(first.has_value());
  v1::CompleteResponse completed;
  ASSERT_TRUE(Complete(Completion("w1", *first, v1::OUTCOME_FAILED, 0), &completed).ok());
  EXPECT_EQ(completed.trial_state(), v1::TRIAL_STATE_PENDING);  // policy.max_retries is 1
  std::optional<v1::TrialLease> second = Lease("w1");
  ASSERT_TRUE(second.has_value());
  ASSERT_TRUE(Complete(Completion("w1", *second, v1::OUTCOME_FAILED, 0), &completed).ok());
  EXPECT_EQ(completed.trial_state(), v1::TRIAL_STATE_FAILED);
  const v1::Trial failed = GetTrial(first->trial_id());
  EXPECT_THAT(failed.state_reason(), HasSubstr("non-finite training loss at step 3 (exit code 3)"));
  EXPECT_EQ(failed.failures(), 2);

  v1::RetryTrialsRequest retry;
  retry.set_sweep_id(sweep_id);
  v1::RetryTrialsResponse retried;
  ASSERT_TRUE(users_->RetryTrials(ContextWithToken(user_token_).get(), retry, &retried).ok());
  EXPECT_THAT(retried.retried_trial_ids(), ElementsAre(first->trial_id()));
  EXPECT_EQ(retried.sweep().state(), v1::SWEEP_STATE_ACTIVE);
  std::optional<v1::TrialLease> third = Lease("w1");
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->attempt(), 3);
  EXPECT_THAT(third->resume_from_dirs(), SizeIs(2));

  // A trial that is not FAILED cannot be retried, and nothing changes.
  retry.add_trial_ids(first->trial_id());
  grpc::Status refused = users_->RetryTrials(ContextWithToken(user_token_).get(), retry, &retried);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(CoordinatorServiceTest, PreemptionRequeuesAndTheNextAttemptResumes) {
  Submit(TinySpec("tiny", 0, "1.0e-3", "[rope]"));
  Register("w1");
  std::optional<v1::TrialLease> first = Lease("w1");
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(Report("w1", *first, 1, {ProvenanceRecord(), StepRecord(5, 2.5)}).ok());
  v1::CompleteResponse completed;
  ASSERT_TRUE(Complete(Completion("w1", *first, v1::OUTCOME_PREEMPTED, 1), &completed).ok());
  EXPECT_EQ(completed.trial_state(), v1::TRIAL_STATE_PENDING);
  std::optional<v1::TrialLease> second = Lease("w1");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->attempt(), 2);
  EXPECT_THAT(second->resume_from_dirs(), ElementsAre(first->checkpoint_dir()));
}

// Complete ends an attempt and does nothing else: its batches came by ReportMetrics, and the
// worker's next trial comes by Lease.
TEST_F(CoordinatorServiceTest, CompleteEndsTheAttemptItsBatchesAlreadyReported) {
  Submit(TinySpec("tiny", 0, "1.0e-3", "[rope, lerope]"));
  v1::RegisterRequest registration;
  registration.set_worker_id("w1");
  registration.set_host("host-w1");
  registration.set_cpu_slots(1);
  registration.set_build_commit("abc123");
  registration.set_protocol_version(wire::kProtocolVersion);
  v1::RegisterResponse registered;
  ASSERT_TRUE(workers_->Register(ContextWithToken(worker_token_).get(), registration, &registered).ok());
  EXPECT_EQ(registered.server().protocol_version(), wire::kProtocolVersion);
  std::optional<v1::TrialLease> first = Lease("w1");
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(Report("w1", *first, 1, {ProvenanceRecord(), StepRecord(5, 2.5, 2.6), StepRecord(10, 1.9, 1.75),
                                       FinalRecord(1.75)})
                  .ok());

  v1::CompleteResponse completed;
  v1::CompleteRequest done = Completion("w1", *first, v1::OUTCOME_SUCCEEDED, 1);
  grpc::Status status = Complete(done, &completed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(completed.trial_state(), v1::TRIAL_STATE_SUCCEEDED);
  EXPECT_FALSE(completed.duplicate());
  EXPECT_EQ(Curve(first->trial_id(), "val_loss"), (std::map<int64_t, double>{{5, 2.6}, {10, 1.75}}));
  const v1::Trial trial = GetTrial(first->trial_id());
  ASSERT_THAT(trial.attempts(), SizeIs(1));
  EXPECT_EQ(trial.attempts(0).metric_batches(), 1);
  EXPECT_TRUE(trial.attempts(0).has_provenance());
  EXPECT_EQ(GetTrial(2).state(), v1::TRIAL_STATE_PENDING) << "the other trial waits for a Lease";

  // Resent (its answer lost): acknowledged as a duplicate, nothing applied twice.
  ASSERT_TRUE(Complete(done, &completed).ok());
  EXPECT_TRUE(completed.duplicate());
  EXPECT_EQ(completed.trial_state(), v1::TRIAL_STATE_SUCCEEDED);
}

// The last batch comes before Complete now: its final evaluation may trip the divergence rule, but a
// trial whose final record arrived has trained to the end and is not stopped; without one it is.
TEST_F(CoordinatorServiceTest, AnEarlyStopSparesATrialWhoseFinalRecordArrived) {
  Submit(TinySpec("rising") + "early_stop:\n  divergence: {factor: 1.5}\n");
  Register("w1", 2);
  std::optional<v1::TrialLease> finished = Lease("w1");
  std::optional<v1::TrialLease> rising = Lease("w1");
  ASSERT_TRUE(finished.has_value() && rising.has_value());
  for (const v1::TrialLease& lease : {*finished, *rising}) {
    ASSERT_TRUE(Report("w1", lease, 1, {ProvenanceRecord(), StepRecord(5, 2.5, 1.0)}).ok());
  }
  // Both evaluations at step 10 pass 1.5 x the first; one batch also holds the final record.
  ASSERT_TRUE(Report("w1", *finished, 2, {StepRecord(10, 2.4, 2.0), FinalRecord(2.0)}).ok());
  ASSERT_TRUE(Report("w1", *rising, 2, {StepRecord(10, 2.4, 2.0)}).ok());
  EXPECT_EQ(GetTrial(finished->trial_id()).state(), v1::TRIAL_STATE_RUNNING) << "trained to the end: not stopped";
  const v1::Trial stopped = GetTrial(rising->trial_id());
  EXPECT_EQ(stopped.state(), v1::TRIAL_STATE_EARLY_STOPPED);
  EXPECT_EQ(stopped.early_stop(), v1::EARLY_STOP_DIVERGENCE);
  v1::CompleteResponse completed;
  ASSERT_TRUE(Complete(Completion("w1", *finished, v1::OUTCOME_SUCCEEDED, 2), &completed).ok());
  EXPECT_EQ(completed.trial_state(), v1::TRIAL_STATE_SUCCEEDED);
}

TEST_F(CoordinatorServiceTest, ACompleteThatNamesABatchNotReceivedWritesNothing) {
  Submit(TinySpec("tiny", 0, "1.0e-3", "[rope, lerope]"));
  Register("w1");
  std::optional<v1::TrialLease> lease = Lease("w1");
  ASSERT_TRUE(lease.has_value());
  ASSERT_TRUE(Report("w1", *lease, 1, {ProvenanceRecord(), StepRecord(5, 2.5, 2.6)}).ok());

  // Batch 2 named last, only batch 1 received: refused, the ending not written.
  v1::CompleteRequest early = Completion("w1", *lease, v1::OUTCOME_SUCCEEDED, 2);
  v1::CompleteResponse completed;
  const grpc::Status refused = Complete(early, &completed);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(refused.error_message(), HasSubstr("send the missing batches first"));
  EXPECT_EQ(GetTrial(lease->trial_id()).state(), v1::TRIAL_STATE_RUNNING);
  // From another worker: FAILED_PRECONDITION, as for any report.
  Register("w2");
  v1::CompleteRequest foreign = Completion("w2", *lease, v1::OUTCOME_SUCCEEDED, 1);
  EXPECT_EQ(Complete(foreign, &completed).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(GetTrial(lease->trial_id()).state(), v1::TRIAL_STATE_RUNNING);
}

// Waits until `count` Lease calls block on the work notifier (they are in their long-poll).
void AwaitLeaseWaiters(Coordinator& coordinator, int count) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (coordinator.lease_waiters() < count && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  ASSERT_GE(coordinator.lease_waiters(), count);
}

TEST_F(CoordinatorServiceTest, ALongPollLeaseWakesWhenATrialIsSubmitted) {
  Register("w1");
  const auto started = std::chrono::steady_clock::now();
  std::future<v1::LeaseResponse> waiting = std::async(std::launch::async, [&] {
    v1::LeaseResponse response;
    grpc::Status status = TryLease("w1", &response, 1, std::chrono::seconds(8));
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  });
  AwaitLeaseWaiters(server_->coordinator(), 1);
  Submit(TinySpec("tiny"));
  const v1::LeaseResponse response = waiting.get();
  EXPECT_TRUE(response.has_lease());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(8));
}

TEST_F(CoordinatorServiceTest, ALongPollLeaseWhoseWorkerWentAwayLeasesNothingWhenWorkArrives) {
  // The worker stopped while its Lease waited: work that arrives before the coordinator's next check
  // of the call must not go to it (the trial would sit leased to nobody until its lease expired).
  Register("w1");
  std::unique_ptr<grpc::ClientContext> context = ContextWithToken(worker_token_);
  std::future<grpc::Status> waiting = std::async(std::launch::async, [&] {
    v1::LeaseRequest request;
    request.set_worker_id("w1");
    request.mutable_free()->set_cpu_slots(1);
    *request.mutable_wait() = google::protobuf::util::TimeUtil::MillisecondsToDuration(8000);
    v1::LeaseResponse response;
    return workers_->Lease(context.get(), request, &response);
  });
  AwaitLeaseWaiters(server_->coordinator(), 1);
  context->TryCancel();
  EXPECT_EQ(waiting.get().error_code(), grpc::StatusCode::CANCELLED);
  Submit(TinySpec("tiny"));  // wakes the server side of the cancelled call at once
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server_->coordinator().lease_waiters() > 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(server_->coordinator().lease_waiters(), 0);
  EXPECT_EQ(GetTrial(1).state(), v1::TRIAL_STATE_PENDING);
  std::optional<v1::TrialLease> lease = Lease("w1");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->trial_id(), 1);
}

TEST_F(CoordinatorServiceTest, ALongPollLeaseAnswersUnavailableAtShutdown) {
  Register("w1");
  std::future<grpc::Status> waiting = std::async(std::launch::async, [&] {
    v1::LeaseResponse response;
    return TryLease("w1", &response, 1, std::chrono::seconds(8));
  });
  AwaitLeaseWaiters(server_->coordinator(), 1);
  const auto started = std::chrono::steady_clock::now();
  server_->Shutdown();
  const grpc::Status status = waiting.get();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(4));
}

TEST_F(CoordinatorServiceTest, TheReaperThreadExpiresLeasesWhenTheClockPassesThem) {
  Submit(TinySpec("tiny", 0, "1.0e-3", "[rope]"));
  Register("w1");
  std::optional<v1::TrialLease> lease = Lease("w1");
  ASSERT_TRUE(lease.has_value());
  Coordinator& coordinator = server_->coordinator();
  const uint64_t seen = coordinator.signals().changes().generation();
  clock_.Advance(kLease + std::chrono::seconds(1));
  coordinator.reaper().Poke();  // a ManualClock does not wake the thread by itself
  coordinator.signals().changes().WaitForChange(seen, std::chrono::steady_clock::now() + std::chrono::seconds(10));
  EXPECT_EQ(GetTrial(lease->trial_id()).state(), v1::TRIAL_STATE_PENDING);
}

TEST_F(CoordinatorServiceTest, StreamSweepUpdatesSendsASnapshotThenChangesUntilTheSweepFinishes) {
  const int64_t sweep_id = Submit(TinySpec("tiny", 0, "1.0e-3", "[rope]")).sweep_id();
  Register("w1");
  v1::StreamSweepUpdatesRequest request;
  request.set_sweep_id(sweep_id);
  std::unique_ptr<grpc::ClientContext> context = ContextWithToken(user_token_);
  std::unique_ptr<grpc::ClientReader<v1::SweepUpdate>> stream = users_->StreamSweepUpdates(context.get(), request);
  v1::SweepUpdate update;
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_TRUE(update.snapshot());
  ASSERT_THAT(update.trials(), SizeIs(1));
  EXPECT_EQ(update.trials(0).state(), v1::TRIAL_STATE_PENDING);

  std::optional<v1::TrialLease> lease = Lease("w1");
  ASSERT_TRUE(lease.has_value());
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_FALSE(update.snapshot());
  ASSERT_THAT(update.trials(), SizeIs(1));
  EXPECT_EQ(update.trials(0).state(), v1::TRIAL_STATE_LEASED);
  EXPECT_EQ(update.trials(0).worker_id(), "w1");

  RunToSuccess("w1", *lease);
  std::vector<v1::SweepState> states;
  while (stream->Read(&update)) states.push_back(update.sweep().state());
  ASSERT_FALSE(states.empty());
  EXPECT_EQ(states.back(), v1::SWEEP_STATE_SUCCEEDED);
  grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(CoordinatorServiceTest, GetLogsReturnsRecordsStderrAndEvents) {
  std::optional<v1::TrialLease> lease = FirstTrialSucceeded(TinySpec("tiny", 0, "1.0e-3", "[rope]"));
  ASSERT_TRUE(lease.has_value());

  auto read_logs = [&](const v1::GetLogsRequest& request) {
    std::unique_ptr<grpc::ClientContext> context = ContextWithToken(user_token_);
    std::unique_ptr<grpc::ClientReader<v1::LogEntry>> stream = users_->GetLogs(context.get(), request);
    std::vector<v1::LogEntry> entries;
    v1::LogEntry entry;
    while (stream->Read(&entry)) entries.push_back(entry);
    grpc::Status status = stream->Finish();
    EXPECT_TRUE(status.ok()) << status.error_message();
    return entries;
  };
  v1::GetLogsRequest request;
  request.set_trial_id(lease->trial_id());
  request.set_follow(true);  // the trial already finished: ends after its lines
  std::map<v1::LogEntry::Source, int> by_source;
  for (const v1::LogEntry& entry : read_logs(request)) ++by_source[entry.source()];
  EXPECT_EQ(by_source[v1::LogEntry::SOURCE_RECORD], 4);
  EXPECT_EQ(by_source[v1::LogEntry::SOURCE_STDERR], 2);
  EXPECT_GE(by_source[v1::LogEntry::SOURCE_EVENT], 3);  // LEASED, RUNNING, SUCCEEDED

  request.set_tail(1);
  request.set_include_records(true);
  const std::vector<v1::LogEntry> last = read_logs(request);
  ASSERT_THAT(last, SizeIs(1));
  EXPECT_THAT(last[0].text(), HasSubstr("\"type\":\"final\""));
}

TEST_F(CoordinatorServiceTest, GetLogsOfAnAttemptTheTrialDoesNotHaveIsNotFoundNamingTheOnesItHas) {
  std::optional<v1::TrialLease> lease = FirstTrialSucceeded(TinySpec("tiny", 0, "1.0e-3", "[rope, nope]"));
  ASSERT_TRUE(lease.has_value());
  auto status_of = [&](int64_t trial_id, int64_t attempt, int32_t tail) {
    v1::GetLogsRequest request;
    request.set_trial_id(trial_id);
    request.set_attempt(attempt);
    request.set_tail(tail);
    std::unique_ptr<grpc::ClientContext> context = ContextWithToken(user_token_);
    std::unique_ptr<grpc::ClientReader<v1::LogEntry>> stream = users_->GetLogs(context.get(), request);
    v1::LogEntry entry;
    while (stream->Read(&entry)) {
    }
    return stream->Finish();
  };
  EXPECT_TRUE(status_of(lease->trial_id(), 1, 0).ok());
  grpc::Status status = status_of(lease->trial_id(), 9, 0);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("has no attempt 9 (its attempts: 1)"));
  const int64_t unleased = lease->trial_id() + 1;
  status = status_of(unleased, 1, 0);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("it has not been leased yet"));
  EXPECT_EQ(status_of(lease->trial_id(), -1, 0).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status_of(lease->trial_id(), 0, -1).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status_of(99, 0, 0).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(CoordinatorServiceTest, GetMetricsOfAMetricNoTrialReportedIsInvalidArgumentNamingTheReportedOnes) {
  Submit(TinySpec("tiny", 0, "1.0e-3", "[rope, nope]"));
  Register("w1");
  std::optional<v1::TrialLease> lease = Lease("w1");
  ASSERT_TRUE(lease.has_value());
  const int64_t waiting = lease->trial_id() + 1;
  auto metrics = [&](int64_t trial_id, const std::string& name, v1::GetMetricsResponse* response) {
    v1::GetMetricsRequest request;
    request.set_trial_id(trial_id);
    request.add_names(name);
    return users_->GetMetrics(ContextWithToken(user_token_).get(), request, response);
  };
  v1::GetMetricsResponse response;
  // Nothing reported in the sweep yet: no name can be told unknown.
  EXPECT_TRUE(metrics(waiting, "nosuch", &response).ok());
  RunToSuccess("w1", *lease);
  grpc::Status status = metrics(lease->trial_id(), "val_los", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("'val_los'"));
  EXPECT_THAT(status.error_message(), HasSubstr("reported: "));
  EXPECT_THAT(status.error_message(), HasSubstr("val_loss"));
  // A name another trial of the sweep reported is an empty answer for one that has not reached it.
  response.Clear();
  ASSERT_TRUE(metrics(waiting, "val_loss", &response).ok());
  ASSERT_THAT(response.series(), SizeIs(1));
  EXPECT_THAT(response.series(0).points(), SizeIs(0));
  status = metrics(waiting, "nosuch", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("reported nothing yet; its sweep reported: "));
}

TEST_F(CoordinatorServiceTest, ServerInfoTellsTheTimeOfTheCoordinatorsClock) {
  v1::ServerInfo info;
  ASSERT_TRUE(users_->GetServerInfo(ContextWithToken(user_token_).get(), v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(google::protobuf::util::TimeUtil::TimestampToMicroseconds(info.server_time()), ToUnixMicros(clock_.Now()));
  clock_.Advance(std::chrono::seconds(90));
  ASSERT_TRUE(users_->GetServerInfo(ContextWithToken(user_token_).get(), v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(google::protobuf::util::TimeUtil::TimestampToMicroseconds(info.server_time()), ToUnixMicros(clock_.Now()));
}

TEST_F(CoordinatorServiceTest, UnknownIdsAreNotFound) {
  v1::LeaseResponse lease;
  grpc::Status status = TryLease("nobody", &lease);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("register"));
  v1::GetTrialRequest request;
  request.set_trial_id(42);
  v1::Trial trial;
  EXPECT_EQ(users_->GetTrial(ContextWithToken(user_token_).get(), request, &trial).error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::GetSweepRequest sweep_request;
  sweep_request.set_sweep_id(7);
  v1::Sweep sweep;
  EXPECT_EQ(users_->GetSweep(ContextWithToken(user_token_).get(), sweep_request, &sweep).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(CoordinatorServiceTest, GetDiagnosticsAnswersTheStoredDocumentsByName) {
  const int64_t sweep = Submit(TinySpec("diag")).sweep_id();
  ASSERT_GT(sweep, 0);
  Register("w1");
  std::optional<v1::TrialLease> lease = Lease("w1");
  ASSERT_TRUE(lease.has_value());
  nlohmann::json payload = {{"length", 16}};
  payload["layers"] = nlohmann::json::array();
  payload["layers"].push_back({{"layer", 0}, {"gap_counting", {{"xi_lambda", 0.61}}}});
  payload["layers"][0]["heads"] = nlohmann::json::array({{{"head", 0}, {"pair_usage", {0.5, 0.25}}}});
  const nlohmann::json attention = {
      {"type", "diagnostics"}, {"kind", "attention"}, {"step", 10}, {"milestone", "end"}, {"attention", payload}};
  nlohmann::json final_record = nlohmann::json::parse(FinalRecord(1.5));
  final_record["extrapolation"] = {{{"multiple", 2}, {"length", 32}, {"method", "none"}, {"val_loss", 2.25}}};
  ASSERT_TRUE(Report("w1", *lease, 1, {ProvenanceRecord(), attention.dump(), final_record.dump()}).ok());

  v1::GetDiagnosticsRequest request;
  request.set_trial_id(lease->trial_id());
  v1::GetDiagnosticsResponse response;
  grpc::Status status = users_->GetDiagnostics(ContextWithToken(user_token_).get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.trial_id(), lease->trial_id());
  std::map<std::string, v1::TrialDiagnostic> by_name;
  for (const v1::TrialDiagnostic& diagnostic : response.diagnostics()) by_name[diagnostic.name()] = diagnostic;
  ASSERT_TRUE(by_name.count("attention"));
  ASSERT_TRUE(by_name["attention"].has_attention()) << by_name["attention"].error();
  EXPECT_EQ(by_name["attention"].attention().layers(0).gap_counting().xi_lambda(), 0.61);
  EXPECT_EQ(by_name["attention"].attention().layers(0).heads(0).pair_usage(1), 0.25);
  EXPECT_EQ(by_name["attention"].step(), 10);
  ASSERT_TRUE(by_name.count("extrapolation"));
  ASSERT_TRUE(by_name["extrapolation"].has_extrapolation());
  EXPECT_EQ(by_name["extrapolation"].extrapolation().results(0).val_loss(), 2.25);
  ASSERT_TRUE(by_name.count("val_loss_per_position"));
  EXPECT_TRUE(by_name["val_loss_per_position"].has_tensor());

  request.add_names("extrapolation");
  response.Clear();
  ASSERT_TRUE(users_->GetDiagnostics(ContextWithToken(user_token_).get(), request, &response).ok());
  ASSERT_THAT(response.diagnostics(), SizeIs(1));
  EXPECT_EQ(response.diagnostics(0).name(), "extrapolation");

  request.set_trial_id(999);
  EXPECT_EQ(users_->GetDiagnostics(ContextWithToken(user_token_).get(), request, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// A run that starts from another trial: `train.init.from_trial` names the source by sweep and
// index or by identity prefix; the coordinator writes the checkpoint folder of its successful
// attempt into the cell's config, and refuses names that do not resolve, at their location.
TEST_F(CoordinatorServiceTest, ASourceTrialResolvesToTheCheckpointFolderOfItsSuccessfulAttempt) {
  Submit(TinySpec("base", 0, "1.0e-3", "[rope]"));
  Register("w1");
  std::optional<v1::TrialLease> base = Lease("w1");
  ASSERT_TRUE(base.has_value());
  const std::string base_identity = GetTrial(base->trial_id()).identity();

  auto extension = [](const std::string& from) {
    return "name: extend\n"
           "data: {source: builtin, seq_len: 32}\n"
           "model: {layers: 1, d_model: 16, heads: 2, mlp: gelu}\n"
           "position: {variant: rope}\n"
           "train: {batch_size: 2, steps: 10, init: {parameters: all}}\n"
           "sweep:\n"
           "  train.init.from_trial: [" + from + "]\n";
  };
  // Not finished yet: refused, at the axis value (line 7; the value starts at column 27).
  v1::SubmitSweepResponse response;
  grpc::Status early = TrySubmit(extension("base/0"), "extend.yaml", &response);
  EXPECT_EQ(early.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(early.error_message(), HasSubstr("extend.yaml:7:27: error: train.init.from_trial"));
  EXPECT_THAT(early.error_message(), HasSubstr("must have SUCCEEDED"));

  RunToSuccess("w1", *base);
  for (const std::string& bad : {"base/9", "nosuch/0", "base", "id:zz1234"}) {
    grpc::Status refused = TrySubmit(extension("\"" + bad + "\""), "extend.yaml", &response);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_THAT(refused.error_message(), HasSubstr("extend.yaml:7:")) << bad;
  }
  EXPECT_THAT(ListSweeps(), SizeIs(1));  // nothing of the refused submissions was stored

  const v1::SubmitSweepResponse submitted =
      Submit(extension("base/0, \"id:" + base_identity.substr(0, 10) + "\""));
  ASSERT_EQ(submitted.new_trial_count(), 2);
  for (const v1::Trial& trial : ListTrials(submitted.sweep_id())) {
    const nlohmann::json config = wire::FromConfigObject(GetTrial(trial.trial_id()).config());
    EXPECT_EQ(config["train"]["init"]["checkpoint"], base->checkpoint_dir()) << config["train"]["init"].dump();
  }

  // A selector names the source by its keys (an axis, a label or a config key) and the starting
  // trial's seed, unless it names the seed itself.
  auto selected = [](const std::string& name, const std::string& from, const std::string& seeds) {
    return "name: " + name + "\n"
           "data: {source: builtin, seq_len: 32}\n"
           "model: {layers: 1, d_model: 16, heads: 2, mlp: gelu}\n"
           "position: {variant: rope}\n"
           "train: {batch_size: 2, steps: 10, init: {parameters: all, from_trial: \"" + from + "\"}}\n"
           "sweep:\n"
           "  seed: [" + seeds + "]\n";
  };
  const v1::SubmitSweepResponse same_seed = Submit(selected("select0", "base/position.variant=rope", "0"));
  for (const v1::Trial& trial : ListTrials(same_seed.sweep_id())) {
    const nlohmann::json config = wire::FromConfigObject(GetTrial(trial.trial_id()).config());
    EXPECT_EQ(config["train"]["init"]["checkpoint"], base->checkpoint_dir());
  }
  grpc::Status unmatched = TrySubmit(selected("select1", "base/position.variant=rope", "0, 1"), "select.yaml", &response);
  EXPECT_EQ(unmatched.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(unmatched.error_message(),
              HasSubstr("select.yaml:5:59: error: train.init.from_trial: 'base/position.variant=rope': no trial of "
                        "sweep base with seed 1 has position.variant=rope"));
  const v1::SubmitSweepResponse named_seed =
      Submit(selected("select1", "base/position.variant=rope,train.lr=1.0e-3,seed=0", "1"));
  ASSERT_EQ(named_seed.new_trial_count(), 1);
  EXPECT_EQ(wire::FromConfigObject(GetTrial(ListTrials(named_seed.sweep_id()).at(0).trial_id()).config())
                ["train"]["init"]["checkpoint"],
            base->checkpoint_dir());
  for (const std::string& bad : {"base/position.variant", "base/=rope", "base/label=rope", "base/position.varient=rope"}) {
    grpc::Status refused = TrySubmit(selected("select2", bad, "0"), "select.yaml", &response);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_THAT(refused.error_message(), HasSubstr("select.yaml:5:")) << bad;
  }
  grpc::Status mistyped = TrySubmit(selected("select2", "base/position.varient=rope", "0"), "select.yaml", &response);
  EXPECT_THAT(mistyped.error_message(), HasSubstr("'position.varient' is no key of sweep base's trials"));
  // Written in a zip group, an unresolved selector is located at its own value.
  const std::string zipped = "name: select3\n"
                             "data: {source: builtin, seq_len: 32}\n"
                             "model: {layers: 1, d_model: 16, heads: 2, mlp: gelu}\n"
                             "position: {variant: rope}\n"
                             "train: {batch_size: 2, steps: 10}\n"
                             "sweep:\n"
                             "  zip:\n"
                             "    - {label: [a, b], train.init.from_trial: [base/0, \"base/position.variant=nope\"]}\n";
  grpc::Status located = TrySubmit(zipped, "zip.yaml", &response);
  EXPECT_EQ(located.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(located.error_message(), HasSubstr("zip.yaml:8:55: error: train.init.from_trial"));
}

// Fuzzing found it (docs/fuzzing.md): a diagnostics payload nested a million levels deep passed the
// wire's JSON check (json::accept does not recurse), and the store's writing it again overflowed the
// coordinator's stack: any holder of the worker token could crash it. Now INVALID_ARGUMENT, naming
// the field, and the coordinator goes on serving. (The payloads are typed since protocol 4; the
// provenance's documents travel as JSON values, refused past the records' depth.)
TEST_F(CoordinatorServiceTest, ReportMetricsRefusesADocumentNestedTooDeep) {
  std::optional<v1::TrialLease> lease = OneTrialLeasedToW1AfterAReport();
  ASSERT_TRUE(lease.has_value());
  v1::ReportMetricsRequest request;
  request.set_worker_id("w1");
  request.set_trial_id(lease->trial_id());
  request.set_attempt(lease->attempt());
  request.mutable_batch()->set_sequence(2);
  v1::ConfigValue* deep = request.mutable_batch()->add_stdout()->mutable_record()->mutable_provenance()->mutable_config();
  for (int level = 0; level <= records::kMaxJsonTextDepth; ++level) deep = deep->mutable_list()->add_values();
  v1::ReportMetricsResponse response;
  const grpc::Status status = workers_->ReportMetrics(ContextWithToken(worker_token_).get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("provenance.config' nests deeper than 30 levels"));
  EXPECT_TRUE(Report("w1", *lease, 2, {StepRecord(6, 2.4)}).ok());
}

TEST_F(CoordinatorServiceTest, AQuarantinedWorkerLeasesNothingUntilReleaseWorker) {
  Submit(TinySpec("tiny", 0, "1.0e-3", "[rope, nope]"));
  Register("w1");
  for (int fault = 0; fault < 3; ++fault) {
    std::optional<v1::TrialLease> lease = Lease("w1");
    ASSERT_TRUE(lease.has_value());
    v1::CompleteRequest failed = Completion("w1", *lease, v1::OUTCOME_FAILED, 0);
    failed.set_reason("the worker cannot start rung-train: no such file");
    failed.set_exit_code(127);
    v1::CompleteResponse completed;
    ASSERT_TRUE(Complete(failed, &completed).ok());
    // max_retries is 1: the first trial's second fault (the third, the worker having taken the other
    // trial in between) would have been its last; it quarantines the worker instead, and every fault
    // is given back.
    if (fault == 2) EXPECT_EQ(completed.trial_state(), v1::TRIAL_STATE_PENDING);
  }
  EXPECT_EQ(GetTrial(1).state(), v1::TRIAL_STATE_PENDING);
  EXPECT_EQ(GetTrial(2).state(), v1::TRIAL_STATE_PENDING);
  v1::LeaseResponse refused;
  ASSERT_TRUE(TryLease("w1", &refused).ok());
  EXPECT_FALSE(refused.has_lease());
  EXPECT_THAT(refused.quarantine_reason(), HasSubstr("3 attempts in a row failed"));

  v1::ListWorkersResponse listed;
  ASSERT_TRUE(users_->ListWorkers(ContextWithToken(user_token_).get(), v1::ListWorkersRequest(), &listed).ok());
  ASSERT_EQ(listed.workers_size(), 1);
  EXPECT_TRUE(listed.workers(0).has_quarantined_at());
  EXPECT_THAT(listed.workers(0).quarantine_reason(), HasSubstr("(exit 127)"));

  // Workers may not release themselves; a user may, once.
  v1::ReleaseWorkerRequest release;
  release.set_worker_id("w1");
  v1::Worker released;
  EXPECT_EQ(users_->ReleaseWorker(ContextWithToken(worker_token_).get(), release, &released).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(users_->ReleaseWorker(ContextWithToken(user_token_).get(), release, &released).ok());
  EXPECT_FALSE(released.has_quarantined_at());
  EXPECT_EQ(users_->ReleaseWorker(ContextWithToken(user_token_).get(), release, &released).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  release.set_worker_id("nobody");
  EXPECT_EQ(users_->ReleaseWorker(ContextWithToken(user_token_).get(), release, &released).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(Lease("w1").has_value());
}

TEST_F(CoordinatorServiceTest, ListWorkersReturnsTheStopsAtOfTheRegistrationThatCarriedIt) {
  Submit(TinySpec("tiny"));
  v1::RegisterRequest request;
  request.set_worker_id("slurm-7");
  request.set_host("node7");
  request.set_cpu_slots(1);
  request.set_protocol_version(wire::kProtocolVersion);
  // Sooner than any trial's start allowance (allocation_fit.h): nothing is leased to it.
  const int64_t soon = ToUnixMicros(clock_.Now() + std::chrono::seconds(10));
  *request.mutable_stops_at() = google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(soon);
  v1::RegisterResponse registered;
  ASSERT_TRUE(workers_->Register(ContextWithToken(worker_token_).get(), request, &registered).ok());

  v1::ListWorkersResponse listed;
  ASSERT_TRUE(users_->ListWorkers(ContextWithToken(user_token_).get(), v1::ListWorkersRequest(), &listed).ok());
  ASSERT_EQ(listed.workers_size(), 1);
  ASSERT_TRUE(listed.workers(0).has_stops_at());
  EXPECT_EQ(google::protobuf::util::TimeUtil::TimestampToMicroseconds(listed.workers(0).stops_at()), soon);
  EXPECT_FALSE(Lease("slurm-7").has_value());

  // A registration without it (the agent restarted without an end): none is kept, and it leases.
  request.clear_stops_at();
  ASSERT_TRUE(workers_->Register(ContextWithToken(worker_token_).get(), request, &registered).ok());
  ASSERT_TRUE(users_->ListWorkers(ContextWithToken(user_token_).get(), v1::ListWorkersRequest(), &listed).ok());
  EXPECT_FALSE(listed.workers(0).has_stops_at());
  EXPECT_TRUE(Lease("slurm-7").has_value());

  // A stops_at that is not a time is refused.
  request.mutable_stops_at()->set_seconds(-5);
  grpc::Status refused = workers_->Register(ContextWithToken(worker_token_).get(), request, &registered);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("RegisterRequest.stops_at"));
}

}  // namespace
}  // namespace rung::server
