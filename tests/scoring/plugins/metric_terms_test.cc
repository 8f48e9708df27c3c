#include "scoring/plugins/metric_terms.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace ms {
namespace {

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
