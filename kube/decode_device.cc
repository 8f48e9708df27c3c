// DeviceClasses (model/device_class.h), listed and watched.
#include <string>
#include <string_view>

#include "kube/decode_core.h"
#include "model/device_class.h"

namespace ms::kube {
namespace decode_internal {
namespace {

DeviceClass DeviceClassFrom(od::value v) {
  DeviceClass c;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        Identity(mf.unescaped_key(), mf.value(), c);
      }
    } else if (key == "spec" && !IsNull(value)) {
      for (od::field sf : value.get_object()) {
        od::value sv = sf.value();
        if (std::string_view(sf.unescaped_key()) == "extendedResourceName" &&
            !IsNull(sv)) {
          c.extended_resource_name = String(sv);
        }
      }
    }
  }
  return c;
}

}  // namespace

template <>
struct Codec<DeviceClass> {
  static DeviceClass From(od::value v, const DecodeContext<DeviceClass>&) {
    return DeviceClassFrom(v);
  }
  static const char* Resource(const DecodeContext<DeviceClass>&) {
    return "deviceclasses";
  }
  static std::string ListName(const DecodeContext<DeviceClass>&) {
    return "DeviceClassList";
  }
};

}  // namespace decode_internal

template absl::StatusOr<ObjectList<DeviceClass>> DecodeList(
    absl::string_view, const DecodeContext<DeviceClass>&);
template absl::StatusOr<WatchEvent<DeviceClass>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<DeviceClass>&);

}  // namespace ms::kube
