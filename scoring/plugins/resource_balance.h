// How balanced a node's cpu and memory requests are, as kube-scheduler's
// NodeResourcesBalancedAllocation measures it (balancedResourceScore):
//   int64((1 - std) * 100), in [50, 100], where fraction_r =
//   min(requested_r / allocatable_r, 1) in float64, the resources with
//   allocatable 0 left out; std = |f_cpu - f_mem| / 2 with two resources,
//   0 with fewer.
// The plugin (balanced_allocation.h) scores with it; the node table keeps
// each node's own. Pure.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_RESOURCE_BALANCE_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_RESOURCE_BALANCE_H_

#include <cstdint>

namespace ms {

int64_t ResourceBalanceScore(int64_t alloc_cpu, int64_t requested_cpu,
                             int64_t alloc_memory, int64_t requested_memory);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_RESOURCE_BALANCE_H_
