#include "scoring/extender.h"

#include <algorithm>
#include <cmath>

#include "scoring/filter.h"
#include "scoring/metric_table.h"
#include "scoring/plugins/metric_terms.h"

namespace ms {

MetricVerdict JudgeByMetrics(const ScoringConfig& scoring,
                             const std::vector<MetricColumn>& columns, size_t n,
                             int64_t now_ms, const Pod* pod,
                             const NodeBounds* node_bounds) {
  MetricVerdict out;
  out.failures.assign(n, "");
  out.scores.assign(n, 0);
  const std::vector<MetricTerm>& terms = scoring.metrics;
  const size_t num_metrics = std::min(terms.size(), columns.size());
  if (n == 0 || num_metrics == 0) return out;

  // Pre-score, as Decide: usable values and their stats over the nodes.
  MetricTable table;
  table.Build(columns, n);
  std::vector<int64_t> feasible(n, -1);
  size_t count = n;
  std::vector<AlignedVector<double>> fresh(num_metrics);
  std::vector<MetricPlan> plans(terms.size());
  bool any = false;
  for (size_t m = 0; m < num_metrics; ++m) {
    GatherMetric(table, m, terms[m], now_ms, fresh[m], plans[m]);
    FeasibleStats(feasible.data(), n, count, plans[m]);
    any |= plans[m].on;
  }
  if (!any) return out;
  out.fallback = false;

  // The metrics' own filters, at the bounds that apply to this pod on each
  // node.
  std::vector<uint64_t> pod_scopes(terms.size(), 0);
  DecisionBounds bounds;
  if (pod != nullptr && node_bounds != nullptr &&
      NodeBoundsMatch(terms, *node_bounds, n)) {
    for (size_t m = 0; m < terms.size(); ++m) {
      if (terms[m].has_scoped_filter()) {
        pod_scopes[m] = PodScopes(terms[m], *pod);
      }
    }
    bounds = {.pod_scopes = pod_scopes.data(), .nodes = node_bounds->data()};
  }
  std::vector<int32_t> excluded;
  const size_t removed = FilterNodesByMetrics(terms, plans, bounds, count,
                                              feasible.data(), n, excluded);
  if (removed > 0) {
    for (size_t i = 0; i < n; ++i) {
      if (excluded[i] == kNotExcluded) continue;
      const size_t m = static_cast<size_t>(excluded[i]);
      const FilterBounds b = bounds.At(terms[m], m, i).bounds;
      const uint32_t bit = MetricFailure(b, plans[m], i);
      out.failures[i] = MetricReason(terms[m].name, bit,
                                     bit == kFailMetricAbove ? b.max : b.min);
    }
    count -= removed;
    if (count == 0) return out;
    for (size_t m = 0; m < num_metrics; ++m) {
      FeasibleStats(feasible.data(), n, count, plans[m]);
    }
  }

  // Normalise and score: the weighted mean of the used terms; a skipped
  // term leaves that node's mean.
  for (size_t m = 0; m < num_metrics; ++m) {
    if (plans[m].on) PlanMetric(terms[m], count, plans[m]);
  }
  for (size_t i = 0; i < n; ++i) {
    if (feasible[i] == 0) continue;
    double sum = 0, weights = 0;
    for (size_t m = 0; m < num_metrics; ++m) {
      const MetricPlan& p = plans[m];
      if (!p.on) continue;
      const double s = PlanScore(p, p.values[i]);
      if (std::isnan(s)) continue;  // skipped
      sum += p.weight * s;
      weights += p.weight;
    }
    out.scores[i] = weights > 0 ? sum / weights : 0;
  }
  return out;
}

int64_t ExtenderScore(double score) {
  if (!(score > 0)) return 0;
  const double scaled = std::round(score * kMaxExtenderScore / kMaxNodeScore);
  return std::min<int64_t>(static_cast<int64_t>(scaled), kMaxExtenderScore);
}

}  // namespace ms
