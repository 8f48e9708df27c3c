// NodeInfo: a node together with what is already placed on it.
//
// Built by the scheduler's cache once per cycle and passed to scoring/ by
// const reference. `requested` is the exact sum of the requests of the pods
// assigned (or assumed) to the node and drives the fit filter;
// `non_zero_requested` uses kube-scheduler's non-zero defaults and drives the
// built-in scores. Thread-compatible.
#ifndef METRICS_SCHEDULER_MODEL_NODE_INFO_H_
#define METRICS_SCHEDULER_MODEL_NODE_INFO_H_

#include <memory>
#include <string>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "model/resources.h"

namespace ms {

// What pod-to-pod constraints (pod affinity, anti-affinity, topology
// spread) read of a pod placed on a node.
struct PodInfo {
  std::string namespace_;
  Labels labels;
  PodAffinityRules affinity;
  PodAffinityRules anti_affinity;
  bool terminating = false;  // deletionTimestamp set: spreading ignores it
  // The claims its volumes name (in namespace_): ReadWriteOncePod claims in
  // use, and the volumes attached to its node.
  std::vector<PodClaim> claims;
  std::vector<InlineDisk> inline_disks;  // for VolumeRestrictions

  // kube-scheduler's NodeInfo.PodsWithAffinity: any pod (anti-)affinity.
  bool has_affinity() const {
    return !affinity.empty() || !anti_affinity.empty();
  }
  bool has_required_anti_affinity() const {
    return !anti_affinity.required.empty();
  }
  friend bool operator==(const PodInfo&, const PodInfo&) = default;
};

// What a pod costs the node it runs on, computed once per pod.
struct PodCharge {
  Resources requests;            // PodRequests
  Resources non_zero_requests;   // PodNonZeroRequests
  std::vector<ContainerPort> host_ports;
  std::shared_ptr<const PodInfo> pod;  // never null from Of()

  static PodCharge Of(const Pod& pod);
  // Equal when they charge the same amounts for pods that look the same.
  friend bool operator==(const PodCharge& a, const PodCharge& b);
};

struct NodeInfo {
  Node node;
  Resources requested;           // sum of PodRequests; `pods` is the pod count
  Resources non_zero_requested;  // sum of PodNonZeroRequests
  std::vector<ContainerPort> used_host_ports;
  // The pods charged here (PodCharge::pod), in no particular order.
  std::vector<std::shared_ptr<const PodInfo>> pods;

  // Charges a pod to this node (its requests and host ports).
  void AddPod(const PodCharge& charge);
  void AddPod(const Pod& pod) { AddPod(PodCharge::Of(pod)); }
  // Undoes AddPod for a pod that was charged before.
  void RemovePod(const PodCharge& charge);
  void RemovePod(const Pod& pod) { RemovePod(PodCharge::Of(pod)); }
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_NODE_INFO_H_
