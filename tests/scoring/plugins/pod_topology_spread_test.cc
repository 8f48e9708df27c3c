#include "scoring/plugins/pod_topology_spread.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scoring/decide.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using Verdict = PodTopologySpreadFilter::Verdict;

constexpr char kHost[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr auto kHard = UnsatisfiableAction::kDoNotSchedule;
constexpr auto kSoft = UnsatisfiableAction::kScheduleAnyway;

// A node labelled with its hostname and, unless empty, its zone, carrying
// `web` pods labelled app=web.
NodeInfo Host(const std::string& name, const std::string& zone, int web = 0) {
  testing::NodeBuilder b = MakeNode(name).Label(kHost, name);
  if (!zone.empty()) b.Label(kZone, zone);
  for (int i = 0; i < web; ++i) {
    b.Placed(MakePod(name + "-web-" + std::to_string(i)).Label("app", "web"));
  }
  return b;
}

// Every node with its topology index, as Decide passes them.
struct AllNodes {
  explicit AllNodes(const std::vector<NodeInfo>& nodes) {
    topology.Build(nodes);
    view = {&nodes, nullptr, &topology};
  }
  TopologyIndex topology;
  PlacedPods view;
};

std::vector<Verdict> Verdicts(const Pod& pod,
                              const std::vector<NodeInfo>& nodes,
                              const WorkloadSelectors* workloads = nullptr) {
  AllNodes all(nodes);
  PodTopologySpreadFilter f;
  f.Build(pod, all.view, workloads);
  std::vector<Verdict> out;
  for (size_t i = 0; i < nodes.size(); ++i) out.push_back(f.Check(i));
  return out;
}

// Normalised scores of every node, all feasible; -1 when skipped.
std::vector<double> Scores(const Pod& pod, const std::vector<NodeInfo>& nodes,
                           const WorkloadSelectors* workloads = nullptr) {
  std::vector<int64_t> feasible(nodes.size(), -1);
  AllNodes all(nodes);
  PodTopologySpreadScore s;
  s.Build(pod, all.view, feasible.data(), workloads);
  if (!s.active()) return std::vector<double>(nodes.size(), -1);
  std::vector<int64_t> raw;
  for (size_t i = 0; i < nodes.size(); ++i) raw.push_back(s.Raw(i));
  std::vector<double> out(nodes.size());
  NormalizePodTopologySpread(raw.data(), feasible.data(), nodes.size(),
                             out.data());
  return out;
}

TEST(PodTopologySpreadFilterTest, ZoneSkewKeepsTheFullZoneOut) {
  // z1 holds 2 web pods, z2 none: with maxSkew 1 only z2 may take one.
  const std::vector<NodeInfo> nodes = {Host("a", "z1", 1), Host("b", "z1", 1),
                                       Host("c", "z2")};
  const Pod pod =
      MakePod().Label("app", "web").Spread(1, kZone, kHard, "app", "web");
  EXPECT_EQ(Verdicts(pod, nodes),
            (std::vector<Verdict>{Verdict::kSkew, Verdict::kSkew,
                                  Verdict::kFits}));
}

TEST(PodTopologySpreadFilterTest, APodItsSelectorMissesDoesNotCountItself) {
  // Same cluster; the incoming pod is not app=web, so z1 (2) - z2 (0) = 2
  // exceeds maxSkew 1 even before it, and z2's 0 + 0 - 0 does not.
  const std::vector<NodeInfo> nodes = {Host("a", "z1", 2), Host("c", "z2")};
  const Pod pod = MakePod().Label("app", "db").Spread(1, kZone, kHard, "app",
                                                      "web");
  EXPECT_EQ(Verdicts(pod, nodes),
            (std::vector<Verdict>{Verdict::kSkew, Verdict::kFits}));
  const Pod lenient = MakePod().Label("app", "db").Spread(2, kZone, kHard,
                                                          "app", "web");
  EXPECT_EQ(Verdicts(lenient, nodes),
            (std::vector<Verdict>{Verdict::kFits, Verdict::kFits}));
}

TEST(PodTopologySpreadFilterTest, ANodeWithoutTheKeyIsUnresolvable) {
  const std::vector<NodeInfo> nodes = {Host("a", "z1"), Host("b", "")};
  const Pod pod =
      MakePod().Label("app", "web").Spread(1, kZone, kHard, "app", "web");
  EXPECT_EQ(Verdicts(pod, nodes),
            (std::vector<Verdict>{Verdict::kFits, Verdict::kMissingLabel}));
}

TEST(PodTopologySpreadFilterTest, MinDomainsCountsMissingDomainsAsEmpty) {
  // One zone only, minDomains 2: the global minimum is 0, so a zone
  // holding 1 pod is full at maxSkew 1.
  const std::vector<NodeInfo> nodes = {Host("a", "z1", 1)};
  Pod pod = MakePod().Label("app", "web").Spread(1, kZone, kHard, "app", "web");
  EXPECT_EQ(Verdicts(pod, nodes), (std::vector<Verdict>{Verdict::kFits}));
  pod.topology_spread[0].min_domains = 2;
  EXPECT_EQ(Verdicts(pod, nodes), (std::vector<Verdict>{Verdict::kSkew}));
}

TEST(PodTopologySpreadFilterTest, NodeAffinityPolicyDecidesWhichDomainsCount) {
  // z2 is empty but outside the pod's nodeSelector: under Honor (the
  // default) it is not a domain, so z1 is the minimum and a may take the
  // pod; under Ignore, z2's 0 makes z1 (1 pod) full.
  const std::vector<NodeInfo> nodes = {
      MakeNode("a").Label(kHost, "a").Label(kZone, "z1").Label("pool", "x")
          .Placed(MakePod("w").Label("app", "web")),
      MakeNode("b").Label(kHost, "b").Label(kZone, "z2")};
  Pod pod = MakePod().Label("app", "web").NodeSelector("pool", "x").Spread(
      1, kZone, kHard, "app", "web");
  EXPECT_EQ(Verdicts(pod, nodes)[0], Verdict::kFits);
  pod.topology_spread[0].node_affinity_policy = NodeInclusionPolicy::kIgnore;
  EXPECT_EQ(Verdicts(pod, nodes)[0], Verdict::kSkew);
}

TEST(PodTopologySpreadFilterTest, NodeTaintsPolicyHonorLeavesTaintedNodesOut) {
  const std::vector<NodeInfo> nodes = {
      Host("a", "z1", 1), MakeNode("b").Label(kHost, "b").Label(kZone, "z2")
                              .Taint("dedicated", "x")};
  Pod pod = MakePod().Label("app", "web").Spread(1, kZone, kHard, "app", "web");
  EXPECT_EQ(Verdicts(pod, nodes)[0], Verdict::kSkew);  // Ignore: z2 counts
  pod.topology_spread[0].node_taints_policy = NodeInclusionPolicy::kHonor;
  EXPECT_EQ(Verdicts(pod, nodes)[0], Verdict::kFits);
}

TEST(PodTopologySpreadFilterTest, CountsOnlyLivePodsOfTheSameNamespace) {
  Pod other_ns = MakePod("o").Namespace("other").Label("app", "web");
  Pod terminating = MakePod("t").Label("app", "web");
  terminating.deleting = true;
  const std::vector<NodeInfo> nodes = {
      MakeNode("a").Label(kHost, "a").Label(kZone, "z1").Placed(other_ns)
          .Placed(terminating),
      Host("b", "z2")};
  const Pod pod =
      MakePod().Label("app", "web").Spread(1, kZone, kHard, "app", "web");
  EXPECT_EQ(Verdicts(pod, nodes),
            (std::vector<Verdict>{Verdict::kFits, Verdict::kFits}));
}

TEST(PodTopologySpreadFilterTest, MatchLabelKeysNarrowTheSelector) {
  // Two revisions: only pods of the incoming pod's own revision count.
  const std::vector<NodeInfo> nodes = {
      MakeNode("a").Label(kHost, "a").Label(kZone, "z1")
          .Placed(MakePod("old").Label("app", "web").Label("rev", "1")),
      Host("b", "z2")};
  Pod pod = MakePod().Label("app", "web").Label("rev", "2").Spread(
      1, kZone, kHard, "app", "web");
  EXPECT_EQ(Verdicts(pod, nodes)[0], Verdict::kSkew);
  pod.topology_spread[0].match_label_keys = {"rev"};
  EXPECT_EQ(Verdicts(pod, nodes)[0], Verdict::kFits);
}

TEST(PodTopologySpreadFilterTest, ScheduleAnywayNeverFilters) {
  const std::vector<NodeInfo> nodes = {Host("a", "z1", 5), Host("b", "z2")};
  const Pod pod =
      MakePod().Label("app", "web").Spread(1, kZone, kSoft, "app", "web");
  AllNodes all(nodes);
  PodTopologySpreadFilter f;
  f.Build(pod, all.view, nullptr);
  EXPECT_FALSE(f.active());
}

TEST(PodTopologySpreadScoreTest, HostnameCountsScaleByLogOfTheNodeCount) {
  // 4 nodes with 0..3 matching pods, maxSkew 1: weight ln(6) = 1.79, raw
  // 0, 2, 4, 5; normalised 100 * (5 + 0 - raw) / 5.
  const std::vector<NodeInfo> nodes = {Host("a", "z1", 0), Host("b", "z1", 1),
                                       Host("c", "z2", 2), Host("d", "z2", 3)};
  const Pod pod =
      MakePod().Label("app", "web").Spread(1, kHost, kSoft, "app", "web");
  EXPECT_EQ(Scores(pod, nodes), (std::vector<double>{100, 60, 20, 0}));
}

TEST(PodTopologySpreadScoreTest, ZoneCountsAreTheDomainsTotals) {
  // z1 holds 3, z2 1: weight ln(2 + 2) = 1.39, maxSkew 2 adds 1:
  // raw z1 = round(3 * 1.39 + 1) = 5, z2 = round(1.39 + 1) = 2;
  // 100 * (5 + 2 - raw) / 5.
  const std::vector<NodeInfo> nodes = {Host("a", "z1", 1), Host("b", "z1", 2),
                                       Host("c", "z2", 1)};
  const Pod pod =
      MakePod().Label("app", "web").Spread(2, kZone, kSoft, "app", "web");
  EXPECT_EQ(Scores(pod, nodes), (std::vector<double>{40, 40, 100}));
}

TEST(PodTopologySpreadScoreTest, OwnConstraintsIgnoreNodesWithoutTheKey) {
  const std::vector<NodeInfo> nodes = {Host("a", "z1", 1), Host("b", ""),
                                       Host("c", "z2")};
  const Pod pod =
      MakePod().Label("app", "web").Spread(1, kZone, kSoft, "app", "web");
  // raw a = round(ln 4) = 1, c = 0: a = 100 * (1 + 0 - 1) / 1 = 0, c 100;
  // b is ignored and scores 0.
  EXPECT_EQ(Scores(pod, nodes), (std::vector<double>{0, 0, 100}));
}

TEST(PodTopologySpreadScoreTest, NoMatchingPodsAnywhereScoresAllTheSame) {
  const std::vector<NodeInfo> nodes = {Host("a", "z1"), Host("b", "z2")};
  const Pod pod =
      MakePod().Label("app", "web").Spread(1, kZone, kSoft, "app", "web");
  EXPECT_EQ(Scores(pod, nodes), (std::vector<double>{100, 100}));
}

TEST(PodTopologySpreadScoreTest, SystemDefaultsNeedAWorkloadSelectingThePod) {
  const std::vector<NodeInfo> nodes = {Host("a", "z1", 2), Host("b", "z2")};
  const Pod pod = MakePod().Label("app", "web").Controller(
      "apps/v1", "ReplicaSet", "web-abc");
  WorkloadSelectors none;
  EXPECT_EQ(Scores(pod, nodes, &none), (std::vector<double>{-1, -1}));
  EXPECT_EQ(Scores(pod, nodes, nullptr), (std::vector<double>{-1, -1}));

  WorkloadSelectors rs;
  rs.replica_sets["default/web-abc"] =
      LabelSelector{.match_labels = {{"app", "web"}}};
  // hostname (skew 3, weight ln 4): a 2 * 1.39 + 2 = 4.77, b 2; zone
  // (skew 5, weight ln 4): a 2 * 1.39 + 4 = 6.77, b 4: raw a 12 (11.5
  // rounded), b 6. 100 * (12 + 6 - raw) / 12.
  EXPECT_EQ(Scores(pod, nodes, &rs), (std::vector<double>{50, 100}));

  WorkloadSelectors svc;  // a Service alone is enough
  svc.services["default"]["web"] = {{"app", "web"}};
  EXPECT_EQ(Scores(pod, nodes, &svc), (std::vector<double>{50, 100}));
  // A Service of another namespace, or one not selecting the pod, is not.
  WorkloadSelectors elsewhere;
  elsewhere.services["other"]["web"] = {{"app", "web"}};
  elsewhere.services["default"]["db"] = {{"app", "db"}};
  EXPECT_EQ(Scores(pod, nodes, &elsewhere), (std::vector<double>{-1, -1}));
}

TEST(PodTopologySpreadScoreTest, SystemDefaultsScoreNodesWithoutAZone) {
  // The system defaults do not require every key: b has no zone and scores
  // on its hostname alone.
  const std::vector<NodeInfo> nodes = {Host("a", "z1", 1), Host("b", "")};
  WorkloadSelectors svc;
  svc.services["default"]["web"] = {{"app", "web"}};
  const Pod pod = MakePod().Label("app", "web");
  AllNodes all(nodes);
  PodTopologySpreadScore s;
  std::vector<int64_t> feasible(2, -1);
  s.Build(pod, all.view, feasible.data(), &svc);
  ASSERT_TRUE(s.active());
  // hostname weight ln 4: a 1.39 + 2, b 2; zone domains z1 and "" (b's):
  // weight ln 4, a 1.39 + 4. a = round(8.77) = 9, b = 2.
  EXPECT_EQ(s.Raw(0), 9);
  EXPECT_EQ(s.Raw(1), 2);
}

TEST(PodTopologySpreadSelectorTest, DefaultSelectorMergesServicesAndOwner) {
  WorkloadSelectors w;
  w.services["default"]["web"] = {{"app", "web"}};
  w.stateful_sets["default/db"] =
      LabelSelector{.match_labels = {{"tier", "data"}}};
  w.replication_controllers["default/rc"] = {{"rc", "yes"}};
  const Pod ss = MakePod().Label("app", "web").Label("tier", "data").Controller(
      "apps/v1", "StatefulSet", "db");
  auto sel = DefaultSpreadSelector(ss, w);
  ASSERT_TRUE(sel.has_value());
  EXPECT_TRUE(Selects(sel, ss.labels));
  EXPECT_FALSE(Selects(sel, {{"app", "web"}}));
  const Pod rc = MakePod().Label("app", "web").Label("rc", "yes").Controller(
      "v1", "ReplicationController", "rc");
  sel = DefaultSpreadSelector(rc, w);
  EXPECT_EQ(sel->match_labels, (Labels{{"app", "web"}, {"rc", "yes"}}));
  // A controller of another kind or group adds nothing.
  const Pod job = MakePod().Label("x", "y").Controller("batch/v1", "Job", "j");
  sel = DefaultSpreadSelector(job, w);
  EXPECT_TRUE(sel->match_labels.empty() && sel->match_expressions.empty());
}

TEST(PodTopologySpreadDecideTest, HardZoneSpreadSteersDecideAndNamesTheReason) {
  std::vector<NodeInfo> nodes = {Host("a", "z1", 1), Host("b", "z2")};
  const Pod pod =
      MakePod().Label("app", "web").Spread(1, kZone, kHard, "app", "web");
  Workspace ws;
  ScoringConfig cfg;
  Decision d = Decide({.pod = &pod, .nodes = &nodes, .explain = true}, cfg, ws);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(nodes[d.node_index].node.name, "b");
  ASSERT_TRUE(d.explanation.has_value());
  EXPECT_EQ(d.explanation->nodes[0].filter_reason, kReasonTopologySpread);

  nodes[1] = Host("b", "z2", 1);
  nodes.push_back(Host("c", "z3", 1));
  const Pod strict = MakePod().Label("app", "web").Spread(0, kZone, kHard,
                                                          "app", "web");
  d = Decide({.pod = &strict, .nodes = &nodes}, cfg, ws);
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.filter_summary,
            "0/3 nodes are available: 3 node(s) didn't match pod topology "
            "spread constraints.");
}

