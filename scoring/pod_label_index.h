// PodLabelIndex: the pods placed on nodes, by label, so that a pod
// affinity term with matchLabels visits only the pods carrying one of its
// pairs instead of every pod in the cluster.
//
// Kept by NodeTable beside its per-node columns: Build() indexes every
// node's pods, Update(i) re-indexes node i's (the pods added or removed
// since). Entries hold the PodInfo they point to alive. Thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_POD_LABEL_INDEX_H_
#define METRICS_SCHEDULER_SCORING_POD_LABEL_INDEX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "model/node_info.h"
#include "model/pod_affinity.h"

namespace ms {

class PodLabelIndex {
 public:
  // A pod and the index of the node it is placed on.
  struct Entry {
    uint32_t node;
    const PodInfo* pod;
    friend bool operator==(const Entry&, const Entry&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Entry& e) {
      return H::combine(std::move(h), e.node, e.pod);
    }
  };
  using Entries = absl::flat_hash_set<Entry>;

  void Build(const std::vector<NodeInfo>& nodes);
  void Update(size_t i, const NodeInfo& node);

  // The pods labelled key=value (null: none).
  const Entries* With(const std::string& key, const std::string& value) const;

  // The fewest pods that can match `selector` through one of its matchLabels
  // pairs; null when it has none (then every pod must be looked at). An
  // empty set when some pair labels no pod.
  const Entries* Candidates(const LabelSelector& selector) const;

 private:
  void Add(uint32_t node, const std::shared_ptr<const PodInfo>& pod);
  void Remove(uint32_t node, const std::shared_ptr<const PodInfo>& pod);

  absl::flat_hash_map<std::pair<std::string, std::string>, Entries> by_label_;
  // Per node, the pods indexed for it.
  std::vector<std::vector<std::shared_ptr<const PodInfo>>> indexed_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_POD_LABEL_INDEX_H_
