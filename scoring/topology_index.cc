#include "scoring/topology_index.h"

namespace ms {

void TopologyIndex::Build(const std::vector<NodeInfo>& nodes) {
  columns_.clear();
  num_nodes_ = nodes.size();
  for (size_t i = 0; i < nodes.size(); ++i) Update(i, nodes[i].node);
}

TopologyIndex::Column& TopologyIndex::ColumnOf(const std::string& key) {
  auto [it, added] = columns_.try_emplace(key);
  if (added) it->second.ids.assign(num_nodes_, kNone);
  return it->second;
}

void TopologyIndex::Update(size_t i, const Node& node) {
  if (i >= num_nodes_) {
    num_nodes_ = i + 1;
    for (auto& [key, column] : columns_) column.ids.resize(num_nodes_, kNone);
  }
  // Labels the node dropped.
  for (auto& [key, column] : columns_) {
    if (column.ids[i] != kNone && !node.labels.contains(key)) {
      column.ids[i] = kNone;
    }
  }
  for (const auto& [key, value] : node.labels) {
    Column& column = ColumnOf(key);
    auto [it, added] = column.by_value.try_emplace(
        value, static_cast<int32_t>(column.by_value.size()));
    column.ids[i] = it->second;
  }
}

const TopologyIndex::Column* TopologyIndex::Find(const std::string& key) const {
  auto it = columns_.find(key);
  return it == columns_.end() ? nullptr : &it->second;
}

}  // namespace ms
