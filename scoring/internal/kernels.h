// The vectorised passes of Decide over whole node columns. Internal: each
// pass fuses rules whose home is a plugin file (scoring/plugins/) and must
// compute exactly what that file's scalar reference computes; the property
// tests in tests/scoring/decide_test.cc (DecidePropertyTest) hold them to
// it. Each function is compiled for AVX-512, AVX2 and baseline x86-64 and
// picked at load time. Pure; no allocation.
#ifndef METRICS_SCHEDULER_SCORING_INTERNAL_KERNELS_H_
#define METRICS_SCHEDULER_SCORING_INTERNAL_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "scoring/metric_plan.h"
#include "scoring/node_table.h"
#include "scoring/term_scores.h"

namespace ms::internal {

// NodeReady, NodeUnschedulable, TaintToleration (as "has no hard taint")
// and NodeResourcesFit (pods, cpu, memory, ephemeral-storage) for a pod
// with nothing else to check: feasible[i] = -1 when node i passes, 0
// otherwise; returns how many pass. `block` is the NodeTable gate bits that
// reject; a need of INT64_MIN is not checked.
size_t FastFilter(const NodeTable::FitColumns& columns, size_t n,
                  int64_t block, int64_t need_cpu, int64_t need_mem,
                  int64_t need_eph, int64_t* feasible);

// The usable values of one metric over the feasible nodes: count, min,
// max. `values` is NaN where a node has no usable value.
ColumnStats MaskedStats(const double* values, const int64_t* feasible,
                        size_t n);

// out[i] = w_la * leastAllocated + w_ba * balancedAllocation for nodes
// [0, n) of `columns` (NodeResourcesFit and BalancedAllocation, exact in
// integers for amounts up to 2^42); balancedAllocation by the 1.36 rule
// (the change in balance) when `ba_change`
// (BalancedAllocationScoresChange), else by 1.34's. A node whose
// balancedAllocation the reciprocal arithmetic cannot settle exactly gets
// suspect[i] = 1 and must be recomputed from the reference; returns how
// many. Not for kHuge rows (their columns are zeros) or a pod with an
// amount beyond 2^42.
size_t DenseBuiltins(const NodeTable::ScoreColumns& columns, size_t n,
                     double pod_nz_cpu, double pod_nz_mem, double pod_cpu,
                     double pod_mem, double w_la, double w_ba, bool ba_change,
                     double* out, double* suspect);

// builtin[j] += weight * the term's score of node b + j, over the block
// [b, b + len); blocks come in ascending order. For sparse scores `next`
// is the first of scores.nodes not yet reached, and moves past the block;
// `row` is scratch of len.
void AddTermScores(const TermScores& scores, double weight, size_t b,
                   size_t len, size_t* next, double* builtin, double* row);

// What combines a node's terms into its score, for one decision.
struct Combine {
  const MetricPlan* plans;  // the metric terms that score
  size_t num_plans;
  const double* builtin;      // per block: weighted built-ins (0 if none)
  const int32_t* placements;  // per node, or null
  const int64_t* feasible;    // per node: -1 feasible, 0 not
  double w_rp;
  double penalty;
  double inv_weight;      // 1 / the sum of weights, when uniform
  double builtin_weight;  // sum of the built-in weights
  bool per_node_weights;
};

// Scores nodes [b, b + len): the metric terms (PlanScore), the built-ins
// and recentPlacements, the weighted mean clamped to [0, 100]; -1 for an
// infeasible node. `t` and `wsum` are scratch rows of `len`. The order of
// the additions is fixed, so a node's score does not depend on its block.
// Returns the highest score in the block.
double ScoreBlock(const Combine& combine, size_t b, size_t len, double* t,
                  double* wsum, double* out);

}  // namespace ms::internal

#endif  // METRICS_SCHEDULER_SCORING_INTERNAL_KERNELS_H_
