#include "model/device_class.h"

namespace ms {

DeviceClassResources IndexDeviceClasses(
    const std::map<std::string, DeviceClass>& classes) {
  DeviceClassResources out;
  for (const auto& [name, c] : classes) {
    out.emplace(kDeviceClassResourcePrefix + name, name);
    if (!c.extended_resource_name.empty()) {
      out.emplace(c.extended_resource_name, name);  // the first by name stays
    }
  }
  return out;
}

}  // namespace ms
