// NodeAffinity (kube-scheduler: plugins/nodeaffinity).
//
// Filter: the node's labels match every entry of spec.nodeSelector and, when
// the pod has required node affinity, at least one of its terms (terms are
// ORed, the requirements of a term ANDed). An empty term, or one with a
// malformed requirement (In/NotIn without values, Exists/DoesNotExist with
// values, Gt/Lt without exactly one integer, a matchFields key other than
// metadata.name), matches nothing, as in kube-scheduler. The configuration's
// addedAffinity (NodeAffinityArgs) applies to every pod: its required terms
// first, with their own reason, its preferred terms added to the pod's.
//
// Score: the sum of the weights of the preferred terms (the pod's and the
// added ones) that match the node; terms of weight 0 or without any
// requirement never count. Normalised as kube-scheduler's
// DefaultNormalizeScore: 100 * score / the highest score among the feasible
// nodes (integer division), all 0 when that is 0. Skipped (no row, no
// weight) for a pod without preferred terms when none are added.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_NODE_AFFINITY_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_NODE_AFFINITY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "scoring/score_plugin.h"

namespace ms {

inline constexpr char kReasonAffinity[] =
    "node(s) didn't match Pod's node affinity/selector";
inline constexpr char kReasonEnforcedAffinity[] =
    "node(s) didn't match scheduler-enforced node affinity";

// Pre-filter: whether the pod has anything for the filter to check.
inline bool HasNodeAffinity(const Pod& pod) {
  return !pod.node_selector.empty() || pod.required_node_affinity.has_value();
}

// Filter.
bool MatchesNodeAffinity(const Pod& pod, const Node& node);
// Whether any of `terms` (ORed) matches: the addedAffinity filter.
bool MatchesNodeSelectorTerms(const std::vector<NodeSelectorTerm>& terms,
                              const Node& node);

// A PersistentVolume's spec.nodeAffinity.required against a node's labels
// (component-helpers' CheckNodeAffinity, which VolumeBinding uses): absent
// matches every node; otherwise as the pod's terms, except that the node
// is seen without its name, so a matchFields requirement is checked for
// form only and a term of matchFields alone matches every node.
bool MatchesVolumeNodeAffinity(
    const std::optional<std::vector<NodeSelectorTerm>>& terms,
    const Labels& labels);

// Pre-score: whether the plugin scores the pod.
inline bool ScoresNodeAffinity(const Pod& pod,
                               const std::vector<PreferredNodeTerm>& added) {
  return !pod.preferred_node_affinity.empty() || !added.empty();
}

// Score.
int64_t NodeAffinityScore(const Pod& pod,
                          const std::vector<PreferredNodeTerm>& added,
                          const Node& node);

// The nodeAffinity term: NodeAffinityScore, normalised; counts for a pod
// ScoresNodeAffinity says it scores.
std::unique_ptr<ScorePlugin> MakeNodeAffinityPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_NODE_AFFINITY_H_
