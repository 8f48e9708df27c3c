#include "scoring/internal/kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "scoring/plugins/recent_placements.h"

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

namespace ms::internal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// How a metric term adds to the block's totals.
enum class Accumulate {
  kUniform,          // every node has the same weights: totals only
  kPerNode,          // per-node weights; this term counts on every node
  kPerNodeSkippable, // per-node weights; skipped where its score is NaN
};

// std::clamp(y, 0, 100), as selects on values so that the loops using it
// vectorise.
inline double Clamp100(double y) {
  return y < 0.0 ? 0.0 : (kMaxNodeScore < y ? kMaxNodeScore : y);
}

// Explicit 4-wide vectors for the reductions GCC does not vectorise by
// itself (a NaN-aware min or max). Locals only: never passed by value, so
// the default clone's ABI is not concerned.
typedef double V4d __attribute__((vector_size(32)));
typedef int64_t V4i __attribute__((vector_size(32)));
typedef double V8d __attribute__((vector_size(64)));

}  // namespace

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
    const NodeTable::FitColumns& c, size_t n, int64_t block,
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

namespace {

// Adds w * score to t (and w to wsum where the term counts) over a block.
// kComplete: no value is NaN.
template <Normalizer kShape, Accumulate kAcc, bool kComplete>
__attribute__((always_inline)) inline void AddMetric(
    const MetricPlan& p, const double* __restrict v, size_t len,
    double* __restrict t, double* __restrict wsum) {
  const double origin = p.origin, k = p.k, base = p.base, best = p.best,
               rise = p.rise, fall = p.fall, miss = p.miss, w = p.weight;
  for (size_t j = 0; j < len; ++j) {
    const double s = PlanScore<kShape, kComplete>(origin, k, base, best, rise,
                                                  fall, miss, v[j]);
    if constexpr (kAcc == Accumulate::kUniform) {
      t[j] += w * s;
    } else if constexpr (kAcc == Accumulate::kPerNode) {
      t[j] += w * s;
      wsum[j] += w;
    } else {
      const bool ok = s == s;
      t[j] += ok ? w * s : 0.0;
      wsum[j] += ok ? w : 0.0;
    }
  }
}

template <Normalizer kShape>
__attribute__((always_inline)) inline void AddMetric(
    const MetricPlan& p, Accumulate acc, const double* __restrict v, size_t len,
    double* __restrict t, double* __restrict wsum) {
  constexpr Accumulate kUniform = Accumulate::kUniform;
  constexpr Accumulate kPerNode = Accumulate::kPerNode;
  constexpr Accumulate kSkippable = Accumulate::kPerNodeSkippable;
  if (p.complete) {  // then p.per_node is false: never kSkippable
    return acc == kUniform
               ? AddMetric<kShape, kUniform, true>(p, v, len, t, wsum)
               : AddMetric<kShape, kPerNode, true>(p, v, len, t, wsum);
  }
  switch (acc) {
    case kUniform:
      return AddMetric<kShape, kUniform, false>(p, v, len, t, wsum);
    case kPerNode:
      return AddMetric<kShape, kPerNode, false>(p, v, len, t, wsum);
    case kSkippable:
      return AddMetric<kShape, kSkippable, false>(p, v, len, t, wsum);
  }
}

// Two complete terms with uniform weights in one pass over t: the same
// additions in the same order as two AddMetric passes, half the traffic.
template <Normalizer kShape1, Normalizer kShape2>
__attribute__((always_inline)) inline void AddMetricPair(
    const MetricPlan& p1, const MetricPlan& p2, const double* __restrict v1,
    const double* __restrict v2, size_t len, double* __restrict t) {
  const double o1 = p1.origin, k1 = p1.k, b1 = p1.base, best1 = p1.best,
               rise1 = p1.rise, fall1 = p1.fall, w1 = p1.weight;
  const double o2 = p2.origin, k2 = p2.k, b2 = p2.base, best2 = p2.best,
               rise2 = p2.rise, fall2 = p2.fall, w2 = p2.weight;
  for (size_t j = 0; j < len; ++j) {
    const double s1 =
        PlanScore<kShape1, true>(o1, k1, b1, best1, rise1, fall1, 0.0, v1[j]);
    const double s2 =
        PlanScore<kShape2, true>(o2, k2, b2, best2, rise2, fall2, 0.0, v2[j]);
    t[j] = (t[j] + w1 * s1) + w2 * s2;
  }
}

template <Normalizer kShape1>
__attribute__((always_inline)) inline void AddMetricPair(
    const MetricPlan& p1, const MetricPlan& p2, const double* __restrict v1,
    const double* __restrict v2, size_t len, double* __restrict t) {
  switch (p2.normalizer) {
    case Normalizer::kLinear:
      return AddMetricPair<kShape1, Normalizer::kLinear>(p1, p2, v1, v2, len,
                                                         t);
    case Normalizer::kRatioLower:
      return AddMetricPair<kShape1, Normalizer::kRatioLower>(p1, p2, v1, v2,
                                                             len, t);
    case Normalizer::kRatioHigher:
      return AddMetricPair<kShape1, Normalizer::kRatioHigher>(p1, p2, v1, v2,
                                                              len, t);
    case Normalizer::kTarget:
      return AddMetricPair<kShape1, Normalizer::kTarget>(p1, p2, v1, v2, len,
                                                         t);
  }
}

// The loop of DenseBuiltins for one balancedAllocation rule: kChange for
// 1.36 on (the change in balance the pod makes), else the balance with the
// pod (balanced_allocation.h).
template <bool kChange>
__attribute__((always_inline)) inline size_t DenseBuiltinsFor(
    const NodeTable::ScoreColumns& c, size_t n, double pod_nz_cpu,
    double pod_nz_mem, double pod_cpu, double pod_mem, double w_la, double w_ba,
    double* __restrict out, double* __restrict suspect) {
  constexpr double kDelta = 0x1p-44;
  const double* __restrict free_cpu = c.free100_cpu;
  const double* __restrict free_mem = c.free100_memory;
  const double* __restrict inv_cpu = c.inv_cpu;
  const double* __restrict inv_mem = c.inv_memory;
  const double* __restrict req_cpu = c.req_cpu;
  const double* __restrict req_mem = c.req_memory;
  const double* __restrict balance = c.balance;
  const double pod_cpu100 = pod_nz_cpu * 100, pod_mem100 = pod_nz_mem * 100;
  int64_t suspects = 0;
  for (size_t i = 0; i < n; ++i) {
    const double ac = free_cpu[i] - pod_cpu100;
    const double am = free_mem[i] - pod_mem100;
    const double yc = ac * inv_cpu[i] + kDelta;
    const double ym = am * inv_mem[i] + kDelta;
    const double qc = std::trunc(std::max(yc, 0.0));
    const double qm = std::trunc(std::max(ym, 0.0));
    // A resource counts when its allocatable is > 0 (its reciprocal is
    // then > 0); leastAllocated averages those that count.
    const bool has_cpu = inv_cpu[i] > 0, has_mem = inv_mem[i] > 0;
    const double two = static_cast<double>(has_cpu & has_mem);
    const double share = 1.0 - 0.5 * two;
    const double share_cpu = has_cpu ? share : 0.0;
    const double share_mem = has_mem ? share : 0.0;
    const double la = std::trunc(share_cpu * qc + share_mem * qm);
    const double fc = std::min((req_cpu[i] + pod_cpu) * inv_cpu[i], 1.0);
    const double fm = std::min((req_mem[i] + pod_mem) * inv_mem[i], 1.0);
    const double x = (1 - std::abs((fc - fm) / 2)) * 100;
    // One truncation gives the score, trunc(v): v is the balance with the
    // pod, xs (x, or exactly 100 with fewer than two resources: x - 100 is
    // exact for x in [50, 100]), or from 1.36 on v = 50 + (xs + 50 -
    // without) / 2, as 50 + (50 + trunc(xs) - without) / 2 in integers is
    // trunc(v) for an integer without <= 100.
    const double xs = 100 + two * (x - 100);
    double v = xs;
    if constexpr (kChange) v = (xs + (150 - balance[i])) * 0.5;
    const double ba = std::trunc(v);
    const double frac = v - ba;
    const bool sus = has_cpu & has_mem & ((frac <= 1e-9) | (frac >= 1 - 1e-9));
    suspect[i] = sus ? 1.0 : 0.0;
    suspects += sus;
    out[i] = w_la * la + w_ba * ba;
  }
  return static_cast<size_t>(suspects);
}

}  // namespace

