#include "scoring/rebalance.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::Column;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

const std::vector<std::string> kNodes = {"a", "b", "c"};
constexpr int64_t kStale = 60000;  // maxStaleness, ms

HotBound Bound(double high, double low, int samples) {
  return {.metric = "cpu", .high = high, .samples = samples, .low = low};
}

std::vector<std::string> HotNames(const HotTracker& t) {
  std::vector<std::string> names;
  for (const HotNode& h : t.Hot()) names.push_back(h.node);
  return names;
}

TEST(HotTrackerTest, ANodeIsHotAfterItsConsecutiveFreshSamples) {
  HotTracker t({Bound(0.8, 0.6, 3)});
  t.Observe(0, kNodes, Column({0.9, 0.5, 0.85}, 1000), 1000, kStale);
  t.Observe(0, kNodes, Column({0.9, 0.5, 0.85}, 2000), 2000, kStale);
  EXPECT_THAT(HotNames(t), IsEmpty());
  // The same sample again counts once.
  t.Observe(0, kNodes, Column({0.9, 0.5, 0.85}, 2000), 2500, kStale);
  EXPECT_THAT(HotNames(t), IsEmpty());
  t.Observe(0, kNodes, Column({0.95, 0.5, 0.85}, 3000), 3000, kStale);
  std::vector<HotNode> hot = t.Hot();
  ASSERT_EQ(hot.size(), 2u);
  // Hottest over the threshold first.
  EXPECT_EQ(hot[0].node, "a");
  EXPECT_EQ(hot[0].value, 0.95);
  EXPECT_EQ(hot[0].threshold, 0.8);
  EXPECT_EQ(hot[0].target, 0.6);
  EXPECT_EQ(hot[0].samples, 3);
  EXPECT_EQ(hot[1].node, "c");
  // One sample at the bound starts a node again.
  t.Observe(0, kNodes, Column({0.8, 0.5, 0.85}, 4000), 4000, kStale);
  EXPECT_THAT(HotNames(t), ElementsAre("c"));
}

TEST(HotTrackerTest, MissingStaleAndNonFiniteValuesNeverCount) {
  HotTracker t({Bound(0.8, 0.6, 2)});
  t.Observe(0, kNodes, Column({0.9, 0.9, 0.9}, 1000), 1000, kStale);
  MetricColumn c = Column({NAN, 0.9, INFINITY}, 2000);
  c.time_ms[1] = 2000 - kStale - 1;  // b's sample is stale at 2000
  t.Observe(0, kNodes, c, 2000, kStale);
  t.Observe(0, kNodes, Column({0.9, 0.9, 0.9}, 3000), 3000, kStale);
  EXPECT_THAT(HotNames(t), IsEmpty());
  t.Observe(0, kNodes, Column({0.9, 0.9, 0.9}, 4000), 4000, kStale);
  EXPECT_THAT(HotNames(t), ::testing::UnorderedElementsAre("a", "b", "c"));
}

// aboveMean: hot against the fleet; brought back to the fleet's mean plus
// aboveMean when that is under low. A uniform fleet is never hot.
TEST(HotTrackerTest, AboveTheFleetMean) {
  HotTracker t(
      {{.metric = "cpu", .above_mean = 0.2, .samples = 1, .low = 0.7}});
  t.Observe(0, kNodes, Column({0.6, 0.6, 0.6}, 1000), 1000, kStale);
  EXPECT_THAT(HotNames(t), IsEmpty());
  // Mean 0.4: hot above 0.6, brought to 0.6.
  t.Observe(0, kNodes, Column({0.8, 0.2, 0.2}, 2000), 2000, kStale);
  std::vector<HotNode> hot = t.Hot();
  ASSERT_EQ(hot.size(), 1u);
  EXPECT_EQ(hot[0].node, "a");
  EXPECT_NEAR(hot[0].threshold, 0.6, 1e-12);
  EXPECT_NEAR(hot[0].target, 0.6, 1e-12);
  // With high too, the lower of the two thresholds makes a node hot.
  HotTracker both({{.metric = "cpu",
                    .high = 0.5,
                    .above_mean = 0.2,
                    .samples = 1,
                    .low = 0.4}});
  both.Observe(0, kNodes, Column({0.55, 0.5, 0.5}, 1000), 1000, kStale);
  ASSERT_THAT(HotNames(both), ElementsAre("a"));
  EXPECT_EQ(both.Hot()[0].target, 0.4);
}

