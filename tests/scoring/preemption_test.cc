// DefaultPreemption's dry run (scoring/preemption.h), through Decide, with
// worked examples.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scoring/decide.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::kGi;
using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::testing::ElementsAre;

// A placed pod: `milli_cpu`, `priority`, started at `start` (seconds).
Pod Placed(const std::string& name, int64_t milli_cpu, int32_t priority,
           int64_t start = 1) {
  Pod p = MakePod(name).Req(milli_cpu, kGi);
  p.uid = "uid-" + name;
  p.priority = priority;
  p.start_time_ms = start * 1000;
  return p;
}

struct Fixture {
  std::vector<NodeInfo> nodes;
  std::vector<PodDisruptionBudget> budgets;
  std::vector<NominatedPod> nominated;
  Pod pod = MakePod("preemptor").Req(2000, kGi);
  ScoringConfig config;
  Workspace ws;

  Fixture() { pod.priority = 1000; }
  void Add(size_t node, const Pod& p) { nodes[node].AddPod(p, KubeVersion{}); }
  Decision Run() {
    DecideInput in{.pod = &pod,
                   .nodes = &nodes,
                   .nominated = nominated.empty() ? nullptr : &nominated,
                   .budgets = &budgets,
                   .preempt = true,
                   .now_ms = 100000,
                   .seed = 0};
    return Decide(in, config, ws);
  }
  // Names of the chosen victims, most important first.
  static std::vector<std::string> Victims(const Decision& d) {
    std::vector<std::string> out;
    for (const auto& v : d.preemption->victims) out.push_back(v->name);
    return out;
  }
};

TEST(PreemptionTest, TheFewestPodsThatMakeRoomAreEvicted) {
  Fixture f;
  f.nodes = {MakeNode("n1")};
  // Equal priority: the later started are less important, so reprieved
  // last. a (started first) and b fit back beside the 2-CPU pod; c does not.
  f.Add(0, Placed("a", 1000, 0, 1));
  f.Add(0, Placed("b", 1000, 0, 2));
  f.Add(0, Placed("c", 2000, 0, 3));
  Decision d = f.Run();
  ASSERT_FALSE(d.ok());
  ASSERT_TRUE(d.preemption.has_value());
  ASSERT_TRUE(d.preemption->ok()) << d.filter_summary;
  EXPECT_EQ(d.preemption->node_index, 0);
  EXPECT_THAT(Fixture::Victims(d), ElementsAre("c"));
  // From 1.37 success names the node after the filter summary; before, it
  // adds nothing.
  EXPECT_EQ(d.filter_summary,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: found a "
            "potential placement for pod on node n1, preempting 1 victims");
  f.config.kube = KubeVersion{.minor = 36};
  d = f.Run();
  ASSERT_TRUE(d.preemption.has_value() && d.preemption->ok());
  EXPECT_EQ(d.preemption->message, "");
  EXPECT_EQ(d.filter_summary, "0/1 nodes are available: 1 Insufficient cpu.");
}

TEST(PreemptionTest, HigherPriorityPodsAreReprievedFirst) {
  Fixture f;
  f.nodes = {MakeNode("n1")};
  // The priority-5 pod goes back first and takes the room a 1-CPU pod
  // would: both priority-1 pods are evicted rather than it.
  f.Add(0, Placed("five", 2000, 5));
  f.Add(0, Placed("one-a", 1000, 1, 1));
  f.Add(0, Placed("one-b", 1000, 1, 2));
  Decision d = f.Run();
  ASSERT_TRUE(d.preemption->ok()) << d.filter_summary;
  EXPECT_THAT(Fixture::Victims(d), ElementsAre("one-a", "one-b"));
}

TEST(PreemptionTest, TheNodeWithTheLeastImportantVictimsIsChosen) {
  Fixture f;
  f.nodes = {MakeNode("n1"), MakeNode("n2")};
  f.Add(0, Placed("n1-high", 4000, 10));
  f.Add(1, Placed("n2-low-a", 2000, 3, 1));
  f.Add(1, Placed("n2-low-b", 2000, 3, 2));
  Decision d = f.Run();
  ASSERT_TRUE(d.preemption->ok()) << d.filter_summary;
  // The highest victim priority is 3 on n2, 10 on n1; of n2's pods the one
  // started later goes.
  EXPECT_EQ(d.preemption->node_index, 1);
  EXPECT_THAT(Fixture::Victims(d), ElementsAre("n2-low-b"));
}

