// NodeResourcesFit (kube-scheduler: plugins/noderesources, fit.go and
// least_allocated.go).
//
// Filter: the node must have room for one more pod, and for each resource
// the pod requests (cpu, memory, ephemeral-storage, extended resources; a
// request of 0 is not checked) allocatable - requested >= the request.
// Every insufficient resource is reported, "Too many pods" and
// "Insufficient NAME", as kube-scheduler does.
//
// Score, leastAllocated (the default strategy: cpu and memory, weight 1
// each), in integers:
//   per resource: (allocatable - requested) * 100 / allocatable, 0 when
//   requested > allocatable; a resource with allocatable 0 is left out;
//   score = sum / number of resources counted (0 when none).
// `requested` is the node's NON-ZERO requests (PodNonZeroRequests of each
// placed pod) plus the pod's (PodScoringRequests: a container that names
// no cpu counts 100m, one that names no memory 200Mi, an explicit 0 stays
// 0, and pod-level requests are not read, as in kube-scheduler v1.34).
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_NODE_RESOURCES_FIT_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_NODE_RESOURCES_FIT_H_

#include <cstdint>
#include <memory>

#include "model/node_info.h"
#include "model/resources.h"
#include "scoring/explanation.h"
#include "scoring/score_plugin.h"

namespace ms {

inline constexpr char kReasonTooManyPods[] = "Too many pods";

// What does not fit; all false: the pod fits.
struct FitResult {
  bool too_many_pods = false;
  bool cpu = false;
  bool memory = false;
  bool ephemeral_storage = false;
  uint64_t scalars = 0;  // bit i: requests.scalar[i] (of the first 64)
  bool fits() const {
    return !too_many_pods && !cpu && !memory && !ephemeral_storage &&
           scalars == 0;
  }
};

// Filter. `requests` is PodRequests(pod), computed once per pod.
FitResult Fit(const Resources& requests, const NodeInfo& node);

// Score: leastAllocated from the node's allocatable and requested amounts
// (the pod's included).
int64_t LeastAllocatedScore(int64_t alloc_cpu, int64_t requested_cpu,
                            int64_t alloc_memory, int64_t requested_memory);

// The explanation row of a node: raw = score = LeastAllocatedScore with
// `pod_non_zero` (PodScoringRequests) added to the node's non-zero requests. A weight <= 0 leaves the term
// unused.
TermResult LeastAllocatedTerm(const NodeInfo& node,
                              const Resources& pod_non_zero, double weight);

// The leastAllocated term (scored by the kernels; Scores() is null).
std::unique_ptr<ScorePlugin> MakeLeastAllocatedPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_NODE_RESOURCES_FIT_H_
