// DeviceClass (resource.k8s.io/v1): the extended resources dynamic resource
// allocation stands behind. From Kubernetes 1.36 (DRAExtendedResource) a
// pod's request for a class's extendedResourceName, or for the class's own
// name "deviceclass.resource.kubernetes.io/<class>", is met by allocating a
// device on any node that does not advertise that resource itself (a
// device plugin's); NodeResourcesFit leaves it to DynamicResources there.
#ifndef METRICS_SCHEDULER_MODEL_DEVICE_CLASS_H_
#define METRICS_SCHEDULER_MODEL_DEVICE_CLASS_H_

#include <map>
#include <string>

namespace ms {

// The implicit extended resource of every DeviceClass: the prefix, then
// the class's name.
inline constexpr char kDeviceClassResourcePrefix[] =
    "deviceclass.resource.kubernetes.io/";

struct DeviceClass {
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string extended_resource_name;  // spec.extendedResourceName, or ""

  friend bool operator==(const DeviceClass&, const DeviceClass&) = default;
};

// Extended resource name -> the DeviceClass that provides it: each class's
// implicit name and its extendedResourceName. Where several classes name
// one resource, the first by name (kube-scheduler takes the newest; only
// the class a message names differs).
using DeviceClassResources = std::map<std::string, std::string>;

// The index of `classes` (by name, as ClusterState keeps them).
DeviceClassResources IndexDeviceClasses(
    const std::map<std::string, DeviceClass>& classes);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_DEVICE_CLASS_H_