TEST(PreemptionTest, FewerVictimsThenTheLaterStartBreakTies) {
  Fixture f;
  f.nodes = {MakeNode("n1"), MakeNode("n2"), MakeNode("n3")};
  f.Add(0, Placed("n1-a", 1000, 3));
  f.Add(0, Placed("n1-b", 1000, 3));
  f.Add(0, Placed("n1-c", 1000, 3));
  f.Add(0, Placed("n1-d", 1000, 3));
  f.Add(1, Placed("n2-old", 4000, 3, /*start=*/10));
  f.Add(2, Placed("n3-new", 4000, 3, /*start=*/20));
  Decision d = f.Run();
  ASSERT_TRUE(d.preemption->ok()) << d.filter_summary;
  // n1 loses two pods (sum of priorities larger), n2 and n3 one each; n3's
  // victim started later.
  EXPECT_EQ(d.preemption->node_index, 2);
  EXPECT_THAT(Fixture::Victims(d), ElementsAre("n3-new"));
}

TEST(PreemptionTest, ABudgetSteersTheChoiceToTheOtherNode) {
  Fixture f;
  f.nodes = {MakeNode("n1"), MakeNode("n2")};
  Pod guarded = Placed("guarded", 4000, 0, 20);
  guarded.labels = {{"app", "db"}};
  f.Add(0, guarded);                         // the later start: preferred...
  f.Add(1, Placed("free", 4000, 0, 10));
  f.budgets.push_back({.name = "db",
                       .namespace_ = "default",
                       .selector =
                           LabelSelector{.match_labels = {{"app", "db"}}},
                       .disruptions_allowed = 0});
  Decision d = f.Run();
  ASSERT_TRUE(d.preemption->ok()) << d.filter_summary;
  // ...but evicting it would break its budget.
  EXPECT_EQ(d.preemption->node_index, 1);
  EXPECT_EQ(d.preemption->budget_violations, 0);

  // With a disruption allowed, the later start wins again.
  f.budgets[0].disruptions_allowed = 1;
  d = f.Run();
  ASSERT_TRUE(d.preemption->ok());
  EXPECT_EQ(d.preemption->node_index, 0);
}

// A pod two budgets select, the first of which forbids its eviction: up
// to 1.36 it takes from the second too, from 1.37 it stops at the first,
// leaving the second's allowance to the next pod.
TEST(PreemptionTest, APodStopsAtTheFirstBudgetItExceedsFrom137) {
  Fixture f;
  f.nodes = {MakeNode("n1")};
  Pod both = Placed("both", 2000, 5);
  both.labels = {{"app", "web"}, {"tier", "fe"}};
  Pod front = Placed("front", 2000, 1);
  front.labels = {{"tier", "fe"}};
  f.Add(0, both);
  f.Add(0, front);
  auto budget = [](const std::string& name, const std::string& key,
                   const std::string& value, int32_t allowed) {
    return PodDisruptionBudget{
        .name = name,
        .namespace_ = "default",
        .selector = LabelSelector{.match_labels = {{key, value}}},
        .disruptions_allowed = allowed};
  };
  f.budgets = {budget("web", "app", "web", 0), budget("fe", "tier", "fe", 1)};
  // "both" is reprieved, "front" evicted: under 1.36 "both" took fe's one
  // disruption, so evicting "front" exceeds it.
  f.config.kube = KubeVersion{.minor = 36};
  Decision d = f.Run();
  ASSERT_TRUE(d.preemption.has_value() && d.preemption->ok())
      << d.filter_summary;
  EXPECT_THAT(Fixture::Victims(d), ElementsAre("front"));
  EXPECT_EQ(d.preemption->budget_violations, 1);
  f.config.kube = KubeVersion{.minor = 37};
  d = f.Run();
  ASSERT_TRUE(d.preemption.has_value() && d.preemption->ok())
      << d.filter_summary;
  EXPECT_THAT(Fixture::Victims(d), ElementsAre("front"));
  EXPECT_EQ(d.preemption->budget_violations, 0);
}

