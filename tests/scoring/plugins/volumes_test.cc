// The four volume plugins (VolumeRestrictions, NodeVolumeLimits,
// VolumeBinding, VolumeZone), the VolumeCatalog's assumptions, and Decide
// with claims: worked examples of kube-scheduler v1.34's rules. The
// differential suite compares them with kube-scheduler itself on random
// scenarios.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scoring/decide.h"
#include "scoring/filter.h"
#include "scoring/plugins/node_volume_limits.h"
#include "scoring/plugins/volume_binding.h"
#include "scoring/plugins/volume_restrictions.h"
#include "scoring/plugins/volume_zone.h"
#include "scoring/volume_catalog.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::kGi;
using ::ms::testing::kMi;
using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::testing::ElementsAre;

constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";

StorageClass Class(const std::string& name, BindingMode mode,
                   const std::string& provisioner =
                       "kubernetes.io/no-provisioner") {
  return {.name = name, .provisioner = provisioner, .binding_mode = mode};
}

PersistentVolumeClaim Claim(const std::string& name,
                            const std::string& storage_class,
                            int64_t request = kGi) {
  return {.namespace_ = "default",
          .name = name,
          .uid = "uid-" + name,
          .resource_version = "10",
          .storage_class = storage_class,
          .access_modes = kReadWriteOnce,
          .storage_request = request};
}

PersistentVolumeClaim BoundClaim(const std::string& name,
                                 const std::string& volume) {
  PersistentVolumeClaim c = Claim(name, "local");
  c.volume_name = volume;
  c.bind_completed = true;
  c.phase = ClaimPhase::kBound;
  return c;
}

// A PV of `storage_class` usable only on `node` ("" : anywhere).
PersistentVolume Volume(const std::string& name,
                        const std::string& storage_class, int64_t capacity,
                        const std::string& node = "") {
  PersistentVolume pv{.name = name,
                      .resource_version = "20",
                      .storage_class = storage_class,
                      .capacity = capacity,
                      .access_modes = kReadWriteOnce,
                      .phase = VolumePhase::kAvailable};
  if (!node.empty()) {
    pv.node_affinity = std::vector<NodeSelectorTerm>{
        {.match_expressions = {{kHostname, SelectorOperator::kIn, {node}}}}};
  }
  return pv;
}

Node Named(const std::string& name, const std::string& zone = "") {
  Node n = MakeNode(name).Label(kHostname, name).Build().node;
  if (!zone.empty()) n.labels[kZone] = zone;
  return n;
}

Pod WithClaims(std::vector<PodClaim> claims) {
  Pod p = MakePod("web").Req(100, 100 * kMi);
  p.uid = "pod-uid";
  p.claims = std::move(claims);
  return p;
}

TEST(VolumeBindingTest, PreFilterMessagesAreKubeSchedulers) {
  VolumeCatalog catalog;
  catalog.UpsertClass(Class("fast", BindingMode::kImmediate, "csi.example"));
  VolumeBindingFilter f;
  EXPECT_EQ(PreFilterVolumeBinding(WithClaims({{"gone"}}), catalog, &f),
            "persistentvolumeclaim \"gone\" not found");
  EXPECT_EQ(PreFilterVolumeBinding(WithClaims({{"web-scratch", true}}),
                                   catalog, &f),
            "waiting for ephemeral volume controller to create the "
            "persistentvolumeclaim \"web-scratch\"");

  catalog.UpsertClaim(Claim("immediate", "fast"));
  EXPECT_EQ(PreFilterVolumeBinding(WithClaims({{"immediate"}}), catalog, &f),
            "pod has unbound immediate PersistentVolumeClaims");
  // No class at all, or a volume named without the PV controller's
  // bind-completed: immediate too.
  catalog.UpsertClaim(Claim("classless", ""));
  EXPECT_EQ(PreFilterVolumeBinding(WithClaims({{"classless"}}), catalog, &f),
            "pod has unbound immediate PersistentVolumeClaims");

  PersistentVolumeClaim lost = BoundClaim("lost", "pv-lost");
  lost.phase = ClaimPhase::kLost;
  catalog.UpsertClaim(lost);
  EXPECT_EQ(PreFilterVolumeBinding(WithClaims({{"lost"}}), catalog, &f),
            "persistentvolumeclaim \"lost\" bound to non-existent "
            "persistentvolume \"pv-lost\"");
  PersistentVolumeClaim deleting = Claim("deleting", "fast");
  deleting.deleting = true;
  catalog.UpsertClaim(deleting);
  EXPECT_EQ(PreFilterVolumeBinding(WithClaims({{"deleting"}}), catalog, &f),
            "persistentvolumeclaim \"deleting\" is being deleted");

  PersistentVolumeClaim foreign = BoundClaim("web-data", "pv");
  foreign.controller_uid = "someone-else";
  catalog.UpsertClaim(foreign);
  EXPECT_EQ(PreFilterVolumeBinding(WithClaims({{"web-data", true}}), catalog,
                                   &f),
            "PVC default/web-data was not created for pod default/web (pod "
            "is not owner)");
}

