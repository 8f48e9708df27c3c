#include "bench/quality/world.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "gtest/gtest.h"

namespace ms::quality {
namespace {

// The value of `series` (name and labels) in the exposition `text`; -1 when
// the text has no such series.
double ValueOf(const std::string& text, const std::string& series) {
  const size_t at = text.find(series + " ");
  if (at == std::string::npos) return -1;
  const size_t from = at + series.size() + 1;
  double value = -1;
  EXPECT_TRUE(absl::SimpleAtod(text.substr(from, text.find('\n', from) - from),
                               &value));
  return value;
}

std::string PodCpu(const std::string& pod) {
  return "container_cpu_usage_seconds_total{namespace=\"quality\",pod=\"" +
         pod + "\",container=\"app\"}";
}

class WorldTest : public ::testing::Test {
 protected:
  WorldTest() {
    trace_.nodes = {{.name = "a", .cores = 4}, {.name = "b", .cores = 4}};
    trace_.pods = {{.name = "p1", .usage = 2, .warmup_s = 10},
                   {.name = "p2", .usage = 1}};
  }
  PoolSpec Pool(const std::string& name) {
    return {.name = name,
            .trace = &trace_,
            .policy = "x",
            .node_names = {name + "-a", name + "-b"},
            .node_addresses = {"10.0.0.1", "10.0.0.2"}};
  }

  // The object name of pod `pod` in the pool Pool() names "one" (0) or
  // "two" (1).
  std::string Name(size_t pool, size_t pod) const {
    return (pool == 0 ? "one-" : "two-") + trace_.pods[pod].name;
  }

