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

  // The fewest pods that can match `selector` through one of the pairs it
  // requires (matchLabels, or an In expression with one value); null when
  // it requires none (then every pod must be looked at). An empty set when
  // some pair labels no pod.
  const Entries* Candidates(const LabelSelector& selector) const;

 private:
  void Add(uint32_t node, const std::shared_ptr<const PodInfo>& pod);
  void Remove(uint32_t node, const std::shared_ptr<const PodInfo>& pod);

  absl::flat_hash_map<std::pair<std::string, std::string>, Entries> by_label_;
  // Per node, the pods indexed for it.
  std::vector<std::vector<std::shared_ptr<const PodInfo>>> indexed_;
};

// The nodes a pass needs to visit: all of them (`indices` null) or those
// listed (ascending indices into `nodes`). `index` finds the pods a term
// may select without visiting the others (null: visit them all).
struct NodeSubset {
  const std::vector<NodeInfo>* nodes = nullptr;
  const std::vector<uint32_t>* indices = nullptr;
  const PodLabelIndex* index = nullptr;

  template <typename F>
  void ForEach(F&& f) const {
    if (indices == nullptr) {
      for (const NodeInfo& n : *nodes) f(n);
    } else {
      for (uint32_t i : *indices) f((*nodes)[i]);
    }
  }
};

// Calls f(node_index, pod) for every placed pod of `nodes` that `selector`
// may select: those carrying one of its pairs when `index` can tell (null:
// no index), else every pod. The caller checks the whole selector.
template <typename F>
void ForEachCandidate(const LabelSelector& selector,
                      const std::vector<NodeInfo>& nodes,
                      const PodLabelIndex* index, F&& f) {
  const PodLabelIndex::Entries* candidates =
      index != nullptr ? index->Candidates(selector) : nullptr;
  if (candidates == nullptr) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const auto& pod : nodes[i].pods) f(i, *pod);
    }
    return;
  }
  for (const PodLabelIndex::Entry& e : *candidates) f(e.node, *e.pod);
}

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_POD_LABEL_INDEX_H_
