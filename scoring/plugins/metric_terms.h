// Metric terms (ours): one score per configured metric, from its values in
// the metrics cache.
//
// Pre-score. A value is usable when finite and fresh: sampled (a sample time
// of 0 means none) no longer than the metric's maxStaleness before the
// decision's clock. A metric with no usable value on any feasible node is
// unused for the decision; when no metric is usable the decision runs in
// fallback mode (decide.h). A feasible node without a usable value of an
// `exclude` metric leaves the feasible set, and so does a node whose usable
// value is beyond the metric's `filter` bounds (FilterNodesByMetrics): the
// default bounds, or those a scope or the node's annotations set for this
// pod there (filter_bounds.h).
//
// Normalise. Each used metric's values are scored in [0, 100] over its
// usable values on the feasible nodes (NormalizeValue, the reference);
// PlanMetric resolves that normalisation once per decision into a few
// coefficients (MetricPlan) that PlanScore applies per node, in the same
// arithmetic, so the hot path and the reference agree exactly. A node
// without a usable value gets its policy's score (MissingScore): neutral
// 50, worst 0; `skip` leaves the term out of that node's weighted mean.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_METRIC_TERMS_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_METRIC_TERMS_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "model/metrics.h"
#include "scoring/explanation.h"
#include "scoring/filter_bounds.h"
#include "scoring/metric_plan.h"
#include "scoring/metric_table.h"
#include "scoring/scoring_config.h"

namespace ms {

inline constexpr double kNeutralScore = 50;

// The reference: the score in [0, 100] of a usable value `v`:
//   minmax, lower:  (max - v) * 100 / (max - min); all equal: 100
//   minmax, higher: (v - min) * 100 / (max - min); all equal: 100
//   range [lo, hi], lower: (hi - v) * 100 / (hi - lo), clamped to [0, 100]
//   range [lo, hi], higher: (v - lo) * 100 / (hi - lo), clamped
//   ratio, lower:  100 * best / v with best = max(min, 0), v clamped at 0;
//                  a value of 0 scores 100
//   ratio, higher: 100 * v / best with best = max, v clamped at 0; when
//                  best is 0 every node scores 100
//   target X over [lo, hi], either direction (Trimaran's
//   TargetLoadPacking): with u = (v - lo) * 100 / (hi - lo), clamped at 0,
//   and t = (X - lo) * 100 / (hi - lo),
//                  u <= t: (100 - t) * u / t + t  (t at lo, 100 at X)
//                  u > t:  t * (100 - u) / (100 - t), clamped at 0 (0 at hi)
//                  so just above X the score drops from 100 to t, as
//                  TargetLoadPacking's does
double NormalizeValue(Direction direction, const NormalizationConfig& norm,
                      const ColumnStats& stats, double v);

// The score a node with no usable value gets under `policy`: 50 (neutral),
// 0 (worst); kExclude and kSkip have none (the node is filtered or the term
// skipped).
double MissingScore(MissingPolicy policy);

// Pre-score: points `plan` at the usable values of prepared column `m` at
// `now_ms` (cleaning a copy into `scratch` when only some are fresh).
void GatherMetric(const MetricTable& table, size_t m, const MetricTerm& term,
                  int64_t now_ms, AlignedVector<double>& scratch,
                  MetricPlan& plan);

// Pre-score: the stats of `plan`'s values over the feasible nodes
// (feasible[i] != 0), `count` of them; sets plan.stats and plan.on.
void FeasibleStats(const int64_t* feasible, size_t n, size_t count,
                   MetricPlan& plan);

// Pre-score: removes from the feasible set (`count` nodes) each node that
// fails a used metric's own filter: no usable value of an `exclude`
// metric, or a usable value above or below the bounds `bounds` gives the
// metric on that node (the default filter_max and filter_min for a term
// without a scoped filter, in the same loop as ever). The first such
// metric, in configuration order, is recorded in `excluded[node]`
// (kNotExcluded elsewhere); `excluded` is left empty when no node can be
// excluded. Returns how many nodes left.
inline constexpr int32_t kNotExcluded = -1;
size_t FilterNodesByMetrics(const std::vector<MetricTerm>& terms,
                            const std::vector<MetricPlan>& plans,
                            const DecisionBounds& bounds, size_t count,
                            int64_t* feasible, size_t n,
                            std::vector<int32_t>& excluded);

// Which kFailMetric bit (filter_failure.h) node i fails, whose plan
// removed it under `bounds` (the node's): kFailMissingMetric without a
// usable value, else kFailMetricAbove or kFailMetricBelow.
uint32_t MetricFailure(const FilterBounds& bounds, const MetricPlan& plan,
                       size_t i);

// Normalise: resolves plan's normalisation from its stats and the term.
void PlanMetric(const MetricTerm& term, size_t feasible_count,
                MetricPlan& plan);

// Score: PlanScore (metric_plan.h) for any plan.
double PlanScore(const MetricPlan& plan, double v);

// The explanation row of node `i`: the raw value from `column` (the
// cache's, not the prepared one), of which `unseen` is estimated, and its
// score; unused when `used` is false (fallback mode, or the metric has no
// data) or the metric's weight is 0.
TermResult MetricTermRow(const MetricTerm& term, const MetricPlan& plan,
                         bool used, const MetricColumn* column, size_t i,
                         double unseen, int64_t now_ms);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_METRIC_TERMS_H_
