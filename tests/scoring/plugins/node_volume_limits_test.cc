// NodeVolumeLimits: worked examples of kube-scheduler v1.34's rules.
#include "scoring/plugins/node_volume_limits.h"

#include <string>
#include <vector>

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

}  // namespace
}  // namespace ms
