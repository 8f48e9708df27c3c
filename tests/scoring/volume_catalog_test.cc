#include "scoring/volume_catalog.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scoring/plugins/volume_binding.h"
#include "tests/testing/storage_builders.h"

namespace ms {
namespace {

using ::ms::testing::Claim;
using ::ms::testing::Class;
using ::ms::testing::kGi;
using ::ms::testing::Named;
using ::ms::testing::Volume;
using ::ms::testing::WithClaims;

TEST(VolumeCatalogTest, AnAssumedBindingIsSeenUntilTheInformerMovesOn) {
  VolumeCatalog catalog;
  catalog.UpsertClass(
      Class("local", BindingMode::kWaitForFirstConsumer, "csi.example.com"));
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

}  // namespace
}  // namespace ms
