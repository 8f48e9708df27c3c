// A metric term resolved for one decision: the plan PlanMetric
// (plugins/metric_terms.h) makes of a metric's values and normalisation,
// and the per-node arithmetic that applies it. Shared by the metric terms
// and the vectorised kernels (internal/kernels.h), so that both compute
// the same scores.
#ifndef METRICS_SCHEDULER_SCORING_METRIC_PLAN_H_
#define METRICS_SCHEDULER_SCORING_METRIC_PLAN_H_

#include "scoring/explanation.h"
#include "scoring/metric_table.h"

namespace ms {

// What normalisation needs to know of the usable values of one metric over
// the feasible nodes.
struct ColumnStats {
  int usable = 0;  // nodes with a finite, fresh value
  double min = 0;  // over the usable values
  double max = 0;
};

// A normalisation resolved for one decision: the shapes NormalizeValue
// reduces to once the stats are known.
enum class Normalizer {
  kLinear,       // minmax and range: clamp((v - origin) * k + base, 0, 100)
  kRatioLower,   // v <= 0 ? 100 : min(best / v, 100)
  kRatioHigher,  // min(max(v, 0) * k + base, 100)
  // target: with u = max((v - origin) * k, 0) and the target at u = base,
  // u <= base ? 100 - (base - u) * rise : max((100 - u) * fall, 0)
  kTarget,
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
  // Set by PlanMetric; which coefficients a shape reads is in Normalizer.
  // For kTarget, on [min, max] -> [0, 100]: origin = min, k = 100 / (max -
  // min), base = t, the target there, rise = (100 - t) / t and fall = t /
  // (100 - t), the slopes below and above it.
  Normalizer normalizer = Normalizer::kLinear;
  double origin = 0, k = 0, base = 0, best = 0;
  double rise = 0, fall = 0;  // kTarget only
  double miss = 0;  // the score without a usable value; NaN: skipped
  double weight = 0;
  bool per_node = false;  // skipped on some feasible node: per-node weights
};

// Score: the score of value `v` under a resolved plan (NaN: skipped), in the
// arithmetic of metric_terms.h's NormalizeValue. Inline, so that the
// vectorised kernels (internal/kernels.h) compute exactly what PlanScore
// does.
template <Normalizer kShape, bool kComplete = false>
__attribute__((always_inline)) inline double PlanScore(double origin, double k,
                                                       double base, double best,
                                                       double rise, double fall,
                                                       double miss, double v) {
  constexpr double kMax = kMaxNodeScore;
  double s;
  if constexpr (kShape == Normalizer::kLinear) {
    const double y = (v - origin) * k + base;
    s = y < 0.0 ? 0.0 : (kMax < y ? kMax : y);  // clamp, as selects
  } else if constexpr (kShape == Normalizer::kRatioLower) {
    const double x = v < 0.0 ? 0.0 : v;
    const double q = best / x;
    s = x == 0 ? kMax : (kMax < q ? kMax : q);
  } else if constexpr (kShape == Normalizer::kRatioHigher) {
    const double x = v < 0.0 ? 0.0 : v;
    const double y = x * k + base;
    s = kMax < y ? kMax : y;
  } else {
    // Both pieces of the tent, then a select: no branch per node.
    const double y = (v - origin) * k;
    const double u = y < 0.0 ? 0.0 : y;
    const double below = kMax - (base - u) * rise;
    const double above = (kMax - u) * fall;
    s = u <= base ? below : (above < 0.0 ? 0.0 : above);
  }
  if constexpr (kComplete) return s;  // v is never NaN
  return v == v ? s : miss;
}

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_METRIC_PLAN_H_