  Trace trace_;
};

TEST_F(WorldTest, APodLoadsItsNodeFromItsBindingUntilItEnds) {
  World world({Pool("one"), Pool("two")}, ModelParams(), 0.8);
  // p1 on b at t=0, warming up over 10 s; seen again: counted once, and
  // only the first call says it started the pod.
  EXPECT_TRUE(world.Bound(0, 0, 1, 0, Name(0, 0)));
  EXPECT_FALSE(world.Bound(0, 0, 0, 1, Name(0, 0)));
  EXPECT_TRUE(world.IsBound(0, 0));
  EXPECT_FALSE(world.IsBound(0, 1));
  EXPECT_FALSE(world.IsBound(1, 0));  // pools are apart

  world.Advance(5);
  // The clairvoyant's view counts the pod at its full usage at once.
  std::vector<World::TrueNode> truth = world.TrueLoad(0);
  EXPECT_EQ(truth[0].demand_cores, 0);
  EXPECT_EQ(truth[1].demand_cores, 2);
  EXPECT_EQ(truth[1].capacity_cores, 4);

  world.Advance(20);
  std::vector<World::Requested> r = world.RequestedOf(0, /*recent_s=*/30);
  EXPECT_EQ(r[1].cpu, trace_.pods[0].cpu_request);
  EXPECT_EQ(r[1].recent_cpu, trace_.pods[0].cpu_request);  // bound at 0
  EXPECT_EQ(r[1].pods, 1);
  EXPECT_EQ(world.RequestedOf(0, /*recent_s=*/10)[1].recent_cpu, 0);
  EXPECT_EQ(r[0].pods, 0);
  EXPECT_TRUE(world.DuePods(0, 299).empty());  // it lasts 300 s
  EXPECT_EQ(world.DuePods(0, 300), std::vector<size_t>{0});
  world.Ended(0, 0);
  EXPECT_TRUE(world.DuePods(0, 300).empty());
  EXPECT_EQ(world.TrueLoad(0)[1].demand_cores, 0);
  world.Ended(0, 1);                       // never bound: nothing to remove
  EXPECT_FALSE(
      world.Bound(0, 1, 0, 21, Name(0, 1)));  // and once ended, never bound
  EXPECT_FALSE(world.IsBound(0, 1));

  Figures f = world.FiguresOf(0, 0);
  EXPECT_EQ(f.placements, 1);
  EXPECT_GT(f.mean_latency_s, 0);
  EXPECT_EQ(world.FiguresOf(1, 3).pending, 3);
  EXPECT_EQ(world.FiguresOf(1, 3).mean_latency_s, 0);  // no pod ran
}

TEST_F(WorldTest, AUsageIsKnownOnceItOrASiblingWarmedUpAndALagOn) {
  trace_.pods = {{.name = "h1", .cpu_request = 1, .usage = 3, .warmup_s = 20,
                  .owner = "heavy"},
                 {.name = "h2", .usage = 3, .warmup_s = 20, .owner = "heavy"},
                 {.name = "l1", .usage = 0.2, .owner = "light"},
                 {.name = "x", .cpu_request = 1, .usage = 2}};
  World world({Pool("one"), Pool("two")}, ModelParams(), 0.8);
  EXPECT_TRUE(world.Bound(0, 0, 0, 10, "one-h1"));
  EXPECT_TRUE(world.Bound(0, 3, 1, 10, "one-x"));
  world.Advance(39);
  // x, warming up over 0 s, is known 30 s on; h1 is counted at its
  // request until it has warmed up at 30 and 30 s more have passed.
  EXPECT_FALSE(world.UsageKnown(0, 3, 30));
  world.Advance(40);
  EXPECT_TRUE(world.UsageKnown(0, 3, 30));
  std::vector<World::TrueNode> known = world.KnownLoad(0, 30);
  EXPECT_EQ(known[0].demand_cores, 1);  // h1's request
  EXPECT_EQ(known[1].demand_cores, 2);  // x's usage
  EXPECT_EQ(world.TrueLoad(0)[0].demand_cores, 3);
  world.Advance(59);
  EXPECT_FALSE(world.UsageKnown(0, 0, 30));
  EXPECT_FALSE(world.UsageKnown(0, 1, 30));
  world.Advance(60);
  EXPECT_TRUE(world.UsageKnown(0, 0, 30));
  EXPECT_TRUE(world.UsageKnown(0, 1, 30));   // h1's sibling, not started
  EXPECT_FALSE(world.UsageKnown(0, 2, 30));  // another owner's
  EXPECT_FALSE(world.UsageKnown(1, 1, 30));  // pools are apart
  EXPECT_EQ(world.KnownLoad(0, 30)[0].demand_cores, 3);
  EXPECT_EQ(world.KnownLoad(1, 30)[0].demand_cores, 0);
  // Known once measured, though the sibling has ended since.
  world.Ended(0, 0);
  world.Advance(61);
  EXPECT_TRUE(world.UsageKnown(0, 1, 30));
}

TEST_F(WorldTest, OwnFiguresLeaveOutTheOtherSchedulersPods) {
  // p2, on the idle node a, is another scheduler's; p1 loads node b.
  trace_.pods[1].scheduler = "default-scheduler";
  World world({Pool("one")}, ModelParams(), 0.8);
  world.Bound(0, 0, 1, 0, Name(0, 0));
  world.Bound(0, 1, 0, 0, Name(0, 1));
  world.Advance(60);
  Figures f = world.FiguresOf(0, 0);
  EXPECT_GT(f.own_mean_latency_s, f.mean_latency_s);  // b is the busier
  trace_.pods[1].scheduler.clear();
  World all_own({Pool("one")}, ModelParams(), 0.8);
  all_own.Bound(0, 0, 1, 0, Name(0, 0));
  all_own.Bound(0, 1, 0, 0, Name(0, 1));
  all_own.Advance(60);
  f = all_own.FiguresOf(0, 0);
  EXPECT_EQ(f.own_mean_latency_s, f.mean_latency_s);
}

TEST_F(WorldTest, TheExpositionCarriesEveryPoolsNodesAndTheirWork) {
  World world({Pool("one"), Pool("two")}, ModelParams(), 0.8);
  world.Bound(1, 1, 0, 0, Name(1, 1));  // p2 (1 core, no warm-up) on two-a
  world.Advance(10);
  std::string text = world.Exposition();
  EXPECT_TRUE(absl::StrContains(text, "node_cpu_cores{node=\"one-a\"} 4\n"));
  EXPECT_TRUE(absl::StrContains(
      text, "node_cpu_busy_seconds_total{node=\"two-a\"} 10\n"));  // 1 core
  EXPECT_TRUE(absl::StrContains(
      text, "node_cpu_busy_seconds_total{node=\"one-a\"} 0\n"));
  EXPECT_TRUE(absl::StrContains(text, "instance=\"10.0.0.2:9100\""));
}

TEST_F(WorldTest, ARunningPodsCpuTimeRampsUpAndGoesWhenItEnds) {
  World world({Pool("one"), Pool("two")}, ModelParams(), 0.8);
  world.Bound(0, 0, 1, 0,
              Name(0, 0));  // p1 (2 cores, 10 s warm-up) on one-b at t=0
  for (int t = 1; t <= 5; ++t) world.Advance(t);
  // Each second at the usage at its end: 0.2 + 0.4 + 0.6 + 0.8 + 1 = 3.
  std::string text = world.Exposition();
  EXPECT_NEAR(ValueOf(text, PodCpu("one-p1")), 3, 1e-9);
  EXPECT_EQ(ValueOf(text, PodCpu("one-p2")), -1);  // not bound
  EXPECT_EQ(ValueOf(text, PodCpu("two-p1")), -1);  // pools are apart
  for (int t = 6; t <= 10; ++t) world.Advance(t);
  // + 1.2 + 1.4 + 1.6 + 1.8 + 2 = 11; warmed up, then 2 a second.
  EXPECT_NEAR(ValueOf(world.Exposition(), PodCpu("one-p1")), 11, 1e-9);
  for (int t = 11; t <= 15; ++t) world.Advance(t);
  EXPECT_NEAR(ValueOf(world.Exposition(), PodCpu("one-p1")), 21, 1e-9);

  world.Ended(0, 0);
  world.Advance(16);
  text = world.Exposition();
  EXPECT_EQ(ValueOf(text, PodCpu("one-p1")), -1);
  EXPECT_NEAR(ValueOf(text, "node_cpu_busy_seconds_total{node=\"one-b\"}"), 21,
              1e-9);
}

TEST_F(WorldTest, OnAFullNodeThePodsShareItsBusyTime) {
  trace_.pods[0] = {.name = "p1", .usage = 6};
  World world({Pool("one")}, ModelParams(), 0.8);
  world.Bound(0, 0, 0, 0, Name(0, 0));  // 6 + 1 cores of work on 4 cores
  world.Bound(0, 1, 0, 0, Name(0, 1));
  for (int t = 1; t <= 7; ++t) world.Advance(t);
  // Each gets 4/7 of what it asks, 7 s long: 6 x 4/7 x 7 = 24, 1 x 4 = 4,
  // together the node's 4 cores busy for 7 s.
  const std::string text = world.Exposition();
  EXPECT_NEAR(ValueOf(text, PodCpu("one-p1")), 24, 1e-9);
  EXPECT_NEAR(ValueOf(text, PodCpu("one-p2")), 4, 1e-9);
  EXPECT_NEAR(ValueOf(text, "node_cpu_busy_seconds_total{node=\"one-a\"}"), 28,
              1e-9);
}

TEST_F(WorldTest, UtilisationIsSampledForTheReport) {
  World world({Pool("one")}, ModelParams(), 0.8, /*sample_every_s=*/5);
  world.Bound(0, 1, 0, 0, Name(0, 1));
  for (int t = 1; t <= 12; ++t) world.Advance(t);
  UtilisationSeries s = world.SeriesOf(0);
  ASSERT_EQ(s.by_node.size(), 2u);
  ASSERT_EQ(s.by_node[0].size(), 3u);  // t = 1, 6, 11
  EXPECT_EQ(s.by_node[0][1], 0.25);
  EXPECT_EQ(s.by_node[1][1], 0);
  EXPECT_FALSE(world.LatencySamplesOf(0).empty());
}

// Rebalancing: an evicted pod's load leaves its node at once; its
// replacement, another object, starts again for what was left of its
// duration, warming up anew.
TEST_F(WorldTest, AnEvictedPodStartsAgainForTheRestOfItsDuration) {
  World world({Pool("one")}, ModelParams(), 0.8);
  ASSERT_TRUE(world.Bound(0, 0, 1, 0, "one-p1"));  // p1 lasts 300 s
  world.Advance(100);
  EXPECT_EQ(world.TrueLoad(0)[1].demand_cores, 2);
  EXPECT_TRUE(world.Evicted(0, 0, 100));
  EXPECT_FALSE(world.Evicted(0, 0, 100));  // once
  EXPECT_FALSE(world.Evicted(0, 1, 100));  // never bound
  EXPECT_FALSE(world.IsBound(0, 0));
  EXPECT_EQ(world.TrueLoad(0)[1].demand_cores, 0);
  EXPECT_TRUE(world.DuePods(0, 1000).empty());  // not running: not due
  world.Advance(110);
  ASSERT_TRUE(world.Bound(0, 0, 0, 110, "one-p1-r1"));
  EXPECT_EQ(world.NameOf(0, 0), "one-p1-r1");
  world.Advance(115);  // half its warm-up again: its own CPU time anew
  const std::string text = world.Exposition();
  EXPECT_EQ(ValueOf(text, PodCpu("one-p1")), -1);
  // One step of 5 s at the usage at its end, 1 core.
  EXPECT_NEAR(ValueOf(text, PodCpu("one-p1-r1")), 5, 1e-9);
  EXPECT_EQ(world.TrueLoad(0)[0].demand_cores, 2);
  // 200 s were left: it ends at 310.
  EXPECT_TRUE(world.DuePods(0, 309).empty());
  EXPECT_EQ(world.DuePods(0, 310), std::vector<size_t>{0});
  EXPECT_EQ(world.FiguresOf(0, 0).evictions, 1);
  EXPECT_EQ(world.FiguresOf(0, 0).placements, 2);
}

// Load that moves after placement: from shift_at_s on, a pod uses
// shift_factor times as much.
TEST_F(WorldTest, APodsUsageShiftsAtItsTime) {
  trace_.pods[1].shift_at_s = 50;
  trace_.pods[1].shift_factor = 3;
  World world({Pool("one")}, ModelParams(), 0.8);
  world.Bound(0, 1, 0, 0, "one-p2");  // 1 core, no warm-up
  world.Advance(49);
  EXPECT_EQ(world.TrueLoad(0)[0].demand_cores, 1);
  world.Advance(50);
  EXPECT_EQ(world.TrueLoad(0)[0].demand_cores, 3);
  EXPECT_EQ(UsageAt(trace_.pods[1], 1, 0, 49), 1);
  EXPECT_EQ(UsageAt(trace_.pods[1], 1, 0, 50), 3);
  EXPECT_EQ(UsageAt(trace_.pods[0], 2, 0, 5), 1);  // no shift: the ramp
}

}  // namespace
}  // namespace ms::quality
