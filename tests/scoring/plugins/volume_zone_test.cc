// VolumeZone: worked examples of kube-scheduler v1.34's rules.
#include "scoring/plugins/volume_zone.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scoring/filter.h"
#include "scoring/volume_catalog.h"
#include "tests/testing/storage_builders.h"

namespace ms {
namespace {

using ::ms::testing::BoundClaim;
using ::ms::testing::kGi;
using ::ms::testing::Named;
using ::ms::testing::Volume;
using ::ms::testing::WithClaims;

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

}  // namespace
}  // namespace ms
