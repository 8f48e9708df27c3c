// DefaultPreemption (kube-scheduler 1.34: plugins/defaultpreemption and
// framework/preemption), as a dry run: when no node fits a pod, which pods
// of lower priority to evict, and on which node. Decide (decide.h) runs it
// after a decision that found no node, over the same filter states.
//
// 1. Eligible. Not a pod with preemptionPolicy Never ("not eligible due to
//    preemptionPolicy=Never."), nor one already nominated to a node where
//    a pod of lower priority is terminating by preemption, unless that node
//    now fails for a reason removing pods cannot fix ("not eligible due to
//    a terminating pod on the nominated node.").
// 2. Potential nodes: those whose filter failure removing pods could fix.
//    Unresolvable are NodeUnschedulable, NodeName, TaintToleration,
//    NodeAffinity, VolumeBinding, VolumeZone, PodTopologySpread's missing
//    label, InterPodAffinity's affinity, a resource the pod requests more of
//    than the node has allocatable, a metric's `exclude`, and every node
//    when a pre-filter rejected the pod. None: "0/N nodes are available: N
//    Preemption is not helpful for scheduling."
// 3. Victims on a node (SelectVictimsOnNode): every pod of lower priority
//    is removed; if the pod still does not fit (with the nominated pods),
//    the node cannot help. Then, most important first (higher priority,
//    then earlier start), the pods whose eviction would exceed a
//    PodDisruptionBudget and then the others are put back one by one; each
//    one the pod no longer fits beside stays a victim.
// 4. Candidates: potential nodes from a seeded offset, until one without
//    budget violations is found and max(minCandidateNodesPercentage % of
//    them, minCandidateNodesAbsolute) are (kube-scheduler checks them in
//    parallel and stops alike).
// 5. The node: fewest budget violations, then the lowest highest victim
//    priority, the smallest sum of priorities, the fewest victims, the
//    latest start among the highest-priority victims; then the first node
//    listed (kube-scheduler takes any).
//
// The message is kube-scheduler's PostFilter message, to follow the filter
// summary: when preemption cannot help "preemption: 0/3 nodes are
// available: 3 No preemption victims found for incoming pod."; when it
// can, none up to Kubernetes 1.36 and the node and the victims' count from
// 1.37. Thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_PREEMPTION_H_
#define METRICS_SCHEDULER_SCORING_PREEMPTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/disruption_budget.h"
#include "model/kube_version.h"
#include "model/node_info.h"
#include "model/pod.h"
#include "scoring/filter.h"

namespace ms {

// What a preemption takes.
struct Preemption {
  // The node to nominate the pod to; -1 when preemption cannot help.
  int node_index = -1;
  std::string node_name;
  // The pods to evict from it, most important first.
  std::vector<std::shared_ptr<const PodInfo>> victims;
  int64_t budget_violations = 0;
  // Pods of lower priority nominated to that node: their nominations are
  // cleared, as kube-scheduler does.
  std::vector<std::shared_ptr<const PodInfo>> lower_nominated;
  // kube-scheduler's PostFilter message: "preemption: ..." when node_index
  // is -1; else "" up to Kubernetes 1.36, and from 1.37 "preemption: found
  // a potential placement for pod on node N, preempting K victims".
  std::string message;

  bool ok() const { return node_index >= 0; }
};

// What preemption asks of the filter phase of the decision it follows.
class PreemptionFilter {
 public:
  virtual ~PreemptionFilter() = default;
  // The filters for node i standing as `info` (pods removed or put back),
  // both passes with the node's nominated pods.
  virtual NodeCheck Check(size_t i, const NodeInfo& info) = 0;
  // The pre-filter states' AddPod (delta 1) and RemovePod (-1).
  virtual void Update(size_t i, const PodInfo& pod, int delta) = 0;
  // A failed check's reasons, as kube-scheduler words them.
  virtual std::vector<std::string> Reasons(const NodeCheck& check) = 0;
};

struct PreemptionInput {
  const Pod* pod = nullptr;
  const std::vector<NodeInfo>* nodes = nullptr;
  const PodFilter* filter = nullptr;
  // Per node, why the pod does not fit it as it is.
  const std::vector<NodeCheck>* checks = nullptr;
  // A pre-filter rejected the pod: no node can help.
  bool pre_filter_rejected = false;
  const std::vector<PodDisruptionBudget>* budgets = nullptr;  // may be null
  const std::vector<NominatedPod>* nominated = nullptr;       // may be null
  PreemptionSettings settings;
  KubeVersion kube;    // whose message a preemption that helps gives
  int64_t now_ms = 0;  // the start time of pods not started yet
  uint64_t seed = 0;   // where the candidate search starts
};

Preemption Preempt(const PreemptionInput& input, PreemptionFilter& filter);

// Whether `a` is more important than `b`: higher priority, then the earlier
// start (a pod not started yet counts as starting `now_ms`).
bool MoreImportant(const PodInfo& a, const PodInfo& b, int64_t now_ms);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PREEMPTION_H_
