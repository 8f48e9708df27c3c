// TopologyIndex: every node's label values as small integers, one column
// per label key, so that pod affinity and topology spread count pods per
// topology domain in arrays and find a node's domain with one load instead
// of a label-map lookup and a string hash.
//
// Kept by NodeTable beside its per-node columns: Build() interns every
// node's labels, Update(i) node i's again. In a column, the ids of the
// values are dense (0 .. num_values() - 1) and kNone marks a node without
// the label. A value stays interned until the next Build, so that ids never
// change under a decision. Thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_TOPOLOGY_INDEX_H_
#define METRICS_SCHEDULER_SCORING_TOPOLOGY_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/string_view.h"
#include "model/node_info.h"

namespace ms {

class TopologyIndex {
 public:
  static constexpr int32_t kNone = -1;

  struct Column {
    std::vector<int32_t> ids;  // per node: its value's id, or kNone
    absl::flat_hash_map<std::string, int32_t> by_value;
    size_t num_values() const { return by_value.size(); }
  };

  void Build(const std::vector<NodeInfo>& nodes);
  void Update(size_t i, const Node& node);

  // The column of `key`; null when no node has had that label since the
  // last Build (then every node lacks it).
  const Column* Find(const std::string& key) const;

 private:
  Column& ColumnOf(const std::string& key);

  size_t num_nodes_ = 0;
  absl::node_hash_map<std::string, Column> columns_;  // pointers are stable
};

// A node's domain for one topology key: its id in `column`, kNone when the
// column is null or the node lacks the label.
inline int32_t DomainOf(const TopologyIndex::Column* column, size_t node) {
  return column == nullptr ? TopologyIndex::kNone : column->ids[node];
}

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_TOPOLOGY_INDEX_H_
