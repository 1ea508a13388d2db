// tests/worker/agent/trainer_records_test.cc
//
// rung-train's records as the agent reads them: metric rows of step records, the summary of an
// attempt, and what a Complete carries from the final record.
#include "worker/agent/trainer_records.h"

#include <cmath>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung::agent {
namespace {

using ::testing::ElementsAre;

TEST(TrainerRecordsTest, ParsesRecordTypesAndToleratesStrayLines) {
  EXPECT_EQ(ParseTrainerRecord(R"({"type":"provenance","threads":2})").type, RecordType::kProvenance);
  EXPECT_EQ(ParseTrainerRecord(R"({"type":"step","step":1})").type, RecordType::kStep);
  EXPECT_EQ(ParseTrainerRecord(R"({"type":"final"})").type, RecordType::kFinal);
  EXPECT_EQ(ParseTrainerRecord(R"({"type":"something new"})").type, RecordType::kOther);
  TrainerRecord stray = ParseTrainerRecord("warning: not JSON");
  EXPECT_EQ(stray.type, RecordType::kOther);
  EXPECT_TRUE(stray.json.is_null());
  EXPECT_TRUE(ParseTrainerRecord("[1,2]").json.is_null());
}

TEST(TrainerRecordsTest, AStepRecordIsOneRowPerNumericFieldAtItsStepTokensFlopsAndTime) {
  TrainerRecord record = ParseTrainerRecord(
      R"({"type":"step","step":40,"tokens":10240,"flops":1.5e9,"lr":0.003,"train_loss":2.5,)"
      R"("val_loss":null,"elapsed_sec":12.5,"note":"text"})");
  std::vector<v1::MetricRow> rows = StepMetricRows(record.json);
  std::map<std::string, v1::MetricRow> by_name;
  for (const v1::MetricRow& row : rows) by_name[row.name()] = row;
  ASSERT_EQ(rows.size(), by_name.size()) << "one row per name";
  std::vector<std::string> names;
  for (const auto& [name, row] : by_name) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("elapsed_sec", "flops", "lr", "tokens", "train_loss", "val_loss"));
  const v1::MetricRow& loss = by_name["train_loss"];
  EXPECT_EQ(loss.step(), 40);
  EXPECT_DOUBLE_EQ(loss.value(), 2.5);
  EXPECT_EQ(loss.tokens(), 10240);
  EXPECT_DOUBLE_EQ(loss.flops(), 1.5e9);
  EXPECT_DOUBLE_EQ(loss.wall_time(), 12.5);
  EXPECT_TRUE(std::isnan(by_name["val_loss"].value())) << "a non-finite value arrives as null";
  EXPECT_TRUE(StepMetricRows(ParseTrainerRecord(R"({"type":"step","train_loss":1})").json).empty());
}

TEST(TrainerRecordsTest, AnAttemptKeepsItsNewestStepCheckpointAndError) {
  AttemptRecords records;
  records.Add(R"({"type":"provenance"})");
  records.Add(R"({"type":"step","step":10})");
  records.Add(R"({"type":"checkpoint","step":10,"path":"/a/ckpt-0000000010.pt","reason":"periodic"})");
  records.Add(R"({"type":"step","step":20})");
  records.Add(R"({"type":"error","step":21,"reason":"non-finite training loss (nan) at step 21"})");
  EXPECT_EQ(records.latest_step(), 21);
  ASSERT_TRUE(records.checkpoint().has_value());
  EXPECT_EQ(records.checkpoint()->latest_path(), "/a/ckpt-0000000010.pt");
  EXPECT_EQ(records.checkpoint()->step(), 10);
  EXPECT_EQ(records.error_reason(), "non-finite training loss (nan) at step 21");
  EXPECT_FALSE(records.has_final());

  records.Add(R"({"type":"preempted","step":30,"signal":15,"checkpoint":"/a/ckpt-0000000030.pt"})");
  EXPECT_EQ(records.checkpoint()->latest_path(), "/a/ckpt-0000000030.pt");
}

TEST(TrainerRecordsTest, TheFinalRecordBecomesFinalMetricsLearnedParametersAndDiagnostics) {
  AttemptRecords records;
  records.Add(R"({"type":"checkpoint","step":20,"path":"/c/ckpt-0000000020.pt","reason":"final"})");
  records.Add(
      R"({"type":"final","step":20,"tokens":5120,"val_loss":2.25,"train_loss":2.5,"val_loss_per_position":[3.0,2.0,1.5],)"
      R"("positional_parameters":[{"name":"positional.lerope_log_scale","shape":[2],"values":[0.5,-0.5]}],)"
      R"("frequencies":[{"name":"layer_0","shape":[2],"values":[1.0,0.01]}],)"
      R"("extrapolation":[{"multiple":2,"method":"yarn","val_loss":2.75,"val_loss_per_position":[1,2,3,4,5,6]}],)"
      R"("wall_sec":3.5,"peak_rss_bytes":1000})");
  ASSERT_TRUE(records.has_final());
  v1::CompleteRequest complete;
  records.FillCompleteRequest("/c", &complete);
  EXPECT_EQ(complete.checkpoint().dir(), "/c");
  EXPECT_EQ(complete.checkpoint().latest_path(), "/c/ckpt-0000000020.pt");
  EXPECT_EQ(complete.checkpoint().step(), 20);
  const auto& metrics = complete.final_metrics();
  EXPECT_DOUBLE_EQ(metrics.at("val_loss"), 2.25);
  EXPECT_EQ(metrics.count("step"), 0u) << "the step says where the final record was written; it is not a result";
  EXPECT_DOUBLE_EQ(metrics.at("wall_sec"), 3.5);
  EXPECT_DOUBLE_EQ(metrics.at("extrapolation.x2.yarn.val_loss"), 2.75);
  EXPECT_EQ(metrics.count("val_loss_per_position"), 0u) << "arrays are tensors, not metrics";
  ASSERT_EQ(complete.learned_parameters_size(), 1);
  EXPECT_EQ(complete.learned_parameters(0).name(), "positional.lerope_log_scale");
  EXPECT_THAT(complete.learned_parameters(0).shape(), ElementsAre(2));
  EXPECT_THAT(complete.learned_parameters(0).values(), ElementsAre(0.5, -0.5));
  std::map<std::string, v1::Tensor> diagnostics;
  for (const v1::Tensor& tensor : complete.diagnostics()) diagnostics[tensor.name()] = tensor;
  ASSERT_EQ(diagnostics.size(), 3u);
  EXPECT_THAT(diagnostics["frequencies.layer_0"].values(), ElementsAre(1.0, 0.01));
  EXPECT_THAT(diagnostics["val_loss_per_position"].shape(), ElementsAre(3));
  EXPECT_THAT(diagnostics["extrapolation.x2.yarn.val_loss_per_position"].shape(), ElementsAre(6));
}

}  // namespace
}  // namespace rung::agent
