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

// target 0.7 over [0, 1]: u = 100 * v, t = 70. Below the target
// (100 - 70) * u / 70 + 70; above it 70 * (100 - u) / (100 - 70).
TEST(NormalizeValueTest, ATargetPeaksAtItsTargetAndFallsOnBothSides) {
  const NormalizationConfig target{
      .type = NormalizationType::kTarget, .min = 0, .max = 1, .target = 0.7};
  const ColumnStats stats{.usable = 3, .min = 0.2, .max = 0.9};  // unused
  struct Case {
    double v;
    double want;
  };
  for (const Case& c : std::vector<Case>{
           {0, 70},                 // at min: t
           {-0.5, 70},              // below min: as at min
           {0.35, 85},              // 30 * 35 / 70 + 70 = 85, midway below
           {0.7, 100},              // at the target
           {0.71, 70.0 * 29 / 30},  // the drop just above it
           {0.85, 35},              // 70 * 15 / 30 = 35, midway above
           {1, 0},                  // at max
           {1.2, 0},                // beyond max
       }) {
    for (Direction dir : {Direction::kLower, Direction::kHigher}) {
      EXPECT_NEAR(NormalizeValue(dir, target, stats, c.v), c.want, 1e-9)
          << "v=" << c.v;
    }
  }
  // At the target exactly 100, and 0 exactly at max and past it.
  EXPECT_EQ(NormalizeValue(Direction::kLower, target, stats, 0.7), 100);
  EXPECT_EQ(NormalizeValue(Direction::kLower, target, stats, 1), 0);
  EXPECT_EQ(NormalizeValue(Direction::kLower, target, stats, 7), 0);
}

// With min: target 3 over [1, 5]: u = 25 * (v - 1), t = 50.
TEST(NormalizeValueTest, ATargetMeasuresFromItsMin) {
  const NormalizationConfig target{
      .type = NormalizationType::kTarget, .min = 1, .max = 5, .target = 3};
  struct Case {
    double v;
    double want;
  };
  for (const Case& c : std::vector<Case>{
           {1, 50},   // at min: t
           {0, 50},   // below min
           {2, 75},   // 50 * 25 / 50 + 50 = 75
           {3, 100},  // at the target
           {4, 25},   // 50 * (100 - 75) / (100 - 50) = 25
           {5, 0},    // at max
           {6, 0},
       }) {
    EXPECT_NEAR(NormalizeValue(Direction::kLower, target, {}, c.v), c.want,
                1e-9)
        << "v=" << c.v;
  }
}

// PlanMetric's plan for a target, applied by PlanScore (the kernels'
// arithmetic), gives exactly the reference's scores, whichever direction.
TEST(PlanScoreTest, ATargetPlanScoresExactlyAsTheReference) {
  auto target = [](double min, double target, double max) {
    return NormalizationConfig{.type = NormalizationType::kTarget,
                               .min = min,
                               .max = max,
                               .target = target};
  };
  for (Direction dir : {Direction::kLower, Direction::kHigher}) {
    for (const NormalizationConfig& norm :
         {target(0, 0.7, 1), target(-3, 0.1, 0.3), target(10, 990, 1000)}) {
      MetricTerm term;
      term.direction = dir;
      term.normalization = norm;
      MetricPlan plan;
      plan.stats = {.usable = 2, .min = 0, .max = 1};
      PlanMetric(term, 2, plan);
      EXPECT_EQ(plan.normalizer, Normalizer::kTarget);
      const double span = norm.max - norm.min;
      for (int i = -50; i <= 250; ++i) {
        const double v = norm.min + span * i / 200.0;
        EXPECT_EQ(PlanScore(plan, v), NormalizeValue(dir, norm, {}, v))
            << "v=" << v;
      }
      for (double v : {norm.min, norm.target, norm.max}) {
        EXPECT_EQ(PlanScore(plan, v), NormalizeValue(dir, norm, {}, v))
            << "v=" << v;
      }
      EXPECT_EQ(PlanScore(plan, norm.target), 100);
      // No value: the policy's score (neutral).
      EXPECT_EQ(PlanScore(plan, std::nan("")), 50);
    }
  }
}

TEST(MissingScoreTest, Policies) {
  EXPECT_EQ(MissingScore(MissingPolicy::kNeutral), 50);
  EXPECT_EQ(MissingScore(MissingPolicy::kWorst), 0);
}

}  // namespace
}  // namespace ms
