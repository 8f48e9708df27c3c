#include "scoring/decide.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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
// truncation: every truncated quantity is in [-1, 100]). A node whose
// balancedAllocation the reciprocal shortcut cannot settle is flagged in
// `suspect` for an exact recomputation; returns how many were flagged.
// Nodes flagged kHuge are wrong here and recomputed by the caller.
__attribute__((target_clones("avx2", "default"))) size_t DenseBuiltins(
    const NodeTable::Columns& c, size_t n, double pod_nz_cpu,
    double pod_nz_mem, double pod_cpu, double pod_mem, double w_la,
    double w_ba, double* __restrict out, double* __restrict suspect) {
  const double* __restrict cap_cpu = c.alloc_cpu;
  const double* __restrict cap_mem = c.alloc_memory;
  const double* __restrict inv_cpu = c.inv_cpu;
  const double* __restrict inv_mem = c.inv_memory;
  const double* __restrict nz_cpu = c.nz_cpu;
  const double* __restrict nz_mem = c.nz_memory;
  const double* __restrict req_cpu = c.req_cpu;
  const double* __restrict req_mem = c.req_memory;
  int32_t suspects = 0;
  for (size_t i = 0; i < n; ++i) {
    const double cc = cap_cpu[i], cm = cap_mem[i];
    // leastAllocated: floor((cap - req) * 100 / cap) per resource, exact.
    const double rc = nz_cpu[i] + pod_nz_cpu, rm = nz_mem[i] + pod_nz_mem;
    const double ac = (cc - rc) * 100, am = (cm - rm) * 100;
    double qc = static_cast<double>(
        static_cast<int32_t>(std::max(ac * inv_cpu[i], -1.0)));
    double qm = static_cast<double>(
        static_cast<int32_t>(std::max(am * inv_mem[i], -1.0)));
    qc -= static_cast<double>(qc * cc > ac);
    qc += static_cast<double>((qc + 1) * cc <= ac);
    qm -= static_cast<double>(qm * cm > am);
    qm += static_cast<double>((qm + 1) * cm <= am);
    // Selects as arithmetic on 0/1 doubles, so the loop has no branches.
    qc *= static_cast<double>(rc <= cc);
    qm *= static_cast<double>(rm <= cm);
    const double hc = static_cast<double>(cc > 0);
    const double hm = static_cast<double>(cm > 0);
    const double both = static_cast<double>(
        static_cast<int32_t>((qc + qm) * 0.5));
    const double la =
        hc * hm * both + hc * (1 - hm) * qc + (1 - hc) * hm * qm;
    // balancedAllocation, with reciprocals; see BalancedFast.
    const double fc = std::min((req_cpu[i] + pod_cpu) * inv_cpu[i], 1.0);
    const double fm = std::min((req_mem[i] + pod_mem) * inv_mem[i], 1.0);
    const double x = (1 - std::abs((fc - fm) / 2)) * 100;
    const double t = static_cast<double>(static_cast<int32_t>(x));
    const double frac = x - t;
    const double two = hc * hm;
    const double sus = two * static_cast<double>((frac <= 1e-9) |
                                                 (frac >= 1 - 1e-9));
    const double ba = 100 + two * (t - 100);
    suspect[i] = sus;
    suspects += static_cast<int32_t>(sus);
    out[i] = w_la * la + w_ba * ba;
  }
  return static_cast<size_t>(suspects);
}

