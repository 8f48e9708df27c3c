#include "scoring/filter.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::kGi;
using ::ms::testing::kMi;
using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;

std::string Reasons(const Pod& pod, const NodeInfo& node) {
  PodFilter f = MakePodFilter(pod, KubeVersion{});
  return absl::StrJoin(FailureReasons(f, CheckNode(f, {node}, 0)), "; ");
}

TEST(CheckNodeTest, ReasonsInKubeSchedulerOrder) {
  struct Case {
    std::string name;
    Pod pod;
    NodeInfo node;
    std::string want;  // "" = feasible
  };
  const Pod plain = MakePod().Req(1000, kGi);
  for (const Case& c : std::vector<Case>{
           {"fits", plain, MakeNode("n"), ""},
           // Readiness is the not-ready taint's business, as in
           // kube-scheduler v1.34: no filter reads the condition.
           {"not ready", plain, MakeNode("n").NotReady(),
            "node(s) had untolerated taint(s)"},
           {"not ready, taint tolerated",
            MakePod().Tolerate("node.kubernetes.io/not-ready",
                               TolerationOperator::kExists, "",
                               TaintEffect::kNoSchedule),
            MakeNode("n").NotReady(), ""},
           {"Ready=False, no taint yet", plain,
            [] {
              NodeInfo n = MakeNode("n");
              n.node.ready = false;
              return n;
            }(),
            ""},
           // Cordoned comes first, then taints.
           {"not ready and cordoned", plain,
            MakeNode("n").NotReady().Unschedulable(),
            "node(s) were unschedulable"},
           {"cordoned", plain, MakeNode("n").Unschedulable(),
            "node(s) were unschedulable"},
           {"cordoned, tolerated",
            MakePod().Tolerate("node.kubernetes.io/unschedulable",
                               TolerationOperator::kExists, "",
                               TaintEffect::kNoSchedule),
            MakeNode("n").Unschedulable(), ""},
           {"node name", MakePod().NodeName("other"), MakeNode("n"),
            "node(s) didn't match the requested node name"},
           {"node name matches", MakePod().NodeName("n"), MakeNode("n"), ""},
           {"taint", plain, MakeNode("n").Taint("dedicated", "gpu"),
            "node(s) had untolerated taint(s)"},
           {"taint without value", plain,
            MakeNode("n").Taint("special", "", TaintEffect::kNoExecute),
            "node(s) had untolerated taint(s)"},
           {"PreferNoSchedule never filters", plain,
            MakeNode("n").Taint("soft", "x", TaintEffect::kPreferNoSchedule),
            ""},
           {"taint tolerated",
            MakePod().Tolerate("dedicated", TolerationOperator::kEqual, "gpu"),
            MakeNode("n").Taint("dedicated", "gpu"), ""},
           {"second taint untolerated",
            MakePod().Tolerate("a", TolerationOperator::kExists, ""),
            MakeNode("n").Taint("a", "1").Taint("b", "2"),
            "node(s) had untolerated taint(s)"},
           {"selector", MakePod().NodeSelector("zone", "a"),
            MakeNode("n").Label("zone", "b"),
            "node(s) didn't match Pod's node affinity/selector"},
           {"ports", MakePod().HostPort(8080), MakeNode("n").UsedPort(8080),
            "node(s) didn't have free ports for the requested pod ports"},
           // NodeResourcesFit reports every insufficient resource.
           {"cpu and memory", MakePod().Req(3000, 7 * kGi),
            MakeNode("n").Requested(2000, 2 * kGi),
            "Insufficient cpu; Insufficient memory"},
           {"too many pods", plain,
            MakeNode("n").Capacity(4000, 8 * kGi, 3).Requested(0, 0, 3),
            "Too many pods"},
           {"ephemeral", MakePod().Ephemeral(10 * kGi),
            MakeNode("n").Ephemeral(20 * kGi, 15 * kGi),
            "Insufficient ephemeral-storage"},
           {"extended", MakePod().Scalar("nvidia.com/gpu", 2),
            MakeNode("n").Scalar("nvidia.com/gpu", 4, 3),
            "Insufficient nvidia.com/gpu"},
           {"extended absent", MakePod().Scalar("example.com/fpga", 1),
            MakeNode("n"), "Insufficient example.com/fpga"},
           {"extended fits", MakePod().Scalar("nvidia.com/gpu", 1),
            MakeNode("n").Scalar("nvidia.com/gpu", 4, 3), ""},
           // A zero request passes even on an over-committed node.
           {"zero request on full node", MakePod(),
            MakeNode("n").Requested(5000, 9 * kGi), ""},
           // Exactly full fits: 4000 - 3000 = 1000 >= 1000.
           {"exact fit", plain, MakeNode("n").Requested(3000, 7 * kGi), ""},
       }) {
    EXPECT_EQ(Reasons(c.pod, c.node), c.want) << c.name;
  }
}

