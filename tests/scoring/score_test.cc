#include "scoring/score.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(LeastAllocatedScoreTest, KubeSchedulerArithmetic) {
  struct Case {
    int64_t alloc_cpu, req_cpu, alloc_mem, req_mem;
    int64_t want;
  };
  for (const Case& c : std::vector<Case>{
           // cpu (4000 - 3000) * 100 / 4000 = 25; mem (10000 - 5000) * 100 /
           // 10000 = 50; (25 + 50) / 2 = 37 (integer division).
           {4000, 3000, 10000, 5000, 37},
           // Empty node: 100 and 100.
           {4000, 0, 10000, 0, 100},
           // Requested > allocatable scores 0 for that resource:
           // (0 + (10000 - 1) * 100 / 10000 = 99) / 2 = 49.
           {4000, 5000, 10000, 1, 49},
           // A resource with allocatable 0 is left out: only memory counts.
           // (8000 - 2000) * 100 / 8000 = 75.
           {0, 100, 8000, 2000, 75},
           // No resource at all: 0.
           {0, 0, 0, 0, 0},
           // Exact integer boundary: (3 - 1) * 100 / 3 = 66.67 -> 66.
           {3, 1, 3, 1, 66},
       }) {
    EXPECT_EQ(LeastAllocatedScore(c.alloc_cpu, c.req_cpu, c.alloc_mem,
                                  c.req_mem),
              c.want)
        << c.alloc_cpu << " " << c.req_cpu << " " << c.alloc_mem << " "
        << c.req_mem;
  }
}

TEST(BalancedAllocationScoreTest, KubeSchedulerArithmetic) {
  struct Case {
    int64_t alloc_cpu, req_cpu, alloc_mem, req_mem;
    int64_t want;
  };
  for (const Case& c : std::vector<Case>{
           // fractions 3000/4000 = 0.75 and 5000/10000 = 0.5;
           // std = |0.75 - 0.5| / 2 = 0.125; (1 - 0.125) * 100 = 87.5 -> 87.
           {4000, 3000, 10000, 5000, 87},
           // Equal fractions: std 0, score 100.
           {4000, 2000, 10000, 5000, 100},
           // Fractions are capped at 1: 1 and 0.5 -> std 0.25 -> 75.
           {4000, 8000, 10000, 5000, 75},
           // One resource with allocatable 0: a single fraction, std 0.
           {0, 100, 10000, 9000, 100},
           // 0 and 1: std 0.5 -> 50.
           {4000, 0, 10000, 10000, 50},
       }) {
    EXPECT_EQ(BalancedAllocationScore(c.alloc_cpu, c.req_cpu, c.alloc_mem,
                                      c.req_mem),
              c.want);
  }
}

TEST(RecentPlacementsScoreTest, PenaltyPerPlacementFloorsAtZero) {
  EXPECT_EQ(RecentPlacementsScore(0, 10), 100);  // 100 - 0 * 10
  EXPECT_EQ(RecentPlacementsScore(3, 10), 70);   // 100 - 3 * 10
  EXPECT_EQ(RecentPlacementsScore(12, 10), 0);   // 100 - 120 < 0 -> 0
  EXPECT_EQ(RecentPlacementsScore(5, 0), 100);   // penalty off
}

TEST(NormalizeValueTest, Table) {
  NormalizationConfig minmax{.type = NormalizationType::kMinMax};
  NormalizationConfig range{.type = NormalizationType::kRange, .min = 0,
                            .max = 200};
  NormalizationConfig ratio{.type = NormalizationType::kRatio};
  ColumnStats stats{.usable = 3, .min = 10, .max = 50};
  struct Case {
    Direction dir;
    NormalizationConfig norm;
    ColumnStats stats;
    double v;
    double want;
  };
  const auto kLower = Direction::kLower;
  const auto kHigher = Direction::kHigher;
  for (const Case& c : std::vector<Case>{
           {kLower, minmax, stats, 10, 100},   // the best
           {kLower, minmax, stats, 50, 0},     // the worst
           {kLower, minmax, stats, 20, 75},    // (50 - 20) * 100 / 40 = 75
           {kHigher, minmax, stats, 20, 25},   // (20 - 10) * 100 / 40 = 25
           {kHigher, minmax, stats, 50, 100},  // the best
           // All equal: 100 for all.
           {kLower, minmax, {.usable = 2, .min = 7, .max = 7}, 7, 100},
           {kHigher, minmax, {.usable = 2, .min = 7, .max = 7}, 7, 100},
           {kLower, range, stats, 50, 75},    // (200 - 50) * 100 / 200 = 75
           {kHigher, range, stats, 50, 25},   // (50 - 0) * 100 / 200 = 25
           {kLower, range, stats, 300, 0},    // clamped
           {kLower, range, stats, -10, 100},  // clamped
           {kHigher, range, stats, 300, 100},
           {kLower, ratio, stats, 20, 50},    // 100 * 10 / 20 = 50
           {kLower, ratio, stats, 10, 100},   // 100 * 10 / 10
           {kHigher, ratio, stats, 20, 40},   // 100 * 20 / 50 = 40
           {kHigher, ratio, stats, 50, 100},
           // Ratio with a best of 0 (lower): only 0 scores 100.
           {kLower, ratio, {.usable = 2, .min = 0, .max = 4}, 0, 100},
           {kLower, ratio, {.usable = 2, .min = 0, .max = 4}, 4, 0},
           // Ratio, higher, every value 0: 100 for all.
           {kHigher, ratio, {.usable = 2, .min = 0, .max = 0}, 0, 100},
           // Negative values count as 0 for ratio.
           {kHigher, ratio, stats, -5, 0},
       }) {
    EXPECT_DOUBLE_EQ(NormalizeValue(c.dir, c.norm, c.stats, c.v), c.want)
        << static_cast<int>(c.norm.type) << " v=" << c.v;
  }
}

TEST(MissingScoreTest, Policies) {
  EXPECT_EQ(MissingScore(MissingPolicy::kNeutral), 50);
  EXPECT_EQ(MissingScore(MissingPolicy::kWorst), 0);
}

}  // namespace
}  // namespace ms
