#include "model/node_info.h"

#include <algorithm>

namespace ms {

PodCharge PodCharge::Of(const Pod& pod) {
  return {PodRequests(pod), PodNonZeroRequests(pod), PodHostPorts(pod),
          std::make_shared<const PodInfo>(
              PodInfo{pod.namespace_, pod.labels, pod.pod_affinity,
                      pod.pod_anti_affinity, pod.deleting, pod.claims,
                      pod.inline_disks})};
}

bool operator==(const PodCharge& a, const PodCharge& b) {
  const bool same_pod =
      a.pod == b.pod || (a.pod != nullptr && b.pod != nullptr && *a.pod == *b.pod);
  return same_pod && a.requests == b.requests &&
         a.non_zero_requests == b.non_zero_requests &&
         a.host_ports == b.host_ports;
}

void NodeInfo::AddPod(const PodCharge& charge) {
  requested.Add(charge.requests);
  non_zero_requested.Add(charge.non_zero_requests);
  used_host_ports.insert(used_host_ports.end(), charge.host_ports.begin(),
                         charge.host_ports.end());
  if (charge.pod == nullptr) return;
  pods.push_back(charge.pod);
}

void NodeInfo::RemovePod(const PodCharge& charge) {
  requested.Sub(charge.requests);
  non_zero_requested.Sub(charge.non_zero_requests);
  for (const ContainerPort& p : charge.host_ports) {
    auto it = std::find(used_host_ports.begin(), used_host_ports.end(), p);
    if (it != used_host_ports.end()) used_host_ports.erase(it);
  }
  if (charge.pod == nullptr) return;
  auto it = std::find(pods.begin(), pods.end(), charge.pod);
  if (it == pods.end()) return;
  *it = std::move(pods.back());
  pods.pop_back();
}

}  // namespace ms
