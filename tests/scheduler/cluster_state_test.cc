#include "scheduler/cycle/cluster_state.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::kGi;
using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;

class ClusterStateTest : public ::testing::Test {
 protected:
  // Only leastAllocated scores: the emptiest node wins.
  ClusterStateTest() {
    config_.builtins[BuiltinTerm::kBalancedAllocation] = 0;
    config_.builtins[BuiltinTerm::kRecentPlacements] = 0;
  }

  std::string Place(const Pod& pod) {
    std::string node;
    state_.DecideAndAssume({.pod = &pod, .config = &config_}, workspace_,
                           &node);
    return node;
  }
  int64_t RequestedCpu(const std::string& node) {
    for (const NodeInfo& n : state_.Nodes()) {
      if (n.node.name == node) return n.requested.milli_cpu;
    }
    return -1;
  }

  FakeClock clock_;
  ClusterState state_{clock_, KubeVersion{}, absl::Seconds(30)};
  ScoringConfig config_;
  Workspace workspace_;
};

TEST_F(ClusterStateTest, AssumeChargesAtOnceAndInformerConfirms) {
  state_.UpsertNode(MakeNode("a"));
  state_.UpsertNode(MakeNode("b"));
  Pod p1 = MakePod("p1").Req(3000, 0);
  std::string first = Place(p1);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(RequestedCpu(first), 3000);
  EXPECT_EQ(state_.NumAssumed(), 1u);

  // The next pod sees the charge and goes to the other node.
  Pod p2 = MakePod("p2").Req(3000, 0);
  std::string second = Place(p2);
  EXPECT_NE(second, first);

  // The informer shows p1 bound where we assumed: confirmed, not charged
  // twice.
  Pod bound = p1;
  bound.node_name = first;
  state_.UpsertAssignedPod(bound);
  EXPECT_EQ(RequestedCpu(first), 3000);
  EXPECT_EQ(state_.NumAssumed(), 1u);

  // A confirmed pod is not forgotten by a late binding failure.
  state_.Forget(p1);
  EXPECT_EQ(RequestedCpu(first), 3000);

  // p2's binding failed: its charge goes.
  state_.Forget(p2);
  EXPECT_EQ(RequestedCpu(second), 0);
  EXPECT_EQ(state_.NumAssumed(), 0u);

  // A third 3000m pod fits only where p2 was.
  Pod p3 = MakePod("p3").Req(3000, 0);
  EXPECT_EQ(Place(p3), second);
  Pod p4 = MakePod("p4").Req(3000, 0);
  EXPECT_EQ(Place(p4), "");  // 0/2 nodes: Insufficient cpu
}

TEST_F(ClusterStateTest, BoundElsewhereMovesTheCharge) {
  state_.UpsertNode(MakeNode("a"));
  state_.UpsertNode(MakeNode("b"));
  Pod p = MakePod("p").Req(1000, 0);
  std::string assumed = Place(p);
  std::string other = assumed == "a" ? "b" : "a";
  Pod bound = p;
  bound.node_name = other;  // someone else bound it first
  state_.UpsertAssignedPod(bound);
  EXPECT_EQ(RequestedCpu(assumed), 0);
  EXPECT_EQ(RequestedCpu(other), 1000);
  state_.RemoveAssignedPod(bound);
  EXPECT_EQ(RequestedCpu(other), 0);
}

// An in-place resize: the kubelet reports a larger allocation, and the
// node is charged the new amount, so the next pod does not over-commit it.
TEST_F(ClusterStateTest, AResizedPodIsChargedItsNewRequests) {
  state_.UpsertNode(MakeNode("a"));
  Pod running = MakePod("running").Req(1000, 0).NodeName("a");
  running.containers[0].name = "app";
  state_.UpsertAssignedPod(running);
  ASSERT_EQ(RequestedCpu("a"), 1000);

  running.containers[0].requests.milli_cpu = 3000;  // spec resized up
  running.container_statuses = {
      {.name = "app", .allocated = Resources{.milli_cpu = 3000}}};
  state_.UpsertAssignedPod(running);
  EXPECT_EQ(RequestedCpu("a"), 3000);
  Pod next = MakePod("next").Req(2000, 0);
  EXPECT_EQ(Place(next), "");  // 1000m left

  // Resized back down and actuated: the room returns.
  running.containers[0].requests.milli_cpu = 500;
  running.container_statuses = {{.name = "app",
                                 .allocated = Resources{.milli_cpu = 500},
                                 .actual = Resources{.milli_cpu = 500}}};
  state_.UpsertAssignedPod(running);
  EXPECT_EQ(RequestedCpu("a"), 500);
  EXPECT_EQ(Place(next), "a");
  state_.RemoveAssignedPod(running);
  EXPECT_EQ(RequestedCpu("a"), 2000);  // only `next`, assumed
}

