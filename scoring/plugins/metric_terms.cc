#include "scoring/plugins/metric_terms.h"

#include <algorithm>

#include "scoring/filter_failure.h"
#include "scoring/internal/kernels.h"

namespace ms {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A copy of a column with only the values sampled at or after `cutoff`.
void CleanColumn(const MetricTable::Column& col, int64_t cutoff, size_t n,
                 AlignedVector<double>& out) {
  if (out.size() < n) out.resize(n);
  const double* __restrict v = col.values.data();
  const int64_t* __restrict t = col.time_ms.data();
  double* __restrict o = out.data();
  for (size_t i = 0; i < n; ++i) o[i] = t[i] >= cutoff ? v[i] : kNaN;
}

}  // namespace

double NormalizeValue(Direction direction, const NormalizationConfig& norm,
                      const ColumnStats& stats, double v) {
  const bool lower = direction == Direction::kLower;
  switch (norm.type) {
    case NormalizationType::kMinMax: {
      if (!(stats.max > stats.min)) return kMaxNodeScore;
      double k = kMaxNodeScore / (stats.max - stats.min);
      double s = lower ? (stats.max - v) * k : (v - stats.min) * k;
      return std::clamp(s, 0.0, kMaxNodeScore);
    }
    case NormalizationType::kRange: {
      double k = kMaxNodeScore / (norm.max - norm.min);
      double s = lower ? (norm.max - v) * k : (v - norm.min) * k;
      return std::clamp(s, 0.0, kMaxNodeScore);
    }
    case NormalizationType::kRatio: {
      double x = std::max(v, 0.0);
      if (lower) {
        double best = std::max(stats.min, 0.0);
        if (x == 0) return kMaxNodeScore;
        return std::clamp(kMaxNodeScore * best / x, 0.0, kMaxNodeScore);
      }
      double best = std::max(stats.max, 0.0);
      if (best == 0) return kMaxNodeScore;
      return std::clamp(x * (kMaxNodeScore / best), 0.0, kMaxNodeScore);
    }
    case NormalizationType::kTarget: {
      // On [min, max] -> [0, 100]: u the value (0 below min), t the target.
      // (100 - t) * u / t + t is written 100 - (t - u) * ((100 - t) / t),
      // which is 100 exactly at the target, and PlanScore's arithmetic.
      const double k = kMaxNodeScore / (norm.max - norm.min);
      const double u = std::max((v - norm.min) * k, 0.0);
      const double t = (norm.target - norm.min) * k;
      if (u <= t) return kMaxNodeScore - (t - u) * ((kMaxNodeScore - t) / t);
      return std::max((kMaxNodeScore - u) * (t / (kMaxNodeScore - t)), 0.0);
    }
  }
  return 0;
}

double MissingScore(MissingPolicy policy) {
  return policy == MissingPolicy::kNeutral ? kNeutralScore : 0.0;
}

void GatherMetric(const MetricTable& table, size_t m, const MetricTerm& term,
                  int64_t now_ms, AlignedVector<double>& scratch,
                  MetricPlan& plan) {
  const int64_t cutoff = now_ms - term.max_staleness_ms;
  const MetricTable::Column& col = table.column(m);
  switch (table.FreshnessAt(m, cutoff)) {
    case MetricTable::Freshness::kNone:
      break;
    case MetricTable::Freshness::kAll:
      plan.values = col.values.data();
      plan.prepared = &col;
      plan.complete = col.present == table.num_nodes();
      break;
    case MetricTable::Freshness::kSome:
      CleanColumn(col, cutoff, table.num_nodes(), scratch);
      plan.values = scratch.data();
      break;
  }
}

void FeasibleStats(const int64_t* feasible, size_t n, size_t count,
                   MetricPlan& p) {
  if (p.values == nullptr) return;
  // For a fresh prepared column whose smallest and largest values sit on
  // feasible nodes the stats are the column's own, and only its missing
  // nodes (when few) are counted; otherwise one masked pass.
  const MetricTable::Column* c = p.prepared;
  if (c != nullptr && c->present > 0 && feasible[c->argmin] != 0 &&
      feasible[c->argmax] != 0 && c->missing.size() <= n / 8 + 8) {
    size_t unusable = 0;
    for (uint32_t i : c->missing) unusable += feasible[i] != 0;
    p.stats = ColumnStats{.usable = static_cast<int>(count - unusable),
                          .min = c->min,
                          .max = c->max};
  } else {
    p.stats = internal::MaskedStats(p.values, feasible, n);
  }
  p.on = p.stats.usable > 0;
}