TEST(PreemptionTest, OnlyPodsOfLowerPriorityAreVictims) {
  Fixture f;
  f.nodes = {MakeNode("n1")};
  f.Add(0, Placed("same", 4000, 1000));
  Decision d = f.Run();
  ASSERT_FALSE(d.preemption->ok());
  EXPECT_EQ(d.filter_summary,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 "
            "nodes are available: 1 No preemption victims found for incoming "
            "pod.");
}

TEST(PreemptionTest, NodesRemovingPodsCannotFixAreNotTried) {
  Fixture f;
  f.nodes = {MakeNode("tainted"), MakeNode("small").Capacity(1000, 8 * kGi)};
  f.nodes[0].node.taints.push_back(
      {"dedicated", "x", TaintEffect::kNoSchedule});
  f.Add(0, Placed("low", 4000, 0));
  Decision d = f.Run();
  ASSERT_FALSE(d.preemption->ok());
  // The taint, and a request above what the node has at all.
  EXPECT_EQ(d.preemption->message,
            "preemption: 0/2 nodes are available: 2 Preemption is not "
            "helpful for scheduling.");
}

TEST(PreemptionTest, ANodeThatStillDoesNotFitGivesItsReason) {
  Fixture f;
  f.nodes = {MakeNode("n1")};
  f.Add(0, Placed("high", 3000, 2000));
  f.Add(0, Placed("low", 1000, 0));
  Decision d = f.Run();
  ASSERT_FALSE(d.preemption->ok());
  EXPECT_EQ(d.preemption->message,
            "preemption: 0/1 nodes are available: 1 Insufficient cpu.");
}

TEST(PreemptionTest, APortHeldByAHigherPriorityPodIsNotFreed) {
  Fixture f;
  f.nodes = {MakeNode("n1")};
  Pod holder = Placed("holder", 1000, 2000);
  holder.containers[0].ports.push_back({8080, "TCP", ""});
  f.Add(0, holder);
  f.Add(0, Placed("low", 1000, 0));
  f.pod = MakePod("preemptor").Req(100, kGi).HostPort(8080);
  f.pod.priority = 1000;
  Decision d = f.Run();
  ASSERT_FALSE(d.preemption->ok());
  EXPECT_EQ(d.preemption->message,
            "preemption: 0/1 nodes are available: 1 node(s) didn't have free "
            "ports for the requested pod ports.");
}

TEST(PreemptionTest, PreemptionPolicyNeverWaits) {
  Fixture f;
  f.nodes = {MakeNode("n1")};
  f.Add(0, Placed("low", 4000, 0));
  f.pod.never_preempts = true;
  Decision d = f.Run();
  ASSERT_FALSE(d.preemption->ok());
  EXPECT_EQ(d.preemption->message,
            "preemption: not eligible due to preemptionPolicy=Never.");
}

TEST(PreemptionTest, NoSecondEvictionWhileVictimsTerminate) {
  Fixture f;
  f.nodes = {MakeNode("n1"), MakeNode("n2")};
  Pod going = Placed("going", 4000, 0);
  going.deleting = true;
  going.preempted = true;
  f.Add(0, going);
  f.Add(1, Placed("other", 4000, 0));
  f.pod.nominated_node_name = "n1";
  Decision d = f.Run();
  ASSERT_FALSE(d.preemption->ok());
  EXPECT_EQ(d.preemption->message,
            "preemption: not eligible due to a terminating pod on the "
            "nominated node.");
}

TEST(PreemptionTest, LowerPriorityNominationsOnTheNodeAreCleared) {
  Fixture f;
  f.nodes = {MakeNode("n1")};
  f.Add(0, Placed("low", 4000, 0));
  Pod waiting = Placed("waiting", 1000, 1);
  f.nominated.push_back(
      {.node = 0, .charge = PodCharge::Of(waiting, KubeVersion{})});
  Decision d = f.Run();
  ASSERT_TRUE(d.preemption->ok()) << d.filter_summary;
  ASSERT_EQ(d.preemption->lower_nominated.size(), 1u);
  EXPECT_EQ(d.preemption->lower_nominated[0]->name, "waiting");
}

TEST(PreemptionTest, OffWhenDisabled) {
  Fixture f;
  f.nodes = {MakeNode("n1")};
  f.Add(0, Placed("low", 4000, 0));
  f.config.preemption.enabled = false;
  EXPECT_FALSE(f.Run().preemption.has_value());
}

}  // namespace
}  // namespace ms
