// What the gRPC services need of the store beyond the lifecycle's basics: metric batches
// (ReportBatch: sequence numbers, duplicates, gaps, fencing, provenance, results, log lines), the end
// of an attempt with its last batch (EndAttempt), dry-run submissions (Preview), retrying chosen
// trials all or nothing (RetryTrials), and the overviews users read. ManualClock; nothing sleeps.
#include <cmath>

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "coordinator/store/overviews.h"
#include "coordinator/store/record_rows.h"
#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

using store_testing::Cell;
using store_testing::kLease;
using store_testing::Point;
using store_testing::Submission;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

class ReportsTest : public store_testing::StoreTest {
 protected:
  MetricBatch Batch(const Lease& lease, int64_t sequence, std::vector<MetricPoint> points) {
    MetricBatch batch = store_testing::PointsBatch(lease.trial_id, lease.attempt, sequence, std::move(points));
    batch.lines = {{LogSource::kRecord, "{\"type\":\"step\"}"}, {LogSource::kStderr, "warning"}};
    return batch;
  }

  Overviews overviews() { return Overviews(*store_); }
};

TEST_F(ReportsTest, BatchesAreCommittedInSequenceOnceEach) {
  RegisterWorker("w");
  Submit(Submission("s", {Cell("a")}));
  std::optional<Lease> lease = LeaseFor("w");
  ASSERT_TRUE(lease.has_value());

  MetricBatch first = Batch(*lease, 1, {Point(10, "train_loss", 3.0)});
  first.provenance_json = R"({"commit":"abc"})";
  ASSERT_OK_AND_ASSIGN(BatchAck ack, trials().ReportBatch(first));
  EXPECT_EQ(ack.acknowledged_sequence, 1);
  EXPECT_FALSE(ack.duplicate);
  EXPECT_EQ(StateOf(lease->trial_id), TrialState::kRunning);

  ASSERT_OK_AND_ASSIGN(ack, trials().ReportBatch(first));  // resent
  EXPECT_TRUE(ack.duplicate);
  EXPECT_EQ(ack.acknowledged_sequence, 1);

  StatusOr<BatchAck> gap = trials().ReportBatch(Batch(*lease, 3, {Point(30, "train_loss", 2.0)}));
  ASSERT_FALSE(gap.ok());
  EXPECT_EQ(gap.status().code(), StatusCode::kOutOfRange);
  EXPECT_THAT(gap.status().message(), HasSubstr("resend from batch 2"));

  ASSERT_OK(trials().ReportBatch(Batch(*lease, 2, {Point(20, "train_loss", 2.5)})).status());
  ASSERT_OK_AND_ASSIGN(std::vector<CurvePoint> curve, metrics().Curve(lease->trial_id, "train_loss"));
  ASSERT_THAT(curve, SizeIs(2));
  ASSERT_OK_AND_ASSIGN(std::vector<StoredLogLine> logs, metrics().Logs(lease->trial_id));
  ASSERT_THAT(logs, SizeIs(4));
  EXPECT_EQ(logs[1].log.source, LogSource::kStderr);
  EXPECT_EQ(logs[2].batch, 2);
  ASSERT_OK_AND_ASSIGN(std::vector<AttemptRecord> attempts, trials().Attempts(lease->trial_id));
  EXPECT_EQ(attempts[0].batches, 2);
  EXPECT_EQ(nlohmann::json::parse(attempts[0].provenance_json)["commit"], "abc");
}

TEST_F(ReportsTest, ABatchOfAnAttemptThatIsNoLongerLiveIsFencedUnlessAlreadyCommitted) {
  RegisterWorker("w");
  Submit(Submission("s", {Cell("a")}));
  std::optional<Lease> first = LeaseFor("w");
  ASSERT_TRUE(first.has_value());
  const MetricBatch committed = Batch(*first, 1, {Point(10, "train_loss", 3.0)});
  ASSERT_OK(trials().ReportBatch(committed).status());
  clock_.Advance(kLease + std::chrono::seconds(1));
  ASSERT_OK(trials().ExpireLeases().status());
  std::optional<Lease> second = LeaseFor("w");
  ASSERT_TRUE(second.has_value());

  StatusOr<BatchAck> late = trials().ReportBatch(Batch(*first, 2, {Point(20, "train_loss", 2.0)}));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(late.status().message(), HasSubstr("attempt 2 superseded it"));
  ASSERT_OK_AND_ASSIGN(BatchAck ack, trials().ReportBatch(committed));
  EXPECT_TRUE(ack.duplicate);
}

