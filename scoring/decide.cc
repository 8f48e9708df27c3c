#include "scoring/decide.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

// The hot loops below are compiled for AVX-512, AVX2 and baseline x86-64,
// and the loader picks one (an ifunc). ThreadSanitizer builds keep the
// baseline only: an ifunc resolver runs before the sanitizer's runtime is
// ready and crashes it.
#if defined(__SANITIZE_THREAD__)
#define MS_SIMD_CLONES
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MS_SIMD_CLONES
#endif
#endif
#ifndef MS_SIMD_CLONES
#define MS_SIMD_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif

namespace ms {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The seeded tie-break key of a node: lower wins. splitmix64's finalizer.
uint64_t TieKey(uint64_t seed, uint64_t name_hash) {
  uint64_t z = seed ^ name_hash;
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// w_la * leastAllocated + w_ba * balancedAllocation for every node, from the
// NodeTable's columns, without branches so that it vectorises (hence int32
// truncation: every truncated quantity is in [0, 100]; kHuge rows are all
// zeros, and the caller does not call it for a pod outside the range).
//
// leastAllocated, per resource: floor(a / c) with a = (c - requested) * 100
// and c = allocatable, both integers; a is exact in doubles (the table
// holds (c - nz) * 100, the pod's part is subtracted). With a >= 0 the
// quotient r is at most 100 and y = a * (1 / c) is within 100 * 2^-52 <
// 2^-45 of it. When r is an integer, y + 2^-44 >= r; otherwise r <= floor(r)
// + 1 - 1/c and, for c <= 2^42, y + 2^-44 < floor(r) + 1. So trunc(y + 2^-44)
// is the exact floor. Larger or negative amounts carry NodeTable::kHuge and
// are recomputed by the caller; a negative a scores 0, as the max does.
//
// balancedAllocation, with reciprocals: a node whose result lies within
// 1e-9 of an integer, where the reciprocal's rounding could move the
// truncation, is flagged in `suspect` for an exact recomputation; returns
// how many were flagged.
MS_SIMD_CLONES size_t
DenseBuiltins(const NodeTable::Columns& c, size_t n, double pod_nz_cpu,
              double pod_nz_mem, double pod_cpu, double pod_mem, double w_la,
              double w_ba, double* __restrict out, double* __restrict suspect) {
  constexpr double kDelta = 0x1p-44;
  const double* __restrict free_cpu = c.free100_cpu;
  const double* __restrict free_mem = c.free100_memory;
  const double* __restrict share_cpu = c.la_share_cpu;
  const double* __restrict share_mem = c.la_share_memory;
  const double* __restrict both = c.both;
  const double* __restrict inv_cpu = c.inv_cpu;
  const double* __restrict inv_mem = c.inv_memory;
  const double* __restrict req_cpu = c.req_cpu;
  const double* __restrict req_mem = c.req_memory;
  const double pod_cpu100 = pod_nz_cpu * 100, pod_mem100 = pod_nz_mem * 100;
  int32_t suspects = 0;
  for (size_t i = 0; i < n; ++i) {
    const double ac = free_cpu[i] - pod_cpu100;
    const double am = free_mem[i] - pod_mem100;
    const double yc = ac * inv_cpu[i] + kDelta;
    const double ym = am * inv_mem[i] + kDelta;
    const double qc = static_cast<double>(
        static_cast<int32_t>(std::max(yc, 0.0)));
    const double qm = static_cast<double>(
        static_cast<int32_t>(std::max(ym, 0.0)));
    const double la = static_cast<double>(
        static_cast<int32_t>(share_cpu[i] * qc + share_mem[i] * qm));
    const double fc = std::min((req_cpu[i] + pod_cpu) * inv_cpu[i], 1.0);
    const double fm = std::min((req_mem[i] + pod_mem) * inv_mem[i], 1.0);
    const double x = (1 - std::abs((fc - fm) / 2)) * 100;
    const double t = static_cast<double>(static_cast<int32_t>(x));
    const double frac = x - t;
    const double two = both[i];
    const double sus = two * static_cast<double>((frac <= 1e-9) |
                                                 (frac >= 1 - 1e-9));
    const double ba = 100 + two * (t - 100);
    suspect[i] = sus;
    suspects += static_cast<int32_t>(sus);
    out[i] = w_la * la + w_ba * ba;
  }
  return static_cast<size_t>(suspects);
}

using MetricPlan = Workspace::MetricPlan;

// Explicit 4-wide vectors for the reductions GCC does not vectorise by
// itself (a NaN-aware min or max). Locals only: never passed by value, so
// the default clone's ABI is not concerned.
typedef double V4d __attribute__((vector_size(32)));
typedef int64_t V4i __attribute__((vector_size(32)));
typedef double V8d __attribute__((vector_size(64)));

// The usable values of one metric over the feasible nodes: count, min, max.
// `values` is NaN where a node has no usable value.
MS_SIMD_CLONES ColumnStats MaskedStats(
    const double* __restrict values, const int64_t* __restrict feasible,
    size_t n) {
  // Two chains each, so the loop is not bound by the latency of one
  // compare-and-select per vector.
  const V4d nan = {kNaN, kNaN, kNaN, kNaN};
  V4d mn0 = {kInf, kInf, kInf, kInf}, mn1 = mn0;
  V4d mx0 = -mn0, mx1 = mx0;
  V4i used = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    V4d x0, x1;
    V4i f0, f1;
    __builtin_memcpy(&x0, values + i, sizeof x0);
    __builtin_memcpy(&x1, values + i + 4, sizeof x1);
    __builtin_memcpy(&f0, feasible + i, sizeof f0);
    __builtin_memcpy(&f1, feasible + i + 4, sizeof f1);
    x0 = f0 ? x0 : nan;
    x1 = f1 ? x1 : nan;
    mn0 = x0 < mn0 ? x0 : mn0;  // NaN never replaces: minpd
    mn1 = x1 < mn1 ? x1 : mn1;
    mx0 = x0 > mx0 ? x0 : mx0;
    mx1 = x1 > mx1 ? x1 : mx1;
    used -= (x0 == x0) + (x1 == x1);
  }
  const V4d mn = mn0 < mn1 ? mn0 : mn1;
  const V4d mx = mx0 > mx1 ? mx0 : mx1;
  double lo = std::min(std::min(mn[0], mn[1]), std::min(mn[2], mn[3]));
  double hi = std::max(std::max(mx[0], mx[1]), std::max(mx[2], mx[3]));
  int64_t count = used[0] + used[1] + used[2] + used[3];
  for (; i < n; ++i) {
    const double x = values[i];
    if (feasible[i] == 0 || x != x) continue;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    ++count;
  }
  return ColumnStats{.usable = static_cast<int>(count), .min = lo, .max = hi};
}

// The fit filter for the common pod, over all nodes: feasible[i] = -1 when
// node i passes, 0 otherwise. Returns how many pass.
MS_SIMD_CLONES size_t FastFilter(
    const NodeTable::FilterColumns& c, size_t n, int64_t block,
    int64_t need_cpu, int64_t need_mem, int64_t need_eph,
    int64_t* __restrict feasible) {
  const int64_t* __restrict gate = c.gate;
  const int64_t* __restrict cpu = c.free_cpu;
  const int64_t* __restrict mem = c.free_memory;
  const int64_t* __restrict eph = c.free_ephemeral;
  int64_t count = 0;
  if (need_eph == std::numeric_limits<int64_t>::min()) {  // the usual pod
    for (size_t i = 0; i < n; ++i) {
      const int64_t ok = static_cast<int64_t>((gate[i] & block) == 0) &
                         static_cast<int64_t>(need_cpu <= cpu[i]) &
                         static_cast<int64_t>(need_mem <= mem[i]);
      feasible[i] = -ok;
      count += ok;
    }
    return static_cast<size_t>(count);
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t ok = static_cast<int64_t>((gate[i] & block) == 0) &
                       static_cast<int64_t>(need_cpu <= cpu[i]) &
                       static_cast<int64_t>(need_mem <= mem[i]) &
                       static_cast<int64_t>(need_eph <= eph[i]);
    feasible[i] = -ok;
    count += ok;
  }
  return static_cast<size_t>(count);
}

// The stats of a metric over the feasible nodes. For a fresh prepared
// column whose smallest and largest values sit on feasible nodes they are
// the column's own, and only its missing nodes (when few) are counted;
// otherwise one masked pass.
ColumnStats Stats(const MetricPlan& p, const int64_t* feasible, size_t n,
                  size_t count) {
  const MetricTable::Column* c = p.prepared;
  if (c != nullptr && c->present > 0 && feasible[c->argmin] != 0 &&
      feasible[c->argmax] != 0 && c->missing.size() <= n / 8 + 8) {
    size_t unusable = 0;
    for (uint32_t i : c->missing) unusable += feasible[i] != 0;
    return ColumnStats{.usable = static_cast<int>(count - unusable),
                       .min = c->min,
                       .max = c->max};
  }
  return MaskedStats(p.values, feasible, n);
}

// A copy of a column with only the values sampled at or after `cutoff`.
void CleanColumn(const MetricTable::Column& col, int64_t cutoff, size_t n,
                 std::vector<double>& out) {
  if (out.size() < n) out.resize(n);
  const double* __restrict v = col.values.data();
  const int64_t* __restrict t = col.time_ms.data();
  double* __restrict o = out.data();
  for (size_t i = 0; i < n; ++i) o[i] = t[i] >= cutoff ? v[i] : kNaN;
}

// Resolves the normalisation of metric `term` for this decision, as the
// reference NormalizeValue (score.h) computes it.
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
      p.kind = 0;
      p.origin = lower ? hi : lo;
      p.k = hi > lo ? (lower ? -kMaxNodeScore : kMaxNodeScore) / (hi - lo)
                    : 0.0;
      p.base = hi > lo ? 0.0 : kMaxNodeScore;  // all equal: 100
      break;
    }
    case NormalizationType::kRatio:
      if (lower) {
        p.kind = 1;
        p.best = std::max(st.min, 0.0) * kMaxNodeScore;
      } else {
        const double best = std::max(st.max, 0.0);
        p.kind = 2;
        p.k = best == 0 ? 0.0 : kMaxNodeScore / best;
        p.base = best == 0 ? kMaxNodeScore : 0.0;
      }
      break;
  }
}