TEST(VolumeBindingTest, ABoundClaimHoldsThePodToItsLocalVolumesNode) {
  VolumeCatalog catalog;
  catalog.UpsertClaim(BoundClaim("data", "pv-a"));
  catalog.UpsertVolume(Volume("pv-a", "local", kGi, "a"));
  VolumeBindingFilter f;
  ASSERT_EQ(PreFilterVolumeBinding(WithClaims({{"data"}}), catalog, &f), "");
  EXPECT_EQ(VolumeBindingCheck(f, Named("a"), catalog), 0u);
  EXPECT_EQ(VolumeBindingCheck(f, Named("b"), catalog), kVolumeNodeConflict);
  catalog.RemoveVolume("pv-a");
  EXPECT_EQ(VolumeBindingCheck(f, Named("a"), catalog), kVolumeMissing);
}

TEST(VolumeBindingTest, AVolumesMatchFieldsAreNotCheckedAgainstTheNodeName) {
  // kube-scheduler checks a PV's node affinity against the node's labels
  // alone: a term of matchFields only matches every node.
  VolumeCatalog catalog;
  catalog.UpsertClaim(BoundClaim("data", "pv"));
  PersistentVolume pv = Volume("pv", "local", kGi);
  pv.node_affinity = std::vector<NodeSelectorTerm>{
      {.match_fields = {{"metadata.name", SelectorOperator::kIn, {"a"}}}}};
  catalog.UpsertVolume(pv);
  VolumeBindingFilter f;
  ASSERT_EQ(PreFilterVolumeBinding(WithClaims({{"data"}}), catalog, &f), "");
  EXPECT_EQ(VolumeBindingCheck(f, Named("b"), catalog), 0u);
}

TEST(VolumeBindingTest, WaitForFirstConsumerTakesTheSmallestFittingVolume) {
  VolumeCatalog catalog;
  catalog.UpsertClass(Class("local", BindingMode::kWaitForFirstConsumer));
  catalog.UpsertClaim(Claim("data", "local", 5 * kGi));
  catalog.UpsertVolume(Volume("pv-small", "local", 2 * kGi, "a"));  // too small
  catalog.UpsertVolume(Volume("pv-big", "local", 50 * kGi, "a"));
  catalog.UpsertVolume(Volume("pv-fit", "local", 10 * kGi, "a"));
  catalog.UpsertVolume(Volume("pv-b", "local", 10 * kGi, "b"));
  PersistentVolume taken = Volume("pv-c", "local", 10 * kGi, "c");
  taken.claim_ref = ClaimRef{"default", "other", "uid-other"};
  catalog.UpsertVolume(taken);
  VolumeBindingFilter f;
  ASSERT_EQ(PreFilterVolumeBinding(WithClaims({{"data"}}), catalog, &f), "");

  VolumeBindings b;
  EXPECT_EQ(VolumeBindingCheck(f, Named("a"), catalog, &b), 0u);
  ASSERT_EQ(b.binds.size(), 1u);
  EXPECT_EQ(b.binds[0].volume, "pv-fit");
  EXPECT_EQ(b.binds[0].volume_version, "20");
  EXPECT_EQ(b.binds[0].claim, (ClaimRef{"default", "data", "uid-data"}));
  EXPECT_FALSE(b.binds[0].prebound);
  EXPECT_TRUE(b.provisions.empty());
  EXPECT_EQ(VolumeBindingCheck(f, Named("b"), catalog), 0u);
  // Node c's only PV is someone else's, and the class cannot provision.
  EXPECT_EQ(VolumeBindingCheck(f, Named("c"), catalog), kVolumeBindConflict);
}

