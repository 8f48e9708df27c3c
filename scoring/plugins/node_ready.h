// Node readiness (ours; kube-scheduler has no such plugin): a node whose
// Ready condition is not True takes no pod. kube-scheduler gets the same
// effect from the node.kubernetes.io/not-ready and unreachable taints that
// the node lifecycle controller adds, through TaintToleration; this filter
// runs first, so a pod that tolerates those taints is still kept off a node
// that is not ready.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_NODE_READY_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_NODE_READY_H_

#include "model/node.h"

namespace ms {

inline constexpr char kReasonNotReady[] = "node(s) were not ready";

// Filter.
inline bool NodeReadyFilter(const Node& node) { return node.ready; }

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_NODE_READY_H_
