// tests/proto/trainer_record_proto_test.cc
//
// The record header (core/records/trainer_records.h) and the proto messages (proto/rung.proto,
// TrainerRecord) agree field for field, so the two cannot drift; and every record crosses the wire
// unchanged.
#include "proto/trainer_record_proto.h"
#include "core/records/record_json.h"

#include <cmath>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung::wire {
namespace {

using ::testing::HasSubstr;

TEST(TrainerRecordProto, HeaderAndProtoMessagesAgreeFieldForField) {
  Status check = CheckRecordMessages();
  EXPECT_TRUE(check.ok()) << check.message();
}

TEST(TrainerRecordProto, EveryRecordCrossesTheWireUnchanged) {
  records::ProvenanceRecord provenance;
  provenance.commit = "abc123";
  provenance.config.text = R"({"seed":0})";
  provenance.flops_per_token.total = 1.5e6;
  provenance.resumed_from = "/c/ckpt-000020.pt";
  provenance.cuda_available = true;
  records::StepRecord step;
  step.step = 10;
  step.train_loss = std::numeric_limits<double>::quiet_NaN();
  step.val_loss = 2.5;
  step.replayed = true;
  records::FinalRecord final_record;
  final_record.step = 30;
  final_record.val_loss = 2.25;
  final_record.positional_parameters = {{"positional.s", {2, 3}, {1, 2, 3, 4, 5, 6}}};
  records::ExtrapolationResult twice;
  twice.multiple = 2;
  twice.val_accuracy = 0.5;
  twice.val_loss_per_position = {1.0, 2.0};
  final_record.extrapolation = {twice};
  records::DiagnosticsRecord diagnostics;
  diagnostics.kind = "attention";
  diagnostics.head = 3;
  records::AttentionDiagnostics& attention = diagnostics.attention.emplace();
  attention.grid = {64, 128};
  attention.warning = "a geometric grid";
  records::AttentionLayer& layer = attention.layers.emplace_back();
  layer.gap_counting.xi_lambda = 0.61;
  layer.gap_counting.at_training_length = records::GapCountingAtLength{16, 4, 1, 2.5, 0.75, 0.5};
  records::AttentionHead& head = layer.heads.emplace_back();
  head.pair_profile = {{0.5, std::numeric_limits<double>::quiet_NaN()}, {}, {0.25}};
  head.dominant_pair = 0;
  head.failure_modes.push_back(
      {64, "bf16", "appendix_d1", 1, 0.5, 0.1, 0.0, 0.0, std::numeric_limits<double>::quiet_NaN(), 0.0, 3.0});
  records::DiagnosticsRecord beyond;
  beyond.kind = "attention_beyond";
  records::AttentionDiagnostics& far = beyond.attention_beyond.emplace();
  far.length = 512;
  far.multiple = 4;
  far.method = "dynamic_ntk";
  far.grid = {128, 256, 384, 512};
  records::DiagnosticsRecord grid;
  grid.kind = "niah_grid";
  grid.niah_grid.emplace().grids.push_back({2, 32, "yarn", {{1.0, 0.5}}, {{0.0, 1.0}}});
  records::PreemptedRecord preempted;
  preempted.signal = 15;
  records::ErrorRecord error;
  error.reason = "non-finite";
  records::CheckpointRecord checkpoint;
  checkpoint.path = "/c/ckpt-000010.pt";
  for (const records::TrainerRecord& record : std::vector<records::TrainerRecord>{
           provenance, step, final_record, diagnostics, beyond, grid, preempted, error, checkpoint}) {
    StatusOr<records::TrainerRecord> back = FromProto(ToProto(record));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(records::EncodeRecord(*back), records::EncodeRecord(record));
  }
}

TEST(TrainerRecordProto, OptionalFieldsKeepTheirPresence) {
  records::StepRecord step;
  step.step = 1;
  v1::TrainerRecord message = ToProto(step);
  EXPECT_FALSE(message.step().has_val_loss());
  step.val_loss = 0.0;
  message = ToProto(step);
  ASSERT_TRUE(message.step().has_val_loss()) << "a zero that was set is sent";
  StatusOr<records::TrainerRecord> back = FromProto(message);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::get<records::StepRecord>(*back).val_loss, 0.0);
}

TEST(TrainerRecordProto, AnEmptyMessageIsRefused) {
  EXPECT_THAT(FromProto(v1::TrainerRecord()).status().message(), HasSubstr("holds no record"));
}

// `depth` lists nested in `value`: [[[...]]].
void Nest(int depth, v1::ConfigValue* value) {
  for (int level = 0; level < depth; ++level) value = value->mutable_list()->add_values();
  value->set_integer(1);
}