// NodeDeclaredFeatures (1.36 on): the last filter, and only for the
// features the release's kube-scheduler infers.
TEST(CheckNodeTest, NodeDeclaredFeatures) {
  Pod pod = MakePod().Req(1000, kGi);
  pod.required_features =
      kFeatureRestartAllContainers | kFeatureVolumeBindMountOptions;
  NodeInfo bare = MakeNode("n");
  NodeInfo restarts = MakeNode("n");
  restarts.node.declared_features = kFeatureRestartAllContainers;
  auto reasons = [&](KubeVersion v, const NodeInfo& node) {
    PodFilter f = MakePodFilter(pod, v);
    return absl::StrJoin(FailureReasons(f, CheckNode(f, {node}, 0)), "; ");
  };
  EXPECT_EQ(reasons(KubeVersion{.minor = 35}, bare), "");
  EXPECT_EQ(reasons(KubeVersion{.minor = 36}, bare),
            "node(s) didn't match Pod's required features");
  // 1.36 infers no need of bind mount options; 1.37 does.
  EXPECT_EQ(reasons(KubeVersion{.minor = 36}, restarts), "");
  EXPECT_EQ(reasons(KubeVersion{.minor = 37}, restarts),
            "node(s) didn't match Pod's required features");
  // Any earlier filter's reason comes first.
  EXPECT_EQ(reasons(KubeVersion{.minor = 37}, MakeNode("n").Unschedulable()),
            "node(s) were unschedulable");
}

TEST(FilterSummaryTest, CountsAndSortsLikeKubeScheduler) {
  Pod pod = MakePod().Req(3000, kGi);
  PodFilter f = MakePodFilter(pod, KubeVersion{});
  std::vector<NodeInfo> nodes = {
      MakeNode("a").Requested(2000, 0), MakeNode("b").Requested(2000, 0),
      MakeNode("c").Requested(2000, 0), MakeNode("d").Unschedulable(),
      MakeNode("e").Unschedulable(),    MakeNode("f").Taint("k", "v"),
  };
  FilterSummary s;
  s.Reset(&f, nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) s.Add(CheckNode(f, nodes, i));
  // Sorted as strings: "1 node(s) had..." < "2 node(s) were..." <
  // "3 Insufficient cpu".
  EXPECT_EQ(s.Message(6),
            "0/6 nodes are available: 1 node(s) had untolerated taint(s), "
            "2 node(s) were unschedulable, 3 Insufficient cpu.");
}

// A metric's reason names the bound that applied on the node: nodes
// filtered at different bounds count apart, and bounds that read the same
// count together, as kube-scheduler counts reasons by their words.
TEST(FilterSummaryTest, MetricReasonsCountByTheBoundThatApplied) {
  Pod pod = MakePod();
  PodFilter f = MakePodFilter(pod, KubeVersion{});
  MetricTerm cpu;
  cpu.name = "cpu";
  const std::vector<MetricTerm> metrics = {cpu};
  auto above = [](double bound) {
    return NodeCheck{
        .failures = kFailMetricAbove, .metric = 0, .metric_bound = bound};
  };
  FilterSummary s;
  s.Reset(&f, &metrics);
  s.Add(above(0.7));
  s.Add(above(0.7));
  s.Add(above(0.5));
  s.Add(above(0.70000000001));  // printed as 0.7
  s.Add(NodeCheck{.failures = kFailMissingMetric, .metric = 0});
  EXPECT_EQ(s.Message(5),
            "0/5 nodes are available: 1 node(s) had cpu above 0.5, 1 node(s) "
            "had no usable value for metric cpu, 3 node(s) had cpu above "
            "0.7.");
  EXPECT_EQ(FailureReasons(f, above(0.95), &metrics),
            std::vector<std::string>{"node(s) had cpu above 0.95"});
}

