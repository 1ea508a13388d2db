#include "sweeps/spec/storage_estimate.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/sweeps/spec/spec_test_util.h"

namespace rung {
namespace {

std::vector<const ExpandedTrial*> All(const ExpandedSweep& sweep) {
  std::vector<const ExpandedTrial*> trials;
  for (const ExpandedTrial& trial : sweep.trials) trials.push_back(&trial);
  return trials;
}

// `rung run sweeps/examples/quickstart.yaml --workers 2` measured (this build's trainer and store):
// the 12 final checkpoints sum to 14,129,307 bytes and the database file to 2,355,200 bytes.
TEST(StorageEstimate, ErrsHighButWithinTwiceTheQuickstartsMeasuredSizes) {
  std::ifstream file(std::string(RUNG_SOURCE_DIR) + "/sweeps/examples/quickstart.yaml");
  std::stringstream text;
  text << file.rdbuf();
  StatusOr<ExpandedSweep> sweep = ExpandSweepSpecText(text.str(), "quickstart.yaml");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  const StorageNeeds needs = EstimateStorageNeeds(All(*sweep));
  EXPECT_GE(needs.checkpoint_bytes, 14129307u);
  EXPECT_LE(needs.checkpoint_bytes, 2u * 14129307u);
  EXPECT_GE(needs.database_bytes, 2355200u);
  EXPECT_LE(needs.database_bytes, 2u * 2355200u);
}

TEST(StorageEstimate, ACheckpointIsTwelveBytesAParameterAndTheRunningTrialKeepsMore) {
  StatusOr<ExpandedSweep> sweep = spec_testing::Expand(spec_testing::BaseSpec() + "sweep: {seed: [1, 2]}\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  const uint64_t one = CheckpointBytes(sweep->trials[0].config);
  const ParameterCounts parameters = sweep->trials[0].parameters;
  EXPECT_EQ(one, 12u * static_cast<uint64_t>(parameters.total()) + kCheckpointOverheadBytes);
  const StorageNeeds needs = EstimateStorageNeeds(All(*sweep));
  // Two final checkpoints, and keep_checkpoints (2) more while one trains.
  EXPECT_EQ(needs.checkpoint_bytes, 4 * one);
  EXPECT_EQ(EstimateStorageNeeds({}).checkpoint_bytes, 0u);
  EXPECT_EQ(EstimateStorageNeeds({}).database_bytes, 0u);
}

}  // namespace
}  // namespace rung
