// Decide: where one pod goes. The pure heart of the scheduler.
//
//   ScoringConfig scoring = MakeScoringConfig(config);   // once
//   NodeTable table; table.Build(nodes);                 // on node changes
//   MetricTable prepared; prepared.Build(columns, n);    // on metric changes
//   Workspace ws;                                        // one per thread
//   ...
//   DecideInput in{.pod = &pod, .nodes = &nodes, .table = &table,
//                  .metrics = &columns, .metric_table = &prepared,
//                  .recent_placements = &counts,
//                  .now_ms = now, .seed = seed};
//   Decision d = Decide(in, scoring, ws);
//   if (d.ok()) Bind(pod, nodes[d.node_index].node.name, SummarizeTerms(...));
//   else Report(pod, d.filter_summary);  // FailedScheduling message
//
// Steps (DESIGN.md, "Scoring model"):
// 1. A pod requiring a constraint not implemented here (pod affinity or
//    anti-affinity, topology spread, volumes that need binding) is rejected
//    outright: filter_summary names the constraint.
// 2. Filter (filter.h). The feasible nodes F are kept as a mask over all
//    nodes, so that the per-metric passes read whole columns and vectorise.
// 3. Metric terms. A value is usable when finite and fresh
//    (now_ms - sample time <= the metric's max staleness; a sample time of 0
//    means no sample). A metric with no usable value on any node of F is
//    unused for this decision. When no metric is usable, or none is
//    configured, or force_fallback is set, the decision runs in fallback
//    mode: only the built-in terms score. Otherwise nodes without a usable
//    value of an `exclude` metric leave F, then each metric is normalised
//    over the usable values of F (score.h, NormalizeValue) and missing
//    values follow their policy.
// 4. Built-in terms: leastAllocated, balancedAllocation (kube-scheduler's
//    formulas, score.h) and recentPlacements (herd avoidance, from the
//    caller's per-node counts). A weight of 0 turns a term off.
// 5. Score(n) = sum(w_i * s_i(n)) / sum(w_i) over the terms counted for n,
//    in [0, 100] (0 when no term counts). The highest score wins; ties are
//    broken by a hash of (seed, node name), so the same seed picks the same
//    node whatever the order of the node list.
//
// Cost: the per-node work reads compact arrays (NodeTable, MetricTable),
// scores nodes in blocks that stay in the L1 cache, and allocates nothing
// once the Workspace has grown to the node count; strings are built only
// for a failure summary, the winner's terms, and the full explanation when
// asked for. No I/O, no clock, no locks.
#ifndef METRICS_SCHEDULER_SCORING_DECIDE_H_
#define METRICS_SCHEDULER_SCORING_DECIDE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "model/metrics.h"
#include "model/node_info.h"
#include "model/pod.h"
#include "scoring/explain.h"
#include "scoring/filter.h"
#include "scoring/metric_table.h"
#include "scoring/node_table.h"
#include "scoring/score.h"
#include "scoring/scoring_config.h"

namespace ms {


struct DecideInput {
  const Pod* pod = nullptr;                     // required
  const std::vector<NodeInfo>* nodes = nullptr;  // required
  // Optional: NodeTable built from `nodes` and kept in step with them.
  // Null: Decide builds one in the Workspace.
  const NodeTable* table = nullptr;
  // Optional: one column per ScoringConfig metric, aligned to `nodes`
  // (AlignMetrics). Null or fewer columns: the missing metrics have no data.
  const std::vector<MetricColumn>* metrics = nullptr;
  // Optional: `metrics` prepared (MetricTable::Build), kept in step with
  // them. Null, or not matching: Decide prepares them in the Workspace.
  const MetricTable* metric_table = nullptr;
  // Optional: per node, the pods this scheduler placed there since that
  // node's metrics were sampled. Null: none anywhere.
  const std::vector<int32_t>* recent_placements = nullptr;
  int64_t now_ms = 0;  // for staleness; scoring has no clock
  uint64_t seed = 0;   // tie-break
  bool force_fallback = false;  // e.g. cold cache past its deadline
  bool explain = false;         // fill Decision::explanation
};

struct Decision {
  int node_index = -1;  // into DecideInput::nodes; -1 when no node fits
  double score = 0;     // the winner's total, in [0, 100]
  ScoringMode mode = ScoringMode::kFallback;
  FallbackReason fallback_reason = FallbackReason::kNone;
  int num_nodes = 0;
  int num_feasible = 0;  // after the filters and `exclude` policies
  // When node_index is -1: the FailedScheduling message, e.g.
  // "0/5 nodes are available: 2 node(s) were unschedulable, 3 Insufficient
  // cpu." Empty otherwise.
  std::string filter_summary;
  // The winner's terms (metrics in configuration order, then the built-ins);
  // see SummarizeTerms for the event message.
  std::vector<TermResult> terms;
  std::optional<Explanation> explanation;  // when DecideInput::explain

  bool ok() const { return node_index >= 0; }
};

// Reusable per-thread scratch space. Decide sizes it to the node count the
// first time and reuses it after, so steady-state decisions allocate nothing
// proportional to the number of nodes. Not thread-safe: one per thread.
class Workspace {
 public:
  Workspace() = default;

  // Per metric, for the current decision (an implementation detail).
  struct MetricPlan {
    ColumnStats stats;
    bool on = false;  // usable data on some feasible node
    // The usable values over all nodes (NaN: none), from the MetricTable or
    // cleaned into `fresh` for this decision; null when the metric has none.
    const double* values = nullptr;
    // When `values` is a fresh prepared column: that column (its min, max
    // and missing nodes stand for a pass); null for a cleaned copy.
    const MetricTable::Column* prepared = nullptr;
    // The normalisation, resolved for this decision from stats and config:
    // kind 0 (minmax, range): clamp((v - origin) * k + base, 0, 100);
    // kind 1 (ratio, lower): v <= 0 ? 100 : min(best / v, 100);
    // kind 2 (ratio, higher): min(max(v, 0) * k + base, 100).
    int kind = 0;
    double origin = 0, k = 0, base = 0, best = 0;
    double miss = 0;    // the score without a usable value; NaN: skipped
    double weight = 0;
    bool per_node = false;  // skipped on some feasible node: per-node weights
    bool complete = false;  // every node has a usable value (no NaN)
  };

 private:
  friend Decision Decide(const DecideInput&, const ScoringConfig&,
                         Workspace&);
  NodeTable own_table;
  MetricTable own_metrics;
  std::vector<MetricPlan> plans;
  std::vector<MetricPlan> active;            // the plans that score
  std::vector<std::vector<double>> fresh;    // [metric][node]: cleaned copies
  std::vector<int64_t> feasible;  // [node]: -1 feasible, 0 not
  std::vector<double> scores;     // [node]: final score; -1 when infeasible
  std::vector<double> block_best;  // [block]: the highest score in it
  std::vector<int32_t> excluded;  // [node]: `exclude` metric + 1, or 0
  // Per block of nodes: metric sums, per-node weights, built-ins, suspects.
  std::vector<double> totals, weight_sums, builtin, suspect;
  FilterSummary summary;
};
Decision Decide(const DecideInput& input, const ScoringConfig& config,
                Workspace& workspace);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_DECIDE_H_
