// NodeResourcesBalancedAllocation (kube-scheduler 1.34:
// plugins/noderesources/balanced_allocation.go), for cpu and memory:
//   fraction_r = min(requested_r / allocatable_r, 1), resources with
//   allocatable 0 left out;
//   std = |f_cpu - f_mem| / 2 with two resources, 0 with fewer;
//   score = int64((1 - std) * 100).
// Two traps, both kube-scheduler's: `requested` is the node's ACTUAL
// requests plus the pod's (not the non-zero ones leastAllocated uses), and
// the term is skipped for a pod that requests neither cpu nor memory.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_BALANCED_ALLOCATION_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_BALANCED_ALLOCATION_H_

#include <cstdint>
#include <memory>

#include "model/node_info.h"
#include "model/resources.h"
#include "scoring/explanation.h"
#include "scoring/score_plugin.h"

namespace ms {

// Pre-score: whether the term scores this pod (`requests` is
// PodRequests(pod)).
inline bool BalancedAllocationApplies(const Resources& requests) {
  return requests.milli_cpu != 0 || requests.memory != 0;
}

// Score.
int64_t BalancedAllocationScore(int64_t alloc_cpu, int64_t requested_cpu,
                                int64_t alloc_memory,
                                int64_t requested_memory);

// The explanation row of a node: raw = score = BalancedAllocationScore with
// the pod's requests added to the node's; unused for a pod the term does not
// apply to, or with a weight <= 0.
TermResult BalancedAllocationTerm(const NodeInfo& node,
                                  const Resources& requests, double weight);

// The balancedAllocation term (scored by the kernels; Scores() is null).
std::unique_ptr<ScorePlugin> MakeBalancedAllocationPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_BALANCED_ALLOCATION_H_
