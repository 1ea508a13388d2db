// tests/coordinator/domain/curve_downsampling_test.cc
//
// Min/max per bucket against buckets worked out by hand, the extremes surviving, the bound on the
// points, and NaN.
#include "coordinator/domain/curve_downsampling.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung {
namespace {

using ::testing::ElementsAre;

TEST(MinMaxBucketIndicesTest, ACurveThatFitsIsKeptWhole) {
  EXPECT_THAT(MinMaxBucketIndices({3, 1, 2}, 4), ElementsAre(0, 1, 2));
  EXPECT_THAT(MinMaxBucketIndices({}, 4), ElementsAre());
  EXPECT_THAT(MinMaxBucketIndices({5, 4, 3, 2, 1, 0}, 6), ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(MinMaxBucketIndicesTest, EachBucketKeepsItsLowestAndHighestInOrder) {
  // 12 points, at most 6: the ends (0 and 11) and (6 - 2) / 2 = 2 buckets of the 10 interior
  // points: indices 1..5 and 6..10.
  //            0  1  2  3  4  5  6  7  8  9  10  11
  const std::vector<double> values = {5, 4, 9, 3, 6, 7, 2, 8, 1, 5, 6, 4};
  // Bucket 1..5: lowest 3 (index 3), highest 9 (index 2) -> 2, 3.
  // Bucket 6..10: lowest 1 (index 8), highest 8 (index 7) -> 7, 8.
  EXPECT_THAT(MinMaxBucketIndices(values, 6), ElementsAre(0, 2, 3, 7, 8, 11));
}

TEST(MinMaxBucketIndicesTest, UnevenBucketsDifferByOnePoint) {
  // 9 points, at most 6: interior 1..7 (7 points) in 2 buckets: 1 + 0*7/2 = 1 .. 1 + 7/2 = 4 (1..3),
  // then 4..7.
  //            0  1  2  3  4  5  6  7  8
  const std::vector<double> values = {0, 1, 3, 2, 9, 8, 7, 6, 0};
  // Bucket 1..3: lowest index 1, highest index 2. Bucket 4..7: highest index 4, lowest index 7.
  EXPECT_THAT(MinMaxBucketIndices(values, 6), ElementsAre(0, 1, 2, 4, 7, 8));
}

TEST(MinMaxBucketIndicesTest, AFlatBucketKeepsOnePoint) {
  const std::vector<double> values = {1, 2, 2, 2, 2, 2, 3};
  // At most 4: one bucket of the interior 1..5, all 2: its first point once.
  EXPECT_THAT(MinMaxBucketIndices(values, 4), ElementsAre(0, 1, 6));
}

TEST(MinMaxBucketIndicesTest, ASpikeAndADipSurviveEvenThinning) {
  std::vector<double> values(2000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 3.0 - 1e-3 * static_cast<double>(i);
  values[777] = 50.0;  // a loss spike
  values[1333] = -5.0;  // a dip
  const std::vector<size_t> kept = MinMaxBucketIndices(values, 100);
  EXPECT_LE(kept.size(), 100u);
  EXPECT_GE(kept.size(), 50u);
  EXPECT_THAT(kept, ::testing::Contains(777));
  EXPECT_THAT(kept, ::testing::Contains(1333));
  EXPECT_EQ(kept.front(), 0u);
  EXPECT_EQ(kept.back(), 1999u);
  for (size_t i = 1; i < kept.size(); ++i) EXPECT_LT(kept[i - 1], kept[i]);
}

TEST(MinMaxBucketIndicesTest, NeverMoreThanMaxPointsAndAtLeastFour) {
  std::vector<double> values(1001);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<double>(i));
  for (size_t max_points : {4u, 5u, 7u, 100u, 999u, 1000u}) {
    EXPECT_LE(MinMaxBucketIndices(values, max_points).size(), max_points) << max_points;
  }
  // Under four is taken as four: the ends and one bucket.
  EXPECT_LE(MinMaxBucketIndices(values, 1).size(), 4u);
  EXPECT_GE(MinMaxBucketIndices(values, 1).size(), 3u);
}

TEST(MinMaxBucketIndicesTest, NanIsNoExtremeButABucketOfNanStillShows) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  //                                  0  1    2    3  4    5    6    7    8    9
  const std::vector<double> values = {1, nan, 5,   2, nan, nan, nan, nan, nan, 0};
  // At most 6: buckets 1..4 and 5..8. Bucket 1..4: highest 5 (2), lowest 2 (3). Bucket 5..8: NaN only: 5.
  EXPECT_THAT(MinMaxBucketIndices(values, 6), ElementsAre(0, 2, 3, 5, 9));
}

}  // namespace
}  // namespace rung
