// Decide with claims: the volume plugins in kube-scheduler's order, and
// what the decision says to bind.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scoring/decide.h"
#include "scoring/filter.h"
#include "scoring/volume_catalog.h"
#include "tests/testing/storage_builders.h"

namespace ms {
namespace {

using ::ms::testing::Claim;
using ::ms::testing::Class;
using ::ms::testing::kGi;
using ::ms::testing::kHostname;
using ::ms::testing::MakeNode;
using ::ms::testing::Volume;
using ::ms::testing::WithClaims;

TEST(DecideVolumesTest, FiltersInKubeSchedulersOrderAndSaysWhatToBind) {
  VolumeCatalog catalog;
  catalog.UpsertClass(Class("local", BindingMode::kWaitForFirstConsumer));
  catalog.UpsertClaim(Claim("data", "local"));
  catalog.UpsertVolume(Volume("pv-b", "local", kGi, "b"));
  std::vector<NodeInfo> nodes = {
      MakeNode("a").Label(kHostname, "a"), MakeNode("b").Label(kHostname, "b"),
      MakeNode("c").Label(kHostname, "c").Capacity(10, 64 * kGi)};
  Pod pod = WithClaims({{"data"}});
  ScoringConfig cfg;
  Workspace ws;
  Decision d = Decide(
      {.pod = &pod, .nodes = &nodes, .volumes = &catalog, .explain = true}, cfg,
      ws);
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