TEST(VolumeBindingTest, APreBoundVolumeIsTheOnlyChoice) {
  VolumeCatalog catalog;
  catalog.UpsertClass(Class("local", BindingMode::kWaitForFirstConsumer));
  catalog.UpsertClaim(Claim("data", "local"));
  PersistentVolume mine = Volume("pv-mine", "local", 100 * kGi, "a");
  mine.claim_ref = ClaimRef{"default", "data", ""};
  mine.phase = VolumePhase::kPending;  // not Available: pre-bound still wins
  catalog.UpsertVolume(mine);
  catalog.UpsertVolume(Volume("pv-b", "local", kGi, "b"));
  VolumeBindingFilter f;
  ASSERT_EQ(PreFilterVolumeBinding(WithClaims({{"data"}}), catalog, &f), "");
  VolumeBindings b;
  EXPECT_EQ(VolumeBindingCheck(f, Named("a"), catalog, &b), 0u);
  ASSERT_EQ(b.binds.size(), 1u);
  EXPECT_EQ(b.binds[0].volume, "pv-mine");
  EXPECT_TRUE(b.binds[0].prebound);
  // pv-b would fit node b, but the claim's own PV rules it out.
  EXPECT_EQ(VolumeBindingCheck(f, Named("b"), catalog), kVolumeBindConflict);
}

TEST(VolumeBindingTest, ProvisioningFollowsTheClassAndTheSelectedNode) {
  VolumeCatalog catalog;
  StorageClass zonal = Class("zonal", BindingMode::kWaitForFirstConsumer,
                             "csi.example.com");
  zonal.allowed_topologies = {{{kZone, {"z1"}}}};
  catalog.UpsertClass(zonal);
  catalog.UpsertClaim(Claim("data", "zonal"));
  VolumeBindingFilter f;
  ASSERT_EQ(PreFilterVolumeBinding(WithClaims({{"data"}}), catalog, &f), "");
  VolumeBindings b;
  EXPECT_EQ(VolumeBindingCheck(f, Named("a", "z1"), catalog, &b), 0u);
  ASSERT_EQ(b.provisions.size(), 1u);
  EXPECT_EQ(b.provisions[0].name, "data");
  EXPECT_EQ(b.node, "a");
  EXPECT_EQ(VolumeBindingCheck(f, Named("b", "z2"), catalog),
            kVolumeBindConflict);

  // Once a node is selected for the claim, only that node will do.
  PersistentVolumeClaim selected = Claim("data", "zonal");
  selected.selected_node = "c";
  catalog.UpsertClaim(selected);
  ASSERT_EQ(PreFilterVolumeBinding(WithClaims({{"data"}}), catalog, &f), "");
  EXPECT_EQ(VolumeBindingCheck(f, Named("a", "z1"), catalog),
            kVolumeBindConflict);
  EXPECT_EQ(VolumeBindingCheck(f, Named("c", "z1"), catalog), 0u);
}

TEST(VolumeCatalogTest, AnAssumedBindingIsSeenUntilTheInformerMovesOn) {
  VolumeCatalog catalog;
  catalog.UpsertClass(Class("local", BindingMode::kWaitForFirstConsumer,
                            "csi.example.com"));
  catalog.UpsertClaim(Claim("first", "local"));
  catalog.UpsertClaim(Claim("second", "local"));
  catalog.UpsertVolume(Volume("pv", "local", kGi));
  VolumeBindingFilter f;
  VolumeBindings b;
  ASSERT_EQ(PreFilterVolumeBinding(WithClaims({{"first"}}), catalog, &f), "");
  ASSERT_EQ(VolumeBindingCheck(f, Named("a"), catalog, &b), 0u);
  catalog.Assume(b);

  // The PV is taken for `first`: `second` would have to be provisioned.
  ASSERT_EQ(PreFilterVolumeBinding(WithClaims({{"second"}}), catalog, &f), "");
  VolumeBindings other;
  ASSERT_EQ(VolumeBindingCheck(f, Named("a"), catalog, &other), 0u);
  EXPECT_TRUE(other.binds.empty());
  EXPECT_EQ(other.provisions.size(), 1u);

  // The informer delivers the same version again: the assumption stands.
  catalog.UpsertVolume(Volume("pv", "local", kGi));
  EXPECT_TRUE(catalog.Volume("pv")->claim_ref.has_value());
  // Forgotten (the binding failed): free again.
  catalog.Forget(b);
  EXPECT_FALSE(catalog.Volume("pv")->claim_ref.has_value());
  // Assumed again, then a newer version arrives: the informer's wins.
  catalog.Assume(b);
  PersistentVolume newer = Volume("pv", "local", kGi);
  newer.resource_version = "21";
  catalog.UpsertVolume(newer);
  EXPECT_FALSE(catalog.Volume("pv")->claim_ref.has_value());
}

