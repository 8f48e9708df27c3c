#include "model/node_info.h"

#include <algorithm>

namespace ms {

PodCharge PodCharge::Of(const Pod& pod) {
  return {PodRequests(pod), PodNonZeroRequests(pod), PodHostPorts(pod)};
}

void NodeInfo::AddPod(const PodCharge& charge) {
  requested.Add(charge.requests);
  non_zero_requested.Add(charge.non_zero_requests);
  used_host_ports.insert(used_host_ports.end(), charge.host_ports.begin(),
                         charge.host_ports.end());
}

void NodeInfo::RemovePod(const PodCharge& charge) {
  requested.Sub(charge.requests);
  non_zero_requested.Sub(charge.non_zero_requests);
  for (const ContainerPort& p : charge.host_ports) {
    auto it = std::find(used_host_ports.begin(), used_host_ports.end(), p);
    if (it != used_host_ports.end()) used_host_ports.erase(it);
  }
}

}  // namespace ms
