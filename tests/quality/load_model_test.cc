#include "bench/quality/load_model.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ms::quality {
namespace {

TEST(LoadModelTest, APodRampsUpOverItsWarmUp) {
  EXPECT_EQ(RampedUsage(2, 20, -1), 0);  // not started
  EXPECT_EQ(RampedUsage(2, 20, 0), 0);
  EXPECT_DOUBLE_EQ(RampedUsage(2, 20, 5), 0.5);
  EXPECT_EQ(RampedUsage(2, 20, 20), 2);
  EXPECT_EQ(RampedUsage(2, 20, 1000), 2);
  EXPECT_EQ(RampedUsage(2, 0, 0.1), 2);  // no warm-up
}

TEST(LoadModelTest, ANodeDegradesAndItsNeighbourIsNoisyByTheClock) {
  NodeSpec node{.speed = 1.5,
                .background_cores = 1,
                .burst_cores = 4,
                .burst_period_s = 90,
                .burst_duty = 0.5,
                .degrade_at_s = 100,
                .degrade_factor = 0.3};
  EXPECT_EQ(SpeedAt(node, 99.9), 1.5);
  EXPECT_DOUBLE_EQ(SpeedAt(node, 100), 0.45);
  EXPECT_EQ(BackgroundAt(node, 10), 5);   // first half of the period
  EXPECT_EQ(BackgroundAt(node, 50), 1);   // second half
  EXPECT_EQ(BackgroundAt(node, 100), 5);  // the next period
  EXPECT_EQ(BackgroundAt(NodeSpec{.background_cores = 2}, 10), 2);
}

TEST(LoadModelTest, LatencyFollowsAnMM1QueueUpToTheCap) {
  EXPECT_DOUBLE_EQ(QueueLatency(0.02, 0, 5), 0.02);
  EXPECT_DOUBLE_EQ(QueueLatency(0.02, 0.5, 5), 0.04);
  EXPECT_DOUBLE_EQ(QueueLatency(0.02, 0.9, 5), 0.2);
  EXPECT_EQ(QueueLatency(0.02, 0.999, 5), 5);  // capped
  EXPECT_EQ(QueueLatency(0.02, 1, 5), 5);
  EXPECT_EQ(QueueLatency(0.02, 3, 5), 5);
  EXPECT_DOUBLE_EQ(LatencyCdf(0.1, 0.1), 1 - std::exp(-1.0));
  EXPECT_EQ(LatencyCdf(0.1, 0), 0);
  // The 99th percentile of an exponential is its mean times ln 100.
  EXPECT_NEAR(LatencyCdf(0.1, 0.1 * std::log(100.0)), 0.99, 1e-12);
}

TEST(LoadModelTest, ErrorsRiseNearSaturationAndTheExcessFails) {
  ModelParams params;
  EXPECT_EQ(ErrorRatio(params, 0.5), 0);
  EXPECT_EQ(ErrorRatio(params, 0.85), 0);
  EXPECT_GT(ErrorRatio(params, 0.95), 0);
  EXPECT_LT(ErrorRatio(params, 0.95), 0.05);
  EXPECT_NEAR(ErrorRatio(params, 1 - 1e-9), 0.05, 1e-6);  // continuous
  EXPECT_EQ(ErrorRatio(params, 1), 0.05);
  EXPECT_DOUBLE_EQ(ErrorRatio(params, 2), 0.05 + 0.95 * 0.5);
}

TEST(LoadModelTest, TheSamePodsWeighTwiceAsMuchOnAHalfSpeedNode) {
  ModelParams params;
  PodSpec web{.usage = 2, .warmup_s = 10, .io = 8};
  std::vector<RunningPod> pods = {{&web, 0}, {&web, 5}};
  NodeSpec standard{.cores = 8, .speed = 1};
  NodeSpec slow{.cores = 8, .speed = 0.5};
  NodeState s = NodeAt(standard, pods, 10, params);
  EXPECT_DOUBLE_EQ(s.demand_cores, 2 + 1);  // the second is half warmed up
  EXPECT_DOUBLE_EQ(s.capacity_cores, 8);
  EXPECT_DOUBLE_EQ(s.utilisation, 3.0 / 8);
  EXPECT_DOUBLE_EQ(s.cpu_busy, 3.0 / 8);
  EXPECT_DOUBLE_EQ(s.request_rate, 3 * params.requests_per_core);
  EXPECT_DOUBLE_EQ(s.mean_latency_s, 0.02 / (1 - 3.0 / 8));
  EXPECT_DOUBLE_EQ(s.io_latency_s, 0.004 / (1 - 12.0 / 100));
  EXPECT_EQ(s.error_ratio, 0);

  NodeState t = NodeAt(slow, pods, 10, params);
  EXPECT_DOUBLE_EQ(t.utilisation, 3.0 / 4);
  EXPECT_DOUBLE_EQ(t.mean_latency_s, 0.04 / (1 - 3.0 / 4));
  EXPECT_GT(t.mean_latency_s, 3 * s.mean_latency_s);

  // Over its capacity: busy all the time, latency at the cap, errors.
  PodSpec hog{.usage = 6};
  std::vector<RunningPod> hogs = {{&hog, 0}};
  NodeState u = NodeAt(slow, hogs, 1, params);
  EXPECT_DOUBLE_EQ(u.utilisation, 1.5);
  EXPECT_EQ(u.cpu_busy, 1);
  EXPECT_EQ(u.mean_latency_s, params.max_latency_s);
  EXPECT_GT(u.error_ratio, 0.3);
}

TEST(LoadModelTest, APodsCpuTimeIsItsWorkOverTheSpeedAndItsShareWhenFull) {
  // 2 cores of work: 2 cores busy at speed 1, 4 at speed 0.5.
  NodeState standard{.demand_cores = 3, .capacity_cores = 8};
  NodeState slow{.demand_cores = 3, .capacity_cores = 4};
  EXPECT_DOUBLE_EQ(PodCpuCores(2, 8, standard), 2);
  EXPECT_DOUBLE_EQ(PodCpuCores(2, 8, slow), 4);
  // Demand 12 on capacity 4 (8 cores at speed 0.5): each load gets a third
  // of what it asks, 2 x 8 / 12 cores, and the 8 cores are busy:
  // 6 + 6 (the background) cores of work take 4 + 4 cores.
  NodeState full{.demand_cores = 12, .capacity_cores = 4};
  EXPECT_DOUBLE_EQ(PodCpuCores(2, 8, full), 2.0 * 8 / 12);
  EXPECT_DOUBLE_EQ(PodCpuCores(6, 8, full) * 2, 8);
  EXPECT_EQ(PodCpuCores(0, 8, NodeState{}), 0);
}

}  // namespace
}  // namespace ms::quality
