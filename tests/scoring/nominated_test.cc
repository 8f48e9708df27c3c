// Nominated pods: kube-scheduler's RunFilterPluginsWithNominatedPods and
// evaluateNominatedNode, through Decide.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scoring/decide.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::kGi;
using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::ms::testing::Term;

constexpr char kHost[] = "kubernetes.io/hostname";

NodeInfo Host(const std::string& name) {
  return MakeNode(name).Label(kHost, name);
}

struct Fixture {
  std::vector<NodeInfo> nodes = {Host("n1"), Host("n2")};
  std::vector<NominatedPod> nominated;
  Pod pod = MakePod("incoming").Req(2000, kGi);
  ScoringConfig config;
  Workspace ws;

  // A pod nominated to node `node` with `priority`.
  void Nominate(uint32_t node, int32_t priority, Pod p) {
    p.priority = priority;
    p.uid = "uid-" + p.name;
    nominated.push_back(
        {.node = node, .charge = PodCharge::Of(p, KubeVersion{})});
  }
  Decision Run() {
    DecideInput in{.pod = &pod,
                   .nodes = &nodes,
                   .nominated = nominated.empty() ? nullptr : &nominated,
                   .seed = 1,
                   .explain = true};
    return Decide(in, config, ws);
  }
  // Node i's row of the last explanation.
  static const NodeExplanation& Row(const Decision& d, size_t i) {
    return d.explanation->nodes[i];
  }
};

TEST(NominatedPodsTest, OneOfHigherOrEqualPriorityKeepsItsRoom) {
  for (int32_t priority : {10, 5}) {
    Fixture f;
    f.pod.priority = 5;
    f.Nominate(0, priority, MakePod("preemptor").Req(3000, kGi));
    Decision d = f.Run();
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d.node_index, 1) << priority;
    EXPECT_FALSE(Fixture::Row(d, 0).feasible);
    EXPECT_EQ(Fixture::Row(d, 0).filter_reason, "Insufficient cpu");
  }
}

TEST(NominatedPodsTest, OneOfLowerPriorityOrThePodItselfDoesNotCount) {
  Fixture f;
  f.pod.priority = 5;
  f.pod.uid = "uid-incoming";
  f.nodes[1].node.unschedulable = true;
  f.Nominate(0, 4, MakePod("lower").Req(3000, kGi));
  f.Nominate(0, 100, MakePod("incoming").Req(3000, kGi));  // its own nomination
  Decision d = f.Run();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.node_index, 0);
}

TEST(NominatedPodsTest, NoRoomAnywhereSaysWhy) {
  Fixture f;
  f.Nominate(0, 0, MakePod("a").Req(3000, kGi));
  f.Nominate(1, 0, MakePod("b").Req(1000, kGi));
  f.Nominate(1, 0, MakePod("c").Req(1500, kGi));
  Decision d = f.Run();
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.filter_summary, "0/2 nodes are available: 2 Insufficient cpu.");
}

TEST(NominatedPodsTest, ScoresDoNotSeeThem) {
  Fixture f;
  f.nodes[1].node.unschedulable = true;
  Decision without = f.Run();
  f.Nominate(0, 0, MakePod("small").Req(1000, kGi));
  Decision with = f.Run();
  ASSERT_TRUE(without.ok());
  ASSERT_TRUE(with.ok());
  EXPECT_EQ(with.node_index, 0);
  EXPECT_EQ(with.score, without.score);
}

TEST(NominatedPodsTest, PodToPodFiltersCountThemOnTheirNode) {
  // Anti-affinity to app=db by hostname: the nominated db pod on n1 rules
  // n1 out, as a running one would.
  Fixture f;
  f.pod = MakePod("incoming").PodAntiAffinity(Term("app", "db", kHost));
  f.Nominate(0, 0, MakePod("db").Label("app", "db"));
  Decision d = f.Run();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.node_index, 1);
  EXPECT_EQ(Fixture::Row(d, 0).filter_reason,
            "node(s) didn't match pod anti-affinity rules");

  // Topology spread, maxSkew 1 by hostname: counting the nominated pod on
  // n1 makes it 1 + 1 - 0 = 2 there.
  Fixture s;
  s.pod = MakePod("incoming")
              .Label("app", "web")
              .Spread(1, kHost, UnsatisfiableAction::kDoNotSchedule, "app",
                      "web");
  s.Nominate(0, 0, MakePod("web").Label("app", "web"));
  d = s.Run();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.node_index, 1);
  EXPECT_EQ(Fixture::Row(d, 0).filter_reason,
            "node(s) didn't match pod topology spread constraints");
}

TEST(NominatedPodsTest, ANodeMustFitWithAndWithoutThem) {
  // Required affinity to app=db, which the pod itself does not match: with
  // the nominated db pod n1 fits, but it is not running yet, so the second
  // pass (without it) rejects n1 as kube-scheduler does.
  Fixture f;
  f.pod = MakePod("incoming").PodAffinity(Term("app", "db", kHost));
  f.Nominate(0, 0, MakePod("db").Label("app", "db"));
  Decision d = f.Run();
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.filter_summary,
            "0/2 nodes are available: 2 node(s) didn't match pod affinity "
            "rules.");
}

TEST(NominatedPodsTest, ThePodsOwnNominatedNodeWinsWhenItFits) {
  Fixture f;
  // n1 is emptier, so it would win on scores.
  f.nodes[1].AddPod(MakePod("busy").Req(1000, kGi), KubeVersion{});
  f.pod.nominated_node_name = "n2";
  Decision d = f.Run();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.node_index, 1);
  EXPECT_EQ(d.num_feasible, 1);
  EXPECT_EQ(Fixture::Row(d, 0).filter_reason,
            "not considered: the pod's nominated node n2 fits");

  // When it no longer fits, every node is considered again.
  f.nodes[1].AddPod(MakePod("more").Req(2500, kGi), KubeVersion{});
  d = f.Run();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.node_index, 0);
}

}  // namespace
}  // namespace ms