// Everything the per-node term results need, for the winner and for the
// explanation (not the hot path).
struct TermContext {
  const DecideInput* in;
  const ScoringConfig* cfg;
  const std::vector<Workspace::MetricPlan>* plans;
  const double* values;  // [m * n + k] scores
  size_t n;
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

void NodeTerms(const TermContext& c, size_t k, size_t i,
               std::vector<TermResult>* out) {
  const ScoringConfig& cfg = *c.cfg;
  out->clear();
  for (size_t m = 0; m < cfg.metrics.size(); ++m) {
    const MetricTerm& t = cfg.metrics[m];
    TermResult r{.name = t.name, .raw = RawValue(*c.in, m, i)};
    if (c.mode == ScoringMode::kFallback || !(*c.plans)[m].on) {
      r.state = TermState::kUnused;
    } else {
      double s = c.values[m * c.n + k];
      if (std::isnan(s)) {
        r.state = TermState::kSkipped;
      } else {
        r.score = s;
        r.weight = t.weight;
        // A missing value was replaced by the policy's score.
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
        info.non_zero_requested.milli_cpu + c.pod_non_zero.milli_cpu,
        alloc.memory, info.non_zero_requested.memory + c.pod_non_zero.memory));
    r.score = r.raw;
    r.weight = cfg.least_allocated_weight;
    if (r.weight <= 0) r.state = TermState::kUnused;
    out->push_back(r);
  }
  {
    TermResult r{.name = kTermBalancedAllocation};
    r.raw = static_cast<double>(BalancedAllocationScore(
        alloc.milli_cpu, info.requested.milli_cpu + c.pod_requests.milli_cpu,
        alloc.memory, info.requested.memory + c.pod_requests.memory));
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

// Gathers metric m over the feasible nodes into `out` (NaN where unusable)
// and returns the stats of the usable values.
ColumnStats GatherMetric(const MetricColumn& col, const MetricTerm& term,
                         int64_t now_ms, const uint32_t* feasible,
                         size_t count, double* out) {
  const double* v = col.values.data();
  const int64_t* t = col.time_ms.data();
  const int64_t cutoff = now_ms - term.max_staleness_ms;
  // Four independent min/max chains, so the loop is not bound by the
  // latency of one compare-and-select per element.
  double mn[4] = {kInf, kInf, kInf, kInf};
  double mx[4] = {-kInf, -kInf, -kInf, -kInf};
  int ok_count[4] = {0, 0, 0, 0};
  auto one = [&](size_t k, int lane) {
    uint32_t i = feasible[k];
    double x = v[i];
    int64_t ts = t[i];
    bool ok = (ts >= cutoff) & (ts != 0) & (std::abs(x) < kInf);
    x = ok ? x : kNaN;
    out[k] = x;
    mn[lane] = x < mn[lane] ? x : mn[lane];
    mx[lane] = x > mx[lane] ? x : mx[lane];
    ok_count[lane] += ok;
  };
  size_t k = 0;
  for (; k + 4 <= count; k += 4) {
    one(k, 0);
    one(k + 1, 1);
    one(k + 2, 2);
    one(k + 3, 3);
  }
  for (; k < count; ++k) one(k, 0);
  double lo = std::min(std::min(mn[0], mn[1]), std::min(mn[2], mn[3]));
  double hi = std::max(std::max(mx[0], mx[1]), std::max(mx[2], mx[3]));
  int usable = ok_count[0] + ok_count[1] + ok_count[2] + ok_count[3];
  return ColumnStats{.usable = usable, .min = lo, .max = hi};
}

// Normalises row `x` (values, NaN = missing) in place into scores, adds
// w * score into totals and, for the skip policy, w into weight_sums where a
// value counted. Returns whether some value was skipped.
bool ScoreMetric(const MetricTerm& term, const ColumnStats& st, double* x,
                 size_t count, double* totals, double* weight_sums) {
  const double w = term.weight;
  const bool lower = term.direction == Direction::kLower;
  const double miss = term.missing == MissingPolicy::kSkip
                          ? kNaN
                          : MissingScore(term.missing);
  switch (term.normalization.type) {
    case NormalizationType::kMinMax:
    case NormalizationType::kRange: {
      double lo = st.min, hi = st.max;
      if (term.normalization.type == NormalizationType::kRange) {
        lo = term.normalization.min;
        hi = term.normalization.max;
      }
      double origin = lower ? hi : lo;
      double k = hi > lo ? (lower ? -kMaxNodeScore : kMaxNodeScore) / (hi - lo)
                         : 0.0;
      double base = hi > lo ? 0.0 : kMaxNodeScore;  // all equal: 100
      for (size_t j = 0; j < count; ++j) {
        double v = x[j];
        double s = std::clamp((v - origin) * k + base, 0.0, kMaxNodeScore);
        x[j] = v == v ? s : miss;
      }
      break;
    }
    case NormalizationType::kRatio: {
      if (lower) {
        double best = std::max(st.min, 0.0) * kMaxNodeScore;
        for (size_t j = 0; j < count; ++j) {
          double v = std::max(x[j], 0.0);
          double s = v == 0 ? kMaxNodeScore
                            : std::min(best / v, kMaxNodeScore);
          x[j] = x[j] == x[j] ? s : miss;
        }
      } else {
        double best = std::max(st.max, 0.0);
        double k = best == 0 ? 0.0 : kMaxNodeScore / best;
        double base = best == 0 ? kMaxNodeScore : 0.0;
        for (size_t j = 0; j < count; ++j) {
          double s = std::min(std::max(x[j], 0.0) * k + base, kMaxNodeScore);
          x[j] = x[j] == x[j] ? s : miss;
        }
      }
      break;
    }
  }
  if (term.missing == MissingPolicy::kSkip && st.usable < static_cast<int>(count)) {
    for (size_t j = 0; j < count; ++j) {
      bool ok = x[j] == x[j];
      totals[j] += ok ? w * x[j] : 0.0;
      weight_sums[j] += ok ? w : 0.0;
    }
    return true;
  }
  for (size_t j = 0; j < count; ++j) totals[j] += w * x[j];
  return false;
}

template <typename T>
void Grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

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

  // 2. Filter. The common pod is settled from the NodeTable rows; anything
  // the fast test cannot accept goes through the exact CheckNode.
  const PodFilter pf = MakePodFilter(pod);
  const bool slow_pod = !pod.node_name.empty() || pf.has_node_affinity ||
                        !pf.host_ports.empty() || !pf.requests.scalar.empty();
  const uint32_t block =
      NodeTable::kNotReady | NodeTable::kHardTaints |
      (pf.tolerates_unschedulable ? 0u : NodeTable::kUnschedulable);
  constexpr int64_t kAny = std::numeric_limits<int64_t>::min();
  const int64_t need_cpu = pf.requests.milli_cpu > 0 ? pf.requests.milli_cpu : kAny;
  const int64_t need_mem = pf.requests.memory > 0 ? pf.requests.memory : kAny;
  const int64_t need_eph =
      pf.requests.ephemeral_storage > 0 ? pf.requests.ephemeral_storage : kAny;

  Grow(ws.feasible, n);
  uint32_t* feasible = ws.feasible.data();
  size_t count = 0;
  ws.summary.Reset(&pf, &cfg.metrics);
  const NodeTable::FilterRow* rows = table->filter_rows();
  for (uint32_t i = 0; i < n; ++i) {
    const NodeTable::FilterRow& r = rows[i];
    bool fast = ((r.flags & block) == 0) & (need_cpu <= r.free_cpu) &
                (need_mem <= r.free_memory) & (need_eph <= r.free_ephemeral) &
                (r.free_pods >= 1);
    if (fast && !slow_pod) {
      feasible[count++] = i;
      continue;
    }
    NodeCheck c = CheckNode(pf, nodes[i]);
    if (c.feasible()) {
      feasible[count++] = i;
    } else {
      ws.summary.Add(c);
    }
  }

  // 3. Metric terms: gather the usable values of F, decide the mode.
  const size_t num_metrics = cfg.metrics.size();
  ws.plans.assign(num_metrics, {});
  Grow(ws.values, num_metrics * n);
  double* values = ws.values.data();
  auto column = [&](size_t m) -> const MetricColumn* {
    if (in.metrics == nullptr || m >= in.metrics->size()) return nullptr;
    const MetricColumn* col = &(*in.metrics)[m];
    if (col->values.size() != n || col->time_ms.size() != n) return nullptr;
    return col;
  };
  auto gather_all = [&]() {
    bool any = false;
    for (size_t m = 0; m < num_metrics; ++m) {
      Workspace::MetricPlan& p = ws.plans[m];
      const MetricColumn* col = column(m);
      if (col == nullptr) {
        p = {};
        continue;
      }
      p.stats = GatherMetric(*col, cfg.metrics[m], in.now_ms, feasible, count,
                             values + m * n);
      p.on = p.stats.usable > 0;
      any |= p.on;
    }
    return any;
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
      Grow(ws.excluded, n);
      std::fill(ws.excluded.begin(), ws.excluded.begin() + n, 0);
      size_t kept = 0;
      for (size_t k = 0; k < count; ++k) {
        int why = -1;
        for (size_t m = 0; m < num_metrics && why < 0; ++m) {
          if (cfg.metrics[m].missing == MissingPolicy::kExclude &&
              ws.plans[m].on && std::isnan(values[m * n + k])) {
            why = static_cast<int>(m);
          }
        }
        if (why < 0) {
          feasible[kept++] = feasible[k];
        } else {
          ws.excluded[feasible[k]] = why + 1;
          NodeCheck c;
          c.failures = kFailMissingMetric;
          c.metric = why;
          ws.summary.Add(c);
        }
      }
      count = kept;
      excluded_any = true;
      if (count > 0) gather_all();
    }
  }
  d.num_feasible = static_cast<int>(count);

  if (count == 0) {
    d.filter_summary = ws.summary.Message(static_cast<int>(n));
  } else {
    // 4. Scores: metric rows in place, then built-ins and the pick.
    Grow(ws.totals, n);
    double* totals = ws.totals.data();
    std::fill(totals, totals + count, 0.0);
    double* weight_sums = nullptr;
    double weight_sum = 0;
    bool per_node_weights = false;
    if (d.mode == ScoringMode::kMetrics) {
      for (size_t m = 0; m < num_metrics; ++m) {
        const Workspace::MetricPlan& p = ws.plans[m];
        if (!p.on) continue;
        const MetricTerm& t = cfg.metrics[m];
        if (t.missing == MissingPolicy::kSkip &&
            p.stats.usable < static_cast<int>(count) && !per_node_weights) {
          Grow(ws.weight_sums, n);
          weight_sums = ws.weight_sums.data();
          std::fill(weight_sums, weight_sums + count, weight_sum);
          per_node_weights = true;
        }
        bool skipped = ScoreMetric(t, p.stats, values + m * n, count, totals,
                                   weight_sums);
        if (!skipped) {
          weight_sum += t.weight;
          if (per_node_weights) {
            for (size_t k = 0; k < count; ++k) weight_sums[k] += t.weight;
          }
        }
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
    const double penalty = cfg.penalty_per_placement;
    const double builtin_weight = w_la + w_ba + w_rp;
    const int32_t* placements =
        in.recent_placements != nullptr && in.recent_placements->size() == n
            ? in.recent_placements->data()
            : nullptr;
    const uint64_t* hashes = table->name_hashes();

    // Built-ins for every node in one vectorised pass (cheaper than a
    // gathered pass over F when F is most of the nodes), then the rare nodes
    // it cannot settle exactly.
    double* builtin = nullptr;
    if (w_la > 0 || w_ba > 0) {
      Grow(ws.builtin, n);
      Grow(ws.suspect, n);
      builtin = ws.builtin.data();
      size_t suspects =
          DenseBuiltins(table->score_columns(), n, pod_nz_cpu, pod_nz_mem,
                        pod_cpu, pod_mem, w_la, w_ba, builtin,
                        ws.suspect.data());
      if (suspects > 0 || table->num_huge() > 0) {
        for (size_t i = 0; i < n; ++i) {
          if (ws.suspect[i] == 0 && !(rows[i].flags & NodeTable::kHuge)) continue;
          const NodeInfo& info = nodes[i];
          const Resources& a = info.node.allocatable;
          builtin[i] =
              w_la * static_cast<double>(LeastAllocatedScore(
                         a.milli_cpu,
                         info.non_zero_requested.milli_cpu + nz.milli_cpu,
                         a.memory, info.non_zero_requested.memory + nz.memory)) +
              w_ba * static_cast<double>(BalancedAllocationScore(
                         a.milli_cpu,
                         info.requested.milli_cpu + pf.requests.milli_cpu,
                         a.memory, info.requested.memory + pf.requests.memory));
        }
      }
    }

    const double uniform_weight = weight_sum + builtin_weight;
    const double inv_weight = uniform_weight > 0 ? 1 / uniform_weight : 0.0;
    double best = -1;
    size_t best_k = 0;
    uint64_t best_key = 0;
    bool best_key_set = false;
    for (size_t k = 0; k < count; ++k) {
      const uint32_t i = feasible[k];
      double total = totals[k];
      if (builtin != nullptr) total += builtin[i];
      if (w_rp > 0) {
        double p = placements != nullptr ? placements[i] : 0;
        total += w_rp * std::max(0.0, kMaxNodeScore - penalty * p);
      }
      double score;
      if (per_node_weights) {
        double wsum = weight_sums[k] + builtin_weight;
        score = wsum > 0 ? total / wsum : 0.0;
      } else {
        score = total * inv_weight;
      }
      score = std::clamp(score, 0.0, kMaxNodeScore);
      totals[k] = score;
    }
    // The pick: the maximum (four chains), then the seeded tie-break among
    // the nodes that reach it.
    double m4[4] = {-1, -1, -1, -1};
    size_t k = 0;
    for (; k + 4 <= count; k += 4) {
      for (int l = 0; l < 4; ++l) {
        m4[l] = totals[k + l] > m4[l] ? totals[k + l] : m4[l];
      }
    }
    for (; k < count; ++k) m4[0] = totals[k] > m4[0] ? totals[k] : m4[0];
    best = std::max(std::max(m4[0], m4[1]), std::max(m4[2], m4[3]));
    for (k = 0; k < count; ++k) {
      if (totals[k] != best) continue;
      const uint32_t i = feasible[k];
      uint64_t key = TieKey(in.seed, hashes[i]);
      if (!best_key_set || key < best_key ||
          (key == best_key &&
           nodes[i].node.name < nodes[feasible[best_k]].node.name)) {
        best_k = k;
        best_key = key;
        best_key_set = true;
      }
    }
    d.node_index = static_cast<int>(feasible[best_k]);
    d.score = best;

    TermContext tc{.in = &in,
                   .cfg = &cfg,
                   .plans = &ws.plans,
                   .values = values,
                   .n = n,
                   .mode = d.mode,
                   .pod_requests = pf.requests,
                   .pod_non_zero = nz,
                   .best_effort = best_effort};
    NodeTerms(tc, best_k, feasible[best_k], &d.terms);

    if (in.explain) {
      Explanation e;
      e.mode = d.mode;
      e.fallback_reason = d.fallback_reason;
      std::vector<int> pos(n, -1);
      for (size_t k = 0; k < count; ++k) pos[feasible[k]] = static_cast<int>(k);
      for (size_t i = 0; i < n; ++i) {
        NodeExplanation ne{.node = nodes[i].node.name};
        if (pos[i] >= 0) {
          ne.feasible = true;
          ne.total = totals[pos[i]];
          NodeTerms(tc, pos[i], i, &ne.terms);
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
