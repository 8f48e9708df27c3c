// The reference policies the harness schedules with itself, beside
// kube-scheduler and metrics-scheduler (docs/quality.md, "Policies"): the
// load-aware peers' headline rules, re-written from their descriptions, the
// clairvoyant limit and the learning one. Pure functions: a pod and the
// nodes that fit it (by requests, as every scheduler filters) in, the
// chosen node out.
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_POLICIES_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_POLICIES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ms::quality {

// What a policy may know of a node. Metrics come from Prometheus, lagged as
// any scheduler's are; NaN where Prometheus has no value yet.
struct NodeView {
  double cpu_allocatable = 0;  // cores
  double cpu_requested = 0;    // cores requested by the pods bound there
  double memory_allocatable_gib = 0;
  double memory_requested_gib = 0;
  // CPU utilisation (0..1): its mean and standard deviation over the last
  // five minutes, as Prometheus has them (NaN: no value yet).
  double utilisation_mean = 0;
  double utilisation_stddev = 0;
  // Requests (cores) of the pods bound there in the last 60 s, which the
  // metrics may not show yet: what the peers charge as "recently
  // assigned".
  double recent_cpu_requested = 0;
  // For the clairvoyant policy the truth: the demand of the pods there at
  // their full usage and the capacity (cores x speed). For the learning
  // one the same, each pod at its request until its usage could be known
  // (world.h, KnownLoad).
  double true_demand = 0;
  double true_capacity = 0;
  int pods = 0;  // pods bound there
};

struct PodView {
  double cpu_request = 0;  // cores
  // For the clairvoyant policy the pod's usage; for the learning one its
  // usage once a sibling's could be known, its request until then.
  double true_usage = 0;
};

enum class Policy {
  kTargetLoadPacking,
  kLoadVariationRiskBalancing,
  kLoadAware,
  kClairvoyant,
  // The clairvoyant rule, knowing of every pod, the one it places and
  // those running, only what metrics could have told: its usage once it
  // or a sibling has run its warm-up and a lag, its request before
  // (docs/quality.md, "Policies").
  kLearning,
};

// "target-load-packing", "load-variation-risk-balancing", "load-aware",
// "clairvoyant", "learning".
const char* PolicyName(Policy policy);
absl::StatusOr<Policy> ParsePolicy(absl::string_view name);

// The index in `nodes` of the node `policy` picks for `pod`; -1 when it
// filters every node out. Among nodes with the best score, `random` picks
// one (random % their count), as kube-scheduler's framework breaks ties at
// random.
int Choose(Policy policy, const PodView& pod,
           const std::vector<NodeView>& nodes, uint64_t random);

// Each policy's score of one node, 0..100 (higher is better), exposed for
// tests; -1 when the policy's filter rejects the node.
double TargetLoadPackingScore(const PodView& pod, const NodeView& node);
double LoadVariationRiskBalancingScore(const PodView& pod,
                                       const NodeView& node);
double LoadAwareScore(const PodView& pod, const NodeView& node);
double ClairvoyantScore(const PodView& pod, const NodeView& node);

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_POLICIES_H_
