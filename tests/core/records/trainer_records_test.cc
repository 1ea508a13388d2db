// tests/core/records/trainer_records_test.cc
//
// The trainer-record codec (core/records/trainer_records.h): every record survives a round trip
// through its JSON line, the JSON form is the documented one (keys, left-out optionals, null for a
// non-finite number, documents inline), lines of earlier releases still decode, and bad lines are
// errors that name what is wrong.
#include "core/records/trainer_records.h"

#include "core/records/record_json.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace rung::records {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

FinalRecord SampleFinal() {
  FinalRecord final_record;
  final_record.step = 30;
  final_record.tokens = 3840;
  final_record.flops = 1.5e9;
  final_record.flops_total = 2.5e9;
  final_record.val_loss = 2.25;
  final_record.train_loss = 2.5;
  final_record.val_loss_per_position = {3.0, 2.5, std::numeric_limits<double>::quiet_NaN()};
  final_record.positional_parameters = {{"positional.lerope_log_scale", {2, 2}, {0.1, 0.2, 0.3, 0.4}}};
  final_record.frequencies = {{"layer_0", {2}, {1.0, 0.01}}};
  ExtrapolationResult twice;
  twice.multiple = 2;
  twice.length = 64;
  twice.method = "yarn";
  twice.val_loss = 2.75;
  twice.val_loss_per_position = {3.0, 2.5};
  final_record.extrapolation = {twice};
  final_record.train_tokens_per_sec = 1234.5;
  final_record.wall_sec = 3.5;
  final_record.peak_rss_bytes = 123456789;
  return final_record;
}

TEST(TrainerRecords, StepRecordIsOneJsonObjectWithItsTypeAndFields) {
  StepRecord step;
  step.step = 10;
  step.tokens = 320;
  step.lr = 0.003;
  step.train_loss = 2.5;
  step.val_loss = 2.6;
  const json line = json::parse(EncodeRecord(step));
  EXPECT_EQ(line["type"], "step");
  EXPECT_EQ(line["step"], 10);
  EXPECT_EQ(line["tokens"], 320);
  EXPECT_EQ(line["val_loss"], 2.6);
  EXPECT_FALSE(line.contains("val_accuracy")) << "an unset optional is left out";
  EXPECT_FALSE(line.contains("replayed")) << "a false bool is left out";
}

TEST(TrainerRecords, NonFiniteNumbersAreWrittenAsNullAndReadBackAsNaN) {
  StepRecord step;
  step.step = 3;
  step.train_loss = std::numeric_limits<double>::infinity();
  const std::string line = EncodeRecord(step);
  EXPECT_THAT(line, HasSubstr("\"train_loss\":null"));
  StatusOr<TrainerRecord> back = DecodeRecord(line);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(std::isnan(std::get<StepRecord>(*back).train_loss));
}

TEST(TrainerRecords, FinalRecordSurvivesARoundTrip) {
  const FinalRecord sample = SampleFinal();
  StatusOr<TrainerRecord> back = DecodeRecord(EncodeRecord(sample));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const FinalRecord& final_record = std::get<FinalRecord>(*back);
  EXPECT_EQ(final_record.step, 30);
  EXPECT_EQ(final_record.peak_rss_bytes, 123456789);
  ASSERT_EQ(final_record.positional_parameters.size(), 1u);
  EXPECT_EQ(final_record.positional_parameters[0].name, "positional.lerope_log_scale");
  EXPECT_THAT(final_record.positional_parameters[0].shape, ElementsAre(2, 2));
  EXPECT_THAT(final_record.positional_parameters[0].values, ElementsAre(0.1, 0.2, 0.3, 0.4));
  ASSERT_EQ(final_record.extrapolation.size(), 1u);
  EXPECT_EQ(final_record.extrapolation[0].method, "yarn");
  EXPECT_FALSE(final_record.extrapolation[0].val_accuracy.has_value());
  ASSERT_EQ(final_record.val_loss_per_position.size(), 3u);
  EXPECT_TRUE(std::isnan(final_record.val_loss_per_position[2]));
  EXPECT_EQ(final_record.train_loss, 2.5);
  EXPECT_FALSE(final_record.val_accuracy.has_value());
}

