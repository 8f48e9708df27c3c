// Resources: the amounts a pod requests and a node offers.
//
// Plain values with no behaviour beyond arithmetic. CPU is held in
// millicores, memory and ephemeral storage in bytes, the pod count as a
// count, and extended resources (`nvidia.com/gpu`, `hugepages-2Mi`, ...) by
// name in their own integer units, as kube-scheduler does. Thread-compatible.
#ifndef METRICS_SCHEDULER_MODEL_RESOURCES_H_
#define METRICS_SCHEDULER_MODEL_RESOURCES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ms {

// Resource names as they appear in the Kubernetes API.
inline constexpr char kResourceCpu[] = "cpu";
inline constexpr char kResourceMemory[] = "memory";
inline constexpr char kResourceEphemeralStorage[] = "ephemeral-storage";
inline constexpr char kResourcePods[] = "pods";

// a + b, saturating at the int64 range instead of wrapping.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) {
    return b > 0 ? INT64_MAX : INT64_MIN;
  }
  return sum;
}

struct Resources {
  int64_t milli_cpu = 0;
  int64_t memory = 0;             // bytes
  int64_t ephemeral_storage = 0;  // bytes
  int64_t pods = 0;               // only meaningful as a node's allocatable
  // Extended resources, sorted by name, each name at most once.
  std::vector<std::pair<std::string, int64_t>> scalar;

  // Adds `other` into this, field by field (scalars merged by name). Sums
  // saturate at INT64_MAX instead of wrapping.
  void Add(const Resources& other);
  // Subtracts `other` from this, field by field. A field that saturated
  // stays saturated: its true sum is no longer known, and the larger value
  // can only make a node look fuller than it is, never over-commit it.
  void Sub(const Resources& other);
  // Sets each field to max(this, other).
  void SetMax(const Resources& other);

  // The amount of extended resource `name`, 0 when absent.
  int64_t Scalar(const std::string& name) const;
  // Sets extended resource `name`, keeping `scalar` sorted.
  void SetScalar(const std::string& name, int64_t value);

  friend bool operator==(const Resources&, const Resources&) = default;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_RESOURCES_H_
