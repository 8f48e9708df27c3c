// Metric terms (ours): one score per configured metric, from its values in
// the metrics cache.
//
// Pre-score. A value is usable when finite and fresh: sampled (a sample time
// of 0 means none) no longer than the metric's maxStaleness before the
// decision's clock. A metric with no usable value on any feasible node is
// unused for the decision; when no metric is usable the decision runs in
// fallback mode (decide.h). A feasible node without a usable value of an
// `exclude` metric leaves the feasible set, and so does a node whose usable
// value is beyond the metric's `filter` bounds (FilterNodesByMetrics).
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

#include "config/config.h"
#include "model/metrics.h"
#include "scoring/explain.h"
#include "scoring/metric_table.h"
#include "scoring/scoring_config.h"

namespace ms {

inline constexpr double kNeutralScore = 50;

// What normalisation needs to know of the usable values of one metric over
// the feasible nodes.
struct ColumnStats {
  int usable = 0;  // nodes with a finite, fresh value
  double min = 0;  // over the usable values
  double max = 0;
};

// The reference: the score in [0, 100] of a usable value `v`:
//   minmax, lower:  (max - v) * 100 / (max - min); all equal: 100
//   minmax, higher: (v - min) * 100 / (max - min); all equal: 100
//   range [lo, hi], lower: (hi - v) * 100 / (hi - lo), clamped to [0, 100]
//   range [lo, hi], higher: (v - lo) * 100 / (hi - lo), clamped
//   ratio, lower:  100 * best / v with best = max(min, 0), v clamped at 0;
//                  a value of 0 scores 100
//   ratio, higher: 100 * v / best with best = max, v clamped at 0; when
//                  best is 0 every node scores 100
double NormalizeValue(Direction direction, const NormalizationConfig& norm,
                      const ColumnStats& stats, double v);

// The score a node with no usable value gets under `policy`: 50 (neutral),
// 0 (worst); kExclude and kSkip have none (the node is filtered or the term
// skipped).
double MissingScore(MissingPolicy policy);

// A normalisation resolved for one decision: the three shapes
// NormalizeValue reduces to once the stats are known.
enum class Normalizer {
  kLinear,       // minmax and range: clamp((v - origin) * k + base, 0, 100)
  kRatioLower,   // v <= 0 ? 100 : min(best / v, 100)
  kRatioHigher,  // min(max(v, 0) * k + base, 100)
};

// One metric for the current decision: where its usable values are, their
// stats over the feasible nodes, and the resolved normalisation.
struct MetricPlan {
  // The usable values over all nodes (NaN: none), from the MetricTable or a
  // copy cleaned for this decision; null when the metric has none.
  const double* values = nullptr;
  // When `values` is a fresh prepared column: that column (its min, max
  // and missing nodes stand for a pass); null for a cleaned copy.
  const MetricTable::Column* prepared = nullptr;
  bool complete = false;  // every node has a usable value (no NaN)
  ColumnStats stats;
  bool on = false;  // usable data on some feasible node
  // Set by PlanMetric.
  Normalizer normalizer = Normalizer::kLinear;
  double origin = 0, k = 0, base = 0, best = 0;
  double miss = 0;    // the score without a usable value; NaN: skipped
  double weight = 0;
  bool per_node = false;  // skipped on some feasible node: per-node weights
};

// Pre-score: points `plan` at the usable values of prepared column `m` at
// `now_ms` (cleaning a copy into `scratch` when only some are fresh).
void GatherMetric(const MetricTable& table, size_t m, const MetricTerm& term,
                  int64_t now_ms, std::vector<double>& scratch,
                  MetricPlan& plan);

// Pre-score: the stats of `plan`'s values over the feasible nodes
// (feasible[i] != 0), `count` of them; sets plan.stats and plan.on.
void FeasibleStats(const int64_t* feasible, size_t n, size_t count,
                   MetricPlan& plan);

// Pre-score: removes from the feasible set (`count` nodes) each node that
// fails a used metric's own filter: no usable value of an `exclude`
// metric, or a usable value above the metric's filter_max or below its
// filter_min. The first such metric, in configuration order, is recorded
// in `excluded[node]` (kNotExcluded elsewhere); `excluded` is left empty
// when no node can be excluded. Returns how many nodes left.
inline constexpr int32_t kNotExcluded = -1;
size_t FilterNodesByMetrics(const std::vector<MetricTerm>& terms,
                            const std::vector<MetricPlan>& plans,
                            size_t count, int64_t* feasible, size_t n,
                            std::vector<int32_t>& excluded);

// Which kFailMetric bit (filter.h) node i fails for `term`, whose plan
// removed it: kFailMissingMetric without a usable value, else
// kFailMetricAbove or kFailMetricBelow.
uint32_t MetricFailure(const MetricTerm& term, const MetricPlan& plan,
                       size_t i);

// Normalise: resolves plan's normalisation from its stats and the term.
void PlanMetric(const MetricTerm& term, size_t feasible_count,
                MetricPlan& plan);

// Score: the score of value `v` under a resolved plan (NaN: skipped), in the
// arithmetic of NormalizeValue. Inline, so that the vectorised kernels
// (internal/kernels.h) compute exactly what PlanScore does.
template <Normalizer kShape, bool kComplete = false>
__attribute__((always_inline)) inline double PlanScore(
    double origin, double k, double base, double best, double miss,
    double v) {
  constexpr double kMax = kMaxNodeScore;
  double s;
  if constexpr (kShape == Normalizer::kLinear) {
    const double y = (v - origin) * k + base;
    s = y < 0.0 ? 0.0 : (kMax < y ? kMax : y);  // clamp, as selects
  } else if constexpr (kShape == Normalizer::kRatioLower) {
    const double x = v < 0.0 ? 0.0 : v;
    const double q = best / x;
    s = x == 0 ? kMax : (kMax < q ? kMax : q);
  } else {
    const double x = v < 0.0 ? 0.0 : v;
    const double y = x * k + base;
    s = kMax < y ? kMax : y;
  }
  if constexpr (kComplete) return s;  // v is never NaN
  return v == v ? s : miss;
}
double PlanScore(const MetricPlan& plan, double v);

// The explanation row of node `i`: the raw value from `column` (the
// cache's, not the prepared one) and its score; unused when `used` is false
// (fallback mode, or the metric has no data).
TermResult MetricTermRow(const MetricTerm& term, const MetricPlan& plan,
                         bool used, const MetricColumn* column, size_t i,
                         int64_t now_ms);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_METRIC_TERMS_H_