// std::clamp(y, 0, 100) and std::max(0, y), as selects on values so that
// the loops using them vectorise.
inline double Clamp100(double y) {
  return y < 0.0 ? 0.0 : (kMaxNodeScore < y ? kMaxNodeScore : y);
}
inline double AtLeast0(double y) { return 0.0 < y ? y : 0.0; }

// The score of value `v` under plan `p` (NaN: skipped), in the arithmetic
// of the reference NormalizeValue. The block loops and NodeTerms both use
// it, so the winner's terms match its total exactly.
template <int kKind, bool kComplete = false>
__attribute__((always_inline)) inline double PlanScore(
    double origin, double k, double base, double best, double miss,
    double v) {
  double s;
  if constexpr (kKind == 0) {
    s = Clamp100((v - origin) * k + base);
  } else if constexpr (kKind == 1) {
    const double x = v < 0.0 ? 0.0 : v;  // std::max(v, 0.0)
    const double q = best / x;
    s = x == 0 ? kMaxNodeScore : (kMaxNodeScore < q ? kMaxNodeScore : q);
  } else {
    const double x = v < 0.0 ? 0.0 : v;
    const double y = x * k + base;
    s = kMaxNodeScore < y ? kMaxNodeScore : y;
  }
  if constexpr (kComplete) return s;  // v is never NaN
  return v == v ? s : miss;
}