TEST(TrainerRecords, JsonDocumentsAreWrittenInlineAndKeptAsText) {
  ProvenanceRecord provenance;
  provenance.commit = "abc123";
  provenance.config.text = R"({"seed":0,"train":{"steps":30}})";
  provenance.steps = 30;
  provenance.resumed_from = "/ckpt/ckpt-000020.pt";
  const json line = json::parse(EncodeRecord(provenance));
  EXPECT_EQ(line["config"]["train"]["steps"], 30) << "a document, not a string";
  EXPECT_FALSE(line.contains("blas")) << "an empty document is left out";
  StatusOr<TrainerRecord> back = DecodeRecord(line.dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const ProvenanceRecord& read = std::get<ProvenanceRecord>(*back);
  EXPECT_EQ(json::parse(read.config.text), json::parse(provenance.config.text));
  EXPECT_EQ(read.resumed_from, "/ckpt/ckpt-000020.pt");
  EXPECT_EQ(read.world_size, 1);
}

TEST(TrainerRecords, EveryTypeRoundTrips) {
  DiagnosticsRecord diagnostics;
  diagnostics.kind = "attention";
  diagnostics.step = 30;
  diagnostics.milestone = "end";
  diagnostics.layer = 0;
  diagnostics.attention.emplace();
  diagnostics.attention->length = 16;
  diagnostics.attention->layers.emplace_back().heads.emplace_back().pair_profile = {{0.5, std::nan("")}, {0.25}};
  DiagnosticsRecord beyond;
  beyond.kind = "attention_beyond";
  beyond.step = 30;
  beyond.milestone = "end";
  beyond.attention_beyond.emplace();
  beyond.attention_beyond->length = 64;
  beyond.attention_beyond->multiple = 4;
  beyond.attention_beyond->method = "dynamic_ntk";
  PreemptedRecord preempted;
  preempted.step = 20;
  preempted.signal = 15;
  preempted.checkpoint = "/c/ckpt-000020.pt";
  ErrorRecord error;
  error.step = 3;
  error.reason = "non-finite training loss (nan) at step 3";
  CheckpointRecord checkpoint;
  checkpoint.step = 20;
  checkpoint.path = "/c/ckpt-000020.pt";
  checkpoint.reason = "periodic";
  for (const TrainerRecord& record :
       std::vector<TrainerRecord>{diagnostics, beyond, preempted, error, checkpoint, SampleFinal()}) {
    const std::string line = EncodeRecord(record);
    StatusOr<TrainerRecord> back = DecodeRecord(line);
    ASSERT_TRUE(back.ok()) << line << ": " << back.status().ToString();
    EXPECT_EQ(RecordType(*back), RecordType(record));
    EXPECT_EQ(EncodeRecord(*back), line) << "encode(decode(line)) == line";
  }
}

TEST(TrainerRecords, LinesOfTheEarlierReleaseDecode) {
  // As rung-train printed them before the contract: the same keys, provenance's resumed_from null.
  StatusOr<TrainerRecord> step = DecodeRecord(
      R"({"elapsed_sec":0.5,"flops":1.0e6,"flops_total":2.0e6,"grad_norm":0.7,"lr":0.003,)"
      R"("positional_grad_norm":0.0,"step":5,"tokens":640,"tokens_per_sec":1280.0,"train_loss":5.1,"type":"step"})");
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(std::get<StepRecord>(*step).tokens, 640);
  StatusOr<TrainerRecord> provenance =
      DecodeRecord(R"({"type":"provenance","commit":"abc","resumed_from":null,"start_step":0,"steps":30})");
  ASSERT_TRUE(provenance.ok()) << provenance.status().ToString();
  EXPECT_FALSE(std::get<ProvenanceRecord>(*provenance).resumed_from.has_value());
}

TEST(TrainerRecords, UnknownKeysAreIgnoredAndMissingOnesKeepTheirDefaults) {
  StatusOr<TrainerRecord> record = DecodeRecord(R"({"type":"step","step":7,"added_by_a_newer_trainer":[1,2]})");
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(std::get<StepRecord>(*record).step, 7);
  EXPECT_EQ(std::get<StepRecord>(*record).train_loss, 0.0);
}

TEST(TrainerRecords, BadLinesAreErrorsThatSayWhatIsWrong) {
  EXPECT_THAT(DecodeRecord("threads: 2").status().message(), HasSubstr("not a JSON object"));
  EXPECT_THAT(DecodeRecord(R"({"step":3})").status().message(), HasSubstr("\"type\""));
  EXPECT_THAT(DecodeRecord(R"({"type":"telemetry"})").status().message(), HasSubstr("unknown record type 'telemetry'"));
  EXPECT_THAT(DecodeRecord(R"({"type":"step","step":"three"})").status().message(),
              HasSubstr("field 'step' must be an integer"));
  EXPECT_THAT(DecodeRecord(R"({"type":"final","positional_parameters":[{"name":"p","shape":[2],"values":["x"]}]})")
                  .status()
                  .message(),
              HasSubstr("positional_parameters[0].values[0]"));
}

TEST(TrainerRecords, ExtrapolationSummaryNamesFollowTheMultipleAndMethod) {
  ExtrapolationResult plain;
  plain.multiple = 2;
  plain.method = "none";
  ExtrapolationResult yarn = plain;
  yarn.multiple = 4;
  yarn.method = "yarn";
  EXPECT_EQ(ExtrapolationSummaryName("val_loss", plain), "val_loss_2x");
  EXPECT_EQ(ExtrapolationSummaryName("val_accuracy", yarn), "val_accuracy_4x_yarn");
}

TEST(TrainerRecords, AttentionDiagnosticsAreNamedByTheirEvaluatedLength) {
  AttentionDiagnostics at_t;
  EXPECT_EQ(AttentionDiagnosticName(at_t), "attention");
  AttentionDiagnostics beyond;
  beyond.multiple = 4;
  beyond.method = "dynamic_ntk";
  EXPECT_EQ(AttentionDiagnosticName(beyond), "attention_4x_dynamic_ntk");
  beyond.method = "none";
  EXPECT_EQ(AttentionDiagnosticName(beyond), "attention_4x");
  for (const char* name : {"attention", "attention_4x", "attention_16x_yarn", "attention_2x_dominant_band"}) {
    EXPECT_TRUE(IsAttentionDiagnosticName(name)) << name;
  }
  for (const char* name : {"attention_", "attention_x", "attention_4", "attention_4x_", "attention_4y", "attentions",
                           "band_ablation", "attention_4xyarn"}) {
    EXPECT_FALSE(IsAttentionDiagnosticName(name)) << name;
  }
}

TEST(TrainerRecords, MetricNamesAreTheNumericFieldsButStep) {
  const std::vector<std::string> step = StepMetricNames();
  EXPECT_THAT(step, ::testing::Contains("train_loss"));
  EXPECT_THAT(step, ::testing::Contains("val_loss"));
  EXPECT_THAT(step, ::testing::Not(::testing::Contains("step")));
  EXPECT_THAT(step, ::testing::Not(::testing::Contains("replayed")));
  const std::vector<std::string> final_names = FinalSummaryNames();
  EXPECT_THAT(final_names, ::testing::Contains("val_loss"));
  EXPECT_THAT(final_names, ::testing::Contains("peak_rss_bytes"));
  EXPECT_THAT(final_names, ::testing::Not(::testing::Contains("val_loss_per_position")));
}

TEST(TrainerRecords, ForEachNumericFieldVisitsSetValuesOnly) {
  StepRecord step;
  step.step = 4;
  step.train_loss = 2.0;
  std::vector<std::string> names;
  ForEachNumericField(step, [&](const char* name, double) { names.emplace_back(name); });
  EXPECT_THAT(names, ::testing::Contains("train_loss"));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("val_loss")));
  step.val_loss = 2.1;
  names.clear();
  ForEachNumericField(step, [&](const char* name, double) { names.emplace_back(name); });
  EXPECT_THAT(names, ::testing::Contains("val_loss"));
}

