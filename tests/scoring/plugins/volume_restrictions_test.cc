// VolumeRestrictions: worked examples of kube-scheduler v1.34's rules.
#include "scoring/plugins/volume_restrictions.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scoring/decide.h"
#include "scoring/filter.h"
#include "scoring/volume_catalog.h"
#include "tests/testing/storage_builders.h"

namespace ms {
namespace {

using ::ms::testing::BoundClaim;
using ::ms::testing::kMi;
using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::ms::testing::WithClaims;
using ::testing::ElementsAre;

TEST(VolumeRestrictionsTest, AReadWriteOncePodClaimServesOnePod) {
  VolumeCatalog catalog;
  PersistentVolumeClaim rwop = BoundClaim("solo", "pv");
  rwop.access_modes = kReadWriteOncePod;
  catalog.UpsertClaim(rwop);
  int in_use = 1;
  std::vector<std::string> rwop_claims;
  EXPECT_EQ(PreFilterVolumeRestrictions(WithClaims({{"solo"}}), catalog,
                                        &in_use, &rwop_claims),
            "");
  EXPECT_EQ(in_use, 0);
  EXPECT_THAT(rwop_claims, ElementsAre("solo"));
  catalog.AddUsers("default", {{"solo"}});
  EXPECT_EQ(PreFilterVolumeRestrictions(WithClaims({{"solo"}}), catalog,
                                        &in_use, &rwop_claims),
            "");
  EXPECT_EQ(in_use, 1);
  // A claim named twice counts once.
  PreFilterVolumeRestrictions(WithClaims({{"solo"}, {"solo"}}), catalog,
                              &in_use, &rwop_claims);
  EXPECT_EQ(in_use, 1);
  EXPECT_THAT(rwop_claims, ElementsAre("solo"));
  catalog.RemoveUsers("default", {{"solo"}});
  PreFilterVolumeRestrictions(WithClaims({{"solo"}}), catalog, &in_use,
                              &rwop_claims);
  EXPECT_EQ(in_use, 0);
  EXPECT_EQ(PreFilterVolumeRestrictions(WithClaims({{"other"}}), catalog,
                                        &in_use, &rwop_claims),
            "persistentvolumeclaim \"other\" not found");
}

TEST(VolumeRestrictionsTest, AnAddedPodConflictsByClaimNameOnly) {
  // kube-scheduler's conflictingPVCRefCountForPod: persistentVolumeClaim
  // volumes only, matched by name whatever the namespace.
  PodInfo other{.namespace_ = "elsewhere",
                .claims = {{"solo"}, {"solo-eph", true}, {"shared"}}};
  EXPECT_EQ(ReadWriteOncePodConflicts({"solo", "solo-eph"}, other), 1);
  EXPECT_EQ(ReadWriteOncePodConflicts({}, other), 0);
}

TEST(VolumeRestrictionsTest, InlineDisksConflictAsKubeSchedulerSays) {
  using K = InlineDisk::Kind;
  auto node_with = [](InlineDisk disk) {
    Pod placed = MakePod("placed");
    placed.inline_disks = {disk};
    return MakeNode("n").Placed(placed).Build();
  };
  const InlineDisk pd{.kind = K::kGcePersistentDisk, .id = "disk-1"};
  InlineDisk pd_ro = pd;
  pd_ro.read_only = true;
  EXPECT_FALSE(InlineDisksFit({pd}, node_with(pd)));
  EXPECT_FALSE(InlineDisksFit({pd_ro}, node_with(pd)));
  EXPECT_TRUE(InlineDisksFit({pd_ro}, node_with(pd_ro)));  // both read-only
  EXPECT_TRUE(InlineDisksFit(
      {InlineDisk{.kind = K::kGcePersistentDisk, .id = "disk-2"}},
      node_with(pd)));
  // EBS: the same volume conflicts even read-only.
  InlineDisk ebs{
      .kind = K::kAwsElasticBlockStore, .id = "vol-1", .read_only = true};
  EXPECT_FALSE(InlineDisksFit({ebs}, node_with(ebs)));
  // RBD: same pool and image on a shared monitor.
  InlineDisk rbd{
      .kind = K::kRbd, .id = "img", .pool = "rbd", .monitors = {"m1", "m2"}};
  InlineDisk other_monitors = rbd;
  other_monitors.monitors = {"m3"};
  EXPECT_FALSE(InlineDisksFit({rbd}, node_with(rbd)));
  EXPECT_TRUE(InlineDisksFit({rbd}, node_with(other_monitors)));
  // Kinds never conflict across.
  InlineDisk iscsi{.kind = K::kIscsi, .id = "disk-1"};
  EXPECT_TRUE(InlineDisksFit({iscsi}, node_with(pd)));
  EXPECT_FALSE(InlineDisksFit({iscsi}, node_with(iscsi)));

  // In Decide: the node with the disk is out, with the reason.
  Pod pod = MakePod("web").Req(100, 100 * kMi);
  pod.inline_disks = {pd};
  Pod placed = MakePod("placed");
  placed.inline_disks = {pd};
  std::vector<NodeInfo> nodes = {MakeNode("a").Placed(placed), MakeNode("b")};
  ScoringConfig cfg;
  Workspace ws;
  Decision d = Decide({.pod = &pod, .nodes = &nodes, .explain = true}, cfg, ws);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(nodes[d.node_index].node.name, "b");
  EXPECT_EQ(d.explanation->nodes[0].filter_reason, kReasonDiskConflict);
}

}  // namespace
}  // namespace ms
