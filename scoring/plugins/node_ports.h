// NodePorts (kube-scheduler: plugins/nodeports): a pod's host ports must be
// free on the node. Two ports conflict when their number and protocol (TCP
// when empty) are equal and their host IPs are equal or either is 0.0.0.0
// (the default).
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_NODE_PORTS_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_NODE_PORTS_H_

#include <vector>

#include "model/pod.h"

namespace ms {

inline constexpr char kReasonPorts[] =
    "node(s) didn't have free ports for the requested pod ports";

// Pre-filter: the pod's host ports are PodHostPorts(pod) (model/pod.h).
// Filter: the node is rejected when this is true of its used ports.
bool HostPortsConflict(const std::vector<ContainerPort>& wanted,
                       const std::vector<ContainerPort>& used);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_NODE_PORTS_H_