// After a pod leaves a node its samples still show it for a while: until
// samples taken at the settle time, they are read less what it took.
TEST(HotTrackerTest, SamplesAreReadLessWhatLeftUntilTheyShowIt) {
  HotTracker t({Bound(0.8, 0.6, 2)});
  t.Observe(0, kNodes, Column({0.9, 0.1, 0.1}, 1000), 1000, kStale);
  t.Observe(0, kNodes, Column({0.9, 0.1, 0.1}, 2000), 2000, kStale);
  ASSERT_THAT(HotNames(t), ElementsAre("a"));
  // What left brings it under the threshold: not hot, at once.
  t.Left(0, "a", 0.25, 5000);
  EXPECT_THAT(HotNames(t), IsEmpty());
  t.Observe(0, kNodes, Column({0.9, 0.1, 0.1}, 3000), 3000, kStale);
  t.Observe(0, kNodes, Column({0.9, 0.1, 0.1}, 4000), 4000, kStale);
  EXPECT_THAT(HotNames(t), IsEmpty());
  // From the settle time on, a sample is taken as it is: still hot.
  t.Observe(0, kNodes, Column({0.9, 0.1, 0.1}, 5000), 5000, kStale);
  EXPECT_THAT(HotNames(t), IsEmpty());
  t.Observe(0, kNodes, Column({0.9, 0.1, 0.1}, 6000), 6000, kStale);
  ASSERT_THAT(HotNames(t), ElementsAre("a"));
  EXPECT_DOUBLE_EQ(t.Hot()[0].value, 0.9);
  EXPECT_EQ(t.Hot()[0].moved_off, 0);
}

// A node that did not shed enough stays hot, less what left, and sheds
// more at the next round without waiting for its samples to catch up.
TEST(HotTrackerTest, ANodeThatShedTooLittleStaysHot) {
  HotTracker t({Bound(0.8, 0.6, 2)});
  t.Observe(0, kNodes, Column({0.95, 0.1, 0.1}, 1000), 1000, kStale);
  t.Observe(0, kNodes, Column({0.95, 0.1, 0.1}, 2000), 2000, kStale);
  t.Left(0, "a", 0.05, 9000);
  t.Left(0, "a", 0.05, 9000);
  ASSERT_THAT(HotNames(t), ElementsAre("a"));
  EXPECT_DOUBLE_EQ(t.Hot()[0].value, 0.85);
  EXPECT_DOUBLE_EQ(t.Hot()[0].moved_off, 0.1);
  EXPECT_EQ(t.Hot()[0].samples, 2);
  // The same sample again changes nothing; a new one counts, less both.
  t.Observe(0, kNodes, Column({0.95, 0.1, 0.1}, 2000), 2500, kStale);
  EXPECT_EQ(t.Hot()[0].samples, 2);
  t.Observe(0, kNodes, Column({0.95, 0.1, 0.1}, 3000), 3000, kStale);
  EXPECT_EQ(t.Hot()[0].samples, 3);
  EXPECT_DOUBLE_EQ(t.Hot()[0].value, 0.85);
}

TEST(HotTrackerTest, ForgetsNodesThatAreGone) {
  HotTracker t({Bound(0.8, 0.6, 1)});
  t.Observe(0, kNodes, Column({0.9, 0.9, 0.1}, 1000), 1000, kStale);
  ASSERT_EQ(t.Hot().size(), 2u);
  t.Observe(0, {"b", "c"}, Column({0.9, 0.1}, 2000), 2000, kStale);
  EXPECT_THAT(HotNames(t), ElementsAre("b"));
  // A node that comes back has nothing left from before.
  t.Left(0, "c", 0.5, 10000);
  t.Observe(0, {"b"}, Column({0.9}, 3000), 3000, kStale);
  t.Observe(0, {"b", "c"}, Column({0.9, 0.9}, 4000), 4000, kStale);
  EXPECT_THAT(HotNames(t), ::testing::UnorderedElementsAre("b", "c"));
  EXPECT_EQ(t.Hot()[1].moved_off, 0);
}

