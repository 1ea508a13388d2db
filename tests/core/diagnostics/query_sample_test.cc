#include "core/diagnostics/query_sample.h"

#include <gtest/gtest.h>

namespace rung {
namespace {

TEST(DiagnosticQueryPositions, EveryPositionUpToTheBound) {
  EXPECT_EQ(DiagnosticQueryPositions(5, 8), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(DiagnosticQueryPositions(8, 8), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(DiagnosticQueryPositions(0, 8).empty());
}

TEST(DiagnosticQueryPositions, BeyondTheBoundAnEvenSpreadEndingAtTheLastPosition) {
  EXPECT_EQ(DiagnosticQueryPositions(16, 4), (std::vector<int64_t>{3, 7, 11, 15}));
  EXPECT_EQ(DiagnosticQueryPositions(10, 4), (std::vector<int64_t>{1, 4, 6, 9}));
  for (int64_t time : {257, 1000, 4096, 16385}) {
    const std::vector<int64_t> positions = DiagnosticQueryPositions(time, 256);
    ASSERT_EQ(positions.size(), 256u) << time;
    EXPECT_EQ(positions.back(), time - 1);
    EXPECT_GE(positions.front(), 0);
    for (size_t k = 1; k < positions.size(); ++k) EXPECT_GT(positions[k], positions[k - 1]) << time;
  }
}

}  // namespace
}  // namespace rung
