// NodeInfo: a node together with what is already placed on it.
//
// Built by the scheduler's cache once per cycle and passed to scoring/ by
// const reference. `requested` is the exact sum of the requests of the pods
// assigned (or assumed) to the node and drives the fit filter;
// `non_zero_requested` uses kube-scheduler's non-zero defaults and drives the
// built-in scores. Thread-compatible.
#ifndef METRICS_SCHEDULER_MODEL_NODE_INFO_H_
#define METRICS_SCHEDULER_MODEL_NODE_INFO_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/kube_version.h"
#include "model/label_set.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/resources.h"

namespace ms {

// A pod's pod affinity and anti-affinity (spec.affinity.podAffinity and
// podAntiAffinity), immutable, held apart from its PodInfo and only when it
// has either: few pods do, and the others' entries then cost 16 bytes for
// them instead of 96. Equal when the rules are.
class PodAffinityTerms {
 public:
  PodAffinityTerms() = default;
  PodAffinityTerms(const PodAffinityRules& affinity,
                   const PodAffinityRules& anti_affinity);

  const PodAffinityRules& affinity() const;
  const PodAffinityRules& anti_affinity() const;

  friend bool operator==(const PodAffinityTerms& a, const PodAffinityTerms& b);

 private:
  struct Rules {
    PodAffinityRules affinity;
    PodAffinityRules anti_affinity;
    friend bool operator==(const Rules&, const Rules&) = default;
  };
  std::shared_ptr<const Rules> rules_;  // null: neither
};

// A pod placed on a node, as the scheduler reads it: what it costs the
// node, what pod-to-pod constraints (pod affinity, anti-affinity, topology
// spread) and the volume plugins read of it, and what preemption reads.
// Kept for every pod assigned to a node (20,000 and more), so kept lean:
// labels interned, pod affinity terms apart.
struct PodInfo {
  std::string name;
  std::string uid;
  std::string namespace_;
  LabelSet labels;
  PodAffinityTerms terms;
  bool terminating = false;  // deletionTimestamp set: spreading ignores it
  // The claims its volumes name (in namespace_): ReadWriteOncePod claims in
  // use, and the volumes attached to its node.
  std::vector<PodClaim> claims;
  std::vector<InlineDisk> inline_disks;  // for VolumeRestrictions
  // What it costs the node.
  Resources requests;                    // PodRequests
  Resources non_zero_requests;           // PodNonZeroRequests
  CpuMemoryLimits limits;                // PodLimits
  std::vector<ContainerPort> host_ports;  // PodHostPorts
  // For preemption.
  int32_t priority = 0;
  int64_t start_time_ms = 0;  // status.startTime; 0: not started
  std::map<std::string, std::string> estimates;  // Pod::estimates
  std::string owner_uid;  // its controller's uid (Pod::controller); "": none
  bool preempted = false;     // Pod::preempted

  const PodAffinityRules& affinity() const { return terms.affinity(); }
  const PodAffinityRules& anti_affinity() const {
    return terms.anti_affinity();
  }
  // kube-scheduler's NodeInfo.PodsWithAffinity: any pod (anti-)affinity.
  bool has_affinity() const {
    return !affinity().empty() || !anti_affinity().empty();
  }
  bool has_required_anti_affinity() const {
    return !anti_affinity().required.empty();
  }
  friend bool operator==(const PodInfo&, const PodInfo&) = default;
};

// A pod as charged to its node: its PodInfo, computed once per pod and
// shared by every NodeInfo that holds it.
struct PodCharge {
  std::shared_ptr<const PodInfo> pod;  // never null from Of()

  // Its requests as kube-scheduler of release `kube` charges them
  // (PodRequests, PodNonZeroRequests).
  static PodCharge Of(const Pod& pod, KubeVersion kube);
  // Equal when the pods read the same.
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
  void AddPod(const Pod& pod, KubeVersion kube) {
    AddPod(PodCharge::Of(pod, kube));
  }
  // Undoes AddPod for a pod that was charged before (its host ports are
  // freed even if another pod uses them too, as in kube-scheduler).
  void RemovePod(const PodCharge& charge);
  void RemovePod(const Pod& pod, KubeVersion kube) {
    RemovePod(PodCharge::Of(pod, kube));
  }
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_NODE_INFO_H_