// The pods on nodes are charged by the cluster's release (model/pod.h,
// PodRequests): two containers resized in opposite directions cost the
// sum of their largest amounts up to 1.36, the largest of the sums from
// 1.37.
TEST(ClusterStateReleaseTest, PlacedPodsAreChargedByTheClusterRelease) {
  Pod running = MakePod("running").Req(1000, 0).NodeName("a");
  running.containers.push_back(running.containers[0]);
  running.containers[0].name = "a";
  running.containers[1].name = "b";
  running.containers[1].requests.milli_cpu = 2000;
  running.container_statuses = {
      {.name = "a", .actual = Resources{.milli_cpu = 2000}},
      {.name = "b", .actual = Resources{.milli_cpu = 1000}}};
  for (const auto& [minor, cpu] : {std::pair{34, 4000}, std::pair{37, 3000}}) {
    FakeClock clock;
    ClusterState state(clock, KubeVersion{.minor = minor}, absl::Seconds(30));
    state.UpsertNode(MakeNode("a"));
    state.UpsertAssignedPod(running);
    ASSERT_EQ(state.Nodes().size(), 1u);
    EXPECT_EQ(state.Nodes()[0].requested.milli_cpu, cpu) << "1." << minor;
  }
}

// The pending-pod informer can lag the assigned-pod one: a pod already
// shown bound may be decided once more. Its confirmed charge must stand,
// whatever the new decision and whatever becomes of its binding.
TEST_F(ClusterStateTest, RedecidingABoundPodKeepsItsConfirmedCharge) {
  state_.UpsertNode(MakeNode("a"));
  state_.UpsertNode(MakeNode("b"));
  Pod p = MakePod("p").Req(3000, 0);
  Pod bound = p;
  bound.node_name = "a";
  state_.UpsertAssignedPod(bound);
  ASSERT_EQ(RequestedCpu("a"), 3000);

  EXPECT_EQ(Place(p), "b");     // "a" is fuller
  EXPECT_EQ(RequestedCpu("a"), 3000);
  EXPECT_EQ(RequestedCpu("b"), 0);  // not assumed twice
  EXPECT_EQ(state_.NumAssumed(), 0u);
  state_.Forget(p);  // its binding is refused: it is bound already
  EXPECT_EQ(RequestedCpu("a"), 3000);
}

// A node charged beyond the int64 range (hostile or absurd requests, each
// at the decoder's ceiling of 2^56) saturates instead of wrapping to a
// negative sum that would look free. Under UndefinedBehaviorSanitizer
// (make asan) a wrapped sum anywhere in charging, filtering or scoring
// fails this test.
TEST_F(ClusterStateTest, SaturatedNodeSumsNeitherWrapNorLookFree) {
  Node full = MakeNode("full");
  full.allocatable.pods = 1000;
  state_.UpsertNode(full);
  Node roomy = MakeNode("roomy");
  roomy.allocatable.pods = 1000;
  state_.UpsertNode(roomy);
  constexpr int64_t kMaxQuantity = int64_t{1} << 56;
  for (int i = 0; i < 200; ++i) {
    Pod huge =
        MakePod(absl::StrCat("huge-", i)).Req(kMaxQuantity, 0).NodeName("full");
    huge.containers[0].requests.memory = kMaxQuantity;
    state_.UpsertAssignedPod(huge);
  }
  ASSERT_EQ(RequestedCpu("full"), INT64_MAX);

  // A best-effort pod passes the fit filter everywhere; scoring adds its
  // non-zero defaults to each node's sums.
  for (bool explain : {false, true}) {
    Pod best_effort = MakePod(absl::StrCat("best-effort-", explain));
    std::string node;
    state_.DecideAndAssume(
        {.pod = &best_effort, .config = &config_, .explain = explain},
        workspace_, &node);
    EXPECT_EQ(node, "roomy");
    state_.Forget(best_effort);
  }
  // Removing some of them cannot bring the sum below the truth.
  for (int i = 0; i < 10; ++i) {
    Pod huge =
        MakePod(absl::StrCat("huge-", i)).Req(kMaxQuantity, 0).NodeName("full");
    state_.RemoveAssignedPod(huge);
  }
  EXPECT_EQ(RequestedCpu("full"), INT64_MAX);
  Pod small = MakePod("small").Req(100, 0);
  EXPECT_EQ(Place(small), "roomy");
}