TEST(VolumeZoneTest, ZonalVolumesKeepThePodInTheirZones) {
  VolumeCatalog catalog;
  catalog.UpsertClaim(BoundClaim("data", "pv"));
  PersistentVolume pv = Volume("pv", "local", kGi);
  pv.labels["failure-domain.beta.kubernetes.io/zone"] = "z1__ z2";
  catalog.UpsertVolume(pv);
  VolumeTopology t;
  ASSERT_EQ(PreFilterVolumeZone(WithClaims({{"data"}}), catalog, &t), "");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_TRUE(VolumeZoneFits(t, Named("a", "z2")));  // the GA key counts
  EXPECT_FALSE(VolumeZoneFits(t, Named("b", "z3")));
  EXPECT_TRUE(VolumeZoneFits(t, Named("c")));  // a node without zones fits
  catalog.RemoveVolume("pv");
  EXPECT_EQ(PreFilterVolumeZone(WithClaims({{"data"}}), catalog, &t),
            "persistentvolume \"pv\" not found");
}

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
  EXPECT_TRUE(InlineDisksFit({InlineDisk{.kind = K::kGcePersistentDisk,
                                          .id = "disk-2"}},
                             node_with(pd)));
  // EBS: the same volume conflicts even read-only.
  InlineDisk ebs{.kind = K::kAwsElasticBlockStore, .id = "vol-1",
                 .read_only = true};
  EXPECT_FALSE(InlineDisksFit({ebs}, node_with(ebs)));
  // RBD: same pool and image on a shared monitor.
  InlineDisk rbd{.kind = K::kRbd, .id = "img", .pool = "rbd",
                 .monitors = {"m1", "m2"}};
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

TEST(NodeVolumeLimitsTest, CsiAttachLimitsCountDistinctVolumes) {
  VolumeCatalog catalog;
  catalog.UpsertClass(Class("csi", BindingMode::kWaitForFirstConsumer,
                            "csi.example.com"));
  for (const char* name : {"v1", "v2", "v3"}) {
    PersistentVolumeClaim c = BoundClaim(name, std::string("pv-") + name);
    catalog.UpsertClaim(c);
    PersistentVolume pv = Volume(c.volume_name, "csi", kGi);
    pv.csi_driver = "csi.example.com";
    pv.csi_handle = std::string("h-") + name;
    catalog.UpsertVolume(pv);
  }
  catalog.UpsertCsiNode({.name = "a", .attach_limits = {{"csi.example.com", 2}}});
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

TEST(DecideVolumesTest, FiltersInKubeSchedulersOrderAndSaysWhatToBind) {
  VolumeCatalog catalog;
  catalog.UpsertClass(Class("local", BindingMode::kWaitForFirstConsumer));
  catalog.UpsertClaim(Claim("data", "local"));
  catalog.UpsertVolume(Volume("pv-b", "local", kGi, "b"));
  std::vector<NodeInfo> nodes = {
      MakeNode("a").Label(kHostname, "a"),
      MakeNode("b").Label(kHostname, "b"),
      MakeNode("c").Label(kHostname, "c").Capacity(10, 64 * kGi)};
  Pod pod = WithClaims({{"data"}});
  ScoringConfig cfg;
  Workspace ws;
  Decision d = Decide({.pod = &pod, .nodes = &nodes, .volumes = &catalog,
                       .explain = true},
                      cfg, ws);
  ASSERT_TRUE(d.ok()) << d.filter_summary;
  EXPECT_EQ(nodes[d.node_index].node.name, "b");
  ASSERT_EQ(d.volume_bindings.binds.size(), 1u);
  EXPECT_EQ(d.volume_bindings.binds[0].volume, "pv-b");
  EXPECT_EQ(d.volume_bindings.node, "b");
  // Node c fails NodeResourcesFit first, as in kube-scheduler.
  EXPECT_EQ(d.explanation->nodes[0].filter_reason, kReasonVolumeBindConflict);
  EXPECT_EQ(d.explanation->nodes[2].filter_reason, "Insufficient cpu");

  // A pod whose claim is missing is rejected everywhere, at pre-filter.
  Pod missing = WithClaims({{"nope"}});
  d = Decide({.pod = &missing, .nodes = &nodes, .volumes = &catalog}, cfg, ws);
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.filter_summary,
            "0/3 nodes are available: persistentvolumeclaim \"nope\" not "
            "found.");
  // With the PV gone, nothing fits.
  catalog.RemoveVolume("pv-b");
  d = Decide({.pod = &pod, .nodes = &nodes, .volumes = &catalog}, cfg, ws);
  EXPECT_EQ(d.filter_summary,
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't "
            "find available persistent volumes to bind.");
}

}  // namespace
}  // namespace ms