double PlanScore(const MetricPlan& p, double v) {
  switch (p.kind) {
    case 0:
      return PlanScore<0>(p.origin, p.k, p.base, p.best, p.miss, v);
    case 1:
      return PlanScore<1>(p.origin, p.k, p.base, p.best, p.miss, v);
    default:
      return PlanScore<2>(p.origin, p.k, p.base, p.best, p.miss, v);
  }
}

// Adds w * score to t (and w to wsum where the term counts) over a block.
// kAcc 0: uniform weights; 1: per-node weights, this term always counts;
// 2: per-node weights, the term is skipped where the score is NaN.
// kComplete: no value is NaN.
template <int kKind, int kAcc, bool kComplete>
__attribute__((always_inline)) inline void AddMetric(
    const MetricPlan& p, const double* __restrict v, size_t len,
    double* __restrict t, double* __restrict wsum) {
  const double origin = p.origin, k = p.k, base = p.base, best = p.best,
               miss = p.miss, w = p.weight;
  for (size_t j = 0; j < len; ++j) {
    const double s =
        PlanScore<kKind, kComplete>(origin, k, base, best, miss, v[j]);
    if constexpr (kAcc == 0) {
      t[j] += w * s;
    } else if constexpr (kAcc == 1) {
      t[j] += w * s;
      wsum[j] += w;
    } else {
      const bool ok = s == s;
      t[j] += ok ? w * s : 0.0;
      wsum[j] += ok ? w : 0.0;
    }
  }
}

template <int kKind>
__attribute__((always_inline)) inline void AddMetric(
    const MetricPlan& p, int acc, const double* __restrict v, size_t len,
    double* __restrict t, double* __restrict wsum) {
  if (p.complete) {  // then p.per_node is false: acc is 0 or 1
    return acc == 0 ? AddMetric<kKind, 0, true>(p, v, len, t, wsum)
                    : AddMetric<kKind, 1, true>(p, v, len, t, wsum);
  }
  switch (acc) {
    case 0:
      return AddMetric<kKind, 0, false>(p, v, len, t, wsum);
    case 1:
      return AddMetric<kKind, 1, false>(p, v, len, t, wsum);
    default:
      return AddMetric<kKind, 2, false>(p, v, len, t, wsum);
  }
}

// Two complete terms with uniform weights in one pass over t: the same
// additions in the same order as two AddMetric passes, half the traffic.
template <int kKind1, int kKind2>
__attribute__((always_inline)) inline void AddMetricPair(
    const MetricPlan& p1, const MetricPlan& p2, const double* __restrict v1,
    const double* __restrict v2, size_t len, double* __restrict t) {
  const double o1 = p1.origin, k1 = p1.k, b1 = p1.base, best1 = p1.best,
               w1 = p1.weight;
  const double o2 = p2.origin, k2 = p2.k, b2 = p2.base, best2 = p2.best,
               w2 = p2.weight;
  for (size_t j = 0; j < len; ++j) {
    const double s1 = PlanScore<kKind1, true>(o1, k1, b1, best1, 0.0, v1[j]);
    const double s2 = PlanScore<kKind2, true>(o2, k2, b2, best2, 0.0, v2[j]);
    t[j] = (t[j] + w1 * s1) + w2 * s2;
  }
}

