// NodeName (kube-scheduler: plugins/nodename): a pod that names a node in
// spec.nodeName fits only that node.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_NODE_NAME_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_NODE_NAME_H_

#include "model/node.h"
#include "model/pod.h"

namespace ms {

inline constexpr char kReasonNodeName[] =
    "node(s) didn't match the requested node name";

// Filter.
inline bool NodeNameFilter(const Pod& pod, const Node& node) {
  return pod.node_name.empty() || pod.node_name == node.name;
}

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_NODE_NAME_H_
