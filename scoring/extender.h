// JudgeByMetrics: the metric half of a decision, for kube-scheduler's
// extender protocol (scheduler/serve/extender_server.h).
//
// kube-scheduler has already filtered the nodes it asks about; what
// metrics-scheduler adds is what Decide (decide.h) does with metrics, over
// those nodes only and with the same code (plugins/metric_terms.h): the
// metrics' own filters (`filter` bounds and the `exclude` policy) and the
// weighted mean of the metric terms, with no built-in term. A metric with
// no usable value on any of the nodes is unused; when none is usable the
// verdict is in fallback mode: every node passes and none is preferred, as
// a decision in fallback mode applies no metric.
//
// Pure function; thread-safe.
#ifndef METRICS_SCHEDULER_SCORING_EXTENDER_H_
#define METRICS_SCHEDULER_SCORING_EXTENDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/metrics.h"
#include "model/pod.h"
#include "scoring/filter_bounds.h"
#include "scoring/scoring_config.h"

namespace ms {

// kube-scheduler's MaxExtenderPriority: extender scores are 0..10, and
// kube-scheduler multiplies them by the extender's weight and by 10 (its
// MaxNodeScore / MaxExtenderPriority) before adding them to its plugins'.
inline constexpr int64_t kMaxExtenderScore = 10;

struct MetricVerdict {
  bool fallback = true;  // no metric had a usable value on any node
  // Per node: "" when it passes the metrics' filters, else the reason
  // (filter.h's wording: "node(s) had cpu above 0.9").
  std::vector<std::string> failures;
  // Per node that passes: the weighted mean of the metric terms over the
  // passing nodes, in [0, 100]; 0 for the others and in fallback mode.
  std::vector<double> scores;
};

// `columns`: one per scoring.metrics term, aligned to the n nodes asked
// about (fewer columns: the missing metrics have no data). `now_ms` is the
// clock for staleness. The filters' bounds are those that apply to `pod`
// (its labels and priority) on each node, with `node_bounds` the node side
// over the n nodes (filter_bounds.h); without either, or with a
// `node_bounds` that does not match, the default bounds hold everywhere.
MetricVerdict JudgeByMetrics(const ScoringConfig& scoring,
                             const std::vector<MetricColumn>& columns, size_t n,
                             int64_t now_ms, const Pod* pod = nullptr,
                             const NodeBounds* node_bounds = nullptr);

// A [0, 100] score on the extender's 0..10 scale, rounded.
int64_t ExtenderScore(double score);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_EXTENDER_H_