// w_la * leastAllocated + w_ba * balancedAllocation for every node, from the
// NodeTable's columns, without branches so that it vectorises (every
// truncated quantity is in [0, 100]; kHuge rows are zeros (and a balance
// of 100), and the caller does not call it for a pod outside the range).
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
// balancedAllocation: the balance with the pod, with reciprocals, then
// (1.36 on) with the balance without the pod, the table's `balance`
// column (exact already: it depends on the node alone). A node whose
// truncated value lies within 1e-9 of an integer, where the reciprocal's
// rounding could move the truncation, is flagged in `suspect` for an exact
// recomputation; returns how many were flagged.
MS_SIMD_CLONES size_t DenseBuiltins(const NodeTable::ScoreColumns& c, size_t n,
                                    double pod_nz_cpu, double pod_nz_mem,
                                    double pod_cpu, double pod_mem, double w_la,
                                    double w_ba, bool ba_change,
                                    double* __restrict out,
                                    double* __restrict suspect) {
  return ba_change
             ? DenseBuiltinsFor<true>(c, n, pod_nz_cpu, pod_nz_mem, pod_cpu,
                                      pod_mem, w_la, w_ba, out, suspect)
             : DenseBuiltinsFor<false>(c, n, pod_nz_cpu, pod_nz_mem, pod_cpu,
                                       pod_mem, w_la, w_ba, out, suspect);
}