// Fuzzing found it (docs/fuzzing.md): a diagnostics payload nested a million levels deep was
// accepted (json::accept does not recurse) and overflowed the coordinator's stack when the store
// wrote it again. The payloads are typed now; the provenance's documents travel as JSON values,
// and one nested deeper than the records allow is refused before anyone writes it again.
TEST(TrainerRecordProto, ADocumentNestedDeeperThanTheLimitIsRefused) {
  v1::TrainerRecord message;
  Nest(records::kMaxJsonTextDepth + 1, message.mutable_provenance()->mutable_config());
  StatusOr<records::TrainerRecord> record = FromProto(message);
  ASSERT_FALSE(record.ok());
  EXPECT_EQ(record.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(record.status().message(), HasSubstr("provenance.config' nests deeper than 30 levels"));
  message.mutable_provenance()->clear_config();
  Nest(records::kMaxJsonTextDepth, message.mutable_provenance()->mutable_config());
  record = FromProto(message);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(std::get<records::ProvenanceRecord>(*record).config.text,
            std::string(records::kMaxJsonTextDepth, '[') + "1" + std::string(records::kMaxJsonTextDepth, ']'));
}

// The deepest document a record accepts (objects: three messages a level) still parses on the far
// side of the wire, inside the largest request that carries it.
TEST(TrainerRecordProto, TheDeepestAcceptedDocumentCrossesTheWire) {
  std::string text = "1";
  for (int level = 0; level < records::kMaxJsonTextDepth; ++level) text = R"({"a":)" + text + "}";
  const std::string line = R"({"type":"provenance","config":)" + text + "}";
  ASSERT_TRUE(records::DecodeRecord(line).ok()) << "at the limit";
  v1::MetricBatch batch;
  ASSERT_NE(AddStdoutLine(line, &batch), nullptr);
  v1::ReportMetricsRequest request;
  *request.mutable_batch() = batch;
  v1::ReportMetricsRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(request.SerializeAsString())) << "protobuf's nesting limit";
  StatusOr<records::TrainerRecord> record = FromProto(parsed.batch().stdout(0).record());
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(std::get<records::ProvenanceRecord>(*record).config.text, text);
}

// A provenance's documents cross as JSON values: their types kept, an empty one unset.
TEST(TrainerRecordProto, AProvenancesDocumentsTravelAsJsonValues) {
  records::ProvenanceRecord provenance;
  provenance.config.text = R"({"seed":0,"train":{"lr":0.001,"schedule":"cosine"}})";
  provenance.parameters.text = R"({"nonembedding":1024})";
  const v1::TrainerRecord message = ToProto(provenance);
  EXPECT_EQ(message.provenance().config().object().entries(0).key(), "seed");
  EXPECT_EQ(message.provenance().config().object().entries(0).value().integer(), 0) << "an integer, not a number";
  EXPECT_EQ(message.provenance().parameters().object().entries(0).value().integer(), 1024);
  EXPECT_FALSE(message.provenance().has_blas()) << "no document: unset";
  StatusOr<records::TrainerRecord> back = FromProto(message);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(std::get<records::ProvenanceRecord>(*back).config.text, provenance.config.text);
  EXPECT_TRUE(std::get<records::ProvenanceRecord>(*back).blas.empty());
}

// The payload messages the coordinator sends (TrialDiagnostic) agree with the structs field for
// field, and a table ([rows][columns]) crosses as DoubleRow messages.
TEST(TrainerRecordProto, PayloadMessagesAgreeWithTheirStructs) {
  for (const Status& check : {CheckStructMessage<records::AttentionDiagnostics>(v1::AttentionDiagnostics::descriptor()),
                              CheckStructMessage<records::NiahGridDiagnostics>(v1::NiahGridDiagnostics::descriptor()),
                              CheckStructMessage<records::BandAblationDiagnostics>(v1::BandAblationDiagnostics::descriptor()),
                              CheckStructMessage<records::HeadInfluenceDiagnostics>(v1::HeadInfluenceDiagnostics::descriptor()),
                              CheckStructMessage<records::ProbeResult>(v1::ProbeResult::descriptor()),
                              CheckStructMessage<records::ExtrapolationResult>(v1::ExtrapolationResult::descriptor()),
                              CheckStructMessage<records::Tensor>(v1::Tensor::descriptor())}) {
    EXPECT_TRUE(check.ok()) << check.message();
  }
  records::NiahGridDiagnostics grid;
  grid.grids.push_back({1, 16, "none", {{1.0, 0.5}, {0.25}}, {}});
  v1::NiahGridDiagnostics message;
  StructToMessage(grid, &message);
  ASSERT_EQ(message.grids(0).accuracy_size(), 2);
  EXPECT_EQ(message.grids(0).accuracy(1).values(0), 0.25);
  records::NiahGridDiagnostics back;
  ASSERT_TRUE(StructFromMessage(message, &back).ok());
  EXPECT_EQ(records::EncodeDocument(back), records::EncodeDocument(grid));
}

}  // namespace
}  // namespace rung::wire
