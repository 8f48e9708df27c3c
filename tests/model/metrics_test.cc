#include "model/metrics.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(AlignMetricsTest, AlignsToNodeOrderAndMarksMissing) {
  MetricsSnapshot snapshot;
  MetricValues latency;
  latency.name = "latency";
  latency.by_node["b"] = {.value = 2.5, .time_ms = 20};
  latency.by_node["a"] = {.value = 1.5, .time_ms = 10};
  latency.by_node["gone"] = {.value = 9, .time_ms = 30};
  snapshot.metrics.push_back(latency);

  std::vector<MetricColumn> columns = AlignMetrics(snapshot, {"a", "c", "b"});
  ASSERT_EQ(columns.size(), 1u);
  EXPECT_EQ(columns[0].values[0], 1.5);
  EXPECT_TRUE(std::isnan(columns[0].values[1]));
  EXPECT_EQ(columns[0].values[2], 2.5);
  EXPECT_EQ(columns[0].time_ms, (std::vector<int64_t>{10, 0, 20}));
}

}  // namespace
}  // namespace ms