MS_SIMD_CLONES void AddTermScores(const TermScores& scores, double weight,
                                  size_t b, size_t len, size_t* next,
                                  double* __restrict builtin,
                                  double* __restrict row) {
  const double w = weight;
  if (scores.dense != nullptr) {
    const double* __restrict score = scores.dense + b;
    for (size_t j = 0; j < len; ++j) builtin[j] += w * score[j];
    return;
  }
  const size_t end = b + len;
  const uint32_t* nodes = scores.nodes;
  size_t e = *next;
  if (e == scores.count || nodes[e] >= end) {  // the base on every node
    const double add = w * scores.base;
    for (size_t j = 0; j < len; ++j) builtin[j] += add;
    return;
  }
  const double base = scores.base;
  for (size_t j = 0; j < len; ++j) row[j] = base;
  for (; e < scores.count && nodes[e] < end; ++e) {
    row[nodes[e] - b] = scores.values[e];
  }
  *next = e;
  for (size_t j = 0; j < len; ++j) builtin[j] += w * row[j];
}

namespace {

// How recentPlacements adds to a block: not at all, the same on every node
// (no placements), or from each node's placements.
enum class RecentPlacementsMode { kNone, kUniform, kPerNode };

// The last pass over a block, fused: t[j] plus the built-ins and
// recentPlacements, the weighted mean clamped to [0, 100]; -1 for an
// infeasible node.
template <RecentPlacementsMode kRp, bool kPerNodeWeights>
__attribute__((always_inline)) inline void FinishBlock(
    const Combine& c, size_t b, size_t len, const double* __restrict t,
    const double* __restrict wsum, double* __restrict out) {
  const double* __restrict builtin = c.builtin;
  const int32_t* __restrict placements =
      kRp == RecentPlacementsMode::kPerNode ? c.placements + b : nullptr;
  const int64_t* __restrict feasible = c.feasible + b;
  const double w_rp = c.w_rp, penalty = c.penalty;
  const double rp_uniform = w_rp * RecentPlacementsScore(0.0, penalty);
  const double bw = c.builtin_weight, inv = c.inv_weight;
  double* __restrict o = out + b;
  for (size_t j = 0; j < len; ++j) {
    double x = t[j] + builtin[j];
    if constexpr (kRp == RecentPlacementsMode::kUniform) x += rp_uniform;
    if constexpr (kRp == RecentPlacementsMode::kPerNode) {
      const double p = placements[j];
      x += w_rp * RecentPlacementsScore(p, penalty);
    }
    double score;
    if constexpr (kPerNodeWeights) {
      const double w = wsum[j] + bw;
      score = Clamp100(w > 0 ? x / w : 0.0);
    } else {
      score = Clamp100(x * inv);
    }
    o[j] = feasible[j] != 0 ? score : -1.0;
  }
}

template <RecentPlacementsMode kRp>
__attribute__((always_inline)) inline void FinishBlock(const Combine& c,
                                                       size_t b, size_t len,
                                                       const double* t,
                                                       const double* wsum,
                                                       double* out) {
  if (c.per_node_weights) {
    FinishBlock<kRp, true>(c, b, len, t, wsum, out);
  } else {
    FinishBlock<kRp, false>(c, b, len, t, wsum, out);
  }
}

__attribute__((always_inline)) inline void FinishBlock(
    const Combine& c, RecentPlacementsMode rp, size_t b, size_t len,
    const double* t, const double* wsum, double* out) {
  switch (rp) {
    case RecentPlacementsMode::kNone:
      return FinishBlock<RecentPlacementsMode::kNone>(c, b, len, t, wsum, out);
    case RecentPlacementsMode::kUniform:
      return FinishBlock<RecentPlacementsMode::kUniform>(c, b, len, t, wsum,
                                                         out);
    case RecentPlacementsMode::kPerNode:
      return FinishBlock<RecentPlacementsMode::kPerNode>(c, b, len, t, wsum,
                                                         out);
  }
}

}  // namespace

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
      switch (p.normalizer) {
        case Normalizer::kLinear:
          AddMetricPair<Normalizer::kLinear>(p, q, v1, v2, len, t);
          break;
        case Normalizer::kRatioLower:
          AddMetricPair<Normalizer::kRatioLower>(p, q, v1, v2, len, t);
          break;
        case Normalizer::kRatioHigher:
          AddMetricPair<Normalizer::kRatioHigher>(p, q, v1, v2, len, t);
          break;
        case Normalizer::kTarget:
          AddMetricPair<Normalizer::kTarget>(p, q, v1, v2, len, t);
          break;
      }
      continue;
    }
    const Accumulate acc = !c.per_node_weights ? Accumulate::kUniform
                           : p.per_node        ? Accumulate::kPerNodeSkippable
                                               : Accumulate::kPerNode;
    const double* v = p.values + b;
    switch (p.normalizer) {
      case Normalizer::kLinear:
        AddMetric<Normalizer::kLinear>(p, acc, v, len, t, wsum);
        break;
      case Normalizer::kRatioLower:
        AddMetric<Normalizer::kRatioLower>(p, acc, v, len, t, wsum);
        break;
      case Normalizer::kRatioHigher:
        AddMetric<Normalizer::kRatioHigher>(p, acc, v, len, t, wsum);
        break;
      case Normalizer::kTarget:
        AddMetric<Normalizer::kTarget>(p, acc, v, len, t, wsum);
        break;
    }
  }
  const RecentPlacementsMode rp = c.w_rp <= 0 ? RecentPlacementsMode::kNone
                                  : c.placements == nullptr
                                      ? RecentPlacementsMode::kUniform
                                      : RecentPlacementsMode::kPerNode;
  FinishBlock(c, rp, b, len, t, wsum, out);
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

}  // namespace ms::internal
