#include "model/node_info.h"

#include <algorithm>

namespace ms {

void NodeInfo::AddPod(const Pod& pod) {
  requested.Add(PodRequests(pod));
  non_zero_requested.Add(PodNonZeroRequests(pod));
  for (const ContainerPort& p : PodHostPorts(pod)) used_host_ports.push_back(p);
}

void NodeInfo::RemovePod(const Pod& pod) {
  requested.Sub(PodRequests(pod));
  non_zero_requested.Sub(PodNonZeroRequests(pod));
  for (const ContainerPort& p : PodHostPorts(pod)) {
    auto it = std::find(used_host_ports.begin(), used_host_ports.end(), p);
    if (it != used_host_ports.end()) used_host_ports.erase(it);
  }
}

}  // namespace ms
