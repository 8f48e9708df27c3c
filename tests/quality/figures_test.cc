#include "bench/quality/figures.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ms::quality {
namespace {

TEST(FiguresTest, WeightedQuantileAndSpread) {
  EXPECT_EQ(WeightedQuantile({}, 0.99), 0);
  // 98 pod-seconds at 10 ms, 2 at 1 s: the 99th percentile is 1 s, the
  // 98th 10 ms.
  std::vector<std::pair<double, double>> s = {{1, 2}, {0.01, 98}};
  EXPECT_EQ(WeightedQuantile(s, 0.99), 1);
  EXPECT_EQ(WeightedQuantile(s, 0.98), 0.01);
  EXPECT_EQ(WeightedQuantile(s, 0.5), 0.01);

  EXPECT_EQ(CoefficientOfVariation({0.5, 0.5, 0.5}), 0);
  EXPECT_DOUBLE_EQ(CoefficientOfVariation({0.2, 0.6}), 0.5);
  EXPECT_EQ(CoefficientOfVariation({0, 0}), 0);
}

TEST(FiguresTest, PodSecondsWeighTheLatencyAndHotNodesAreTimed) {
  FigureAccumulator acc(0.8);
  NodeState cool{.utilisation = 0.2, .mean_latency_s = 0.1};
  NodeState hot{.utilisation = 0.9, .mean_latency_s = 1};
  // 3 pods on the cool node, 1 on the hot one, for 2 s; then the hot one
  // alone runs its pod for 1 s more, the cool node empty. The policy placed
  // 2 of the cool node's pods; another scheduler the rest.
  acc.Tick(2, {cool, hot}, {3, 1}, {2, 0});
  acc.Tick(1, {NodeState{}, hot}, {0, 1}, {0, 0});
  acc.Placement(cool);
  acc.Placement(hot);
  Figures f = acc.Finish(4);
  // (0.1 x 6 + 1 x 3) / 9 pod-seconds.
  EXPECT_DOUBLE_EQ(f.mean_latency_s, 3.6 / 9);
  EXPECT_EQ(f.p99_latency_s, 1);
  EXPECT_DOUBLE_EQ(f.own_mean_latency_s, 0.1);
  EXPECT_EQ(f.hot_node_seconds, 3);
  EXPECT_EQ(f.hot_nodes, 1);
  EXPECT_EQ(f.placements, 2);
  EXPECT_EQ(f.placements_on_hot, 1);
  EXPECT_EQ(f.pending, 4);
  // CV of {0.2, 0.9} for 2 s and of {0, 0.9} for 1 s, time-averaged.
  double cv1 = CoefficientOfVariation({0.2, 0.9});
  EXPECT_DOUBLE_EQ(f.utilisation_cv, (cv1 * 2 + 1.0 * 1) / 3);
}

}  // namespace
}  // namespace ms::quality
