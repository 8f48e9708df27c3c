// NodeResourcesBalancedAllocation (kube-scheduler's
// plugins/noderesources/balanced_allocation.go), for cpu and memory. The
// rule follows the cluster's release (ScoringConfig::kube):
//
//   balance(requested) = ResourceBalanceScore (resource_balance.h).
//   1.34 and 1.35: score = balance(node + pod), the balance with the pod.
//   1.36 on:       score = 50 + (50 + balance(node + pod) - balance(node)) / 2
//     in integers (truncating; the dividend is in [0, 100]): how much the
//     pod improves the node's balance, in [50, 100]; 75 when it changes
//     nothing, e.g. with fewer than two resources. An empty node's own
//     balance is 100.
//
// Two traps, both kube-scheduler's and the same in every release:
// `node` is the node's ACTUAL requests (not the non-zero ones
// leastAllocated uses), and the term is skipped for a pod that requests
// neither cpu nor memory.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_BALANCED_ALLOCATION_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_BALANCED_ALLOCATION_H_

#include <cstdint>
#include <memory>

#include "model/kube_version.h"
#include "model/node_info.h"
#include "model/resources.h"
#include "scoring/explanation.h"
#include "scoring/plugins/resource_balance.h"
#include "scoring/score_plugin.h"

namespace ms {

// Pre-score: whether the term scores this pod (`requests` is
// PodRequests(pod)).
inline bool BalancedAllocationApplies(const Resources& requests) {
  return requests.milli_cpu != 0 || requests.memory != 0;
}

// Whether `kube`'s rule scores the change in balance the pod makes (1.36
// on) rather than the balance with the pod (1.34, 1.35).
inline bool BalancedAllocationScoresChange(const KubeVersion& kube) {
  return kube.AtLeast(36);
}

// Score under `kube`'s rule: `allocatable` and `node` (its pods' requests,
// NodeInfo::requested) of the node, `pod` the pod's PodRequests. Sums
// saturate instead of wrapping.
int64_t BalancedAllocationScore(const KubeVersion& kube,
                                const Resources& allocatable,
                                const Resources& node, const Resources& pod);

// The explanation row of a node: raw = score = BalancedAllocationScore;
// unused for a pod the term does not apply to, or with a weight <= 0.
TermResult BalancedAllocationTerm(const KubeVersion& kube, const NodeInfo& node,
                                  const Resources& requests, double weight);

// The balancedAllocation term (scored by the kernels; Scores() is null).
std::unique_ptr<ScorePlugin> MakeBalancedAllocationPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_BALANCED_ALLOCATION_H_
