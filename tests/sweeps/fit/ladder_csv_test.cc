#include "sweeps/fit/ladder_csv.h"

#include <gtest/gtest.h>

namespace rung::fit {
namespace {

TEST(LadderCsv, ReadsColumnsInAnyOrderWithOptionalSeedAndSeconds) {
  StatusOr<LadderResults> ladder = ParseLadderCsv(
      "loss,compute,label,variant,seconds,seed\n"
      "3.5,1e10,r1,rope,12.5,0\n"
      "3.4,1e10,r1,rope,12.0,1\n",
      "l.csv");
  ASSERT_TRUE(ladder.ok()) << ladder.status().message();
  ASSERT_EQ(ladder->runs.size(), 2u);
  EXPECT_EQ(ladder->runs[1].variant, "rope");
  EXPECT_EQ(ladder->runs[1].label, "r1");
  EXPECT_DOUBLE_EQ(ladder->runs[1].compute, 1e10);
  EXPECT_DOUBLE_EQ(ladder->runs[1].loss, 3.4);
  EXPECT_EQ(ladder->runs[1].seed, 1);
  EXPECT_DOUBLE_EQ(ladder->runs[1].seconds.value(), 12.0);
  EXPECT_EQ(ladder->runs[1].origin, "l.csv:3");
  EXPECT_TRUE(ladder->has_seeds());
  EXPECT_TRUE(ladder->has_seconds());
}

TEST(LadderCsv, SkipsCommentsAndBlankLinesAndReadsQuotesAndCrlf) {
  StatusOr<LadderResults> ladder = ParseLadderCsv(
      "# a made-up ladder\r\n"
      "\r\n"
      "Variant, Label ,compute,LOSS\r\n"
      "\"rope, partial\",\"r \"\"1\"\"\",1e10,3.5\r\n"
      "  rope , r2 , 1e11 , 3.0 \r\n",
      "l.csv");
  ASSERT_TRUE(ladder.ok()) << ladder.status().message();
  ASSERT_EQ(ladder->runs.size(), 2u);
  EXPECT_EQ(ladder->runs[0].variant, "rope, partial");
  EXPECT_EQ(ladder->runs[0].label, "r \"1\"");
  EXPECT_EQ(ladder->runs[0].origin, "l.csv:4");
  EXPECT_EQ(ladder->runs[1].variant, "rope");
  EXPECT_DOUBLE_EQ(ladder->runs[1].loss, 3.0);
  EXPECT_FALSE(ladder->has_seeds());
}

TEST(LadderCsv, NamesFileLineAndColumnOfABadNumber) {
  StatusOr<LadderResults> ladder = ParseLadderCsv(
      "variant,label,compute,loss\n"
      "rope,r1,1e10,3.5\n"
      "rope,r2,lots,3.0\n"
      "rope,r3,1e12,\n",
      "ladder.csv");
  ASSERT_FALSE(ladder.ok());
  EXPECT_EQ(ladder.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ladder.status().message().find("ladder.csv:3: column 'compute': 'lots' is not a number"), std::string::npos)
      << ladder.status().message();
  EXPECT_NE(ladder.status().message().find("ladder.csv:4: column 'loss': empty"), std::string::npos)
      << ladder.status().message();
}

TEST(LadderCsv, UnknownColumnGetsASuggestionAndMissingColumnsAreNamed) {
  StatusOr<LadderResults> ladder = ParseLadderCsv("variant,label,compute,los\nrope,r1,1e10,3\n", "l.csv");
  ASSERT_FALSE(ladder.ok());
  EXPECT_NE(ladder.status().message().find("l.csv:1: unknown column 'los' (did you mean 'loss'?)"), std::string::npos)
      << ladder.status().message();
  EXPECT_NE(ladder.status().message().find("missing column 'loss'"), std::string::npos);
}

TEST(LadderCsv, RejectsAWrongNumberOfFields) {
  StatusOr<LadderResults> ladder = ParseLadderCsv("variant,label,compute,loss\nrope,r1,1e10\n", "l.csv");
  ASSERT_FALSE(ladder.ok());
  EXPECT_NE(ladder.status().message().find("l.csv:2: 3 fields, the header has 4"), std::string::npos)
      << ladder.status().message();
}

TEST(LadderCsv, RejectsDuplicateRunsNamingBothLines) {
  StatusOr<LadderResults> ladder =
      ParseLadderCsv("variant,label,compute,loss\nrope,r1,1e10,3.5\nrope,r2,1e11,3\nrope,r1,1e10,3.4\n", "l.csv");
  ASSERT_FALSE(ladder.ok());
  EXPECT_NE(ladder.status().message().find("l.csv:4: duplicate run of variant 'rope' at 'r1' (first at l.csv:2)"),
            std::string::npos)
      << ladder.status().message();
  EXPECT_NE(ladder.status().message().find("seed column"), std::string::npos);
}

TEST(LadderCsv, RejectsSeedsOfOnePointAtDifferentCompute) {
  StatusOr<LadderResults> ladder =
      ParseLadderCsv("variant,label,compute,loss,seed\nrope,r1,1e10,3.5,0\nrope,r1,2e10,3.4,1\n", "l.csv");
  ASSERT_FALSE(ladder.ok());
  EXPECT_NE(ladder.status().message().find("l.csv:3: compute 2e+10 differs from 1e+10"), std::string::npos)
      << ladder.status().message();
}

TEST(LadderCsv, RejectsNonPositiveValuesAndBadSeeds) {
  StatusOr<LadderResults> ladder = ParseLadderCsv(
      "variant,label,compute,loss,seed,seconds\n"
      "rope,r1,-1e10,3.5,0,1\n"
      "rope,r2,1e11,0,0,1\n"
      "rope,r3,1e12,3,x,1\n"
      "rope,r4,1e13,3,1,-2\n",
      "l.csv");
  ASSERT_FALSE(ladder.ok());
  const std::string& message = ladder.status().message();
  EXPECT_NE(message.find("l.csv:4: column 'seed': 'x' is not an integer"), std::string::npos) << message;
  // Parse errors come first; the value checks need a parsed file.
  StatusOr<LadderResults> values = ParseLadderCsv(
      "variant,label,compute,loss,seconds\nrope,r1,-1e10,3.5,1\nrope,r2,1e11,0,1\nrope,r4,1e13,3,-2\n", "l.csv");
  ASSERT_FALSE(values.ok());
  EXPECT_NE(values.status().message().find("l.csv:2: compute must be a positive number of FLOPs"), std::string::npos)
      << values.status().message();
  EXPECT_NE(values.status().message().find("l.csv:3: loss must be a positive number of nats"), std::string::npos);
  EXPECT_NE(values.status().message().find("l.csv:4: seconds must be positive"), std::string::npos);
}

TEST(LadderCsv, EmptyInputAndMissingFileAreErrors) {
  EXPECT_EQ(ParseLadderCsv("", "l.csv").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLadderCsv("variant,label,compute,loss\n", "l.csv").status().code(), StatusCode::kInvalidArgument);
  StatusOr<LadderResults> missing = ReadLadderCsv("/nonexistent/ladder.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/ladder.csv"), std::string::npos);
}

TEST(LadderCsv, ReadsTheExampleLadder) {
  StatusOr<LadderResults> ladder = ReadLadderCsv(RUNG_SOURCE_DIR "/sweeps/examples/ladder-example.csv");
  ASSERT_TRUE(ladder.ok()) << ladder.status().message();
  EXPECT_EQ(ladder->runs.size(), 36u);  // 3 variants x 4 rungs x 3 seeds
  EXPECT_EQ(ladder->Variants(), (std::vector<std::string>{"rope", "lerope", "nope"}));
  EXPECT_TRUE(ladder->has_seeds());
  EXPECT_TRUE(ladder->has_seconds());
  std::vector<VariantCurve> curves = BuildCurves(ladder.value());
  ASSERT_EQ(curves.size(), 3u);
  ASSERT_EQ(curves[0].points.size(), 4u);
  EXPECT_EQ(curves[0].points[0].seeds.size(), 3u);
  // rope r1: seeds 2.1445, 2.1494, 2.1469.
  EXPECT_NEAR(curves[0].points[0].loss, (2.1445 + 2.1494 + 2.1469) / 3, 1e-12);
  EXPECT_NEAR(curves[0].points[0].loss_sd, 0.00245, 1e-5);
}

}  // namespace
}  // namespace rung::fit