TEST_F(ClusterStateTest, PodsOnUnknownNodesAreChargedWhenTheNodeArrives) {
  state_.UpsertAssignedPod(MakePod("early").Req(1500, 0).NodeName("late-node"));
  state_.UpsertNode(MakeNode("late-node"));
  EXPECT_EQ(RequestedCpu("late-node"), 1500);
  state_.RemoveNode("late-node");
  state_.UpsertNode(MakeNode("late-node"));
  EXPECT_EQ(RequestedCpu("late-node"), 1500);  // the pod is still there
}

TEST_F(ClusterStateTest, RemovingANodeKeepsTheOthersIntact) {
  for (const char* n : {"a", "b", "c"}) state_.UpsertNode(MakeNode(n));
  state_.UpsertAssignedPod(MakePod("on-c").Req(1000, 0).NodeName("c"));
  state_.RemoveNode("a");  // "c" moves into a's slot
  EXPECT_EQ(state_.NumNodes(), 2u);
  EXPECT_EQ(RequestedCpu("c"), 1000);
  Pod big = MakePod("big").Req(3500, 0);
  EXPECT_EQ(Place(big), "b");  // c has 3000m left
}

TEST_F(ClusterStateTest, UpsertNodeReportsSchedulingRelevantChanges) {
  EXPECT_TRUE(state_.UpsertNode(MakeNode("a")));
  Node same = MakeNode("a");
  same.resource_version = "2";
  EXPECT_FALSE(state_.UpsertNode(same));
  Node bigger = MakeNode("a").Capacity(8000, 8 * kGi);
  EXPECT_TRUE(state_.UpsertNode(bigger));
  bigger.unschedulable = true;
  EXPECT_TRUE(state_.UpsertNode(bigger));
}

// A kubelet writes a node's status again and again; when nothing a Node
// holds changed (only its resourceVersion), nothing is retried and the
// metrics cache's node list stays as it is. New addresses, a new node or a
// node gone change that list.
TEST_F(ClusterStateTest, AHeartbeatChangesNothing) {
  Node node = MakeNode("a");
  node.addresses = {{.type = "InternalIP", .address = "10.0.0.1"}};
  ASSERT_TRUE(state_.UpsertNode(node));
  const uint64_t version = state_.NodeAddressesVersion();
  node.resource_version = "2";
  EXPECT_FALSE(state_.UpsertNode(node));
  EXPECT_EQ(state_.NodeAddressesVersion(), version);

  node.labels["tier"] = "gold";  // relevant, but not to the metrics' join
  EXPECT_TRUE(state_.UpsertNode(node));
  EXPECT_EQ(state_.NodeAddressesVersion(), version);
  EXPECT_EQ(state_.Nodes()[0].node.labels.at("tier"), "gold");

  node.addresses[0].address = "10.0.0.2";
  state_.UpsertNode(node);
  EXPECT_GT(state_.NodeAddressesVersion(), version);
  EXPECT_EQ(state_.NodeAddressList()[0].addresses,
            std::vector<std::string>{"10.0.0.2"});

  const uint64_t readdressed = state_.NodeAddressesVersion();
  state_.UpsertNode(MakeNode("b"));
  EXPECT_GT(state_.NodeAddressesVersion(), readdressed);
  const uint64_t added = state_.NodeAddressesVersion();
  state_.RemoveNode("b");
  EXPECT_GT(state_.NodeAddressesVersion(), added);
}

