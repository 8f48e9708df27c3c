// Container image names, interned process-wide: thousands of nodes report
// the same images (node.status.images), and each name is held once, with
// the image's size.
//
// Ids are dense from 0 and never reused; a name stays interned for the
// life of the process (a cluster's set of images is bounded; one that no
// node reports any more costs its bytes). Thread-safe.
#ifndef METRICS_SCHEDULER_MODEL_IMAGE_NAMES_H_
#define METRICS_SCHEDULER_MODEL_IMAGE_NAMES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ms {

// The id of `name`, interning it if new. `size_bytes` becomes the image's
// size if none was recorded yet: a name (a tag or a digest) names the same
// image on every node, and kube-scheduler too keeps the size the first
// node reported.
uint32_t InternImageName(absl::string_view name, int64_t size_bytes);

// A node's whole status.images at once, under one lock: each name's id
// appended to `ids`, in order, as InternImageName gives it.
struct ImageName {
  absl::string_view name;
  int64_t size_bytes = 0;
};
void InternImageNames(absl::Span<const ImageName> names,
                      std::vector<uint32_t>& ids);

// The id of `name`, or nullopt when it was never interned (no node has
// reported it).
std::optional<uint32_t> FindImageName(absl::string_view name);

// The size recorded for name id `id` (0 for an unknown id).
int64_t ImageSize(uint32_t id);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_IMAGE_NAMES_H_