TEST(PodTopologySpreadDecideTest, SoftSpreadOutweighsLeastAllocated) {
  // a is emptier by resources but holds the pod's replica; the spread term
  // (weight 2) sends the pod to b.
  std::vector<NodeInfo> nodes = {
      MakeNode("a").Label(kHost, "a").Label(kZone, "z1")
          .Placed(MakePod("w").Label("app", "web").Req(100, 0)),
      MakeNode("b").Label(kHost, "b").Label(kZone, "z2")
          .Placed(MakePod("x").Req(1000, 2 * testing::kGi))};
  const Pod pod = MakePod().Label("app", "web").Req(100, 0).Spread(
      1, kHost, kSoft, "app", "web");
  Workspace ws;
  ScoringConfig cfg;
  Decision d = Decide({.pod = &pod, .nodes = &nodes}, cfg, ws);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(nodes[d.node_index].node.name, "b");
  bool has_row = false;
  for (const TermResult& t : d.terms)
    has_row |= t.name == BuiltinTermName(BuiltinTerm::kPodTopologySpread);
  EXPECT_TRUE(has_row);
  cfg.builtins[BuiltinTerm::kPodTopologySpread] = 0;
  d = Decide({.pod = &pod, .nodes = &nodes}, cfg, ws);
  EXPECT_EQ(nodes[d.node_index].node.name, "a");
}

}  // namespace
}  // namespace ms
