#include "scoring/image_index.h"

#include <algorithm>

namespace ms {

void ImageIndex::Build(const std::vector<NodeInfo>& nodes) {
  names_of_.assign(nodes.size(), {});
  images_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) Update(i, nodes[i].node);
}

void ImageIndex::Update(size_t i, const Node& node) {
  if (names_of_.size() <= i) names_of_.resize(i + 1);
  std::vector<uint32_t> names = node.images;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<uint32_t>& old = names_of_[i];
  if (names == old) return;  // the usual status update
  const uint32_t index = static_cast<uint32_t>(i);
  for (uint32_t name : old) {
    if (std::binary_search(names.begin(), names.end(), name)) continue;
    auto it = images_.find(name);
    if (it == images_.end()) continue;
    std::vector<uint32_t>& holders = it->second.nodes;
    auto at = std::lower_bound(holders.begin(), holders.end(), index);
    if (at != holders.end() && *at == index) holders.erase(at);
    if (holders.empty()) images_.erase(it);
  }
  for (uint32_t name : names) {
    if (std::binary_search(old.begin(), old.end(), name)) continue;
    // Build adds the nodes in ascending order: at the end.
    std::vector<uint32_t>& holders = images_[name].nodes;
    holders.insert(std::lower_bound(holders.begin(), holders.end(), index),
                   index);
  }
  old = std::move(names);
}

const ImageIndex::Image* ImageIndex::Find(uint32_t name) const {
  auto it = images_.find(name);
  return it == images_.end() ? nullptr : &it->second;
}

}  // namespace ms