// A Running pod of ours, of a ReplicaSet, started an hour before kNow.
constexpr int64_t kNow = 10'000'000;
Pod Movable() {
  return {.name = "web-1",
          .namespace_ = "shop",
          .labels = {{"tier", "web"}},
          .scheduler_name = "metrics-scheduler",
          .node_name = "a",
          .phase = PodPhase::kRunning,
          .priority = 0,
          .start_time_ms = kNow - 3'600'000,
          .controller = ControllerRef{.kind = "ReplicaSet", .uid = "rs-1"}};
}

TEST(WhyUnmovableTest, EachRule) {
  const std::vector<std::string> ours = {"metrics-scheduler"};
  RebalancePods rules;
  EXPECT_EQ(WhyUnmovable(Movable(), rules, ours, kNow), Unmovable::kMovable);
  struct Case {
    void (*change)(Pod&, RebalancePods&);
    Unmovable want;
  };
  for (const Case& c : std::vector<Case>{
           {[](Pod&p, RebalancePods&) { p.scheduler_name = "default"; },
            Unmovable::kOtherScheduler},
           {[](Pod&p, RebalancePods&) { p.namespace_ = "kube-system"; },
            Unmovable::kNamespace},
           {[](Pod&, RebalancePods&r) { r.namespaces = {"batch"}; },
            Unmovable::kNamespace},
           {[](Pod&, RebalancePods&r) {
              r.labels = LabelSelector{.match_labels = {{"tier", "db"}}};
            },
            Unmovable::kLabels},
           {[](Pod&p, RebalancePods&) { p.priority = 2000000000; },
            Unmovable::kPriority},
           {[](Pod&p, RebalancePods&) { p.phase = PodPhase::kPending; },
            Unmovable::kNotRunning},
           {[](Pod&p, RebalancePods&) { p.deleting = true; },
            Unmovable::kNotRunning},
           {[](Pod&p, RebalancePods&) { p.start_time_ms = kNow - 60'000; },
            Unmovable::kTooYoung},
           {[](Pod&p, RebalancePods&) { p.start_time_ms = 0; },
            Unmovable::kTooYoung},
           {[](Pod&p, RebalancePods&) { p.local_storage = true; },
            Unmovable::kLocalStorage},
           {[](Pod&p, RebalancePods&) { p.mirror = true; }, Unmovable::kMirror},
           {[](Pod&p, RebalancePods&) { p.controller.reset(); },
            Unmovable::kNoController},
           {[](Pod&p, RebalancePods&) { p.controller->kind = "DaemonSet"; },
            Unmovable::kDaemonSet},
       }) {
    Pod pod = Movable();
    RebalancePods r = rules;
    c.change(pod, r);
    EXPECT_EQ(WhyUnmovable(pod, r, ours, kNow), c.want)
        << UnmovableName(c.want);
  }
  // What the rules allow.
  Pod pod = Movable();
  pod.local_storage = true;
  rules.local_storage = true;
  rules.labels = LabelSelector{.match_labels = {{"tier", "web"}}};
  rules.namespaces = {"shop"};
  EXPECT_EQ(WhyUnmovable(pod, rules, ours, kNow), Unmovable::kMovable);
}

HotNode HotA(double value, double target) {
  return {.node = "a", .value = value, .threshold = 0.8, .target = target};
}

// Everything allowed; each pod's replacement goes to `to` at `value`.
auto Anywhere(std::string to, double value) {
  return [to, value](size_t) { return Replacement{to, value}; };
}
bool Always(size_t) { return true; }
void Ignore(size_t) {}

std::vector<size_t> Moved(const MovePlan& plan) {
  std::vector<size_t> pods;
  for (const PlannedMove& m : plan.moves) pods.push_back(m.pod);
  return pods;
}

// 0.95 to 0.7 needs 0.25: one pod, the smallest that is enough alone.
TEST(PlanMovesTest, FewestPodsAndTheSmallestThatIsEnough) {
  MovePlan plan =
      PlanMoves(HotA(0.95, 0.7), {{0, 0.5}, {1, 0.25}, {2, 0.1}, {3, 0.3}},
                Always, Anywhere("b", 0.3), Ignore);
  EXPECT_THAT(Moved(plan), ElementsAre(1));
  EXPECT_NEAR(plan.value_after, 0.7, 1e-12);
  EXPECT_EQ(plan.moves[0].to, "b");
  EXPECT_EQ(plan.moves[0].to_value, 0.3);
  EXPECT_THAT(plan.left, IsEmpty());
}

// 1.2 to 0.7 needs 0.5: no pod alone; the largest, then the smallest
// enough for the rest.
TEST(PlanMovesTest, TheLargestFirstWhenNoneIsEnough) {
  MovePlan plan = PlanMoves(
      HotA(1.2, 0.7), {{0, 0.1}, {1, 0.3}, {2, 0.3}, {3, 0.2}}, Always,
      [](size_t pod) {
        return Replacement{pod == 1 ? "b" : "c", 0.2};
      },
      Ignore);
  EXPECT_THAT(Moved(plan), ElementsAre(1, 3));
  EXPECT_NEAR(plan.value_after, 0.7, 1e-12);
}

TEST(PlanMovesTest, NothingMovesOffANodeAtItsTarget) {
  MovePlan plan =
      PlanMoves(HotA(0.7, 0.7), {{0, 0.5}}, Always, Anywhere("b", 0.1), Ignore);
  EXPECT_THAT(plan.moves, IsEmpty());
  EXPECT_THAT(plan.left, IsEmpty());
}

// A pod whose replacement would come back, fit nowhere or make its new
// node hot is left, and the next one tried; a node that cannot reach its
// target sheds what it can.
TEST(PlanMovesTest, OnlyWhereItHelps) {
  MovePlan plan = PlanMoves(
      HotA(1.3, 0.7), {{0, 0.4}, {1, 0.35}, {2, 0.33}, {3, 0.31}}, Always,
      [](size_t pod) -> Replacement {
        switch (pod) {
          case 0:
            return {"a", 0.9};  // back on the hot node
          case 1:
            return {"", 0};  // nowhere
          case 2:
            return {"b", 0.75};  // above the target there
          default:
            return {"c", 0.5};
        }
      },
      Ignore);
  EXPECT_THAT(Moved(plan), ElementsAre(3));
  EXPECT_THAT(plan.left,
              ElementsAre(Field(&LeftPod::why, LeftBecause::kReturns),
                          Field(&LeftPod::why, LeftBecause::kNowhere),
                          Field(&LeftPod::why, LeftBecause::kWouldBeHot)));
  EXPECT_EQ(plan.left[0].node, "a");
  EXPECT_EQ(plan.left[2].node, "b");
  EXPECT_NEAR(plan.value_after, 0.99, 1e-12);
}

// Two pods sent to one node: the second counts the first there.
TEST(PlanMovesTest, PodsPlannedForOneNodeAddUp) {
  MovePlan plan = PlanMoves(HotA(1.4, 0.7), {{0, 0.3}, {1, 0.3}, {2, 0.3}},
                            Always, Anywhere("b", 0.35), Ignore);
  // b: 0.35, then 0.35 + 0.3 = 0.65, then 0.95 > 0.7.
  EXPECT_THAT(Moved(plan), ElementsAre(0, 1));
  EXPECT_NEAR(plan.moves[1].to_value, 0.65, 1e-12);
  EXPECT_THAT(plan.left,
              ElementsAre(Field(&LeftPod::why, LeftBecause::kWouldBeHot)));
  EXPECT_NEAR(plan.value_after, 0.8, 1e-12);
}

// Hot nodes' plans in one round share what they send: each counts what
// the earlier ones sent to b (b at 0.35 with the pod, before them).
TEST(PlanMovesTest, ARoundsPlansAddUpOnTheNodesTheySendTo) {
  std::unordered_map<std::string, double> taken;
  MovePlan first = PlanMoves(HotA(0.95, 0.7), {{0, 0.3}}, Always,
                             Anywhere("b", 0.35), Ignore, &taken);
  EXPECT_THAT(Moved(first), ElementsAre(0));
  EXPECT_NEAR(taken["b"], 0.3, 1e-12);
  MovePlan second = PlanMoves(HotA(0.95, 0.7), {{0, 0.3}}, Always,
                              Anywhere("b", 0.35), Ignore, &taken);
  ASSERT_THAT(Moved(second), ElementsAre(0));
  EXPECT_NEAR(second.moves[0].to_value, 0.65, 1e-12);
  // 0.35 + 0.6 = 0.95: no more.
  MovePlan third = PlanMoves(HotA(0.95, 0.7), {{0, 0.3}}, Always,
                             Anywhere("b", 0.35), Ignore, &taken);
  EXPECT_THAT(third.moves, IsEmpty());
  EXPECT_THAT(third.left,
              ElementsAre(Field(&LeftPod::why, LeftBecause::kWouldBeHot)));
}

TEST(PlanMovesTest, LimitsLeaveAPodAndShedWhatHelps) {
  MovePlan plan = PlanMoves(
      HotA(1.5, 0.7), {{0, 0.3}, {1, 0.2}, {2, 0.1}},
      [](size_t pod) { return pod != 1; }, Anywhere("b", 0.1), Ignore);
  EXPECT_THAT(Moved(plan), ElementsAre(0, 2));
  EXPECT_THAT(plan.left,
              ElementsAre(Field(&LeftPod::why, LeftBecause::kLimited)));
  EXPECT_NEAR(plan.value_after, 1.1, 1e-12);
}

// The limits hear of each move as it is planned: with one move allowed,
// the second pod a node needs is limited.
TEST(PlanMovesTest, EachMoveCountsBeforeTheNextIsAllowed) {
  int moves = 0;
  MovePlan plan = PlanMoves(
      HotA(1.3, 0.7), {{0, 0.3}, {1, 0.3}, {2, 0.3}},
      [&](size_t) { return moves < 1; }, Anywhere("b", 0.1),
      [&](size_t) { ++moves; });
  EXPECT_THAT(Moved(plan), ElementsAre(0));
  EXPECT_THAT(plan.left,
              ElementsAre(Field(&LeftPod::why, LeftBecause::kLimited),
                          Field(&LeftPod::why, LeftBecause::kLimited)));
}

// A node whose value is unknown takes nothing.
TEST(PlanMovesTest, ANodeOfUnknownValueTakesNothing) {
  MovePlan plan = PlanMoves(HotA(0.95, 0.7), {{0, 0.3}}, Always,
                            Anywhere("b", NAN), Ignore);
  EXPECT_THAT(plan.moves, IsEmpty());
  EXPECT_THAT(plan.left,
              ElementsAre(Field(&LeftPod::why, LeftBecause::kWouldBeHot)));
}

TEST(MoveLimitsTest, PerNodeNamespaceWorkloadAndTotal) {
  MoveLimits l({.per_node = 1,
                .per_namespace = 2,
                .per_workload = 1,
                .total = 3,
                .cool_down = absl::ZeroDuration()});
  l.StartInterval(0);
  ASSERT_TRUE(l.Allows("a", "shop", "rs-1", 0));
  l.Record("a", "shop", "rs-1", 0);
  EXPECT_FALSE(l.Allows("a", "other", "rs-9", 0));  // node a had one
  EXPECT_FALSE(l.Allows("b", "other", "rs-1", 0));  // workload rs-1 had one
  ASSERT_TRUE(l.Allows("b", "shop", "rs-2", 0));
  l.Record("b", "shop", "rs-2", 0);
  EXPECT_FALSE(l.Allows("c", "shop", "rs-3", 0));  // namespace shop had two
  ASSERT_TRUE(l.Allows("c", "other", "rs-3", 0));
  l.Record("c", "other", "rs-3", 0);
  EXPECT_FALSE(l.Allows("d", "third", "rs-4", 0));  // three in all
  l.StartInterval(30000);
  EXPECT_TRUE(l.Allows("a", "shop", "rs-1", 30000));
}

TEST(MoveLimitsTest, AWorkloadCoolsDownAcrossIntervals) {
  MoveLimits l({.cool_down = absl::Minutes(10)});
  l.StartInterval(0);
  l.Record("a", "shop", "rs-1", 0);
  l.StartInterval(30000);
  EXPECT_FALSE(l.Allows("b", "shop", "rs-1", 30000));
  EXPECT_TRUE(l.Allows("b", "shop", "rs-2", 30000));
  l.StartInterval(600000);
  EXPECT_TRUE(l.Allows("b", "shop", "rs-1", 600000));
}

}  // namespace
}  // namespace ms