TEST_F(ReportsTest, ReportsFromAWorkerTheAttemptWasNotLeasedToAreRefusedAndChangeNothing) {
  RegisterWorker("w1");
  RegisterWorker("w2");
  Submit(Submission("s", {Cell("a")}));
  std::optional<Lease> lease = LeaseFor("w1");
  ASSERT_TRUE(lease.has_value());
  MetricBatch batch = Batch(*lease, 1, {Point(10, "train_loss", 3.0)});
  batch.worker_id = "w1";
  ASSERT_OK(trials().ReportBatch(batch));

  // w2 resends w1's committed batch, sends the next one, heartbeats and completes: all refused.
  batch.worker_id = "w2";
  StatusOr<BatchAck> resent = trials().ReportBatch(batch);
  ASSERT_FALSE(resent.ok());
  EXPECT_EQ(resent.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(resent.status().message(), HasSubstr("from worker w2 rejected: attempt 1 was leased to worker w1"));
  MetricBatch next = Batch(*lease, 2, {Point(20, "train_loss", 2.0)});
  next.worker_id = "w2";
  EXPECT_EQ(trials().ReportBatch(next).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(trials().Heartbeat(lease->trial_id, lease->attempt, "w2").status().code(),
            StatusCode::kFailedPrecondition);
  AttemptEnding ending;
  ending.worker_id = "w2";
  ending.last_batch_sequence = 1;
  StatusOr<EndingAck> ended = trials().EndAttempt(lease->trial_id, lease->attempt, ending);
  ASSERT_FALSE(ended.ok());
  EXPECT_THAT(ended.status().message(), HasSubstr("completion from worker w2 rejected"));
  EXPECT_EQ(StateOf(lease->trial_id), TrialState::kLeased);
  ASSERT_OK_AND_ASSIGN(std::vector<CurvePoint> curve, metrics().Curve(lease->trial_id, "train_loss"));
  EXPECT_THAT(curve, SizeIs(1));

  // The holder goes on, to its final record.
  next.worker_id = "w1";
  next.results.summaries = {{"val_loss", 2.0, 20}};
  ASSERT_OK(trials().ReportBatch(next));
  ASSERT_OK(trials().Heartbeat(lease->trial_id, lease->attempt, "w1"));
  ending.worker_id = "w1";
  ending.last_batch_sequence = 2;
  ASSERT_OK(trials().EndAttempt(lease->trial_id, lease->attempt, ending));
  EXPECT_EQ(StateOf(lease->trial_id), TrialState::kSucceeded);
}

TEST_F(ReportsTest, AnEndingWaitsForItsLastBatchAndARepeatIsADuplicate) {
  RegisterWorker("w");
  Submit(Submission("s", {Cell("a")}));
  std::optional<Lease> lease = LeaseFor("w");
  ASSERT_TRUE(lease.has_value());
  MetricBatch batch = Batch(*lease, 1, {Point(10, "val_loss", 2.0)});
  batch.results.summaries = {{"val_loss", 2.0, 10}};
  ASSERT_OK(trials().ReportBatch(batch).status());

  AttemptEnding ending;
  ending.outcome = TrialState::kSucceeded;
  ending.last_batch_sequence = 2;
  StatusOr<EndingAck> early = trials().EndAttempt(lease->trial_id, lease->attempt, ending);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(early.status().message(), HasSubstr("only batches 1..1 were received"));

  ending.last_batch_sequence = 1;
  ASSERT_OK_AND_ASSIGN(EndingAck ack, trials().EndAttempt(lease->trial_id, lease->attempt, ending));
  EXPECT_EQ(ack.trial_state, TrialState::kSucceeded);
  EXPECT_FALSE(ack.duplicate);
  ASSERT_OK_AND_ASSIGN(ack, trials().EndAttempt(lease->trial_id, lease->attempt, ending));
  EXPECT_TRUE(ack.duplicate);
  // The results are the final record's, from its batch, written once.
  ASSERT_OK_AND_ASSIGN(std::vector<SummaryValue> summaries, metrics().Summaries(lease->trial_id));
  ASSERT_THAT(summaries, SizeIs(1));
  EXPECT_EQ(summaries[0].step, 10);

  ending.outcome = TrialState::kCancelled;
  EXPECT_EQ(trials().EndAttempt(lease->trial_id, lease->attempt, ending).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(ReportsTest, APreviewAnswersWhatASubmissionWouldDoAndWritesNothing) {
  const int64_t sweep_id = Submit(Submission("s", {Cell("a"), Cell("b")}));
  ASSERT_OK_AND_ASSIGN(SubmitResult preview, sweeps().Preview(Submission("s", {Cell("b"), Cell("c")}), "user:t"));
  EXPECT_THAT(preview.added, ElementsAre("c"));
  EXPECT_THAT(preview.unchanged, ElementsAre("b"));
  EXPECT_THAT(preview.removed, ElementsAre("a"));
  ASSERT_THAT(preview.removed_trials, SizeIs(1));
  EXPECT_EQ(preview.removed_trials[0].cell.identity, "a");
  ASSERT_OK_AND_ASSIGN(std::vector<TrialRecord> listed, trials().List(sweep_id));
  EXPECT_THAT(listed, SizeIs(2));
  EXPECT_EQ(StateOf(listed[0].id), TrialState::kPending);
  ASSERT_OK_AND_ASSIGN(SubmitResult fresh, sweeps().Preview(Submission("new", {Cell("x")}), "user:t"));
  EXPECT_TRUE(fresh.created);
  EXPECT_EQ(sweeps().FindByName("new").status().code(), StatusCode::kNotFound);
}

TEST_F(ReportsTest, RetryTrialsIsAllOrNothing) {
  RegisterWorker("w");
  PolicyConfig no_retries;
  no_retries.max_retries = 0;
  const int64_t sweep_id = Submit(Submission("s", {Cell("a"), Cell("b")}, no_retries));
  std::optional<Lease> failed = LeaseFor("w");
  ASSERT_TRUE(failed.has_value());
  ASSERT_OK(trials().Fail(failed->trial_id, failed->attempt, "crash").status());
  std::optional<Lease> running = LeaseFor("w");
  ASSERT_TRUE(running.has_value());

  StatusOr<std::vector<int64_t>> refused =
      sweeps().RetryTrials(sweep_id, {failed->trial_id, running->trial_id}, "user:t");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(StateOf(failed->trial_id), TrialState::kFailed);

  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> retried, sweeps().RetryTrials(sweep_id, {failed->trial_id}, "user:t"));
  EXPECT_THAT(retried, ElementsAre(failed->trial_id));
  EXPECT_EQ(StateOf(failed->trial_id), TrialState::kPending);
}

TEST_F(ReportsTest, OverviewsCountTrialsAndShowProgressAndReasons) {
  RegisterWorker("w");
  const int64_t sweep_id = Submit(Submission("s", {Cell("a"), Cell("b"), Cell("c")}));
  std::optional<Lease> lease = LeaseFor("w");
  ASSERT_TRUE(lease.has_value());
  ASSERT_OK(trials().ReportBatch(Batch(*lease, 1, {Point(10, "train_loss", 3.0), Point(10, "val_loss", 3.1),
                                                    Point(20, "train_loss", 2.0)}))
                .status());
  ASSERT_OK(sweeps().Pause(sweep_id, "user:t", "maintenance"));

  ASSERT_OK_AND_ASSIGN(SweepOverview sweep, overviews().Sweep(sweep_id));
  EXPECT_EQ(sweep.total_trials, 3);
  EXPECT_EQ(sweep.counts[TrialState::kLeased], 1);
  EXPECT_EQ(sweep.counts[TrialState::kPending], 2);
  EXPECT_EQ(sweep.state_reason, "maintenance");
  EXPECT_DOUBLE_EQ(sweep.total_flops, 3 * Cell("a").flops);
  EXPECT_FALSE(sweep.finished_at.has_value());

  ASSERT_OK_AND_ASSIGN(TrialOverview trial, overviews().Trial(lease->trial_id));
  EXPECT_EQ(trial.latest_step, 20);
  EXPECT_EQ(trial.latest_metric, 3.1);
  ASSERT_TRUE(trial.attempt.has_value());
  EXPECT_EQ(trial.attempt->worker_id, "w");
  EXPECT_THAT(trial.state_reason, HasSubstr("leased by worker w"));
  EXPECT_TRUE(trial.first_leased_at.has_value());

  TrialFilter pending;
  pending.states = {TrialState::kPending};
  ASSERT_OK_AND_ASSIGN(std::vector<TrialOverview> listed, overviews().Trials(sweep_id, pending));
  ASSERT_THAT(listed, SizeIs(2));
  TrialFilter page;
  page.limit = 2;
  ASSERT_OK_AND_ASSIGN(listed, overviews().Trials(sweep_id, page));
  ASSERT_THAT(listed, SizeIs(2));
  page.after_index = listed.back().trial.trial_index;
  ASSERT_OK_AND_ASSIGN(listed, overviews().Trials(sweep_id, page));
  ASSERT_THAT(listed, SizeIs(1));
  EXPECT_EQ(listed[0].trial.cell.identity, "c");

  Submit(Submission("t", {Cell("z")}));
  ASSERT_OK_AND_ASSIGN(std::vector<SweepOverview> sweeps, overviews().Sweeps());
  ASSERT_THAT(sweeps, SizeIs(2));
  EXPECT_EQ(sweeps[0].sweep.name, "t");  // newest first
  SweepFilter paused;
  paused.states = {SweepState::kPaused};
  ASSERT_OK_AND_ASSIGN(sweeps, overviews().Sweeps(paused));
  ASSERT_THAT(sweeps, SizeIs(1));
  EXPECT_EQ(overviews().Trials(999).status().code(), StatusCode::kNotFound);
}

// Typed records, as a worker sends them: the lines decoded by the record codec.
std::vector<records::TrainerRecord> Decoded(const std::vector<std::string>& lines) {
  std::vector<records::TrainerRecord> decoded;
  for (const std::string& line : lines) {
    StatusOr<records::TrainerRecord> record = records::DecodeRecord(line);
    EXPECT_TRUE(record.ok()) << line << ": " << record.status().ToString();
    if (record.ok()) decoded.push_back(std::move(record).value());
  }
  return decoded;
}

// Evaluation is what the step record says (its optional fields), whatever the metric is named.
TEST(RecordRowsTest, AnEvaluationStepsValidationMetricsArePointsOfTheEvaluation) {
  const RecordRows rows = RowsFromRecords(Decoded({
      R"({"type":"step","step":10,"lr":0.003,"train_loss":3.5,"val_loss":3.25,"val_accuracy":0.5,"val_bpb":4.5})",
  }));
  std::map<std::string, bool> evaluation;
  for (const MetricPoint& point : rows.points) evaluation[point.name] = point.evaluation;
  EXPECT_TRUE(evaluation.at("val_loss"));
  EXPECT_TRUE(evaluation.at("val_accuracy"));
  EXPECT_TRUE(evaluation.at("val_bpb"));
  EXPECT_FALSE(evaluation.at("train_loss"));
  EXPECT_FALSE(evaluation.at("lr"));
}

// Attention beyond the training length is stored under its own name, and each end's xi_Lambda is a summary.
TEST(RecordRowsTest, AttentionBeyondTheTrainingLengthIsItsOwnDiagnosticAndXiLambdaASummary) {
  const RecordRows rows = RowsFromRecords(Decoded({
      R"({"type":"diagnostics","kind":"attention","step":5,"milestone":"frac 0.5","attention":{"pooled":{"xi_lambda":0.9}}})",
      R"({"type":"diagnostics","kind":"attention","step":10,"milestone":"end","attention":{"pooled":{"xi_lambda":0.5}}})",
      R"({"type":"diagnostics","kind":"attention_beyond","step":10,"milestone":"end",)"
      R"("attention_beyond":{"multiple":4,"method":"dynamic_ntk","length":512,"pooled":{"xi_lambda":1.25}}})",
      R"({"type":"diagnostics","kind":"attention_beyond","step":10,"milestone":"end",)"
      R"("attention_beyond":{"multiple":2,"method":"none","length":256,"pooled":{"xi_lambda":null}}})",
      // Malformed: beyond the training length without its multiple. Kept under its kind, never as "attention".
      R"({"type":"diagnostics","kind":"attention_beyond","step":10,"milestone":"end",)"
      R"("attention_beyond":{"length":256,"pooled":{"xi_lambda":3.0}}})",
  }));
  std::vector<std::string> names;
  for (const Diagnostic& diagnostic : rows.results.diagnostics) names.push_back(diagnostic.name);
  EXPECT_EQ(names, (std::vector<std::string>{"attention", "attention", "attention_4x_dynamic_ntk", "attention_2x",
                                             "attention_beyond"}));
  std::map<std::string, double> summaries;
  for (const auto& summary : rows.results.summaries) summaries[summary.name] = summary.value;
  // The end's only (a milestone before it is not the trial's result), and none where xi_Lambda is unmeasured.
  EXPECT_EQ(summaries, (std::map<std::string, double>{{"xi_lambda", 0.5}, {"xi_lambda_4x_dynamic_ntk", 1.25}}));
  for (const Diagnostic& diagnostic : rows.results.diagnostics) {
    if (diagnostic.name == "attention_beyond") {
      EXPECT_FALSE(ReadDiagnosticDocument(diagnostic).ok()) << "an unknown name: listed as unreadable";
      continue;
    }
    StatusOr<DiagnosticDocument> document = ReadDiagnosticDocument(diagnostic);
    ASSERT_TRUE(document.ok()) << diagnostic.name << ": " << document.status().message();
    EXPECT_TRUE(std::holds_alternative<records::AttentionDiagnostics>(*document));
  }
}

TEST(RecordRowsTest, StepProvenanceFinalAndDiagnosticsRecordsBecomeStoreValues) {
  const RecordRows rows = RowsFromRecords(Decoded({
      R"({"type":"provenance","commit":"abc"})",
      R"({"type":"step","step":10,"tokens":640,"flops":1.5e6,"lr":0.003,"train_loss":3.5,"elapsed_sec":1.25})",
      R"({"type":"checkpoint","step":10,"path":"/x"})",
      R"({"type":"final","step":20,"val_loss":2.5,"val_loss_per_position":[3.0,null],)"
      R"("positional_parameters":[{"name":"positional.s","shape":[2,3],"values":[1,2,3,4,5,6]}],)"
      R"("frequencies":[{"name":"layer_0","shape":[2],"values":[1.0,0.5]}]})",
      R"({"type":"diagnostics","kind":"attention","step":20,"milestone":"end","attention":{"length":16,"layers":[]}})",
  }));
  EXPECT_EQ(nlohmann::json::parse(rows.provenance_json)["commit"], "abc");
  std::map<std::string, double> points;
  for (const MetricPoint& point : rows.points) {
    EXPECT_EQ(point.step, 10);
    EXPECT_EQ(point.tokens, 640);
    EXPECT_DOUBLE_EQ(point.flops, 1.5e6);
    EXPECT_DOUBLE_EQ(point.wall_time, 1.25);
    points[point.name] = point.value;
  }
  EXPECT_EQ(points.size(), rows.points.size()) << "one point per name";
  EXPECT_EQ(points["train_loss"], 3.5);
  EXPECT_EQ(points["lr"], 0.003);
  EXPECT_EQ(points.count("val_loss"), 0u) << "no evaluation at this step";
  for (const MetricPoint& point : rows.points) EXPECT_FALSE(point.evaluation) << point.name;
  std::map<std::string, double> summaries;
  for (const SummaryValue& summary : rows.results.summaries) {
    EXPECT_EQ(summary.step, 20);
    summaries[summary.name] = summary.value;
  }
  EXPECT_EQ(summaries["val_loss"], 2.5);
  EXPECT_EQ(summaries.count("train_loss"), 0u) << "unset in this final record";
  ASSERT_THAT(rows.results.learned_params, SizeIs(6));
  EXPECT_EQ(rows.results.learned_params[4].layer, 1);
  EXPECT_EQ(rows.results.learned_params[4].head, 1);
  std::vector<std::string> names;
  for (const Diagnostic& diagnostic : rows.results.diagnostics) names.push_back(diagnostic.name);
  EXPECT_THAT(names, ElementsAre("frequencies.layer_0", "val_loss_per_position", "attention"));
  std::optional<StepTensor> per_position = TensorFromJson("val_loss_per_position", rows.results.diagnostics[1].value);
  ASSERT_TRUE(per_position.has_value());
  EXPECT_EQ(per_position->step, 20);
  EXPECT_TRUE(std::isnan(per_position->tensor.values[1]));
  const Diagnostic& attention = rows.results.diagnostics[2];
  EXPECT_EQ(attention.step, 20);
  EXPECT_EQ(attention.layer, -1);
  EXPECT_EQ(attention.value["length"], 16) << "the payload's JSON form";
  StatusOr<DiagnosticDocument> read = ReadDiagnosticDocument(attention);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(std::get<records::AttentionDiagnostics>(*read).length, 16);
  StatusOr<DiagnosticDocument> tensor = ReadDiagnosticDocument(rows.results.diagnostics[0]);
  ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
  EXPECT_EQ(std::get<records::Tensor>(*tensor).values, (std::vector<double>{1.0, 0.5}));
}

// A stored document reads back as its type, or says which diagnostic and field it is that does not.
TEST(RecordRowsTest, AStoredDiagnosticThatDoesNotReadAsItsTypeIsDataLossNamingIt) {
  Diagnostic renamed{"attention", nlohmann::json::parse(R"({"layers":[{"heads":{"head":0}}]})"), 20};
  StatusOr<DiagnosticDocument> read = ReadDiagnosticDocument(renamed);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(read.status().message(), HasSubstr("'attention'"));
  EXPECT_THAT(read.status().message(), HasSubstr("layers[0].heads' must be an array"));
  Diagnostic unknown{"weather", nlohmann::json::object(), 20};
  EXPECT_THAT(ReadDiagnosticDocument(unknown).status().message(), HasSubstr("does not know"));
  Diagnostic not_a_tensor{"frequencies.layer_0", nlohmann::json::parse(R"({"values":[1]})"), 20};
  EXPECT_EQ(ReadDiagnosticDocument(not_a_tensor).status().code(), StatusCode::kDataLoss);
}

// Releases before the OLS standard error stored xi_beta's "half_iqr", 0.6745 times it: it reads back as
// the standard error; a fit of this release keeps its own.
TEST(RecordRowsTest, AnEarlyXiBetaHalfIqrReadsAsItsOlsStandardError) {
  Diagnostic early{"attention", nlohmann::json::parse(R"({"length":16,"inverse_temperature":{
      "xi_beta_grid":{"fitted":true,"xi":0.5,"half_iqr":0.06744897501960817,"points":6},
      "xi_beta_trim":{"fitted":true,"xi":0.4,"standard_error":0.2,"points":9}}})"),
                   20};
  StatusOr<DiagnosticDocument> read = ReadDiagnosticDocument(early);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const auto& temperature = std::get<records::AttentionDiagnostics>(*read).inverse_temperature;
  ASSERT_TRUE(temperature.has_value());
  EXPECT_NEAR(temperature->xi_beta_grid.standard_error, 0.1, 1e-12);
  EXPECT_EQ(temperature->xi_beta_trim.standard_error, 0.2);
  Diagnostic early_two_points{"attention", nlohmann::json::parse(
                                               R"({"inverse_temperature":{"xi_beta_grid":{"half_iqr":null}}})"),
                              20};
  read = ReadDiagnosticDocument(early_two_points);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(std::isnan(std::get<records::AttentionDiagnostics>(*read).inverse_temperature->xi_beta_grid.standard_error));
}

TEST(RecordRowsTest, ExtrapolationRowsBecomeSummariesNamedByMultipleAndMethod) {
  const RecordRows rows = RowsFromRecords(Decoded({
      R"({"type":"final","step":20,"val_loss":2.5,"flops":0,"tokens":0,"extrapolation":[)"
      R"({"multiple":2,"length":256,"method":"none","val_loss":2.9,"val_loss_per_position":[1,2],)"
      R"("val_loss_in_dist":2.6,"val_loss_extrap":3.2},)"
      R"({"multiple":2,"length":256,"method":"yarn","val_loss":2.7,"val_accuracy":0.5}]})",
  }));
  std::map<std::string, double> summaries;
  for (const SummaryValue& summary : rows.results.summaries) {
    if (summary.name.rfind("val_", 0) == 0) summaries[summary.name] = summary.value;
  }
  EXPECT_EQ(summaries, (std::map<std::string, double>{{"val_loss", 2.5},
                                                      {"val_loss_2x", 2.9},
                                                      {"val_loss_full_2x", 2.9},
                                                      {"val_loss_in_dist_2x", 2.6},
                                                      {"val_loss_extrap_2x", 3.2},
                                                      {"val_loss_2x_yarn", 2.7},
                                                      {"val_loss_full_2x_yarn", 2.7},
                                                      {"val_accuracy_2x_yarn", 0.5}}));
}

TEST(RecordRowsTest, TensorsOfEveryRankRoundTripThroughElements) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{}, {3}, {2, 3}, {2, 2, 3}, {2, 1, 2, 2}}) {
    records::Tensor tensor;
    tensor.name = "t";
    tensor.shape = shape;
    int64_t size = 1;
    for (int64_t extent : shape) size *= extent;
    for (int64_t i = 0; i < size; ++i) tensor.values.push_back(static_cast<double>(i));
    std::vector<LearnedParamValue> elements = TensorToElements(7, tensor);
    std::reverse(elements.begin(), elements.end());  // the table has its own order
    const std::vector<StepTensor> back = TensorsFromElements(elements);
    ASSERT_THAT(back, SizeIs(1));
    EXPECT_EQ(back[0].step, 7);
    EXPECT_EQ(back[0].tensor.shape, shape);
    EXPECT_EQ(back[0].tensor.values, tensor.values);
  }
}

TEST_F(ReportsTest, LearnedParametersKeepTheirShapeInTheDatabase) {
  RegisterWorker("w");
  Submit(Submission("s", {Cell("a")}));
  std::optional<Lease> lease = LeaseFor("w");
  ASSERT_TRUE(lease.has_value());
  records::Tensor tensor{"positional.s", {2, 3}, {1, 2, 3, 4, 5, 6}};
  TrialResults results;
  results.summaries = {{"val_loss", 2.0, 20}};
  results.learned_params = TensorToElements(20, tensor);
  ASSERT_OK(trials().Complete(lease->trial_id, lease->attempt, results));
  Reopen();
  ASSERT_OK_AND_ASSIGN(std::vector<LearnedParamValue> stored, metrics().LearnedParams(lease->trial_id));
  const std::vector<StepTensor> back = TensorsFromElements(stored);
  ASSERT_THAT(back, SizeIs(1));
  EXPECT_THAT(back[0].tensor.shape, ElementsAre(2, 3));
  EXPECT_EQ(back[0].tensor.values, tensor.values);
}

}  // namespace
}  // namespace rung
