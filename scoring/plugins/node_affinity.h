// NodeAffinity (kube-scheduler: plugins/nodeaffinity).
//
// Filter: the node's labels match every entry of spec.nodeSelector and, when
// the pod has required node affinity, at least one of its terms (terms are
// ORed, the requirements of a term ANDed). An empty term, or one with a
// malformed requirement (In/NotIn without values, Exists/DoesNotExist with
// values, Gt/Lt without exactly one integer, a matchFields key other than
// metadata.name), matches nothing, as in kube-scheduler. (Its score, the
// preferred terms, is not computed yet: see the README's limitations.)
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_NODE_AFFINITY_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_NODE_AFFINITY_H_

#include "model/node.h"
#include "model/pod.h"

namespace ms {

inline constexpr char kReasonAffinity[] =
    "node(s) didn't match Pod's node affinity/selector";

// Pre-filter: whether the pod has anything for the filter to check.
inline bool HasNodeAffinity(const Pod& pod) {
  return !pod.node_selector.empty() || pod.required_node_affinity.has_value();
}

// Filter.
bool MatchesNodeAffinity(const Pod& pod, const Node& node);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_NODE_AFFINITY_H_
