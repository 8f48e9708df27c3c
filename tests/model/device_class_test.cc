#include "model/device_class.h"

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(DeviceClassTest, EachClassProvidesItsOwnNameAndItsExtendedResource) {
  const DeviceClassResources index = IndexDeviceClasses({
      {"a-gpu", {.name = "a-gpu", .extended_resource_name = "example.com/gpu"}},
      {"b-gpu", {.name = "b-gpu", .extended_resource_name = "example.com/gpu"}},
      {"fpga", {.name = "fpga"}},
  });
  EXPECT_EQ(index, (DeviceClassResources{
                       {"deviceclass.resource.kubernetes.io/a-gpu", "a-gpu"},
                       {"deviceclass.resource.kubernetes.io/b-gpu", "b-gpu"},
                       {"deviceclass.resource.kubernetes.io/fpga", "fpga"},
                       // Two classes name it: the first by name.
                       {"example.com/gpu", "a-gpu"},
                   }));
}

}  // namespace
}  // namespace ms
