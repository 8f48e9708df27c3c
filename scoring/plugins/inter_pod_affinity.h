// InterPodAffinity (kube-scheduler 1.34: plugins/interpodaffinity), filter
// and score, with kube-scheduler's default arguments (hardPodAffinityWeight
// 1, the preferred terms of existing pods counted).
//
// Counts are kept per topology pair (a node label key and value). Pre-filter:
//   existing_anti: for each pod already placed whose required anti-affinity
//     term matches the incoming pod, +1 on the pair of its node for the
//     term's topologyKey;
//   affinity: for each placed pod that matches ALL the incoming pod's
//     required affinity terms, +1 on its node's pair for each term's key;
//   anti: for each incoming required anti-affinity term matching a placed
//     pod, +1 on its node's pair for the term's key.
// Filter, in this order (kube-scheduler's reasons):
//   - every required affinity term's topologyKey is a label of the node and
//     its pair counts > 0, or else no placed pod matches at all and the pod
//     matches its own terms (the first of a group): "node(s) didn't match
//     pod affinity rules";
//   - no required anti-affinity pair of the node counts > 0: "node(s) didn't
//     match pod anti-affinity rules";
//   - no label pair of the node counts in existing_anti: "node(s) didn't
//     satisfy existing pods anti-affinity rules".
// The plugin is skipped (every node passes) when the pod has no required
// term and no placed pod's required anti-affinity matches it.
//
// Score: over the placed pods (all of them if the incoming pod has
// preferred terms, else those with any pod (anti-)affinity), on nodes with
// labels: each incoming preferred affinity term matching the pod adds its
// weight to the node's pair for the term's key, each preferred anti-affinity
// term subtracts it; each required affinity term of the placed pod matching
// the incoming pod adds 1, its preferred affinity terms add their weight,
// its preferred anti-affinity terms subtract it. A node's raw score is the
// sum over its label pairs; normalised over the feasible nodes as
// 100 * (raw - min) / (max - min), truncated (0 for all when max == min).
// When no pair was touched the score is skipped (the term is left out).
//
// Terms of the incoming pod match a placed pod in the namespaces they list
// or their namespaceSelector selects; terms of a placed pod match the
// incoming pod likewise (model/pod_affinity.h). Pure functions over the
// nodes passed in; thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_INTER_POD_AFFINITY_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_INTER_POD_AFFINITY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/node_info.h"
#include "model/pod.h"
#include "model/pod_affinity.h"
#include "scoring/explanation.h"
#include "scoring/pod_label_index.h"
#include "scoring/score_plugin.h"
#include "scoring/topology_index.h"

namespace ms {

inline constexpr char kReasonPodAffinity[] =
    "node(s) didn't match pod affinity rules";
inline constexpr char kReasonPodAntiAffinity[] =
    "node(s) didn't match pod anti-affinity rules";
inline constexpr char kReasonExistingAntiAffinity[] =
    "node(s) didn't satisfy existing pods anti-affinity rules";

// Counts per topology pair (a node label key and value) for the few
// distinct keys a pod's terms use, in arrays indexed by the value's id in
// the TopologyIndex. Keys are views of term keys, which outlive the
// decision.
class TopologyCounts {
 public:
  void Reset(const TopologyIndex* topology);
  // Adds `v` to node i's pair for `key`; false (nothing added) when the
  // node lacks that label.
  bool Add(size_t node, const std::string& key, int64_t v);
  // The count of node i's pair for `key` (0 when it lacks the label).
  int64_t On(size_t node, const std::string& key) const;
  // The sum of the counts of all node i's pairs.
  int64_t SumOn(size_t node) const;
  // Whether every count is 0 (kube-scheduler's empty map: it deletes a
  // pair whose count comes back to 0).
  bool empty() const { return nonzero_ == 0; }

 private:
  struct Key {
    const std::string* key;
    const TopologyIndex::Column* column;
    std::vector<int64_t> counts;  // by value id
  };
  const Key* Find(const std::string& key) const;

  const TopologyIndex* topology_ = nullptr;
  std::vector<Key> keys_;
  size_t nonzero_ = 0;  // counts that are not 0
};

class InterPodAffinityFilter {
 public:
  enum class Verdict { kFits, kAffinity, kAntiAffinity, kExistingAntiAffinity };

  // Pre-filter over every node. `namespaces` are the namespaces' labels.
  // Everything passed must outlive this object.
  void Build(const Pod& pod, PlacedPods all,
             const NamespaceLabels& namespaces);
  // False when the plugin is skipped: every node fits.
  bool active() const { return active_; }

  // Node i of the view.
  Verdict Check(size_t i) const;

  // kube-scheduler's AddPod/RemovePod pre-filter extensions: counts
  // `other` on node i (delta 1) or takes it off (-1), for a nominated pod
  // or a preemption victim. Nothing when the plugin is skipped.
  void AddPod(size_t i, const PodInfo& other, int delta);

 private:
  const Pod* pod_ = nullptr;
  const NamespaceLabels* namespaces_ = nullptr;
  bool active_ = false;
  bool matches_own_terms_ = false;
  // The columns of the pod's required affinity terms' keys.
  std::vector<const TopologyIndex::Column*> affinity_keys_;
  TopologyCounts existing_anti_;
  TopologyCounts affinity_;
  TopologyCounts anti_;
};

class InterPodAffinityScore {
 public:
  // Pre-score, over every node.
  void Build(const Pod& pod, PlacedPods all,
             const NamespaceLabels& namespaces);
  // False when the score is skipped for this pod.
  bool active() const { return active_; }

  // Score: node i's raw score.
  int64_t Raw(size_t i) const;

 private:
  bool active_ = false;
  TopologyCounts scores_;
};

// Normalise: raw[i] of the nodes with feasible[i] != 0 into out[i] in
// [0, 100]; out of the others is left alone.
void NormalizeInterPodAffinity(const int64_t* raw, const int64_t* feasible,
                               size_t n, double* out);


// The interPodAffinity term: InterPodAffinityScore, normalised.
std::unique_ptr<ScorePlugin> MakeInterPodAffinityPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_INTER_POD_AFFINITY_H_
