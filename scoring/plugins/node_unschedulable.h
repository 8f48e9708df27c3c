// NodeUnschedulable (kube-scheduler: plugins/nodeunschedulable): a cordoned
// node (spec.unschedulable) takes only pods that tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint, whether or not the node
// carries that taint.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_NODE_UNSCHEDULABLE_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_NODE_UNSCHEDULABLE_H_

#include "model/node.h"
#include "model/pod.h"
#include "scoring/plugins/taint_toleration.h"

namespace ms {

inline constexpr char kReasonUnschedulable[] = "node(s) were unschedulable";

// Pre-filter: whether the pod tolerates cordoned nodes.
inline bool ToleratesUnschedulable(const Pod& pod) {
  const Taint cordon{kTaintNodeUnschedulable, "", TaintEffect::kNoSchedule};
  return ToleratesTaint(pod.tolerations, cordon);
}

// Filter.
inline bool NodeUnschedulableFilter(bool tolerates_unschedulable,
                                    const Node& node) {
  return !node.unschedulable || tolerates_unschedulable;
}

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_NODE_UNSCHEDULABLE_H_
