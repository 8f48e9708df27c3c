#include "model/node_info.h"

#include <algorithm>

namespace ms {

PodAffinityTerms::PodAffinityTerms(const PodAffinityRules& affinity,
                                   const PodAffinityRules& anti_affinity) {
  if (affinity.empty() && anti_affinity.empty()) return;
  rules_ = std::make_shared<const Rules>(Rules{affinity, anti_affinity});
}

const PodAffinityRules& PodAffinityTerms::affinity() const {
  static const PodAffinityRules kNone;
  return rules_ == nullptr ? kNone : rules_->affinity;
}

const PodAffinityRules& PodAffinityTerms::anti_affinity() const {
  static const PodAffinityRules kNone;
  return rules_ == nullptr ? kNone : rules_->anti_affinity;
}

bool operator==(const PodAffinityTerms& a, const PodAffinityTerms& b) {
  return a.rules_ == b.rules_ ||
         (a.rules_ != nullptr && b.rules_ != nullptr && *a.rules_ == *b.rules_);
}

PodCharge PodCharge::Of(const Pod& pod, KubeVersion kube) {
  return {std::make_shared<const PodInfo>(PodInfo{
      .name = pod.name,
      .uid = pod.uid,
      .namespace_ = pod.namespace_,
      .labels = LabelSet(pod.labels),
      .terms = PodAffinityTerms(pod.pod_affinity, pod.pod_anti_affinity),
      .terminating = pod.deleting,
      .claims = pod.claims,
      .inline_disks = pod.inline_disks,
      .requests = PodRequests(pod, kube),
      .non_zero_requests = PodNonZeroRequests(pod, kube),
      .limits = PodLimits(pod),
      .host_ports = PodHostPorts(pod),
      .priority = pod.priority,
      .start_time_ms = pod.start_time_ms,
      .estimates = pod.estimates,
      .owner_uid = pod.controller.has_value() ? pod.controller->uid : "",
      .preempted = pod.preempted})};
}

bool operator==(const PodCharge& a, const PodCharge& b) {
  return a.pod == b.pod ||
         (a.pod != nullptr && b.pod != nullptr && *a.pod == *b.pod);
}

void NodeInfo::AddPod(const PodCharge& charge) {
  if (charge.pod == nullptr) return;
  const PodInfo& p = *charge.pod;
  requested.Add(p.requests);
  non_zero_requested.Add(p.non_zero_requests);
  used_host_ports.insert(used_host_ports.end(), p.host_ports.begin(),
                         p.host_ports.end());
  pods.push_back(charge.pod);
}

void NodeInfo::RemovePod(const PodCharge& charge) {
  if (charge.pod == nullptr) return;
  const PodInfo& p = *charge.pod;
  requested.Sub(p.requests);
  non_zero_requested.Sub(p.non_zero_requests);
  // kube-scheduler keeps a node's ports as a set: a pod removed frees its
  // ports even when another pod on the node uses them too.
  for (const ContainerPort& port : p.host_ports) {
    std::erase(used_host_ports, port);
  }
  auto it = std::find(pods.begin(), pods.end(), charge.pod);
  if (it == pods.end()) return;
  *it = std::move(pods.back());
  pods.pop_back();
}

}  // namespace ms