TEST(FilterSummaryTest, LongMessagesStayUnder1024Bytes) {
  // 60 extended resources no node has: one reason each.
  auto builder = MakePod();
  for (int i = 0; i < 60; ++i) {
    builder.Scalar(absl::StrCat("example.com/", std::string(20, 'k'), i), 1);
  }
  Pod pod = builder;
  PodFilter f = MakePodFilter(pod, KubeVersion{});
  FilterSummary s;
  s.Reset(&f, nullptr);
  const std::vector<NodeInfo> nodes = {MakeNode("n")};
  for (int i = 0; i < 200; ++i) s.Add(CheckNode(f, nodes, 0));
  std::string msg = s.Message(200);
  EXPECT_LT(msg.size(), kMaxMessageBytes);
  EXPECT_THAT(msg, ::testing::StartsWith("0/200 nodes are available: 200 Insufficient example.com/"));
  EXPECT_THAT(msg, ::testing::EndsWith(", ..."));
}

TEST(UnsupportedConstraintsTest, NamesEachConstraint) {
  Pod pod = MakePod();
  EXPECT_EQ(UnsupportedConstraints(pod), "");
  pod.has_resource_claims = true;
  EXPECT_EQ(UnsupportedConstraints(pod),
            "pod requires dynamic resource allocation (spec.resourceClaims), "
            "which this scheduler does not support yet");
}

// From 1.36 a request a DeviceClass provides is left to dynamic resource
// allocation on a node that does not advertise it: such a node fails, last
// and with a reason naming the class; a node whose device plugin
// advertises it is checked as before.
TEST(CheckNodeTest, DeviceClassResources) {
  const DeviceClassResources classes = IndexDeviceClasses(
      {{"gpu", DeviceClass{.name = "gpu",
                           .extended_resource_name = "example.com/gpu"}}});
  Pod pod = MakePod().Req(1000, kGi).Scalar("example.com/gpu", 1);
  const std::vector<NodeInfo> nodes = {
      MakeNode("plugin").Scalar("example.com/gpu", 2, 0),
      MakeNode("full").Scalar("example.com/gpu", 1, 1),
      MakeNode("none"),
      MakeNode("busy").Requested(4000, 0),
  };
  auto reasons = [&](KubeVersion kube, size_t i) {
    PodFilter f = MakePodFilter(pod, kube);
    SetDeviceClassResources(&classes, kube, &f);
    return absl::StrJoin(FailureReasons(f, CheckNode(f, nodes, i)), "; ");
  };
  const KubeVersion v136{.minor = 36};
  const std::string dra =
      "node(s) could provide example.com/gpu only through DeviceClass gpu "
      "(dynamic resource allocation is not supported by this scheduler yet)";
  EXPECT_EQ(reasons(v136, 0), "");
  EXPECT_EQ(reasons(v136, 1), "Insufficient example.com/gpu");
  EXPECT_EQ(reasons(v136, 2), dra);
  // NodeResourcesFit leaves the device out: only cpu is reported.
  EXPECT_EQ(reasons(v136, 3), "Insufficient cpu");
  // Before 1.36 an extended resource like any other.
  EXPECT_EQ(reasons(KubeVersion{.minor = 35}, 2),
            "Insufficient example.com/gpu");
  // The class's own name is one of its resources; one no class has is not.
  Pod own = MakePod().Scalar("deviceclass.resource.kubernetes.io/gpu", 1);
  Pod unknown = MakePod().Scalar("deviceclass.resource.kubernetes.io/tpu", 1);
  for (const auto& [p, want] :
       {std::pair{&own, std::string("node(s) could provide "
                                    "deviceclass.resource.kubernetes.io/gpu "
                                    "only through DeviceClass gpu (dynamic "
                                    "resource allocation is not supported by "
                                    "this scheduler yet)")},
        std::pair{&unknown, std::string("Insufficient "
                                        "deviceclass.resource.kubernetes.io/"
                                        "tpu")}}) {
    PodFilter f = MakePodFilter(*p, v136);
    SetDeviceClassResources(&classes, v136, &f);
    EXPECT_EQ(absl::StrJoin(FailureReasons(f, CheckNode(f, nodes, 2)), "; "),
              want);
  }
  // The FailedScheduling message counts the nodes by resource.
  PodFilter f = MakePodFilter(pod, v136);
  SetDeviceClassResources(&classes, v136, &f);
  FilterSummary summary;
  summary.Reset(&f, nullptr);
  for (size_t i = 1; i < nodes.size(); ++i) summary.Add(CheckNode(f, nodes, i));
  EXPECT_EQ(summary.Message(3),
            absl::StrCat("0/3 nodes are available: 1 Insufficient cpu, 1 "
                         "Insufficient example.com/gpu, 1 ",
                         dra, "."));
}

}  // namespace
}  // namespace ms
