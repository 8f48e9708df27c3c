// JudgeByMetrics (the extender's verdict) against Decide: over nodes that
// every built-in filter passes, with no built-in term, the extender's
// filters and scores are the decision's, value for value.
#include "scoring/extender.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scoring/decide.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::Column;
using ::ms::testing::kNow;
using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::ms::testing::MetricsOnly;
using ::ms::testing::Term;
using ::testing::ElementsAre;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(JudgeByMetricsTest, LowerIsBetterOnTheExtenderScale) {
  ScoringConfig cfg = MetricsOnly({Term("cpu")});
  MetricVerdict v = JudgeByMetrics(cfg, {Column({0, 1, 0.5})}, 3, kNow);
  EXPECT_FALSE(v.fallback);
  EXPECT_THAT(v.failures, ElementsAre("", "", ""));
  EXPECT_THAT(v.scores, ElementsAre(100, 0, 50));
  EXPECT_EQ(ExtenderScore(100), 10);
  EXPECT_EQ(ExtenderScore(0), 0);
  EXPECT_EQ(ExtenderScore(50), 5);
  EXPECT_EQ(ExtenderScore(74.9), 7);
  EXPECT_EQ(ExtenderScore(75), 8);
  EXPECT_EQ(ExtenderScore(kNaN), 0);
}

TEST(JudgeByMetricsTest, BoundsFailNodesWithTheDecisionsReason) {
  MetricTerm cpu = Term("cpu");
  cpu.filter_max = 0.9;
  MetricColumn column = Column({0.5, 0.95, kNaN, 0.99, 0.1});
  column.time_ms[3] = kNow - 61000;  // stale: never fails a bound
  MetricVerdict v = JudgeByMetrics(MetricsOnly({cpu}), {column}, 5, kNow);
  EXPECT_THAT(v.failures,
              ElementsAre("", "node(s) had cpu above 0.9", "", "", ""));
  // Normalised over the passing nodes (0.1 .. 0.5); no value: neutral.
  EXPECT_THAT(v.scores, ElementsAre(0, 0, 50, 50, 100));
}

TEST(JudgeByMetricsTest, NoUsableValueIsFallbackWithNoPreference) {
  MetricTerm cpu = Term("cpu");
  cpu.filter_max = 0.9;
  MetricColumn stale = Column({0.95, 0.1}, kNow - 120000);
  MetricVerdict v = JudgeByMetrics(MetricsOnly({cpu}), {stale}, 2, kNow);
  EXPECT_TRUE(v.fallback);
  EXPECT_THAT(v.failures, ElementsAre("", ""));
  EXPECT_THAT(v.scores, ElementsAre(0, 0));
  EXPECT_TRUE(JudgeByMetrics(MetricsOnly({}), {}, 2, kNow).fallback);
}

// Random columns and policies: the extender's verdict is Decide's.
TEST(JudgeByMetricsTest, AgreesWithDecide) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> value(0, 1);
  const MissingPolicy policies[] = {MissingPolicy::kNeutral,
                                    MissingPolicy::kWorst,
                                    MissingPolicy::kExclude,
                                    MissingPolicy::kSkip};
  const NormalizationType types[] = {NormalizationType::kMinMax,
                                     NormalizationType::kRatio,
                                     NormalizationType::kRange};
  for (int round = 0; round < 300; ++round) {
    const size_t n = 1 + rng() % 8;
    std::vector<NodeInfo> nodes;
    for (size_t i = 0; i < n; ++i) {
      nodes.push_back(MakeNode(absl::StrCat("n", i)));
    }
    std::vector<MetricTerm> terms;
    std::vector<MetricColumn> columns;
    const size_t num_metrics = 1 + rng() % 3;
    for (size_t m = 0; m < num_metrics; ++m) {
      MetricTerm t = Term(absl::StrCat("m", m), 1 + rng() % 4,
                          rng() % 2 ? Direction::kLower : Direction::kHigher);
      t.missing = policies[rng() % 4];
      t.normalization.type = types[rng() % 3];
      t.normalization.min = 0.2;
      t.normalization.max = 0.8;
      if (rng() % 3 == 0) t.filter_max = 0.85;
      if (rng() % 4 == 0) t.filter_min = 0.1;
      terms.push_back(t);
      MetricColumn c = Column(std::vector<double>(n));
      for (size_t i = 0; i < n; ++i) {
        c.values[i] = rng() % 5 == 0 ? kNaN : value(rng);
        if (rng() % 7 == 0) c.time_ms[i] = kNow - 90000;  // stale
      }
      columns.push_back(std::move(c));
    }
    const ScoringConfig cfg = MetricsOnly(terms);
    const Pod pod = MakePod().Req(100, 64 * 1024 * 1024);
    Workspace ws;
    Decision d = Decide({.pod = &pod,
                         .nodes = &nodes,
                         .metrics = &columns,
                         .now_ms = kNow,
                         .explain = true},
                        cfg, ws);
    MetricVerdict v = JudgeByMetrics(cfg, columns, n, kNow);
    ASSERT_EQ(v.fallback, d.mode == ScoringMode::kFallback) << round;
    for (size_t i = 0; i < n; ++i) {
      const NodeExplanation& e = d.explanation->nodes[i];
      EXPECT_EQ(v.failures[i].empty(), e.feasible) << round << " node " << i;
      if (e.feasible) {
        EXPECT_NEAR(v.scores[i], v.fallback ? 0 : e.total, 1e-9)
            << round << " node " << i;
      } else {
        EXPECT_EQ(v.failures[i], e.filter_reason) << round << " node " << i;
      }
    }
  }
}

}  // namespace
}  // namespace ms
