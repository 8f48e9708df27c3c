#include "scoring/plugins/inter_pod_affinity.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scoring/decide.h"
#include "scoring/pod_label_index.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::ms::testing::Term;
using Verdict = InterPodAffinityFilter::Verdict;

constexpr char kHost[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";

NodeInfo Host(const std::string& name, const std::string& zone = "") {
  testing::NodeBuilder b = MakeNode(name).Label(kHost, name);
  if (!zone.empty()) b.Label(kZone, zone);
  return b;
}

NodeInfo With(NodeInfo node, const Pod& pod) {
  node.AddPod(pod, KubeVersion{});
  return node;
}

// The filter's verdict on every node, computed as Decide does.
std::vector<Verdict> Verdicts(const Pod& pod,
                              const std::vector<NodeInfo>& nodes,
                              const NamespaceLabels& namespaces = {}) {
  TopologyIndex topology;
  topology.Build(nodes);
  const PlacedPods all{&nodes, nullptr, &topology};
  InterPodAffinityFilter f;
  f.Build(pod, all, namespaces);
  std::vector<Verdict> out;
  for (size_t i = 0; i < nodes.size(); ++i) out.push_back(f.Check(i));
  return out;
}

TEST(InterPodAffinityFilterTest, RequiredAntiAffinityKeepsOnePerHost) {
  const Pod web = MakePod("web-0").Label("app", "web");
  const std::vector<NodeInfo> nodes = {With(Host("n1"), web), Host("n2")};
  const Pod incoming =
      MakePod("web-1").Label("app", "web").PodAntiAffinity(
          Term("app", "web", kHost));
  EXPECT_EQ(Verdicts(incoming, nodes),
            (std::vector<Verdict>{Verdict::kAntiAffinity, Verdict::kFits}));
}

TEST(InterPodAffinityFilterTest, ExistingPodsAntiAffinityGuardsItsZone) {
  // db-0 on n1 (zone a) forbids app=web in its zone.
  const Pod db = MakePod("db-0").Label("app", "db").PodAntiAffinity(
      Term("app", "web", kZone));
  const std::vector<NodeInfo> nodes = {With(Host("n1", "a"), db),
                                       Host("n2", "a"), Host("n3", "b")};
  EXPECT_EQ(Verdicts(MakePod("web").Label("app", "web"), nodes),
            (std::vector<Verdict>{Verdict::kExistingAntiAffinity,
                                  Verdict::kExistingAntiAffinity,
                                  Verdict::kFits}));
  // A pod it does not select goes anywhere, and the plugin is skipped.
  TopologyIndex topology;
  topology.Build(nodes);
  const PlacedPods all{&nodes, nullptr, &topology};
  InterPodAffinityFilter f;
  const Pod api = MakePod("api").Label("app", "api");
  f.Build(api, all, {});
  EXPECT_FALSE(f.active());
}

TEST(InterPodAffinityFilterTest, RequiredAffinityFollowsTheTopologyKey) {
  const Pod cache = MakePod("cache").Label("app", "cache");
  const std::vector<NodeInfo> nodes = {
      With(Host("n1", "a"), cache), Host("n2", "a"), Host("n3", "b"),
      MakeNode("n4")};  // no zone label at all
  const Pod incoming =
      MakePod("web").Label("app", "web").PodAffinity(
          Term("app", "cache", kZone));
  EXPECT_EQ(Verdicts(incoming, nodes),
            (std::vector<Verdict>{Verdict::kFits, Verdict::kFits,
                                  Verdict::kAffinity, Verdict::kAffinity}));
}

TEST(InterPodAffinityFilterTest, TheFirstPodOfAGroupMayGoAnywhere) {
  const std::vector<NodeInfo> nodes = {Host("n1", "a"), Host("n2", "b"),
                                       MakeNode("n3")};
  // It selects itself and nothing matches yet: any node with the key.
  const Pod first = MakePod("web-0").Label("app", "web").PodAffinity(
      Term("app", "web", kZone));
  EXPECT_EQ(Verdicts(first, nodes),
            (std::vector<Verdict>{Verdict::kFits, Verdict::kFits,
                                  Verdict::kAffinity}));
  // One that does not select itself waits for its partner.
  const Pod lonely = MakePod("web").Label("app", "web").PodAffinity(
      Term("app", "cache", kZone));
  EXPECT_EQ(Verdicts(lonely, nodes),
            (std::vector<Verdict>{Verdict::kAffinity, Verdict::kAffinity,
                                  Verdict::kAffinity}));
  // Once a matching pod exists, only its zone will do, even for a pod that
  // selects itself.
  const std::vector<NodeInfo> started = {
      With(Host("n1", "a"), MakePod("web-1").Label("app", "web")),
      Host("n2", "b")};
  EXPECT_EQ(Verdicts(first, started),
            (std::vector<Verdict>{Verdict::kFits, Verdict::kAffinity}));
}

TEST(InterPodAffinityFilterTest, AllAffinityTermsMustMatchTheSamePod) {
  // n1 has a pod matching the first term, n2 one matching the second:
  // neither pod matches both, so no pair counts and no node fits.
  const std::vector<NodeInfo> nodes = {
      With(Host("n1", "a"), MakePod("a").Label("app", "cache")),
      With(Host("n2", "a"), MakePod("b").Label("tier", "front"))};
  const Pod incoming = MakePod("web")
                           .PodAffinity(Term("app", "cache", kZone))
                           .PodAffinity(Term("tier", "front", kZone));
  EXPECT_EQ(Verdicts(incoming, nodes),
            (std::vector<Verdict>{Verdict::kAffinity, Verdict::kAffinity}));
}

TEST(InterPodAffinityFilterTest, NamespacesAndSelectors) {
  const Pod other_ns = MakePod("web-0").Namespace("shop").Label("app", "web");
  const std::vector<NodeInfo> nodes = {With(Host("n1"), other_ns),
                                       Host("n2")};
  // Its own namespace only (the decoder's default): shop's pod is not seen.
  EXPECT_EQ(Verdicts(MakePod("web").PodAntiAffinity(Term("app", "web", kHost)),
                     nodes),
            (std::vector<Verdict>{Verdict::kFits, Verdict::kFits}));
  // Named.
  EXPECT_EQ(Verdicts(MakePod("web").PodAntiAffinity(
                         Term("app", "web", kHost, {"default", "shop"})),
                     nodes),
            (std::vector<Verdict>{Verdict::kAntiAffinity, Verdict::kFits}));
  // namespaceSelector {}: every namespace.
  PodAffinityTerm all = Term("app", "web", kHost, {});
  all.namespace_selector = LabelSelector{};
  EXPECT_EQ(Verdicts(MakePod("web").PodAntiAffinity(all), nodes),
            (std::vector<Verdict>{Verdict::kAntiAffinity, Verdict::kFits}));
  // namespaceSelector by the namespace's labels.
  PodAffinityTerm by_label = Term("app", "web", kHost, {});
  by_label.namespace_selector =
      LabelSelector{.match_labels = {{"team", "shop"}}};
  const NamespaceLabels namespaces = {{"shop", {{"team", "shop"}}},
                                      {"default", {}}};
  EXPECT_EQ(Verdicts(MakePod("web").PodAntiAffinity(by_label), nodes,
                     namespaces),
            (std::vector<Verdict>{Verdict::kAntiAffinity, Verdict::kFits}));
  EXPECT_EQ(Verdicts(MakePod("web").PodAntiAffinity(by_label), nodes, {}),
            (std::vector<Verdict>{Verdict::kFits, Verdict::kFits}));
  // No labelSelector: selects nothing.
  PodAffinityTerm none = Term("app", "web", kHost, {"shop"});
  none.label_selector.reset();
  EXPECT_EQ(Verdicts(MakePod("web").PodAntiAffinity(none), nodes),
            (std::vector<Verdict>{Verdict::kFits, Verdict::kFits}));
}

TEST(SelectsTest, Operators) {
  const Labels labels = {{"app", "web"}, {"tier", "front"}};
  auto sel = [](LabelOperator op, std::vector<std::string> values,
                const std::string& key = "app") {
    return std::optional<LabelSelector>(LabelSelector{
        .match_expressions = {{key, op, std::move(values)}}});
  };
  EXPECT_TRUE(Selects(sel(LabelOperator::kIn, {"web", "db"}), labels));
  EXPECT_FALSE(Selects(sel(LabelOperator::kIn, {"db"}), labels));
  EXPECT_FALSE(Selects(sel(LabelOperator::kNotIn, {"web"}), labels));
  EXPECT_TRUE(Selects(sel(LabelOperator::kNotIn, {"x"}, "zone"), labels));
  EXPECT_TRUE(Selects(sel(LabelOperator::kExists, {}), labels));
  EXPECT_FALSE(Selects(sel(LabelOperator::kDoesNotExist, {}), labels));
  EXPECT_TRUE(Selects(LabelSelector{}, labels));
  EXPECT_TRUE(Selects(LabelSelector{}, {}));
  EXPECT_FALSE(Selects(std::nullopt, labels));
}

// Raw scores of every node, and their normalisation over all of them.
struct Scores {
  bool active = false;
  std::vector<int64_t> raw;
  std::vector<double> normalized;
};

Scores Score(const Pod& pod, const std::vector<NodeInfo>& nodes) {
  TopologyIndex topology;
  topology.Build(nodes);
  const PlacedPods all{&nodes, nullptr, &topology};
  InterPodAffinityScore s;
  s.Build(pod, all, {});
  Scores out{.active = s.active()};
  for (size_t i = 0; i < nodes.size(); ++i) out.raw.push_back(s.Raw(i));
  const std::vector<int64_t> feasible(nodes.size(), -1);
  out.normalized.assign(nodes.size(), -1);
  NormalizeInterPodAffinity(out.raw.data(), feasible.data(), nodes.size(),
                            out.normalized.data());
  return out;
}

TEST(InterPodAffinityScoreTest, PreferredAntiAffinitySpreads) {
  const Pod web = MakePod("web-0").Label("app", "web");
  const std::vector<NodeInfo> nodes = {With(Host("n1"), web), Host("n2"),
                                       Host("n3")};
  Scores s = Score(MakePod("web-1").PreferPodAntiAffinity(
                       100, Term("app", "web", kHost)),
                   nodes);
  EXPECT_TRUE(s.active);
  EXPECT_EQ(s.raw, (std::vector<int64_t>{-100, 0, 0}));
  EXPECT_EQ(s.normalized, (std::vector<double>{0, 100, 100}));
}

TEST(InterPodAffinityScoreTest, TermsOfBothSidesAddUp) {
  // n1 (zone a): a cache pod the incoming pod prefers (weight 5), which
  // itself requires app=web in its zone (hard weight 1) and prefers it (3).
  // n2 (zone a) shares the zone; n3 (zone b) has a pod that prefers to
  // keep app=web out of its zone (weight 7); n4 has no labels at all.
  const Pod cache = MakePod("cache")
                        .Label("app", "cache")
                        .PodAffinity(Term("app", "web", kZone))
                        .PreferPodAffinity(3, Term("app", "web", kZone));
  const Pod lonely = MakePod("lonely").PreferPodAntiAffinity(
      7, Term("app", "web", kZone));
  NodeInfo unlabelled = MakeNode("n4");
  unlabelled.AddPod(MakePod("x").Label("app", "cache"), KubeVersion{});
  const std::vector<NodeInfo> nodes = {With(Host("n1", "a"), cache),
                                       Host("n2", "a"),
                                       With(Host("n3", "b"), lonely),
                                       unlabelled};
  const Pod incoming = MakePod("web").Label("app", "web").PreferPodAffinity(
      5, Term("app", "cache", kZone));
  Scores s = Score(incoming, nodes);
  EXPECT_EQ(s.raw, (std::vector<int64_t>{9, 9, -7, 0}));
  // 100 * (raw - min) / (max - min), truncated.
  EXPECT_EQ(s.normalized, (std::vector<double>{100, 100, 0, 43}));
}

TEST(InterPodAffinityScoreTest, SkippedWhenNoTermTouchesAnyNode) {
  const std::vector<NodeInfo> nodes = {
      With(Host("n1"), MakePod("a").Label("app", "web")), Host("n2")};
  EXPECT_FALSE(Score(MakePod("plain"), nodes).active);
  // Terms that match nothing leave it skipped too.
  EXPECT_FALSE(Score(MakePod("p").PreferPodAffinity(
                         10, Term("app", "nothing", kHost)),
                     nodes)
                   .active);
  // A touched pair with a sum of zero still scores (all equal: 0).
  Scores zero = Score(MakePod("p")
                          .PreferPodAffinity(10, Term("app", "web", kHost))
                          .PreferPodAntiAffinity(10, Term("app", "web", kHost)),
                      nodes);
  EXPECT_TRUE(zero.active);
  EXPECT_EQ(zero.normalized, (std::vector<double>{0, 0}));
}

// The label index only narrows which pods are looked at: verdicts and raw
// scores are those of a scan over every pod, on random clusters.
TEST(InterPodAffinityIndexTest, AgreesWithAScanOfEveryPod) {
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  auto term = [&] {
    PodAffinityTerm t = Term("app", absl::StrCat("a", pick(4)),
                             pick(2) ? kHost : kZone);
    if (pick(3) == 0) t.label_selector->match_labels["tier"] = "x";
    if (pick(4) == 0) t.label_selector->match_labels.clear();  // {}: all
    if (pick(5) == 0) {
      t.label_selector->match_expressions.push_back(
          {"tier", LabelOperator::kExists, {}});
    }
    return t;
  };
  for (int round = 0; round < 200; ++round) {
    std::vector<NodeInfo> nodes;
    for (int i = 0; i < 6; ++i) {
      NodeInfo node = Host(absl::StrCat("n", i), absl::StrCat("z", pick(2)));
      for (int j = pick(4); j > 0; --j) {
        testing::PodBuilder p = MakePod().Label("app", absl::StrCat("a", pick(4)));
        if (pick(2)) p.Label("tier", "x");
        if (pick(4) == 0) p.PodAntiAffinity(term());
        if (pick(4) == 0) p.PreferPodAffinity(1 + pick(9), term());
        node.AddPod(p.Build(), KubeVersion{});
      }
      nodes.push_back(std::move(node));
    }
    testing::PodBuilder incoming = MakePod("in").Label("app", "a1");
    if (pick(2)) incoming.PodAffinity(term());
    if (pick(2)) incoming.PodAntiAffinity(term());
    if (pick(2)) incoming.PreferPodAffinity(1 + pick(99), term());
    if (pick(2)) incoming.PreferPodAntiAffinity(1 + pick(99), term());
    const Pod pod = incoming.Build();
    PodLabelIndex index;
    index.Build(nodes);
    TopologyIndex topology;
    topology.Build(nodes);
    const PlacedPods scan{&nodes, nullptr, &topology};
    const PlacedPods indexed{&nodes, &index, &topology};
    InterPodAffinityFilter f1, f2;
    f1.Build(pod, scan, {});
    f2.Build(pod, indexed, {});
    InterPodAffinityScore s1, s2;
    s1.Build(pod, scan, {});
    s2.Build(pod, indexed, {});
    ASSERT_EQ(f1.active(), f2.active()) << round;
    ASSERT_EQ(s1.active(), s2.active()) << round;
    for (size_t i = 0; i < nodes.size(); ++i) {
      EXPECT_EQ(f1.Check(i), f2.Check(i)) << round << nodes[i].node.name;
      EXPECT_EQ(s1.Raw(i), s2.Raw(i)) << round << nodes[i].node.name;
    }
  }
}

TEST(PodLabelIndexTest, FollowsPodsAddedAndRemoved) {
  std::vector<NodeInfo> nodes = {Host("n0"), Host("n1")};
  const PodCharge web =
      PodCharge::Of(MakePod("web").Label("app", "web"), KubeVersion{});
  const PodCharge db =
      PodCharge::Of(MakePod("db").Label("app", "db"), KubeVersion{});
  nodes[0].AddPod(web);
  PodLabelIndex index;
  index.Build(nodes);
  ASSERT_NE(index.With("app", "web"), nullptr);
  EXPECT_EQ(index.With("app", "web")->size(), 1u);
  EXPECT_EQ(index.With("app", "db"), nullptr);

  nodes[1].AddPod(db);
  nodes[1].AddPod(web);  // the same PodInfo on two nodes counts twice
  index.Update(1, nodes[1]);
  EXPECT_EQ(index.With("app", "web")->size(), 2u);
  nodes[0].RemovePod(web);
  index.Update(0, nodes[0]);
  ASSERT_NE(index.With("app", "web"), nullptr);
  EXPECT_EQ(index.With("app", "web")->size(), 1u);
  EXPECT_EQ(index.With("app", "web")->begin()->node, 1u);
  nodes[1].RemovePod(db);
  index.Update(1, nodes[1]);
  EXPECT_EQ(index.With("app", "db"), nullptr);
  // A selector with a pair no pod carries has no candidates at all.
  const PodLabelIndex::Entries* none =
      index.Candidates(LabelSelector{.match_labels = {{"app", "gone"}}});
  ASSERT_NE(none, nullptr);
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(index.Candidates(LabelSelector{}), nullptr);  // {}: scan
}

// Through Decide: the FailedScheduling message, and the score's weight.
TEST(InterPodAffinityDecideTest, ReasonsAndWeight) {
  const Pod web = MakePod("web-0").Label("app", "web").Req(100, 0);
  std::vector<NodeInfo> nodes = {With(Host("n1"), web), With(Host("n2"), web)};
  const Pod incoming = MakePod("web-1").Label("app", "web").Req(100, 0)
                           .PodAntiAffinity(Term("app", "web", kHost));
  ScoringConfig config;
  Workspace ws;
  Decision d = Decide({.pod = &incoming, .nodes = &nodes}, config, ws);
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.filter_summary,
            "0/2 nodes are available: 2 node(s) didn't match pod "
            "anti-affinity rules.");

  // Two empty nodes, one with a pod the incoming pod prefers to avoid:
  // leastAllocated favours... neither (equal), affinity picks n2.
  nodes = {With(Host("n1"), web), With(Host("n2"), MakePod("other").Req(100, 0))};
  const Pod soft = MakePod("web-1").Label("app", "web").Req(100, 0)
                       .PreferPodAntiAffinity(1, Term("app", "web", kHost));
  d = Decide({.pod = &soft, .nodes = &nodes, .explain = true}, config, ws);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(nodes[d.node_index].node.name, "n2");
  ASSERT_FALSE(d.terms.empty());
  const TermResult& row = d.terms.back();
  EXPECT_EQ(row.name, BuiltinTermName(BuiltinTerm::kInterPodAffinity));
  EXPECT_EQ(row.raw, 0);
  EXPECT_EQ(row.score, 100);
  EXPECT_EQ(row.weight, 2);  // kube-scheduler's default weight
}

}  // namespace
}  // namespace ms
