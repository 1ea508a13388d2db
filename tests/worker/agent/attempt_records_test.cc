// tests/worker/agent/attempt_records_test.cc
//
// What the agent keeps of a trainer's stdout (worker/agent/attempt_records.h): each line decoded
// once into a typed record, stray lines left as log text, and the attempt's summary (newest step,
// checkpoint, error, final) that its ending is classified from.
#include "worker/agent/attempt_records.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung::agent {
namespace {

using ::testing::HasSubstr;

TEST(AttemptRecordsTest, EachLineIsDecodedOnceIntoItsTypedRecord) {
  AttemptRecords records;
  const records::TrainerRecord* step =
      records.Add(R"({"type":"step","step":40,"tokens":10240,"flops":1.5e9,"lr":0.003,"train_loss":2.5})");
  ASSERT_NE(step, nullptr);
  ASSERT_TRUE(std::holds_alternative<records::StepRecord>(*step));
  EXPECT_EQ(std::get<records::StepRecord>(*step).tokens, 10240);
  EXPECT_EQ(records.latest_step(), 40);
}

TEST(AttemptRecordsTest, StrayLinesAreLogTextOnlyAndMalformedRecordsAreCounted) {
  AttemptRecords records;
  EXPECT_EQ(records.Add("warning: not JSON"), nullptr);
  EXPECT_EQ(records.Add("[1,2]"), nullptr);
  EXPECT_EQ(records.undecodable_lines(), 0) << "lines nobody meant as records";
  EXPECT_EQ(records.Add(R"({"type":"step","step":"forty"})"), nullptr);
  EXPECT_EQ(records.Add(R"({"type":"something new"})"), nullptr);
  EXPECT_EQ(records.undecodable_lines(), 2);
  EXPECT_THAT(records.first_decode_error(), HasSubstr("field 'step' must be an integer"));
}

TEST(AttemptRecordsTest, AnAttemptKeepsItsNewestStepCheckpointAndError) {
  AttemptRecords records;
  records.Add(R"({"type":"provenance"})");
  records.Add(R"({"type":"step","step":10})");
  records.Add(R"({"type":"checkpoint","step":10,"path":"/a/ckpt-0000000010.pt","reason":"periodic"})");
  records.Add(R"({"type":"step","step":20})");
  records.Add(R"({"type":"error","step":21,"reason":"non-finite training loss (nan) at step 21"})");
  EXPECT_EQ(records.latest_step(), 21);
  ASSERT_TRUE(records.checkpoint().has_value());
  EXPECT_EQ(records.checkpoint()->path, "/a/ckpt-0000000010.pt");
  EXPECT_EQ(records.checkpoint()->step, 10);
  EXPECT_EQ(records.error_reason(), "non-finite training loss (nan) at step 21");
  EXPECT_FALSE(records.has_final());

  records.Add(R"({"type":"preempted","step":30,"signal":15,"checkpoint":"/a/ckpt-0000000030.pt"})");
  EXPECT_EQ(records.checkpoint()->path, "/a/ckpt-0000000030.pt");
  EXPECT_EQ(records.checkpoint()->step, 30);
}

TEST(AttemptRecordsTest, AFinalRecordIsNoted) {
  AttemptRecords records;
  records.Add(R"({"type":"final","step":20,"val_loss":2.25})");
  EXPECT_TRUE(records.has_final());
  EXPECT_EQ(records.latest_step(), 20);
}

TEST(AttemptRecordsTest, AResumedRunStartsItsSummaryAtItsStartStep) {
  AttemptRecords records;
  records.Add(R"({"type":"provenance","start_step":600,"resumed_from":"/a/ckpt-0000000600.pt"})");
  EXPECT_EQ(records.latest_step(), 600);
}

}  // namespace
}  // namespace rung::agent
