// ImageIndex: which nodes hold each image name, so that ImageLocality
// scores a pod from the nodes that have its images instead of looking
// every container up on every node.
//
// Kept by NodeTable beside its per-node columns: Build() indexes every
// node's status.images, Update(i) node i's again. An image's size is kept
// with its interned name (ImageSize). Thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_IMAGE_INDEX_H_
#define METRICS_SCHEDULER_SCORING_IMAGE_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/node_info.h"

namespace ms {

class ImageIndex {
 public:
  struct Image {
    std::vector<uint32_t> nodes;  // the nodes that report the name, ascending
  };

  void Build(const std::vector<NodeInfo>& nodes);
  void Update(size_t i, const Node& node);

  // The image known by name id `name` (InternImageName); null when no node
  // reports it.
  const Image* Find(uint32_t name) const;

 private:
  std::vector<std::vector<uint32_t>> names_of_;  // per node: sorted name ids
  absl::flat_hash_map<uint32_t, Image> images_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_IMAGE_INDEX_H_
