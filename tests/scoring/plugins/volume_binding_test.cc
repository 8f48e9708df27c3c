// VolumeBinding: worked examples of kube-scheduler's rules (the
// differential suite compares it with kube-scheduler on random scenarios).
#include "scoring/plugins/volume_binding.h"

#include <optional>
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
using ::ms::testing::kZone;
using ::ms::testing::Named;
using ::ms::testing::Volume;
using ::ms::testing::WithClaims;

TEST(VolumeBindingTest, PreFilterMessagesAreKubeSchedulers) {
  VolumeCatalog catalog;
  catalog.UpsertClass(Class("fast", BindingMode::kImmediate, "csi.example"));
  VolumeBindingFilter f;
  EXPECT_EQ(PreFilterVolumeBinding(WithClaims({{"gone"}}), catalog, &f),
            "persistentvolumeclaim \"gone\" not found");
  EXPECT_EQ(
      PreFilterVolumeBinding(WithClaims({{"web-scratch", true}}), catalog, &f),
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
  EXPECT_EQ(
      PreFilterVolumeBinding(WithClaims({{"web-data", true}}), catalog, &f),
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

// Score (1.37): per class of the chosen PVs, 100 - requested*100/capacity
// (integer division), then the classes' rounded mean.
TEST(VolumeBindingTest, ScoreIsTheRoomTheChosenVolumesLeave) {
  VolumeCatalog catalog;
  catalog.UpsertClass(Class("local", BindingMode::kWaitForFirstConsumer));
  catalog.UpsertClass(Class("ssd", BindingMode::kWaitForFirstConsumer));
  catalog.UpsertClaim(Claim("data", "local", 5 * kGi));
  catalog.UpsertClaim(Claim("logs", "local", 1 * kGi));
  catalog.UpsertClaim(Claim("cache", "ssd", 3 * kGi));
  catalog.UpsertVolume(Volume("pv-data", "local", 10 * kGi, "a"));
  catalog.UpsertVolume(Volume("pv-logs", "local", 2 * kGi, "a"));
  catalog.UpsertVolume(Volume("pv-cache", "ssd", 7 * kGi, "a"));
  catalog.UpsertVolume(Volume("pv-zero", "ssd", 0, "a"));
  auto bind = [](const std::string& pv, const std::string& claim) {
    return VolumeBindings::Bind{.volume = pv, .claim = {"default", claim, ""}};
  };
  // local: 6 Gi of 12: u = 50, 50. ssd: 3 of 7: u = 300/7 = 42, 58.
  // Mean (50 + 58) / 2 = 54.
  VolumeBindings b{.binds = {bind("pv-data", "data"), bind("pv-logs", "logs"),
                             bind("pv-cache", "cache")}};
  EXPECT_EQ(VolumeBindingScore(b, {}, catalog), 54);
  // One class alone: 100 - 50.
  b.binds.pop_back();
  EXPECT_EQ(VolumeBindingScore(b, {}, catalog), 50);
  // (50 + 0) / 2 = 25: a PV of no capacity scores its class 0.
  b.binds.push_back(bind("pv-zero", "cache"));
  EXPECT_EQ(VolumeBindingScore(b, {}, catalog), 25);
  // ssd: 43 Gi of 100: u = 43, 57; (50 + 57) / 2 = 53.5 rounds up.
  catalog.UpsertClaim(Claim("big", "ssd", 43 * kGi));
  catalog.UpsertVolume(Volume("pv-big", "ssd", 100 * kGi, "a"));
  b.binds.back() = bind("pv-big", "big");
  EXPECT_EQ(VolumeBindingScore(b, {}, catalog), 54);
  // Nothing bound to an existing PV: 0 on every node.
  EXPECT_EQ(VolumeBindingScore(VolumeBindings{}, {}, catalog), 0);
}

// CSI storage capacity: a claim to be provisioned by a CSIDriver with
// storageCapacity needs a CSIStorageCapacity of its class that selects
// the node and has room (maximumVolumeSize before capacity); else "did not
// have enough free storage". From 1.37 the room left scores the node.
TEST(VolumeBindingTest, CsiStorageCapacityFiltersAndScores) {
  constexpr char kCsi[] = "csi.example.com";
  VolumeCatalog catalog;
  catalog.UpsertClass(Class("csi", BindingMode::kWaitForFirstConsumer, kCsi));
  catalog.UpsertClaim(Claim("data", "csi", 4 * kGi));
  catalog.UpsertClaim(Claim("logs", "csi", 1 * kGi));
  auto zone = [](const std::string& z, std::optional<int64_t> capacity,
                 std::optional<int64_t> max = std::nullopt) {
    return CsiStorageCapacity{
        .namespace_ = "kube-system",
        .name = "cap-" + z,
        .storage_class = "csi",
        .node_topology = LabelSelector{.match_labels = {{kZone, z}}},
        .capacity = capacity,
        .maximum_volume_size = max};
  };
  catalog.UpsertCapacity(zone("z1", 10 * kGi));
  catalog.UpsertCapacity(zone("z2", 3 * kGi));
  // Room enough, but no volume may be larger than 2 Gi.
  catalog.UpsertCapacity(zone("z3", 100 * kGi, 2 * kGi));
  VolumeBindingFilter f;
  const Pod pod = WithClaims({{"data"}, {"logs"}});
  ASSERT_EQ(PreFilterVolumeBinding(pod, catalog, &f), "");
  auto check = [&](const Node& node) {
    return VolumeBindingCheck(f, node, catalog);
  };
  // Without a CSIDriver asking for it, capacity is not checked.
  EXPECT_EQ(check(Named("b", "z2")), 0u);
  catalog.UpsertCsiDriver({.name = kCsi, .storage_capacity = true});
  EXPECT_EQ(check(Named("a", "z1")), 0u);
  EXPECT_EQ(check(Named("b", "z2")), kVolumeNotEnoughSpace);
  EXPECT_EQ(check(Named("c", "z3")), kVolumeNotEnoughSpace);
  EXPECT_EQ(check(Named("d")), kVolumeNotEnoughSpace);  // no zone: none selects
  // The reason, as kube-scheduler words it.
  PodFilter pf = MakePodFilter(pod, KubeVersion{});
  VolumeFilters v;
  ASSERT_EQ(PreFilterVolumes(pod, catalog, KubeVersion{}, &v), "");
  pf.volumes = &v;
  EXPECT_EQ(
      FailureReasons(pf, CheckNode(pf, {Named("b", "z2")}, 0)),
      std::vector<std::string>{"node(s) did not have enough free storage"});

  // Score: the class's capacity on the node once, the claims' requests
  // summed: 5 Gi of 10, u = 50, 50.
  VolumeBindings b;
  ASSERT_EQ(VolumeBindingCheck(f, Named("a", "z1"), catalog, &b), 0u);
  ASSERT_EQ(b.provisions.size(), 2u);
  EXPECT_EQ(VolumeBindingScore(b, Named("a", "z1").labels, catalog), 50);
  // Where capacity is not checked, nothing scores.
  catalog.UpsertCsiDriver({.name = kCsi});
  EXPECT_EQ(VolumeBindingScore(b, Named("a", "z1").labels, catalog), 0);
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
  StorageClass zonal =
      Class("zonal", BindingMode::kWaitForFirstConsumer, "csi.example.com");
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

}  // namespace
}  // namespace ms
