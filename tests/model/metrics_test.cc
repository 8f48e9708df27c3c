#include "model/metrics.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(AlignMetricTest, AlignsToNodeOrderAndMarksMissing) {
  MetricsSnapshot snapshot;
  MetricValues latency;
  latency.name = "latency";
  latency.by_node["b"] = {.value = 2.5, .time_ms = 20};
  latency.by_node["a"] = {.value = 1.5, .time_ms = 10};
  latency.by_node["gone"] = {.value = 9, .time_ms = 30};
  snapshot.metrics.push_back(latency);

  ASSERT_EQ(snapshot.Find("latency"), &snapshot.metrics[0]);
  EXPECT_EQ(snapshot.Find("other"), nullptr);
  MetricColumn column = AlignMetric(*snapshot.Find("latency"), {"a", "c", "b"});
  EXPECT_EQ(column.values[0], 1.5);
  EXPECT_TRUE(std::isnan(column.values[1]));
  EXPECT_EQ(column.values[2], 2.5);
  EXPECT_EQ(column.time_ms, (std::vector<int64_t>{10, 0, 20}));
}

TEST(ParseAttributeValueTest, DecimalsAndQuantities) {
  EXPECT_EQ(ParseAttributeValue("0.42"), 0.42);
  EXPECT_EQ(ParseAttributeValue("-3"), -3);
  EXPECT_EQ(ParseAttributeValue("1e3"), 1000);
  EXPECT_EQ(ParseAttributeValue("0.0123"), 0.0123);  // exact, not milli
  EXPECT_EQ(ParseAttributeValue("250m"), 0.25);
  EXPECT_EQ(ParseAttributeValue("2Ki"), 2048);
  EXPECT_EQ(ParseAttributeValue("+1.5"), 1.5);
  for (const char* bad : {"", " 1", "1 ", "cheap", "inf", "nan", "1e400",
                          "0x10", "1.2.3", "5 Mi", "$3"}) {
    EXPECT_TRUE(std::isnan(ParseAttributeValue(bad))) << bad;
  }
}

TEST(NodeAttributeColumnTest, ReadsTheNodesAnnotationOrLabel) {
  std::vector<NodeInfo> nodes(4);
  nodes[0].node.annotations["cost"] = "1.5";
  nodes[1].node.annotations["cost"] = "expensive";
  nodes[2].node.labels["cost"] = "9";  // a label, not the annotation
  nodes[3].node.annotations["cost"] = "500m";
  MetricColumn by_annotation = NodeAttributeColumn(
      {MetricOrigin::Kind::kNodeAnnotation, "cost"}, nodes);
  EXPECT_EQ(by_annotation.values[0], 1.5);
  EXPECT_TRUE(std::isnan(by_annotation.values[1]));
  EXPECT_TRUE(std::isnan(by_annotation.values[2]));
  EXPECT_EQ(by_annotation.values[3], 0.5);
  EXPECT_EQ(by_annotation.time_ms,
            (std::vector<int64_t>{kAlwaysFresh, 0, 0, kAlwaysFresh}));

  MetricColumn by_label =
      NodeAttributeColumn({MetricOrigin::Kind::kNodeLabel, "cost"}, nodes);
  EXPECT_EQ(by_label.values[2], 9);
  EXPECT_EQ(by_label.time_ms,
            (std::vector<int64_t>{0, 0, kAlwaysFresh, 0}));
}

}  // namespace
}  // namespace ms