template <int kKind1>
__attribute__((always_inline)) inline void AddMetricPair(
    const MetricPlan& p1, const MetricPlan& p2, const double* __restrict v1,
    const double* __restrict v2, size_t len, double* __restrict t) {
  switch (p2.kind) {
    case 0:
      return AddMetricPair<kKind1, 0>(p1, p2, v1, v2, len, t);
    case 1:
      return AddMetricPair<kKind1, 1>(p1, p2, v1, v2, len, t);
    default:
      return AddMetricPair<kKind1, 2>(p1, p2, v1, v2, len, t);
  }
}

// What combines a node's terms into its score, for one decision.
struct Combine {
  const MetricPlan* plans;  // the metric terms that score
  size_t num_plans;
  const double* builtin;      // per block: weighted built-ins, or null
  const int32_t* placements;  // per node, or null
  const int64_t* feasible;    // per node: -1 feasible, 0 not
  double w_rp;
  double penalty;
  double inv_weight;      // 1 / the sum of weights, when uniform
  double builtin_weight;  // sum of the built-in weights
  bool per_node_weights;
};

// Scores nodes [b, b + len): the metric terms into t (and wsum), then the
// built-ins and recentPlacements, the weighted mean, clamped; -1 for an
// infeasible node. The order of the additions is fixed, so a node's score
// does not depend on its block. Returns the highest score in the block.
MS_SIMD_CLONES double ScoreBlock(
    const Combine& c, size_t b, size_t len, double* __restrict t,
    double* __restrict wsum, double* __restrict out) {
  std::fill(t, t + len, 0.0);
  if (c.per_node_weights) std::fill(wsum, wsum + len, 0.0);
  for (size_t m = 0; m < c.num_plans; ++m) {
    const MetricPlan& p = c.plans[m];
    if (!c.per_node_weights && p.complete && m + 1 < c.num_plans &&
        c.plans[m + 1].complete) {
      const MetricPlan& q = c.plans[++m];
      const double* v1 = p.values + b;
      const double* v2 = q.values + b;
      switch (p.kind) {
        case 0:
          AddMetricPair<0>(p, q, v1, v2, len, t);
          break;
        case 1:
          AddMetricPair<1>(p, q, v1, v2, len, t);
          break;
        default:
          AddMetricPair<2>(p, q, v1, v2, len, t);
          break;
      }
      continue;
    }
    const int acc = !c.per_node_weights ? 0 : p.per_node ? 2 : 1;
    const double* v = p.values + b;
    switch (p.kind) {
      case 0:
        AddMetric<0>(p, acc, v, len, t, wsum);
        break;
      case 1:
        AddMetric<1>(p, acc, v, len, t, wsum);
        break;
      default:
        AddMetric<2>(p, acc, v, len, t, wsum);
        break;
    }
  }
  const double* __restrict builtin = c.builtin;
  const int32_t* __restrict placements =
      c.placements != nullptr ? c.placements + b : nullptr;
  const int64_t* __restrict feasible = c.feasible + b;
  const double w_rp = c.w_rp, penalty = c.penalty;
  if (builtin != nullptr) {
    for (size_t j = 0; j < len; ++j) t[j] += builtin[j];
  }
  if (w_rp > 0) {
    if (placements != nullptr) {
      for (size_t j = 0; j < len; ++j) {
        const double p = placements[j];
        t[j] += w_rp * AtLeast0(kMaxNodeScore - penalty * p);
      }
    } else {
      const double rp = w_rp * AtLeast0(kMaxNodeScore - penalty * 0.0);
      for (size_t j = 0; j < len; ++j) t[j] += rp;
    }
  }
  if (c.per_node_weights) {
    const double bw = c.builtin_weight;
    for (size_t j = 0; j < len; ++j) {
      const double w = wsum[j] + bw;
      const double score = Clamp100(w > 0 ? t[j] / w : 0.0);
      out[b + j] = feasible[j] != 0 ? score : -1.0;
    }
  } else {
    const double inv = c.inv_weight;
    for (size_t j = 0; j < len; ++j) {
      const double score = Clamp100(t[j] * inv);
      out[b + j] = feasible[j] != 0 ? score : -1.0;
    }
  }
  // The block's maximum, over eight lanes (no score is NaN).
  const double* __restrict o = out + b;
  V8d mx = {-kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf};
  size_t j = 0;
  for (; j + 8 <= len; j += 8) {
    V8d x;
    __builtin_memcpy(&x, o + j, sizeof x);
    mx = x > mx ? x : mx;
  }
  double best = -kInf;
  for (int l = 0; l < 8; ++l) best = std::max(best, mx[l]);
  for (; j < len; ++j) best = std::max(best, o[j]);
  return best;
}