// `depth` nested arrays: "[[[...]]]".
std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// Fuzzing found it (docs/fuzzing.md, fuzz/regressions/records/deep-payload): a JSON field nested
// hundreds of thousands of levels deep decoded, and writing it again (JsonText's dump, the
// coordinator's store) overflowed the stack.
TEST(TrainerRecords, RefusesALineNestedDeeperThanTheLimit) {
  const std::string deep = R"({"type":"provenance","config":)" + Nested(1'000'000) + "}";
  StatusOr<TrainerRecord> record = DecodeRecord(deep);
  ASSERT_FALSE(record.ok());
  EXPECT_EQ(record.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(record.status().message(), HasSubstr("nests deeper than 31 levels"));
  // Brackets inside strings are text, not nesting.
  EXPECT_TRUE(DecodeRecord(R"({"type":"error","reason":")" + std::string(1000, '[') + "\"}").ok());
}

TEST(TrainerRecords, ADocumentAtTheDepthLimitSurvivesTheRoundTrip) {
  const std::string line = R"({"type":"provenance","config":)" + Nested(kMaxJsonTextDepth) + "}";
  StatusOr<TrainerRecord> record = DecodeRecord(line);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  StatusOr<TrainerRecord> again = DecodeRecord(EncodeRecord(*record));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(std::get<ProvenanceRecord>(*again).config.text, Nested(kMaxJsonTextDepth));
  EXPECT_FALSE(DecodeRecord(R"({"type":"provenance","config":)" + Nested(kMaxJsonTextDepth + 1) + "}").ok());
}

