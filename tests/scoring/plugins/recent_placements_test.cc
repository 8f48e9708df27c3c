#include "scoring/plugins/recent_placements.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(RecentPlacementsScoreTest, PenaltyPerPlacementFloorsAtZero) {
  EXPECT_EQ(RecentPlacementsScore(0, 10), 100);  // 100 - 0 * 10
  EXPECT_EQ(RecentPlacementsScore(3, 10), 70);   // 100 - 3 * 10
  EXPECT_EQ(RecentPlacementsScore(12, 10), 0);   // 100 - 120 < 0 -> 0
  EXPECT_EQ(RecentPlacementsScore(5, 0), 100);   // penalty off
}

}  // namespace
}  // namespace ms