NodeTable::Columns Offset(const NodeTable::Columns& c, size_t b) {
  return {c.alloc_cpu + b,      c.alloc_memory + b,   c.nz_cpu + b,
          c.nz_memory + b,      c.req_cpu + b,        c.req_memory + b,
          c.inv_cpu + b,        c.inv_memory + b,     c.free100_cpu + b,
          c.free100_memory + b, c.la_share_cpu + b,   c.la_share_memory + b,
          c.both + b};
}

// Everything the per-node term results need, for the winner and for the
// explanation (not the hot path).
struct TermContext {
  const DecideInput* in;
  const ScoringConfig* cfg;
  const std::vector<MetricPlan>* plans;
  ScoringMode mode;
  Resources pod_requests;
  Resources pod_non_zero;
  bool best_effort;
};

double RawValue(const DecideInput& in, size_t m, size_t i) {
  if (in.metrics == nullptr || m >= in.metrics->size()) return kNaN;
  const MetricColumn& col = (*in.metrics)[m];
  if (i >= col.values.size()) return kNaN;
  return col.values[i];
}

void NodeTerms(const TermContext& c, size_t i, std::vector<TermResult>* out) {
  const ScoringConfig& cfg = *c.cfg;
  out->clear();
  for (size_t m = 0; m < cfg.metrics.size(); ++m) {
    const MetricTerm& t = cfg.metrics[m];
    const MetricPlan& p = (*c.plans)[m];
    TermResult r{.name = t.name, .raw = RawValue(*c.in, m, i)};
    if (c.mode == ScoringMode::kFallback || !p.on) {
      r.state = TermState::kUnused;
    } else {
      double s = PlanScore(p, p.values[i]);
      if (std::isnan(s)) {
        r.state = TermState::kSkipped;
      } else {
        r.score = s;
        r.weight = t.weight;
        // A missing value was replaced by the policy's score. Judged from
        // the raw column, independently of the prepared one.
        double raw = r.raw;
        const MetricColumn& col = (*c.in->metrics)[m];
        int64_t ts = col.time_ms[i];
        bool usable = std::isfinite(raw) && ts != 0 &&
                      ts >= c.in->now_ms - t.max_staleness_ms;
        r.state = usable ? TermState::kScored : TermState::kMissing;
      }
    }
    out->push_back(r);
  }
  const NodeInfo& info = (*c.in->nodes)[i];
  const Resources& alloc = info.node.allocatable;
  {
    TermResult r{.name = kTermLeastAllocated};
    r.raw = static_cast<double>(LeastAllocatedScore(
        alloc.milli_cpu,
        SaturatingAdd(info.non_zero_requested.milli_cpu,
                      c.pod_non_zero.milli_cpu),
        alloc.memory,
        SaturatingAdd(info.non_zero_requested.memory, c.pod_non_zero.memory)));
    r.score = r.raw;
    r.weight = cfg.least_allocated_weight;
    if (r.weight <= 0) r.state = TermState::kUnused;
    out->push_back(r);
  }
  {
    TermResult r{.name = kTermBalancedAllocation};
    r.raw = static_cast<double>(BalancedAllocationScore(
        alloc.milli_cpu,
        SaturatingAdd(info.requested.milli_cpu, c.pod_requests.milli_cpu),
        alloc.memory,
        SaturatingAdd(info.requested.memory, c.pod_requests.memory)));
    r.score = r.raw;
    r.weight = cfg.balanced_allocation_weight;
    if (r.weight <= 0 || c.best_effort) {
      r.state = TermState::kUnused;
      r.weight = 0;
    }
    out->push_back(r);
  }
  {
    TermResult r{.name = kTermRecentPlacements};
    int32_t placements = 0;
    if (c.in->recent_placements != nullptr &&
        i < c.in->recent_placements->size()) {
      placements = (*c.in->recent_placements)[i];
    }
    r.raw = placements;
    r.score = RecentPlacementsScore(placements, cfg.penalty_per_placement);
    r.weight = cfg.recent_placements_weight;
    if (r.weight <= 0) r.state = TermState::kUnused;
    out->push_back(r);
  }
  for (TermResult& r : *out) {
    if (r.state == TermState::kUnused || r.state == TermState::kSkipped) {
      r.weight = 0;
    }
  }
}

template <typename T>
void Grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

// Nodes per block of the scoring pass: the block's scratch rows stay in the
// L1 cache between the metric, built-in and combining loops.
constexpr size_t kBlock = 256;

}  // namespace

ScoringConfig MakeScoringConfig(const Config& config) {
  ScoringConfig out;
  for (const MetricConfig& m : config.metrics) {
    out.metrics.push_back(MetricTerm{
        .name = m.name,
        .weight = m.weight,
        .direction = m.direction,
        .normalization = m.normalization,
        .missing = m.missing,
        .max_staleness_ms = absl::ToInt64Milliseconds(m.max_staleness),
    });
  }
  out.least_allocated_weight = config.builtins.least_allocated;
  out.balanced_allocation_weight = config.builtins.balanced_allocation;
  out.recent_placements_weight = config.builtins.recent_placements;
  out.penalty_per_placement = config.herd.penalty_per_placement;
  return out;
}

