// Container image names, interned process-wide: thousands of nodes report
// the same images (node.status.images), and each name is held once.
//
// Ids are dense from 0 and never reused; a name stays interned for the
// life of the process (a cluster's set of images is bounded; one that no
// node reports any more costs its bytes). Thread-safe.
#ifndef METRICS_SCHEDULER_MODEL_IMAGE_NAMES_H_
#define METRICS_SCHEDULER_MODEL_IMAGE_NAMES_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace ms {

// The id of `name`, interning it if new.
uint32_t InternImageName(absl::string_view name);

// The id of `name`, or nullopt when it was never interned (no node has
// reported it).
std::optional<uint32_t> FindImageName(absl::string_view name);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_IMAGE_NAMES_H_
