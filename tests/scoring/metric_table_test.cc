#include "scoring/metric_table.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::Column;
using ::ms::testing::kNow;
using Freshness = MetricTable::Freshness;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(MetricTableTest, NonFiniteAndUnsampledValuesAreMissing) {
  MetricColumn col = Column({1.5, kNaN, kInf, -kInf, 7, -2});
  col.time_ms[4] = 0;  // a value without a sample time: no sample
  MetricTable table;
  table.Build({col}, 6);
  ASSERT_EQ(table.num_metrics(), 1u);
  const MetricTable::Column& c = table.column(0);
  EXPECT_TRUE(c.aligned);
  EXPECT_EQ(c.values[0], 1.5);
  for (int i : {1, 2, 3, 4}) EXPECT_TRUE(std::isnan(c.values[i])) << i;
  EXPECT_EQ(c.values[5], -2);
  EXPECT_EQ(c.present, 2u);
  EXPECT_EQ(c.missing, (std::vector<uint32_t>{1, 2, 3, 4}));
  // Over the present values 1.5 and -2.
  EXPECT_EQ(c.min, -2);
  EXPECT_EQ(c.argmin, 5u);
  EXPECT_EQ(c.max, 1.5);
  EXPECT_EQ(c.argmax, 0u);
}

TEST(MetricTableTest, AnAddedEstimateMovesTheValueAndTheExtremes) {
  MetricTable table;
  table.Build({Column({1, 2, kNaN})}, 3);
  table.Add(0, 0, 5);  // node 0 becomes the largest
  const MetricTable::Column& c = table.column(0);
  EXPECT_EQ(c.values[0], 6);
  EXPECT_EQ(c.max, 6);
  EXPECT_EQ(c.argmax, 0u);
  EXPECT_EQ(c.min, 2);
  EXPECT_EQ(c.argmin, 1u);
  table.Add(0, 2, 5);  // no value: nothing to add to
  EXPECT_TRUE(std::isnan(c.values[2]));
  EXPECT_EQ(c.present, 2u);
}

// Many adds, some making a node the smallest or largest and some taking
// it away again: the extremes are always those a full scan finds (the
// first node on a tie).
TEST(MetricTableTest, ExtremesFollowEveryAddAsAScanWouldFindThem) {
  std::mt19937 random(7);
  std::vector<double> values(37);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = i % 5 == 0 ? kNaN : static_cast<double>(random() % 10);
  }
  MetricTable table;
  table.Build({Column(values)}, values.size());
  for (int step = 0; step < 2000; ++step) {
    const size_t i = random() % values.size();
    const double delta = static_cast<double>(random() % 7) - 3;
    table.Add(0, i, delta);
    if (!std::isnan(values[i])) values[i] += delta;
    size_t lo = 0, hi = 0;
    for (size_t k = 1; k < values.size(); ++k) {
      if (std::isnan(values[k])) continue;
      if (std::isnan(values[lo]) || values[k] < values[lo]) lo = k;
      if (std::isnan(values[hi]) || values[k] > values[hi]) hi = k;
    }
    const MetricTable::Column& c = table.column(0);
    ASSERT_EQ(c.argmin, lo) << "step " << step;
    ASSERT_EQ(c.argmax, hi) << "step " << step;
    ASSERT_EQ(c.min, values[lo]);
    ASSERT_EQ(c.max, values[hi]);
  }
}

TEST(MetricTableTest, ColumnOfTheWrongSizeHasNoData) {
  MetricTable table;
  table.Build({Column({1, 2}), Column({1, 2, 3})}, 3);
  EXPECT_FALSE(table.column(0).aligned);
  EXPECT_EQ(table.FreshnessAt(0, 0), Freshness::kNone);
  EXPECT_TRUE(table.column(1).aligned);
  EXPECT_EQ(table.FreshnessAt(1, kNow), Freshness::kAll);
}

TEST(MetricTableTest, FreshnessIsExactToTheMillisecond) {
  // Samples at now - 60000 (the oldest present), now - 1000 and now; the
  // last value is NaN, so its (newer) time does not count.
  MetricColumn col = Column({1, 2, 3, kNaN});
  col.time_ms = {kNow - 60000, kNow - 1000, kNow - 1000, kNow + 5};
  MetricTable table;
  table.Build({col}, 4);
  EXPECT_EQ(table.column(0).oldest_ms, kNow - 60000);
  EXPECT_EQ(table.column(0).newest_ms, kNow - 1000);
  struct Case {
    int64_t cutoff;
    Freshness want;
  };
  for (const Case& c : std::vector<Case>{
           {kNow - 60001, Freshness::kAll},
           {kNow - 60000, Freshness::kAll},   // at the limit: still fresh
           {kNow - 59999, Freshness::kSome},  // the oldest is 1 ms stale
           {kNow - 1000, Freshness::kSome},
           {kNow - 999, Freshness::kNone},  // even the newest is stale
       }) {
    EXPECT_EQ(table.FreshnessAt(0, c.cutoff), c.want) << c.cutoff - kNow;
  }
}

TEST(MetricTableTest, RebuildForgetsThePreviousColumns) {
  MetricTable table;
  table.Build({Column({1, 2, 3}), Column({4, 5, 6})}, 3);
  table.Build({Column({kNaN, 9})}, 2);
  EXPECT_EQ(table.num_nodes(), 2u);
  ASSERT_EQ(table.num_metrics(), 1u);
  EXPECT_EQ(table.column(0).present, 1u);
  EXPECT_EQ(table.column(0).min, 9);
  EXPECT_EQ(table.column(0).argmin, 1u);
  EXPECT_EQ(table.column(0).missing, (std::vector<uint32_t>{0}));
}

}  // namespace
}  // namespace ms