size_t FilterNodesByMetrics(const std::vector<MetricTerm>& terms,
                            const std::vector<MetricPlan>& plans,
                            const DecisionBounds& bounds, size_t count,
                            int64_t* feasible, size_t n,
                            std::vector<int32_t>& excluded) {
  excluded.clear();
  size_t removed = 0;
  for (size_t m = 0; m < terms.size(); ++m) {
    const MetricTerm& term = terms[m];
    const MetricPlan& plan = plans[m];
    if (!plan.on) continue;
    const bool exclude = term.missing == MissingPolicy::kExclude &&
                         plan.stats.usable < static_cast<int>(count);
    if (!exclude && !term.has_filter()) continue;
    auto fail = [&](size_t i) {
      if (excluded.empty()) excluded.assign(n, kNotExcluded);
      excluded[i] = static_cast<int32_t>(m);
      feasible[i] = 0;
      ++removed;
    };
    // The bounds vary by node only where some node has a node side of its
    // own (a scope's node selector, an annotation); else this pod's
    // bounds are one pair for all nodes.
    const NodeBoundsColumn* column =
        term.has_scoped_filter() && bounds.nodes != nullptr ? &bounds.nodes[m]
                                                            : nullptr;
    if (column == nullptr || column->uniform()) {
      const FilterBounds b = bounds.At(term, m, 0).bounds;
      const double lo = b.min, hi = b.max;
      constexpr double kInf = std::numeric_limits<double>::infinity();
      if (!exclude && lo == -kInf && hi == kInf) continue;  // none for it
      for (size_t i = 0; i < n; ++i) {
        if (feasible[i] == 0) continue;
        const double v = plan.values[i];
        // NaN (no usable value) fails only `exclude`, never the bounds.
        if (std::isnan(v) ? exclude : (v > hi || v < lo)) fail(i);
      }
      continue;
    }
    const uint64_t pod_scopes = bounds.pod_scopes[m];
    for (size_t i = 0; i < n; ++i) {
      if (feasible[i] == 0) continue;
      const double v = plan.values[i];
      if (std::isnan(v)) {
        if (exclude) fail(i);
        continue;
      }
      const FilterBounds b = BoundsAt(term, pod_scopes, *column, i).bounds;
      if (v > b.max || v < b.min) fail(i);
    }
  }
  return removed;
}

uint32_t MetricFailure(const FilterBounds& bounds, const MetricPlan& plan,
                       size_t i) {
  const double v = plan.values != nullptr ? plan.values[i] : kNaN;
  if (std::isnan(v)) return kFailMissingMetric;
  return v > bounds.max ? kFailMetricAbove : kFailMetricBelow;
}

void PlanMetric(const MetricTerm& term, size_t count, MetricPlan& p) {
  const ColumnStats& st = p.stats;
  const bool lower = term.direction == Direction::kLower;
  p.weight = term.weight;
  p.miss = term.missing == MissingPolicy::kSkip ? kNaN
                                                : MissingScore(term.missing);
  p.per_node = term.missing == MissingPolicy::kSkip &&
               st.usable < static_cast<int>(count);
  switch (term.normalization.type) {
    case NormalizationType::kMinMax:
    case NormalizationType::kRange: {
      double lo = st.min, hi = st.max;
      if (term.normalization.type == NormalizationType::kRange) {
        lo = term.normalization.min;
        hi = term.normalization.max;
      }
      p.normalizer = Normalizer::kLinear;
      p.origin = lower ? hi : lo;
      p.k = hi > lo ? (lower ? -kMaxNodeScore : kMaxNodeScore) / (hi - lo)
                    : 0.0;
      p.base = hi > lo ? 0.0 : kMaxNodeScore;  // all equal: 100
      break;
    }
    case NormalizationType::kRatio:
      if (lower) {
        p.normalizer = Normalizer::kRatioLower;
        p.best = std::max(st.min, 0.0) * kMaxNodeScore;
      } else {
        const double best = std::max(st.max, 0.0);
        p.normalizer = Normalizer::kRatioHigher;
        p.k = best == 0 ? 0.0 : kMaxNodeScore / best;
        p.base = best == 0 ? kMaxNodeScore : 0.0;
      }
      break;
    case NormalizationType::kTarget: {
      // The loader has min < target < max: k > 0 and 0 < t < 100.
      const NormalizationConfig& norm = term.normalization;
      p.normalizer = Normalizer::kTarget;
      p.origin = norm.min;
      p.k = kMaxNodeScore / (norm.max - norm.min);
      p.base = (norm.target - norm.min) * p.k;
      p.rise = (kMaxNodeScore - p.base) / p.base;
      p.fall = p.base / (kMaxNodeScore - p.base);
      break;
    }
  }
}

double PlanScore(const MetricPlan& p, double v) {
  switch (p.normalizer) {
    case Normalizer::kLinear:
      return PlanScore<Normalizer::kLinear>(p.origin, p.k, p.base, p.best,
                                            p.rise, p.fall, p.miss, v);
    case Normalizer::kRatioLower:
      return PlanScore<Normalizer::kRatioLower>(p.origin, p.k, p.base, p.best,
                                                p.rise, p.fall, p.miss, v);
    case Normalizer::kRatioHigher:
      return PlanScore<Normalizer::kRatioHigher>(p.origin, p.k, p.base, p.best,
                                                 p.rise, p.fall, p.miss, v);
    case Normalizer::kTarget:
      return PlanScore<Normalizer::kTarget>(p.origin, p.k, p.base, p.best,
                                            p.rise, p.fall, p.miss, v);
  }
  return kNaN;
}

TermResult MetricTermRow(const MetricTerm& term, const MetricPlan& plan,
                         bool used, const MetricColumn* column, size_t i,
                         double unseen, int64_t now_ms) {
  TermResult r{.name = term.name, .raw = kNaN, .unseen = unseen};
  int64_t sampled_ms = 0;
  if (column != nullptr && i < column->values.size() &&
      i < column->time_ms.size()) {
    r.raw = column->values[i];
    sampled_ms = column->time_ms[i];
  }
  if (!used || !plan.on || term.weight == 0) {
    r.state = TermState::kUnused;
    return r;
  }
  const double s = PlanScore(plan, plan.values[i]);
  if (std::isnan(s)) {
    r.state = TermState::kSkipped;
    return r;
  }
  r.score = s;
  r.weight = term.weight;
  // Whether the policy's score replaced a missing value, judged from the
  // cache's column, independently of the prepared one.
  const bool usable = std::isfinite(r.raw) && sampled_ms != 0 &&
                      sampled_ms >= now_ms - term.max_staleness_ms;
  r.state = usable ? TermState::kScored : TermState::kMissing;
  return r;
}

}  // namespace ms