// The nodes informer reuses a node's image ids while the text they were
// decoded from is unchanged (its digest).
TEST_F(ClusterStateTest, KnownImagesNeedTheSameDigest) {
  Node node = MakeNode("a");
  node.images = {3, 5};
  node.images_digest = 41;
  state_.UpsertNode(node);
  std::vector<uint32_t> images;
  EXPECT_FALSE(state_.KnownImages("a", 42, images));
  EXPECT_FALSE(state_.KnownImages("b", 41, images));
  EXPECT_TRUE(images.empty());
  ASSERT_TRUE(state_.KnownImages("a", 41, images));
  EXPECT_EQ(images, (std::vector<uint32_t>{3, 5}));
}

// A metric read from a Node annotation needs no metrics snapshot and
// follows the Node: a changed annotation is a relevant change, and the next
// decision reads the new value; a filter on it applies at once.
TEST_F(ClusterStateTest, NodeAttributeMetricsFollowTheNode) {
  config_.builtins[BuiltinTerm::kLeastAllocated] = 0;
  config_.metrics.push_back(
      {.name = "price",
       .origin = {MetricOrigin::Kind::kNodeAnnotation, "example.com/cost"},
       .filter_max = 5});
  Node a = MakeNode("a"), b = MakeNode("b");
  a.annotations["example.com/cost"] = "1";
  b.annotations["example.com/cost"] = "2";
  state_.UpsertNode(a);
  state_.UpsertNode(b);
  EXPECT_EQ(Place(MakePod("p1").Req(10, 0)), "a");

  b.annotations["example.com/cost"] = "500m";
  EXPECT_TRUE(state_.UpsertNode(b));
  EXPECT_EQ(Place(MakePod("p2").Req(10, 0)), "b");

  b.annotations["example.com/cost"] = "6";  // above the filter's max
  EXPECT_TRUE(state_.UpsertNode(b));
  a.annotations["example.com/cost"] = "7";
  EXPECT_TRUE(state_.UpsertNode(a));
  Pod p3 = MakePod("p3").Req(10, 0);
  std::string node;
  Decision d = state_.DecideAndAssume({.pod = &p3, .config = &config_},
                                      workspace_, &node);
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.filter_summary,
            "0/2 nodes are available: 2 node(s) had price above 5.");
}

// A scoped filter's node side follows the Nodes: a label that puts a node
// in a pool and an annotation that bounds it apply to the next decision,
// and the extender's verdicts use the same bounds for its pod.
TEST_F(ClusterStateTest, ScopedFiltersFollowNodeLabelsAndAnnotations) {
  config_.builtins[BuiltinTerm::kLeastAllocated] = 0;
  config_.metrics.push_back(
      {.name = "price",
       .origin = {MetricOrigin::Kind::kNodeAnnotation, "example.com/cost"},
       .filter_max = 5,
       .filter_scopes =
           {{.pods = PodClass{.min_priority = 1000}, .bounds = {.max = 2}},
            {.nodes = LabelSelector{.match_labels = {{"pool", "cheap"}}},
             .bounds = {.max = 10}}},
       .filter_annotations = true});
  Node a = MakeNode("a"), b = MakeNode("b");
  a.annotations["example.com/cost"] = "3";
  b.annotations["example.com/cost"] = "7";
  state_.UpsertNode(a);
  state_.UpsertNode(b);
  std::string node;
  Pod plain = MakePod("plain").Req(10, 0);
  Decision d = state_.DecideAndAssume(
      {.pod = &plain, .config = &config_, .explain = true, .assume = false},
      workspace_, &node);
  EXPECT_EQ(d.explanation->nodes[1].filter_reason, "node(s) had price above 5");

  // b joins the pool: 7 is within its 10.
  b.labels["pool"] = "cheap";
  EXPECT_TRUE(state_.UpsertNode(b));
  d = state_.DecideAndAssume(
      {.pod = &plain, .config = &config_, .explain = true, .assume = false},
      workspace_, &node);
  EXPECT_TRUE(d.explanation->nodes[1].feasible);

  // a is bounded at 1 by its own annotation.
  a.annotations["max.filter.metrics-scheduler.io/price"] = "1";
  EXPECT_TRUE(state_.UpsertNode(a));
  d = state_.DecideAndAssume(
      {.pod = &plain, .config = &config_, .explain = true, .assume = false},
      workspace_, &node);
  EXPECT_EQ(d.explanation->nodes[0].filter_reason,
            "node(s) had price above 1 (annotation "
            "max.filter.metrics-scheduler.io/price)");

  // The extender, for a production pod: the first scope (2) on b, a's
  // annotation on a; a node not known has no value and passes.
  Pod production = MakePod("web").Priority(1000);
  MetricVerdict v =
      state_.JudgeNodes({"b", "a", "zzz"}, config_, nullptr, &production);
  EXPECT_EQ(v.failures,
            (std::vector<std::string>{"node(s) had price above 2",
                                      "node(s) had price above 1", ""}));
}

