// PodLabelIndex: the pods placed on nodes, by label, so that a pod
// affinity term with matchLabels visits only the pods carrying one of its
// pairs instead of every pod in the cluster; the pods with pod
// (anti-)affinity terms of their own, so that the terms of placed pods are
// found without visiting the pods that have none; and the pods by their
// controller's uid, so that a pod's siblings are found without visiting
// every pod (siblingSpread).
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
#include "scoring/topology_index.h"

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

  // The pods whose controller has uid `owner_uid` (null: none).
  const Entries* WithOwner(const std::string& owner_uid) const;

  // The fewest pods that can match `selector` through one of the pairs it
  // requires (matchLabels, or an In expression with one value); null when
  // it requires none (then every pod must be looked at). An empty set when
  // some pair labels no pod.
  const Entries* Candidates(const LabelSelector& selector) const;

  // The pods with any pod (anti-)affinity term, and those with a required
  // anti-affinity term.
  const Entries& with_affinity() const { return with_affinity_; }
  const Entries& with_required_anti_affinity() const {
    return with_required_anti_affinity_;
  }

 private:
  void Add(uint32_t node, const std::shared_ptr<const PodInfo>& pod);
  void Remove(uint32_t node, const std::shared_ptr<const PodInfo>& pod);

  absl::flat_hash_map<std::pair<std::string, std::string>, Entries> by_label_;
  absl::flat_hash_map<std::string, Entries> by_owner_;
  Entries with_affinity_;
  Entries with_required_anti_affinity_;
  // Per node, the pods indexed for it.
  std::vector<std::vector<std::shared_ptr<const PodInfo>>> indexed_;
};

// What the pod-to-pod plugins read: every node with its placed pods,
// `pods` to find those pods without visiting them all (null: visit them
// all), and `topology`, the nodes' label values as ids (required).
struct PlacedPods {
  const std::vector<NodeInfo>* nodes = nullptr;
  const PodLabelIndex* pods = nullptr;
  const TopologyIndex* topology = nullptr;
};

enum class PodTerms { kAny, kRequiredAntiAffinity };

// Calls f(node index, pod) for every placed pod with pod (anti-)affinity
// terms of its own (kAny) or with a required anti-affinity term.
template <typename F>
void ForEachPodWithTerms(PodTerms terms, PlacedPods view, F&& f) {
  auto has = [terms](const PodInfo& p) {
    return terms == PodTerms::kAny ? p.has_affinity()
                                   : p.has_required_anti_affinity();
  };
  if (view.pods == nullptr) {
    for (size_t i = 0; i < view.nodes->size(); ++i) {
      for (const auto& pod : (*view.nodes)[i].pods) {
        if (has(*pod)) f(i, *pod);
      }
    }
    return;
  }
  const PodLabelIndex::Entries& entries =
      terms == PodTerms::kAny ? view.pods->with_affinity()
                              : view.pods->with_required_anti_affinity();
  for (const PodLabelIndex::Entry& e : entries) f(size_t{e.node}, *e.pod);
}

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
