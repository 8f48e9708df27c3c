#include "scoring/metric_table.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ms {

void MetricTable::Build(const std::vector<MetricColumn>& columns,
                        size_t num_nodes) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();
  num_nodes_ = num_nodes;
  columns_.resize(columns.size());
  extremes_.assign(columns.size(), {});
  for (size_t m = 0; m < columns.size(); ++m) {
    const MetricColumn& in = columns[m];
    Column& out = columns_[m];
    out.aligned =
        in.values.size() == num_nodes && in.time_ms.size() == num_nodes;
    out.values.assign(out.aligned ? num_nodes : 0, kNaN);
    out.time_ms.assign(out.aligned ? num_nodes : 0, kNoTime);
    out.present = 0;
    out.oldest_ms = 0;
    out.newest_ms = 0;
    out.min = 0;
    out.max = 0;
    out.argmin = 0;
    out.argmax = 0;
    out.missing.clear();
    if (!out.aligned) continue;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    int64_t oldest = std::numeric_limits<int64_t>::max();
    int64_t newest = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < num_nodes; ++i) {
      const double v = in.values[i];
      const int64_t t = in.time_ms[i];
      if (t == 0 || !std::isfinite(v)) {
        out.missing.push_back(static_cast<uint32_t>(i));
        continue;
      }
      if (v < lo) {
        lo = v;
        out.argmin = static_cast<uint32_t>(i);
      }
      if (v > hi) {
        hi = v;
        out.argmax = static_cast<uint32_t>(i);
      }
      out.values[i] = v;
      out.time_ms[i] = t;
      oldest = std::min(oldest, t);
      newest = std::max(newest, t);
      ++out.present;
    }
    if (out.present > 0) {
      out.oldest_ms = oldest;
      out.newest_ms = newest;
      out.min = lo;
      out.max = hi;
    }
  }
}

namespace {

// Of the nodes a and b (either may be kNone), the one with the smaller
// (`lower`) or larger value; a on a tie.
uint32_t Pick(const AlignedVector<double>& values, uint32_t a, uint32_t b,
              bool lower) {
  constexpr uint32_t kNone = UINT32_MAX;
  if (a == kNone) return b;
  if (b == kNone) return a;
  return (lower ? values[b] < values[a] : values[b] > values[a]) ? b : a;
}

}  // namespace

void MetricTable::Merge(const Column& c, Extremes& e, size_t k) {
  e.lowest[k] = Pick(c.values, e.lowest[2 * k], e.lowest[2 * k + 1], true);
  e.highest[k] = Pick(c.values, e.highest[2 * k], e.highest[2 * k + 1], false);
}

void MetricTable::BuildExtremes(const Column& c, Extremes& e) {
  e.leaves = 1;
  while (e.leaves < c.values.size()) e.leaves *= 2;
  e.lowest.assign(2 * e.leaves, Extremes::kNone);
  e.highest.assign(2 * e.leaves, Extremes::kNone);
  for (size_t i = 0; i < c.values.size(); ++i) {
    if (std::isnan(c.values[i])) continue;
    e.lowest[e.leaves + i] = e.highest[e.leaves + i] = static_cast<uint32_t>(i);
  }
  for (size_t k = e.leaves - 1; k >= 1; --k) Merge(c, e, k);
}

void MetricTable::Add(size_t m, size_t i, double delta) {
  Column& c = columns_[m];
  if (!c.aligned || std::isnan(c.values[i])) return;
  Extremes& e = extremes_[m];
  if (e.leaves == 0) BuildExtremes(c, e);
  c.values[i] += delta;
  for (size_t k = (e.leaves + i) / 2; k >= 1; k /= 2) Merge(c, e, k);
  c.argmin = e.lowest[1];
  c.argmax = e.highest[1];
  c.min = c.values[c.argmin];
  c.max = c.values[c.argmax];
}

MetricTable::Freshness MetricTable::FreshnessAt(size_t m,
                                                int64_t cutoff_ms) const {
  const Column& c = columns_[m];
  if (!c.aligned || c.present == 0 || c.newest_ms < cutoff_ms) {
    return Freshness::kNone;
  }
  return c.oldest_ms >= cutoff_ms ? Freshness::kAll : Freshness::kSome;
}

}  // namespace ms