TEST_F(ClusterStateTest, HerdCountsPlacementsSinceTheMetricsWereSampled) {
  config_.metrics.push_back({.name = "latency"});
  state_.UpsertNode(MakeNode("a"));
  state_.UpsertNode(MakeNode("b"));
  auto metrics = std::make_shared<MetricsSnapshot>();
  MetricValues latency{.name = "latency"};
  int64_t sampled = absl::ToUnixMillis(clock_.Now());
  latency.by_node["a"] = {.value = 1, .time_ms = sampled};
  latency.by_node["b"] = {.value = 1, .time_ms = sampled};
  metrics->metrics.push_back(latency);

  clock_.Advance(absl::Seconds(1));
  Pod p1 = MakePod("p1").Req(10, 0);
  std::string node;
  state_.DecideAndAssume({.pod = &p1, .config = &config_, .metrics = metrics},
                         workspace_, &node);
  EXPECT_EQ(state_.RecentPlacements(node, config_), 1);

  // New samples of that node, taken after the placement: it no longer
  // counts (the metrics now reflect the pod).
  clock_.Advance(absl::Seconds(1));
  auto fresher = std::make_shared<MetricsSnapshot>(*metrics);
  fresher->metrics[0].by_node[node].time_ms = absl::ToUnixMillis(clock_.Now());
  clock_.Advance(absl::Milliseconds(1));
  Pod p2 = MakePod("p2").Req(10, 0);
  std::string node2;
  state_.DecideAndAssume({.pod = &p2, .config = &config_, .metrics = fresher},
                         workspace_, &node2);
  EXPECT_EQ(state_.RecentPlacements(node, config_), node2 == node ? 1 : 0);

  // Past the herd window nothing counts.
  clock_.Advance(absl::Seconds(31));
  Pod p3 = MakePod("p3").Req(10, 0);
  std::string node3;
  state_.DecideAndAssume({.pod = &p3, .config = &config_, .metrics = fresher},
                         workspace_, &node3);
  EXPECT_EQ(state_.RecentPlacements(node3, config_), 1);  // only p3
  EXPECT_EQ(state_.RecentPlacements(node3 == "a" ? "b" : "a", config_), 0);
}

// Two policies (profiles) over one state: each aligns the snapshot's
// metrics by its terms' names and counts every placement within its own
// herd window; a policy first asked after the others placed pods still
// counts them.
TEST(ClusterStateProfilesTest,
     EachPolicyReadsItsMetricsAndCountsEveryPlacement) {
  FakeClock clock;
  // The longest window.
  ClusterState state(clock, KubeVersion{}, absl::Seconds(60));
  ScoringConfig by_latency, by_cost;
  for (ScoringConfig* c : {&by_latency, &by_cost}) {
    c->builtins[BuiltinTerm::kLeastAllocated] = 0;
    c->builtins[BuiltinTerm::kBalancedAllocation] = 0;
    c->builtins[BuiltinTerm::kRecentPlacements] = 0;
  }
  by_latency.metrics.push_back({.name = "latency"});
  by_latency.herd_window_ms = 10000;
  by_cost.metrics.push_back({.name = "cost"});
  by_cost.herd_window_ms = 60000;
  state.UpsertNode(MakeNode("a"));
  state.UpsertNode(MakeNode("b"));
  // The snapshot holds the union, in an order neither policy's terms
  // follow; a is fast and dear, b slow and cheap.
  const int64_t sampled = absl::ToUnixMillis(clock.Now());
  auto metrics = std::make_shared<MetricsSnapshot>();
  MetricValues cost{.name = "cost"}, latency{.name = "latency"};
  cost.by_node["a"] = {.value = 9, .time_ms = sampled};
  cost.by_node["b"] = {.value = 1, .time_ms = sampled};
  latency.by_node["a"] = {.value = 1, .time_ms = sampled};
  latency.by_node["b"] = {.value = 9, .time_ms = sampled};
  metrics->metrics = {cost, latency};
  clock.Advance(absl::Seconds(1));

  Workspace workspace;
  auto place = [&](const std::string& name, const ScoringConfig& config) {
    Pod pod = MakePod(name).Req(10, 0);
    std::string node;
    state.DecideAndAssume({.pod = &pod, .config = &config, .metrics = metrics},
                          workspace, &node);
    return node;
  };
  EXPECT_EQ(place("p1", by_latency), "a");
  EXPECT_EQ(place("p2", by_latency), "a");
  clock.Advance(absl::Seconds(20));      // past by_latency's window only
  EXPECT_EQ(place("p3", by_cost), "b");  // first decision of by_cost
  EXPECT_EQ(state.RecentPlacements("a", by_cost), 2);
  EXPECT_EQ(state.RecentPlacements("b", by_cost), 1);
  EXPECT_EQ(place("p4", by_latency), "a");
  EXPECT_EQ(state.RecentPlacements("a", by_latency), 1);  // p4 only
  EXPECT_EQ(state.RecentPlacements("b", by_latency), 1);  // p3
  EXPECT_EQ(state.RecentPlacements("a", by_cost), 3);

  // Past the longest window: nothing counts for either.
  clock.Advance(absl::Seconds(61));
  EXPECT_EQ(place("p5", by_cost), "b");
  EXPECT_EQ(state.RecentPlacements("a", by_cost), 0);
  EXPECT_EQ(state.RecentPlacements("b", by_cost), 1);
  EXPECT_EQ(place("p6", by_latency), "a");
  EXPECT_EQ(state.RecentPlacements("b", by_latency), 1);  // p5
  EXPECT_EQ(state.RecentPlacements("a", by_latency), 1);  // p6
}

