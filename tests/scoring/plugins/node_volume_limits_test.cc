// NodeVolumeLimits: worked examples of kube-scheduler's rules.
#include "scoring/plugins/node_volume_limits.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "scoring/filter.h"
#include "scoring/volume_catalog.h"
#include "tests/testing/storage_builders.h"

namespace ms {
namespace {

using ::ms::testing::BoundClaim;
using ::ms::testing::Claim;
using ::ms::testing::Class;
using ::ms::testing::kGi;
using ::ms::testing::MakeNode;
using ::ms::testing::Volume;
using ::ms::testing::WithClaims;

TEST(NodeVolumeLimitsTest, CsiAttachLimitsCountDistinctVolumes) {
  VolumeCatalog catalog;
  catalog.UpsertClass(
      Class("csi", BindingMode::kWaitForFirstConsumer, "csi.example.com"));
  for (const char* name : {"v1", "v2", "v3"}) {
    PersistentVolumeClaim c = BoundClaim(name, std::string("pv-") + name);
    catalog.UpsertClaim(c);
    PersistentVolume pv = Volume(c.volume_name, "csi", kGi);
    pv.csi_driver = "csi.example.com";
    pv.csi_handle = std::string("h-") + name;
    catalog.UpsertVolume(pv);
  }
  catalog.UpsertCsiNode(
      {.name = "a", .attach_limits = {{"csi.example.com", 2}}});
  Pod placed = WithClaims({{"v1"}, {"v2"}});
  NodeInfo a = MakeNode("a").Placed(placed);
  NodeInfo b = MakeNode("b").Placed(placed);  // no CSINode: no limit

  const std::vector<CsiVolume> v3 =
      PreFilterNodeVolumeLimits(WithClaims({{"v3"}}), catalog);
  ASSERT_EQ(v3, (std::vector<CsiVolume>{{"csi.example.com", "h-v3"}}));
  EXPECT_FALSE(NodeVolumeLimitsFits(v3, a, catalog));
  EXPECT_TRUE(NodeVolumeLimitsFits(v3, b, catalog));
  // A volume already attached there does not count again.
  EXPECT_TRUE(NodeVolumeLimitsFits(
      PreFilterNodeVolumeLimits(WithClaims({{"v1"}}), catalog), a, catalog));
  // An unbound claim counts under its class's provisioner.
  catalog.UpsertClaim(Claim("fresh", "csi"));
  EXPECT_FALSE(NodeVolumeLimitsFits(
      PreFilterNodeVolumeLimits(WithClaims({{"fresh"}}), catalog), a, catalog));
}

// 1.37 (VolumeLimitScaling): a CSIDriver with preventPodSchedulingIfMissing
// keeps the pod off nodes whose CSINode does not list the driver.
TEST(NodeVolumeLimitsTest, DriverThatMustBeOnTheNode) {
  constexpr char kCsi[] = "csi.example.com";
  VolumeCatalog catalog;
  catalog.UpsertClass(Class("csi", BindingMode::kWaitForFirstConsumer, kCsi));
  catalog.UpsertClass(
      Class("nfs", BindingMode::kWaitForFirstConsumer, "example.com/nfs"));
  catalog.UpsertClaim(Claim("fresh", "csi"));
  catalog.UpsertClaim(Claim("share", "nfs"));
  catalog.UpsertCsiDriver(
      {.name = kCsi, .prevent_scheduling_if_missing = true});
  // "a" lists the driver (without a limit), "b" another one, "c" has no
  // CSINode.
  catalog.UpsertCsiNode({.name = "a", .drivers = {kCsi}});
  catalog.UpsertCsiNode({.name = "b", .drivers = {"example.com/nfs"}});
  const Pod pod = WithClaims({{"share"}, {"fresh"}});
  const std::vector<CsiVolume> volumes =
      PreFilterNodeVolumeLimits(pod, catalog);
  ASSERT_EQ(volumes.size(), 2u);
  EXPECT_EQ(MissingCsiDriver(volumes, "a", catalog), -1);
  EXPECT_EQ(MissingCsiDriver(volumes, "b", catalog), 1);  // "fresh"
  EXPECT_EQ(MissingCsiDriver(volumes, "c", catalog), 1);

  // Through the filter phase: only from 1.37, before the attach limits.
  const std::vector<NodeInfo> nodes = {MakeNode("a"), MakeNode("b"),
                                       MakeNode("c")};
  auto reasons = [&](KubeVersion kube, size_t i) {
    VolumeFilters v;
    EXPECT_EQ(PreFilterVolumes(pod, catalog, kube, &v), "");
    PodFilter f = MakePodFilter(pod, kube);
    f.volumes = &v;
    return absl::StrJoin(FailureReasons(f, CheckNode(f, nodes, i)), "; ");
  };
  EXPECT_EQ(reasons(KubeVersion{.minor = 36}, 1), "");
  EXPECT_EQ(reasons(KubeVersion{.minor = 37}, 0), "");
  EXPECT_EQ(reasons(KubeVersion{.minor = 37}, 1),
            "csi.example.com CSI driver is not installed on the node");
  EXPECT_EQ(reasons(KubeVersion{.minor = 37}, 2),
            "csi.example.com CSI driver is not installed on the node");

  // The FailedScheduling message counts nodes by the driver missing.
  VolumeFilters v;
  ASSERT_EQ(PreFilterVolumes(pod, catalog, KubeVersion{.minor = 37}, &v), "");
  PodFilter f = MakePodFilter(pod, KubeVersion{.minor = 37});
  f.volumes = &v;
  FilterSummary summary;
  summary.Reset(&f, nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) {
    summary.Add(CheckNode(f, nodes, i));
  }
  EXPECT_EQ(summary.Message(3),
            "0/3 nodes are available: 2 csi.example.com CSI driver is not "
            "installed on the node.");

  // A driver that does not ask for it, or without a CSIDriver object, is
  // taken as installed everywhere.
  catalog.UpsertCsiDriver({.name = kCsi});
  EXPECT_EQ(MissingCsiDriver(volumes, "c", catalog), -1);
  catalog.RemoveCsiDriver(kCsi);
  EXPECT_EQ(MissingCsiDriver(volumes, "c", catalog), -1);
}

}  // namespace
}  // namespace ms
