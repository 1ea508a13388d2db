#include "core/diagnostics/distance_bins.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung {
namespace {

using ::testing::ElementsAre;

TEST(DistanceBins, DistanceZeroAloneThenGeometricEdgesUpToTheLength) {
  EXPECT_THAT(DistanceBinEdges(64, 4), ElementsAre(0, 1, 4, 16, 64));
  EXPECT_THAT(DistanceBinEdges(1000, 4), ElementsAre(0, 1, 10, 100, 1000));
}

TEST(DistanceBins, AShortLengthGivesOneBinPerDistance) {
  EXPECT_THAT(DistanceBinEdges(8, 32), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8));
  EXPECT_THAT(DistanceBinEdges(1, 32), ElementsAre(0, 1));
  EXPECT_THAT(DistanceBinEdges(5, 1), ElementsAre(0, 5));
}

TEST(DistanceBins, EdgesStrictlyIncreaseAndEveryDistanceHasItsBin) {
  for (int64_t time : {2, 3, 17, 100, 1024, 4096}) {
    for (int64_t bins : {2, 3, 8, 32, 100}) {
      const std::vector<int64_t> edges = DistanceBinEdges(time, bins);
      ASSERT_EQ(edges.front(), 0);
      ASSERT_EQ(edges.back(), time);
      ASSERT_LE(static_cast<int64_t>(edges.size()) - 1, bins);
      for (size_t b = 1; b < edges.size(); ++b) ASSERT_LT(edges[b - 1], edges[b]) << time << " " << bins;
      const std::vector<int64_t> bin_of = DistanceBinOf(edges);
      ASSERT_EQ(static_cast<int64_t>(bin_of.size()), time);
      for (int64_t distance = 0; distance < time; ++distance) {
        const int64_t b = bin_of[static_cast<size_t>(distance)];
        EXPECT_LE(edges[static_cast<size_t>(b)], distance);
        EXPECT_LT(distance, edges[static_cast<size_t>(b) + 1]);
      }
    }
  }
}

}  // namespace
}  // namespace rung