// The diagnostics payloads are typed: a field of the wrong type is an error naming it, and the JSON
// form is the one the store has kept since schema 1 (a table is nested arrays, NaN is null).
TEST(TrainerRecords, ADiagnosticsPayloadIsTypedInItsRecord) {
  StatusOr<TrainerRecord> wrong = DecodeRecord(
      R"({"type":"diagnostics","kind":"attention","attention":{"layers":[{"heads":[{"pair_usage":"high"}]}]}})");
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("attention.layers[0].heads[0].pair_usage' must be an array"));
  StatusOr<TrainerRecord> read = DecodeRecord(
      R"({"type":"diagnostics","kind":"niah_grid","niah_grid":{"distractors":[0,1],"grids":[{"multiple":2,)"
      R"("accuracy":[[1.0,null],[0.5,0.25]]}]}})");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const NiahGridDiagnostics& grid = *std::get<DiagnosticsRecord>(*read).niah_grid;
  ASSERT_EQ(grid.grids.size(), 1u);
  EXPECT_EQ(grid.grids[0].multiple, 2);
  ASSERT_EQ(grid.grids[0].accuracy.size(), 2u);
  EXPECT_TRUE(std::isnan(grid.grids[0].accuracy[0][1])) << "null is a cell without answers";
  EXPECT_EQ(grid.grids[0].accuracy[1][1], 0.25);
  EXPECT_EQ(json::parse(EncodeDocument(grid))["grids"][0]["accuracy"], json::parse("[[1.0,null],[0.5,0.25]]"));
}

// A stored document of an earlier release reads: the learned temperature's "lengths" was null when
// it held more than 16.
TEST(TrainerRecords, AnEarlierDocumentsNullListReadsAsEmpty) {
  AttentionDiagnostics attention;
  Status status = DecodeDocument(
      R"({"inverse_temperature":{"xi_beta_trim":{"fitted":true,"xi":0.5,"lengths":null,"points":40,"trim":64}}})",
      &attention);
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_TRUE(attention.inverse_temperature.has_value());
  EXPECT_TRUE(attention.inverse_temperature->xi_beta_trim.lengths.empty());
  EXPECT_EQ(attention.inverse_temperature->xi_beta_trim.trim, 64);
  EXPECT_FALSE(DecodeDocument(R"({"layers":{}})", &attention).ok());
}

TEST(TrainerRecords, JsonDeeperThanCountsArraysAndObjectsOutsideStrings) {
  EXPECT_FALSE(JsonDeeperThan("", 0));
  EXPECT_FALSE(JsonDeeperThan(R"({"a":[1,{"b":2}]})", 3));
  EXPECT_TRUE(JsonDeeperThan(R"({"a":[1,{"b":2}]})", 2));
  EXPECT_FALSE(JsonDeeperThan(R"(["[[[\"[[", "\\"])", 1));
  EXPECT_TRUE(JsonDeeperThan("]]]][[", 1));
}

// An integer beyond int64 read back as a negative one (2^64 - 1 as -1).
TEST(TrainerRecords, AnIntegerBeyondInt64IsAnError) {
  StatusOr<TrainerRecord> record = DecodeRecord(R"({"type":"step","step":18446744073709551615})");
  ASSERT_FALSE(record.ok());
  EXPECT_THAT(record.status().message(), HasSubstr("field 'step' must be an integer within int64"));
  record = DecodeRecord(R"({"type":"step","step":9223372036854775807})");
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(std::get<StepRecord>(*record).step, std::numeric_limits<int64_t>::max());
}

// Every input fuzz/regressions/records/ holds (each once crashed the fuzz target) decodes or is
// refused with INVALID_ARGUMENT, and what decodes survives the round trip.
TEST(TrainerRecords, FuzzRegressionInputsDecodeOrAreRefused) {
  const std::filesystem::path folder = std::filesystem::path(RUNG_SOURCE_DIR) / "fuzz/regressions/records";
  ASSERT_TRUE(std::filesystem::is_directory(folder)) << folder;
  int inputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    StatusOr<TrainerRecord> record = DecodeRecord(line);
    ++inputs;
    if (!record.ok()) {
      EXPECT_EQ(record.status().code(), StatusCode::kInvalidArgument) << entry.path();
      continue;
    }
    const std::string once = EncodeRecord(*record);
    StatusOr<TrainerRecord> again = DecodeRecord(once);
    ASSERT_TRUE(again.ok()) << entry.path() << ": " << again.status().ToString();
    EXPECT_EQ(EncodeRecord(*again), once) << entry.path();
  }
  EXPECT_GT(inputs, 0);
}

}  // namespace
}  // namespace rung::records