TEST_F(ClusterStateTest, NominatedPodsKeepTheirRoomUntilBound) {
  state_.UpsertNode(MakeNode("a"));
  state_.UpsertNode(MakeNode("b").Capacity(2000, 8 * kGi));
  Pod preemptor = MakePod("preemptor").Req(3000, 0);
  preemptor.priority = 100;
  preemptor.nominated_node_name = "a";
  state_.UpsertNominatedPod(preemptor);
  EXPECT_EQ(state_.NumNominated(), 1u);

  // "a" is emptier, but its room is the preemptor's.
  EXPECT_EQ(Place(MakePod("p1").Req(1500, 0)), "b");
  // A pod placed on its nominated node is counted once: charged there, no
  // longer nominated.
  EXPECT_EQ(Place(preemptor), "a");
  EXPECT_EQ(RequestedCpu("a"), 3000);
  EXPECT_EQ(Place(MakePod("p2").Req(1000, 0)), "a");

  // Bound (the nominated informer drops it) then deleted: room again.
  state_.RemoveNominatedPod(preemptor);
  EXPECT_EQ(state_.NumNominated(), 0u);
  Pod bound = preemptor;
  bound.node_name = "a";
  state_.RemoveAssignedPod(bound);
  EXPECT_EQ(RequestedCpu("a"), 1000);
}

TEST_F(ClusterStateTest, ABoundPodIsNoLongerNominated) {
  state_.UpsertNode(MakeNode("a"));
  Pod preemptor = MakePod("preemptor").Req(3000, 0);
  preemptor.nominated_node_name = "a";
  state_.UpsertNominatedPod(preemptor);
  Pod bound = preemptor;
  bound.node_name = "a";
  state_.UpsertAssignedPod(bound);
  EXPECT_EQ(state_.NumNominated(), 0u);
  EXPECT_EQ(RequestedCpu("a"), 3000);
}

TEST_F(ClusterStateTest, AClearedNominationFreesTheRoom) {
  state_.UpsertNode(MakeNode("a"));
  Pod preemptor = MakePod("preemptor").Req(3000, 0);
  preemptor.nominated_node_name = "a";
  state_.UpsertNominatedPod(preemptor);
  EXPECT_EQ(Place(MakePod("p1").Req(2000, 0)), "");
  preemptor.nominated_node_name.clear();
  state_.UpsertNominatedPod(preemptor);
  EXPECT_EQ(state_.NumNominated(), 0u);
  EXPECT_EQ(Place(MakePod("p1").Req(2000, 0)), "a");
}

}  // namespace
}  // namespace ms