Decision Decide(const DecideInput& in, const ScoringConfig& cfg,
                Workspace& ws) {
  Decision d;
  const std::vector<NodeInfo>& nodes = *in.nodes;
  const Pod& pod = *in.pod;
  const size_t n = nodes.size();
  d.num_nodes = static_cast<int>(n);

  // 1. Constraints this scheduler cannot honour: never place the pod.
  if (std::string why = UnsupportedConstraints(pod); !why.empty()) {
    d.filter_summary = absl::StrCat("0/", n, " nodes are available: ", why, ".");
    if (in.explain) {
      Explanation e;
      e.summary = d.filter_summary;
      for (const NodeInfo& info : nodes) {
        e.nodes.push_back({.node = info.node.name, .filter_reason = why});
      }
      d.explanation = std::move(e);
    }
    return d;
  }

  const NodeTable* table = in.table;
  if (table == nullptr || table->size() != n) {
    ws.own_table.Build(nodes);
    table = &ws.own_table;
  }

  // 2. Filter. The common pod is settled from the NodeTable's columns in
  // one vectorised pass. A node that pass rejects is infeasible for certain
  // unless only its taints could be at fault (and the pod has tolerations):
  // those, and every node for a pod the pass cannot judge (node name,
  // affinity, host ports, extended resources), go through the exact
  // CheckNode. Failure reasons are counted only when no node fits.
  const PodFilter pf = MakePodFilter(pod);
  const bool slow_pod = !pod.node_name.empty() || pf.has_node_affinity ||
                        !pf.host_ports.empty() || !pf.requests.scalar.empty();
  const int64_t block =
      NodeTable::kNotReady | NodeTable::kHardTaints | NodeTable::kNoRoom |
      (pf.tolerates_unschedulable ? int64_t{0}
                                  : int64_t{NodeTable::kUnschedulable});
  constexpr int64_t kAny = std::numeric_limits<int64_t>::min();
  const int64_t need_cpu = pf.requests.milli_cpu > 0 ? pf.requests.milli_cpu : kAny;
  const int64_t need_mem = pf.requests.memory > 0 ? pf.requests.memory : kAny;
  const int64_t need_eph =
      pf.requests.ephemeral_storage > 0 ? pf.requests.ephemeral_storage : kAny;

  Grow(ws.feasible, n);
  int64_t* feasible = ws.feasible.data();
  size_t count = FastFilter(table->filter_columns(), n, block, need_cpu,
                            need_mem, need_eph, feasible);
  if (slow_pod) {
    count = 0;
    for (size_t i = 0; i < n; ++i) {
      if (feasible[i] == 0) continue;
      feasible[i] = CheckNode(pf, nodes[i]).feasible() ? -1 : 0;
      count += feasible[i] != 0;
    }
  }
  if (!pod.tolerations.empty()) {
    for (uint32_t i : table->tainted()) {
      if (feasible[i] == 0 && CheckNode(pf, nodes[i]).feasible()) {
        feasible[i] = -1;
        ++count;
      }
    }
  }

  // 3. Metric terms: the usable values of each metric, their stats over F,
  // the mode.
  const size_t num_metrics = cfg.metrics.size();
  ws.plans.assign(num_metrics, {});
  const MetricTable* prepared = nullptr;
  auto stats_all = [&]() {
    bool any = false;
    for (MetricPlan& p : ws.plans) {
      if (p.values == nullptr) continue;
      p.stats = Stats(p, feasible, n, count);
      p.on = p.stats.usable > 0;
      any |= p.on;
    }
    return any;
  };
  auto gather_all = [&]() {
    if (in.metrics == nullptr) return false;
    prepared = in.metric_table;
    if (prepared == nullptr || prepared->num_nodes() != n ||
        prepared->num_metrics() != in.metrics->size()) {
      ws.own_metrics.Build(*in.metrics, n);
      prepared = &ws.own_metrics;
    }
    if (ws.fresh.size() < num_metrics) ws.fresh.resize(num_metrics);
    for (size_t m = 0; m < num_metrics && m < prepared->num_metrics(); ++m) {
      const int64_t cutoff = in.now_ms - cfg.metrics[m].max_staleness_ms;
      const MetricTable::Column& col = prepared->column(m);
      switch (prepared->FreshnessAt(m, cutoff)) {
        case MetricTable::Freshness::kNone:
          break;
        case MetricTable::Freshness::kAll:
          ws.plans[m].values = col.values.data();
          ws.plans[m].prepared = &col;
          ws.plans[m].complete = col.present == n;
          break;
        case MetricTable::Freshness::kSome:
          CleanColumn(col, cutoff, n, ws.fresh[m]);
          ws.plans[m].values = ws.fresh[m].data();
          break;
      }
    }
    return stats_all();
  };

  d.mode = ScoringMode::kMetrics;
  if (in.force_fallback) {
    d.mode = ScoringMode::kFallback;
    d.fallback_reason = FallbackReason::kForced;
  } else if (num_metrics == 0) {
    d.mode = ScoringMode::kFallback;
    d.fallback_reason = FallbackReason::kNoMetrics;
  } else if (count > 0 && !gather_all()) {
    d.mode = ScoringMode::kFallback;
    d.fallback_reason = FallbackReason::kNoUsableData;
  }

  // `exclude`: nodes without a usable value of a usable exclude-metric leave
  // F; the stats are then recomputed over the nodes that remain.
  bool excluded_any = false;
  if (d.mode == ScoringMode::kMetrics && count > 0) {
    bool need = false;
    for (size_t m = 0; m < num_metrics; ++m) {
      need |= cfg.metrics[m].missing == MissingPolicy::kExclude &&
              ws.plans[m].on &&
              ws.plans[m].stats.usable < static_cast<int>(count);
    }
    if (need) {
      ws.excluded.assign(n, 0);
      for (size_t i = 0; i < n; ++i) {
        if (feasible[i] == 0) continue;
        for (size_t m = 0; m < num_metrics; ++m) {
          if (cfg.metrics[m].missing == MissingPolicy::kExclude &&
              ws.plans[m].on && std::isnan(ws.plans[m].values[i])) {
            ws.excluded[i] = static_cast<int32_t>(m) + 1;
            feasible[i] = 0;
            --count;
            break;
          }
        }
      }
      excluded_any = true;
      if (count > 0) stats_all();
    }
  }
  d.num_feasible = static_cast<int>(count);

  if (count == 0) {
    // The reasons, counted only now that they are needed.
    ws.summary.Reset(&pf, &cfg.metrics);
    for (size_t i = 0; i < n; ++i) {
      if (excluded_any && ws.excluded[i] > 0) {
        NodeCheck c;
        c.failures = kFailMissingMetric;
        c.metric = ws.excluded[i] - 1;
        ws.summary.Add(c);
        continue;
      }
      NodeCheck c = CheckNode(pf, nodes[i]);
      if (!c.feasible()) ws.summary.Add(c);
    }
    d.filter_summary = ws.summary.Message(static_cast<int>(n));
  } else {
    // 4. Scores, block by block: the metric terms, the built-ins, the
    // weighted mean; then the pick.
    ws.active.clear();
    double weight_sum = 0;
    bool per_node_weights = false;
    if (d.mode == ScoringMode::kMetrics) {
      for (size_t m = 0; m < num_metrics; ++m) {
        MetricPlan& p = ws.plans[m];
        if (!p.on) continue;
        PlanMetric(cfg.metrics[m], count, p);
        per_node_weights |= p.per_node;
        if (!p.per_node) weight_sum += p.weight;
        ws.active.push_back(p);
      }
    }

    const Resources nz = PodNonZeroRequests(pod);
    const double pod_nz_cpu = static_cast<double>(nz.milli_cpu);
    const double pod_nz_mem = static_cast<double>(nz.memory);
    const double pod_cpu = static_cast<double>(pf.requests.milli_cpu);
    const double pod_mem = static_cast<double>(pf.requests.memory);
    const bool best_effort =
        pf.requests.milli_cpu == 0 && pf.requests.memory == 0;
    const double w_la = std::max(cfg.least_allocated_weight, 0.0);
    const double w_ba =
        best_effort ? 0.0 : std::max(cfg.balanced_allocation_weight, 0.0);
    const double w_rp = std::max(cfg.recent_placements_weight, 0.0);
    const double builtin_weight = w_la + w_ba + w_rp;
    const bool builtins = w_la > 0 || w_ba > 0;
    const double uniform_weight = weight_sum + builtin_weight;

    Grow(ws.scores, n);
    Grow(ws.totals, kBlock);
    Grow(ws.weight_sums, kBlock);
    Grow(ws.builtin, kBlock);
    Grow(ws.suspect, kBlock);
    Grow(ws.block_best, (n + kBlock - 1) / kBlock);
    double* scores = ws.scores.data();
    const Combine combine{
        .plans = ws.active.data(),
        .num_plans = ws.active.size(),
        .builtin = builtins ? ws.builtin.data() : nullptr,
        .placements = in.recent_placements != nullptr &&
                              in.recent_placements->size() == n
                          ? in.recent_placements->data()
                          : nullptr,
        .feasible = feasible,
        .w_rp = w_rp,
        .penalty = cfg.penalty_per_placement,
        .inv_weight = uniform_weight > 0 ? 1 / uniform_weight : 0.0,
        .builtin_weight = builtin_weight,
        .per_node_weights = per_node_weights,
    };
    const NodeTable::Columns columns = table->score_columns();
    const NodeTable::FilterRow* rows = table->filter_rows();
    // A pod amount outside the range DenseBuiltins is proven for: every
    // node's built-ins in integers.
    constexpr int64_t kExact = int64_t{1} << 42;
    const bool huge_pod = nz.milli_cpu < 0 || nz.milli_cpu > kExact ||
                          nz.memory < 0 || nz.memory > kExact ||
                          pf.requests.milli_cpu < 0 ||
                          pf.requests.milli_cpu > kExact ||
                          pf.requests.memory < 0 ||
                          pf.requests.memory > kExact;
    const bool any_huge = table->num_huge() > 0 || huge_pod;
    for (size_t b = 0; b < n; b += kBlock) {
      const size_t len = std::min(kBlock, n - b);
      if (builtins) {
        // Built-ins for the whole block in one vectorised pass, then the
        // rare nodes it cannot settle exactly.
        double* builtin = ws.builtin.data();
        const double* suspect = ws.suspect.data();
        size_t suspects = 0;
        if (!huge_pod) {  // else every node below
          suspects = DenseBuiltins(Offset(columns, b), len, pod_nz_cpu,
                                   pod_nz_mem, pod_cpu, pod_mem, w_la, w_ba,
                                   builtin, ws.suspect.data());
        }
        if (suspects > 0 || any_huge) {
          for (size_t j = 0; j < len; ++j) {
            const size_t i = b + j;
            if (suspect[j] == 0 && !(rows[i].flags & NodeTable::kHuge) &&
                !huge_pod) {
              continue;
            }
            const NodeInfo& info = nodes[i];
            const Resources& a = info.node.allocatable;
            const Resources& nzr = info.non_zero_requested;
            const Resources& req = info.requested;
            builtin[j] =
                w_la * static_cast<double>(LeastAllocatedScore(
                           a.milli_cpu,
                           SaturatingAdd(nzr.milli_cpu, nz.milli_cpu),
                           a.memory, SaturatingAdd(nzr.memory, nz.memory))) +
                w_ba * static_cast<double>(BalancedAllocationScore(
                           a.milli_cpu,
                           SaturatingAdd(req.milli_cpu, pf.requests.milli_cpu),
                           a.memory,
                           SaturatingAdd(req.memory, pf.requests.memory)));
          }
        }
      }
      ws.block_best[b / kBlock] = ScoreBlock(
          combine, b, len, ws.totals.data(), ws.weight_sums.data(), scores);
    }

    // The pick: the maximum, then the seeded tie-break among the nodes that
    // reach it, looked for only in the blocks that reach it.
    const size_t num_blocks = (n + kBlock - 1) / kBlock;
    const double best = *std::max_element(ws.block_best.begin(),
                                          ws.block_best.begin() + num_blocks);
    const uint64_t* hashes = table->name_hashes();
    size_t best_i = 0;
    uint64_t best_key = 0;
    bool best_key_set = false;
    for (size_t i = 0; i < n; ++i) {
      if (ws.block_best[i / kBlock] != best) {
        i = (i / kBlock + 1) * kBlock - 1;  // the next block
        continue;
      }
      if (scores[i] != best) continue;
      uint64_t key = TieKey(in.seed, hashes[i]);
      if (!best_key_set || key < best_key ||
          (key == best_key && nodes[i].node.name < nodes[best_i].node.name)) {
        best_i = i;
        best_key = key;
        best_key_set = true;
      }
    }
    d.node_index = static_cast<int>(best_i);
    d.score = best;

    TermContext tc{.in = &in,
                   .cfg = &cfg,
                   .plans = &ws.plans,
                   .mode = d.mode,
                   .pod_requests = pf.requests,
                   .pod_non_zero = nz,
                   .best_effort = best_effort};
    NodeTerms(tc, best_i, &d.terms);

    if (in.explain) {
      Explanation e;
      e.mode = d.mode;
      e.fallback_reason = d.fallback_reason;
      for (size_t i = 0; i < n; ++i) {
        NodeExplanation ne{.node = nodes[i].node.name};
        if (feasible[i] != 0) {
          ne.feasible = true;
          ne.total = scores[i];
          NodeTerms(tc, i, &ne.terms);
        }
        e.nodes.push_back(std::move(ne));
      }
      e.best = d.node_index;
      d.explanation = std::move(e);
    }
  }

  if (in.explain && !d.explanation.has_value()) {
    Explanation e;
    e.mode = d.mode;
    e.fallback_reason = d.fallback_reason;
    for (size_t i = 0; i < n; ++i) {
      e.nodes.push_back({.node = nodes[i].node.name});
    }
    d.explanation = std::move(e);
  }
  if (in.explain) {
    Explanation& e = *d.explanation;
    e.summary = d.filter_summary;
    for (size_t i = 0; i < n; ++i) {
      NodeExplanation& ne = e.nodes[i];
      if (ne.feasible) continue;
      NodeCheck c = CheckNode(pf, nodes[i]);
      if (c.feasible() && excluded_any && ws.excluded[i] > 0) {
        c.failures = kFailMissingMetric;
        c.metric = ws.excluded[i] - 1;
      }
      ne.filter_reason =
          absl::StrJoin(FailureReasons(pf, c, &cfg.metrics), ", ");
    }
  }
  return d;
}

}  // namespace ms
