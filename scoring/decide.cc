#include "scoring/decide.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scoring/filter.h"
#include "scoring/internal/kernels.h"
#include "scoring/plugins/balanced_allocation.h"
#include "scoring/plugins/metric_terms.h"
#include "scoring/plugins/node_resources_fit.h"
#include "scoring/plugins/volume_restrictions.h"
#include "scoring/preemption.h"
#include "scoring/score_plugins.h"

namespace ms {

// The weighted sum of leastAllocated and balancedAllocation of every node
// for one pod's amounts, kept between decisions: a burst of pods of one
// shape computes a block of nodes again only when one of its rows was
// written (NodeTable's block versions: the node a pod was assumed on, a
// table built again) or the key changed.
struct ResourceScores {
  struct Key {
    size_t num_nodes = 0;
    // The pod's non-zero cpu and memory, then its requested ones.
    std::array<int64_t, 4> amounts{};
    double least_allocated = 0;  // the weights
    double balanced_allocation = 0;
    KubeVersion kube;
    friend bool operator==(const Key&, const Key&) = default;
  };
  Key key;
  AlignedVector<double> values;    // [node]
  std::vector<uint64_t> versions;  // [block]: the table's block version
};

// A block version no table has (they count up from 1): not computed yet.
constexpr uint64_t kNeverComputed = 0;

struct Workspace::Scratch {
  // The incoming pod, when its release reads it otherwise
  // (PodAsTheReleaseReadsIt).
  std::optional<Pod> release_pod;
  NodeTable own_table;
  MetricTable own_metrics;
  std::vector<MetricPlan> plans;           // [metric]
  std::vector<MetricPlan> active;          // the plans that score
  std::vector<AlignedVector<double>> fresh;  // [metric][node]: cleaned copies
  AlignedVector<int64_t> feasible;           // [node]: -1 feasible, 0 not
  // [node]: the metric whose own filter (`exclude`, `filter` bounds)
  // removed it, or kNotExcluded; empty when no node was removed so.
  std::vector<int32_t> excluded;
  // The bounds of the metrics' filters for this pod: [metric] the scopes
  // that select the pod, and the node side when the caller has none.
  std::vector<uint64_t> pod_scopes;
  NodeBounds own_node_bounds;
  DecisionBounds bounds;
  AlignedVector<double> scores;    // [node]: final score; -1 when infeasible
  std::vector<double> block_best;  // [block]: the highest score in it
  // leastAllocated and balancedAllocation, weighted, for the last pod
  // amounts scored (Score).
  ResourceScores resource_scores;
  // Per node of a block: metric sums, per-node weights, built-ins,
  // suspects, a sparse term's scores.
  AlignedVector<double> totals, weight_sums, builtin, suspect, term_row;
  FilterSummary summary;
  VolumeFilters volumes;
  // The nominated pods that count for this pod (priority at least its,
  // not itself), by node index.
  std::vector<const NominatedPod*> nominated;
  std::vector<NodeCheck> checks;  // [node]: when no node fits
  // The pre-filter states of InterPodAffinity and PodTopologySpread.
  InterPodAffinityFilter affinity_filter;
  PodTopologySpreadFilter spread_filter;
  // The built-in score plugins, by BuiltinTerm; whether each counts for
  // this pod; what they read of this decision.
  ScorePlugins plugins = MakeScorePlugins();
  std::array<bool, kNumBuiltinTerms> counts{};
  ScoreContext context;
};

Workspace::Workspace() : scratch_(std::make_unique<Scratch>()) {}
Workspace::~Workspace() = default;
Workspace::Workspace(Workspace&&) noexcept = default;
Workspace& Workspace::operator=(Workspace&&) noexcept = default;

namespace {

using Scratch = Workspace::Scratch;

// The incoming pod as `kube`'s InterPodAffinity reads its terms: before
// 1.37 a namespaceSelector that selects a namespace without labels
// selects every namespace (WidenNamespaceSelectorsAsBefore137). `copy`
// holds the pod so read, when it differs.
const Pod* PodAsTheReleaseReadsIt(const Pod& pod, KubeVersion kube,
                                  std::optional<Pod>* copy) {
  if (kube.AtLeast(37) ||
      (pod.pod_affinity.empty() && pod.pod_anti_affinity.empty())) {
    return &pod;
  }
  PodAffinityRules affinity = pod.pod_affinity;
  PodAffinityRules anti = pod.pod_anti_affinity;
  const bool widened_affinity = WidenNamespaceSelectorsAsBefore137(&affinity);
  const bool widened_anti = WidenNamespaceSelectorsAsBefore137(&anti);
  if (!widened_affinity && !widened_anti) return &pod;
  *copy = pod;
  (*copy)->pod_affinity = std::move(affinity);
  (*copy)->pod_anti_affinity = std::move(anti);
  return &**copy;
}

// Nodes per block of the scoring pass: the block's scratch rows stay in the
// L1 cache between the metric, built-in and combining loops.
constexpr size_t kBlock = NodeTable::kRowBlock;

// Pod amounts up to this are exact in the vectorised built-ins.
constexpr int64_t kExact = int64_t{1} << 42;

template <typename Vector>
void Grow(Vector& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

// The seeded tie-break key of a node: lower wins. splitmix64's finalizer.
uint64_t TieKey(uint64_t seed, uint64_t name_hash) {
  uint64_t z = seed ^ name_hash;
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// What the score phase needs of the pod.
struct PodScoring {
  Resources requests;  // PodRequests
  Resources non_zero;  // PodScoringRequests: what leastAllocated charges
};

// 2. Filter: feasible[i] = -1 for each node that passes, 0 otherwise;
// returns how many pass. The common pod is settled from the NodeTable's
// columns in one vectorised pass. A node that pass rejects is infeasible
// for certain unless only its taints could be at fault (and the pod has
// tolerations): those, and every node for a pod the pass cannot judge
// (node name, affinity, host ports, extended resources), go through the
// exact CheckNode.
size_t Filter(const PodFilter& pf, const std::vector<NodeInfo>& nodes,
              const NodeTable& table, int64_t* feasible) {
  const Pod& pod = *pf.pod;
  const size_t n = nodes.size();
  const bool slow_pod = !pod.node_name.empty() || pf.has_node_affinity ||
                        !pf.host_ports.empty() || !pf.requests.scalar.empty() ||
                        pf.topology_spread != nullptr ||
                        pf.pod_affinity != nullptr || pf.volumes != nullptr ||
                        pf.required_features != 0;
  const int64_t block =
      NodeTable::kHardTaints | NodeTable::kNoRoom |
      (pf.tolerates_unschedulable ? int64_t{0}
                                  : int64_t{NodeTable::kUnschedulable});
  constexpr int64_t kAny = std::numeric_limits<int64_t>::min();
  const Resources& r = pf.requests;
  size_t count = internal::FastFilter(
      table.fit_columns(), n, block, r.milli_cpu > 0 ? r.milli_cpu : kAny,
      r.memory > 0 ? r.memory : kAny,
      r.ephemeral_storage > 0 ? r.ephemeral_storage : kAny, feasible);
  if (slow_pod) {
    count = 0;
    for (size_t i = 0; i < n; ++i) {
      if (feasible[i] == 0) continue;
      feasible[i] = CheckNode(pf, nodes, i).feasible() ? -1 : 0;
      count += feasible[i] != 0;
    }
  }
  if (!pod.tolerations.empty()) {
    for (uint32_t i : table.tainted()) {
      if (feasible[i] == 0 && CheckNode(pf, nodes, i).feasible()) {
        feasible[i] = -1;
        ++count;
      }
    }
  }
  return count;
}

// 2. The nominated pods that count for the pod, into s.nominated by node:
// those of its priority or higher, other than itself.
void CollectNominated(const DecideInput& in, Scratch& s) {
  s.nominated.clear();
  if (in.nominated == nullptr) return;
  const Pod& pod = *in.pod;
  for (const NominatedPod& p : *in.nominated) {
    if (p.node < in.nodes->size() && p.pod().priority >= pod.priority &&
        p.pod().uid != pod.uid) {
      s.nominated.push_back(&p);
    }
  }
  std::stable_sort(s.nominated.begin(), s.nominated.end(),
                   [](const NominatedPod* a, const NominatedPod* b) {
                     return a->node < b->node;
                   });
}

// Counts `p` on node i in the pre-filter states (delta 1) or takes it off
// (-1): kube-scheduler's AddPod and RemovePod extensions.
void UpdateFilters(const PodFilter& pf, size_t i, const PodInfo& p, int delta,
                   Scratch& s) {
  if (pf.topology_spread != nullptr) s.spread_filter.AddPod(i, p, delta);
  if (pf.pod_affinity != nullptr) s.affinity_filter.AddPod(i, p, delta);
  if (pf.volumes != nullptr) {
    s.volumes.rwop_added +=
        delta * ReadWriteOncePodConflicts(s.volumes.rwop_claims, p);
  }
}

// Node i, standing as `base`, checked with its nominated pods added (the
// first pass of RunFilterPluginsWithNominatedPods); feasible when it has
// none.
NodeCheck CheckWithNominated(const PodFilter& pf, const NodeInfo& base,
                             size_t i, Scratch& s) {
  const auto lo = std::partition_point(
      s.nominated.begin(), s.nominated.end(),
      [i](const NominatedPod* p) { return p->node < i; });
  const auto hi = std::partition_point(
      lo, s.nominated.end(),
      [i](const NominatedPod* p) { return p->node == i; });
  if (lo == hi) return {};
  NodeInfo info = base;
  for (auto it = lo; it != hi; ++it) {
    info.AddPod((*it)->charge);
    UpdateFilters(pf, i, *(*it)->charge.pod, 1, s);
  }
  NodeCheck c = CheckNode(pf, info, i);
  for (auto it = lo; it != hi; ++it) {
    UpdateFilters(pf, i, *(*it)->charge.pod, -1, s);
  }
  return c;
}

// Both passes of RunFilterPluginsWithNominatedPods for node i standing as
// `base`: the first that fails.
NodeCheck CheckFully(const PodFilter& pf, const NodeInfo& base, size_t i,
                     Scratch& s) {
  NodeCheck c = CheckWithNominated(pf, base, i, s);
  return c.feasible() ? CheckNode(pf, base, i) : c;
}

// Node i, which a metric's own filter removed (s.excluded[i]): why, with
// the bound that applied there.
NodeCheck MetricCheck(const ScoringConfig& cfg, const Scratch& s, size_t i) {
  const int32_t m = s.excluded[i];
  const AppliedBounds b = s.bounds.At(cfg.metrics[m], m, i);
  NodeCheck c{.failures = MetricFailure(b.bounds, s.plans[m], i), .metric = m};
  if (c.failures == kFailMetricAbove) {
    c.metric_bound = b.bounds.max;
    c.bound_origin = b.max_origin;
  } else if (c.failures == kFailMetricBelow) {
    c.metric_bound = b.bounds.min;
    c.bound_origin = b.min_origin;
  }
  return c;
}

// What preemption asks of this decision's filters.
class DecisionFilter final : public PreemptionFilter {
 public:
  DecisionFilter(const PodFilter& pf, const ScoringConfig& cfg, Scratch& s)
      : pf_(pf), cfg_(cfg), s_(s) {}
  NodeCheck Check(size_t i, const NodeInfo& info) override {
    return CheckFully(pf_, info, i, s_);
  }
  void Update(size_t i, const PodInfo& pod, int delta) override {
    UpdateFilters(pf_, i, pod, delta, s_);
  }
  std::vector<std::string> Reasons(const NodeCheck& check) override {
    return FailureReasons(pf_, check, &cfg_.metrics);
  }

 private:
  const PodFilter& pf_;
  const ScoringConfig& cfg_;
  Scratch& s_;
};

// 2. The nodes with nominated pods that passed the filter as they are are
// checked with them too; returns how many that removes from F.
size_t FilterNominated(const PodFilter& pf, const std::vector<NodeInfo>& nodes,
                       Scratch& s) {
  size_t removed = 0;
  for (size_t k = 0; k < s.nominated.size(); ++k) {
    const uint32_t i = s.nominated[k]->node;
    if (k > 0 && s.nominated[k - 1]->node == i) continue;
    if (s.feasible[i] != 0 &&
        !CheckWithNominated(pf, nodes[i], i, s).feasible()) {
      s.feasible[i] = 0;
      ++removed;
    }
  }
  return removed;
}

// 2. kube-scheduler's evaluateNominatedNode: the index of the pod's
// nominated node when it passed the filters, else -1.
int FeasibleNominatedNode(const Pod& pod, const std::vector<NodeInfo>& nodes,
                          const Scratch& s) {
  if (pod.nominated_node_name.empty()) return -1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].node.name == pod.nominated_node_name) {
      return s.feasible[i] != 0 ? static_cast<int>(i) : -1;
    }
  }
  return -1;
}

// 3. The bounds the metrics' filters apply for this pod: the pod's side of
// each scoped filter, matched now, once; the node side from the caller,
// or matched here when it has none that fits. Empty when no metric has a
// scoped filter.
DecisionBounds ResolveBounds(const DecideInput& in, const ScoringConfig& cfg,
                             Scratch& s) {
  const std::vector<MetricTerm>& terms = cfg.metrics;
  if (std::none_of(terms.begin(), terms.end(),
                   [](const MetricTerm& t) { return t.has_scoped_filter(); })) {
    return {};
  }
  const NodeBounds* nodes = in.node_bounds;
  if (nodes == nullptr || !NodeBoundsMatch(terms, *nodes, in.nodes->size())) {
    MatchNodeBounds(terms, *in.nodes, &s.own_node_bounds);
    nodes = &s.own_node_bounds;
  }
  s.pod_scopes.assign(terms.size(), 0);
  for (size_t m = 0; m < terms.size(); ++m) {
    if (terms[m].has_scoped_filter()) {
      s.pod_scopes[m] = PodScopes(terms[m], *in.pod);
    }
  }
  return {.pod_scopes = s.pod_scopes.data(), .nodes = nodes->data()};
}

// 3. Pre-score: the usable values of each metric and their stats over the
// `count` feasible nodes; the mode; the metrics' own filters (`exclude`
// policies and `filter` bounds, when `exclude`), which may shrink the
// feasible set (and `count`).
void PreScore(const DecideInput& in, const ScoringConfig& cfg, bool exclude,
              size_t& count, Scratch& s, Decision& d) {
  const size_t n = in.nodes->size();
  const size_t num_metrics = cfg.metrics.size();
  int64_t* feasible = s.feasible.data();
  s.plans.assign(num_metrics, {});
  s.excluded.clear();
  s.bounds = {};
  d.mode = ScoringMode::kMetrics;
  if (in.force_fallback) {
    d.mode = ScoringMode::kFallback;
    d.fallback_reason = FallbackReason::kForced;
    return;
  }
  if (num_metrics == 0) {
    d.mode = ScoringMode::kFallback;
    d.fallback_reason = FallbackReason::kNoMetrics;
    return;
  }
  if (count == 0 || in.metrics == nullptr) {
    if (count > 0) {
      d.mode = ScoringMode::kFallback;
      d.fallback_reason = FallbackReason::kNoUsableData;
    }
    return;
  }
  const MetricTable* table = in.metric_table;
  if (table == nullptr || table->num_nodes() != n ||
      table->num_metrics() != in.metrics->size()) {
    s.own_metrics.Build(*in.metrics, n);
    table = &s.own_metrics;
  }
  Grow(s.fresh, num_metrics);
  bool any = false;
  for (size_t m = 0; m < num_metrics && m < table->num_metrics(); ++m) {
    GatherMetric(*table, m, cfg.metrics[m], in.now_ms, s.fresh[m],
                 s.plans[m]);
    FeasibleStats(feasible, n, count, s.plans[m]);
    any |= s.plans[m].on;
  }
  if (!any) {
    d.mode = ScoringMode::kFallback;
    d.fallback_reason = FallbackReason::kNoUsableData;
    return;
  }
  if (!exclude) return;
  s.bounds = ResolveBounds(in, cfg, s);
  const size_t removed = FilterNodesByMetrics(cfg.metrics, s.plans, s.bounds,
                                              count, feasible, n, s.excluded);
  if (removed == 0) return;
  count -= removed;
  if (count == 0) return;
  for (MetricPlan& p : s.plans) FeasibleStats(feasible, n, count, p);
}

// 3-4. The built-in plugins' pre-score and normalisation over the feasible
// nodes, in table order.
void PreScoreBuiltins(Scratch& s) {
  for (size_t k = 0; k < kNumBuiltinTerms; ++k) {
    s.counts[k] = s.plugins[k]->PreScore(s.context);
  }
}

// The weight `term` counts with for this pod: 0 when it does not.
double BuiltinWeight(const ScoringConfig& cfg, const Scratch& s,
                     BuiltinTerm term) {
  return s.counts[static_cast<size_t>(term)] ? std::max(cfg.builtins[term], 0.0)
                                             : 0.0;
}

// 4. Normalise: resolves the plan of each metric that scores into
// s.active; returns the sum of their weights where uniform, and sets
// `per_node_weights` when a skipped metric makes weights vary by node.
double Normalise(const ScoringConfig& cfg, ScoringMode mode, size_t count,
                 Scratch& s, bool& per_node_weights) {
  s.active.clear();
  per_node_weights = false;
  double weight_sum = 0;
  if (mode != ScoringMode::kMetrics) return 0;
  for (size_t m = 0; m < cfg.metrics.size(); ++m) {
    MetricPlan& p = s.plans[m];
    if (!p.on || cfg.metrics[m].weight == 0) continue;  // scores nothing
    PlanMetric(cfg.metrics[m], count, p);
    per_node_weights |= p.per_node;
    if (!p.per_node) weight_sum += p.weight;
    s.active.push_back(p);
  }
  return weight_sum;
}

// A built-in term that Score adds from its plugin's scores.
struct NormalisedTerm {
  double weight = 0;
  TermScores scores;
  size_t next = 0;  // sparse: the first of scores.nodes not yet reached
};

// 5. Score: every node's score into s.scores (-1 when infeasible), block by
// block; the highest of each block into s.block_best.
void Score(const DecideInput& in, const ScoringConfig& cfg,
           const NodeTable& table, const PodScoring& pod,
           double metric_weight, bool per_node_weights, Scratch& s) {
  const std::vector<NodeInfo>& nodes = *in.nodes;
  const size_t n = nodes.size();
  // The kernels' terms: leastAllocated and balancedAllocation from the
  // NodeTable's columns, recentPlacements in the combining pass.
  const double least_allocated =
      BuiltinWeight(cfg, s, BuiltinTerm::kLeastAllocated);
  const double balanced_allocation =
      BuiltinWeight(cfg, s, BuiltinTerm::kBalancedAllocation);
  const double recent_placements =
      BuiltinWeight(cfg, s, BuiltinTerm::kRecentPlacements);
  // The plugins normalised in the pre-score phase, with their weights, in
  // table order.
  std::array<NormalisedTerm, kNumBuiltinTerms> normalised;
  size_t num_normalised = 0;
  double builtin_weight = 0;
  for (size_t k = 0; k < kNumBuiltinTerms; ++k) {
    const double w = BuiltinWeight(cfg, s, static_cast<BuiltinTerm>(k));
    builtin_weight += w;
    if (w <= 0) continue;
    if (std::optional<TermScores> scores = s.plugins[k]->Scores()) {
      normalised[num_normalised++] = {.weight = w, .scores = *scores};
    }
  }
  const bool resources = least_allocated > 0 || balanced_allocation > 0;
  const double uniform_weight = metric_weight + builtin_weight;

  Grow(s.scores, n);
  Grow(s.totals, kBlock);
  Grow(s.weight_sums, kBlock);
  Grow(s.builtin, kBlock);
  Grow(s.suspect, kBlock);
  Grow(s.term_row, kBlock);
  Grow(s.block_best, (n + kBlock - 1) / kBlock);
  const internal::Combine combine{
      .plans = s.active.data(),
      .num_plans = s.active.size(),
      .builtin = s.builtin.data(),
      .placements =
          in.recent_placements != nullptr && in.recent_placements->size() == n
              ? in.recent_placements->data()
              : nullptr,
      .feasible = s.feasible.data(),
      .w_rp = recent_placements,
      .penalty = cfg.penalty_per_placement,
      .inv_weight = uniform_weight > 0 ? 1 / uniform_weight : 0.0,
      .builtin_weight = builtin_weight,
      .per_node_weights = per_node_weights,
  };
  const Resources& req = pod.requests;
  const Resources& nz = pod.non_zero;
  auto outside = [](int64_t v) { return v < 0 || v > kExact; };
  const bool huge_pod = outside(nz.milli_cpu) || outside(nz.memory) ||
                        outside(req.milli_cpu) || outside(req.memory);
  const bool any_huge = table.num_huge() > 0 || huge_pod;
  const uint32_t* flags = table.flags();
  ResourceScores& cache = s.resource_scores;
  const ResourceScores::Key key{
      .num_nodes = n,
      .amounts = {nz.milli_cpu, nz.memory, req.milli_cpu, req.memory},
      .least_allocated = least_allocated,
      .balanced_allocation = balanced_allocation,
      .kube = cfg.kube};
  if (resources && !(cache.key == key)) {
    cache.key = key;
    cache.versions.assign((n + kBlock - 1) / kBlock, kNeverComputed);
    Grow(cache.values, n);
  }
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t len = std::min(kBlock, n - b);
    double* builtin = s.builtin.data();
    if (!resources) std::fill_n(builtin, len, 0.0);
    const uint64_t version = table.block_version(b / kBlock);
    if (resources && cache.versions[b / kBlock] == version) {
      std::copy_n(cache.values.data() + b, len, builtin);
    } else if (resources) {
      // The built-ins of the whole block in one vectorised pass, then the
      // rare nodes it cannot settle exactly, from the plugins' references.
      const double* suspect = s.suspect.data();
      size_t suspects = 0;
      if (!huge_pod) {  // else every node below
        suspects = internal::DenseBuiltins(
            table.score_columns(b), len, static_cast<double>(nz.milli_cpu),
            static_cast<double>(nz.memory), static_cast<double>(req.milli_cpu),
            static_cast<double>(req.memory), least_allocated,
            balanced_allocation, BalancedAllocationScoresChange(cfg.kube),
            builtin, s.suspect.data());
      }
      if (suspects > 0 || any_huge) {
        for (size_t j = 0; j < len; ++j) {
          const size_t i = b + j;
          if (suspect[j] == 0 && !(flags[i] & NodeTable::kHuge) &&
              !huge_pod) {
            continue;
          }
          builtin[j] =
              least_allocated *
                  LeastAllocatedTerm(nodes[i], nz, least_allocated).raw +
              balanced_allocation * BalancedAllocationTerm(cfg.kube, nodes[i],
                                                           req,
                                                           balanced_allocation)
                                        .raw;
        }
      }
      std::copy_n(builtin, len, cache.values.data() + b);
      cache.versions[b / kBlock] = version;
    }
    for (size_t k = 0; k < num_normalised; ++k) {
      NormalisedTerm& term = normalised[k];
      internal::AddTermScores(term.scores, term.weight, b, len, &term.next,
                              builtin, s.term_row.data());
    }
    s.block_best[b / kBlock] = internal::ScoreBlock(
        combine, b, len, s.totals.data(), s.weight_sums.data(),
        s.scores.data());
  }
}

// 6. Pick: the maximum, then the seeded tie-break among the nodes that
// reach it, looked for only in the blocks that reach it.
size_t Pick(const std::vector<NodeInfo>& nodes, const NodeTable& table,
            uint64_t seed, const Scratch& s) {
  const size_t n = nodes.size();
  const size_t num_blocks = (n + kBlock - 1) / kBlock;
  const double best = *std::max_element(s.block_best.begin(),
                                        s.block_best.begin() + num_blocks);
  const uint64_t* hashes = table.name_hashes();
  size_t best_i = 0;
  uint64_t best_key = 0;
  bool found = false;
  for (size_t i = 0; i < n; ++i) {
    if (s.block_best[i / kBlock] != best) {
      i = (i / kBlock + 1) * kBlock - 1;  // the next block
      continue;
    }
    if (s.scores[i] != best) continue;
    const uint64_t key = TieKey(seed, hashes[i]);
    if (!found || key < best_key ||
        (key == best_key && nodes[i].node.name < nodes[best_i].node.name)) {
      best_i = i;
      best_key = key;
      found = true;
    }
  }
  return best_i;
}

// 7. Explain: the terms of node i, each from its plugin: the metrics in
// configuration order, then the built-ins.
void NodeTerms(const DecideInput& in, const ScoringConfig& cfg,
               ScoringMode mode, const Scratch& s, size_t i,
               std::vector<TermResult>* out) {
  out->clear();
  for (size_t m = 0; m < cfg.metrics.size(); ++m) {
    const MetricColumn* column = in.metrics != nullptr &&
                                         m < in.metrics->size()
                                     ? &(*in.metrics)[m]
                                     : nullptr;
    const double unseen =
        in.unseen != nullptr && m < in.unseen->size() &&
                i < (*in.unseen)[m].size()
            ? (*in.unseen)[m][i]
            : 0;
    out->push_back(MetricTermRow(cfg.metrics[m], s.plans[m],
                                 mode == ScoringMode::kMetrics, column, i,
                                 unseen, in.now_ms));
  }
  for (size_t k = 0; k < kNumBuiltinTerms; ++k) {
    const ScorePlugin& plugin = *s.plugins[k];
    if (!s.counts[k] && !plugin.ExplainedWhenOff()) continue;
    const double weight =
        s.counts[k] ? cfg.builtins[static_cast<BuiltinTerm>(k)] : 0.0;
    out->push_back(plugin.Row(s.context, i, weight));
  }
}

// 7. Explain: one row per node. `refused` (the pre-filter's sentence), when
// set, is every node's reason; otherwise a node outside F gives its filter
// reasons, or the metric whose own filter removed it.
Explanation ExplainNodes(const DecideInput& in, const ScoringConfig& cfg,
                    const Decision& d, const PodFilter& pf, Scratch& s,
                    const std::string& refused) {
  const std::vector<NodeInfo>& nodes = *in.nodes;
  Explanation e{.mode = d.mode,
                .fallback_reason = d.fallback_reason,
                .best = d.node_index,
                .summary = d.filter_summary};
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeExplanation ne{.node = nodes[i].node.name};
    if (!refused.empty()) {
      ne.filter_reason = refused;
    } else if (s.feasible[i] != 0) {
      ne.feasible = true;
      ne.total = s.scores[i];
      NodeTerms(in, cfg, d.mode, s, i, &ne.terms);
    } else {
      NodeCheck c = CheckFully(pf, nodes[i], i, s);
      if (c.feasible() && i < s.excluded.size() &&
          s.excluded[i] != kNotExcluded) {
        c = MetricCheck(cfg, s, i);
      }
      ne.filter_reason =
          c.feasible()
              ? absl::StrCat("not considered: the pod's nominated node ",
                             in.pod->nominated_node_name, " fits")
              : absl::StrJoin(FailureReasons(pf, c, &cfg.metrics), ", ");
      // Which bound applied, when not the metric's default.
      if ((c.failures & (kFailMetricAbove | kFailMetricBelow)) != 0) {
        const std::string origin =
            BoundOriginText(cfg.metrics[c.metric],
                            c.failures == kFailMetricAbove, c.bound_origin);
        if (!origin.empty()) {
          absl::StrAppend(&ne.filter_reason, " (", origin, ")");
        }
      }
    }
    e.nodes.push_back(std::move(ne));
  }
  return e;
}

// The FailedScheduling message when no node is feasible: the reasons,
// counted only now that they are needed; each node's into s.checks.
std::string NoFitSummary(const std::vector<NodeInfo>& nodes,
                         const ScoringConfig& cfg, const PodFilter& pf,
                         Scratch& s) {
  s.summary.Reset(&pf, &cfg.metrics);
  s.checks.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeCheck& c = s.checks[i];
    if (i < s.excluded.size() && s.excluded[i] != kNotExcluded) {
      c = MetricCheck(cfg, s, i);
    } else {
      c = CheckFully(pf, nodes[i], i, s);
    }
    if (!c.feasible()) s.summary.Add(c);
  }
  return s.summary.Message(static_cast<int>(nodes.size()));
}

// PostFilter: what preemption would take, when the caller asks for it;
// its message follows the FailedScheduling summary.
void RunPreemption(const DecideInput& in, const ScoringConfig& cfg,
                   const PodFilter& pf, bool pre_filter_rejected, Scratch& s,
                   Decision& d) {
  if (!in.preempt || !cfg.preemption.enabled) return;
  DecisionFilter filter(pf, cfg, s);
  d.preemption = Preempt({.pod = in.pod,
                          .nodes = in.nodes,
                          .filter = &pf,
                          .checks = &s.checks,
                          .pre_filter_rejected = pre_filter_rejected,
                          .budgets = in.budgets,
                          .nominated = in.nominated,
                          .settings = cfg.preemption,
                          .kube = cfg.kube,
                          .now_ms = in.now_ms,
                          .seed = in.seed},
                         filter);
  if (!d.preemption->message.empty()) {
    absl::StrAppend(&d.filter_summary, " ", d.preemption->message);
    if (d.filter_summary.size() > kMaxMessageBytes) {
      d.filter_summary.resize(kMaxMessageBytes - 3);
      d.filter_summary += "...";
    }
  }
}

}  // namespace

Decision Decide(const DecideInput& input, const ScoringConfig& cfg,
                Workspace& ws) {
  Scratch& s = *ws.scratch_;
  DecideInput in = input;
  in.pod = PodAsTheReleaseReadsIt(*input.pod, cfg.kube, &s.release_pod);
  const std::vector<NodeInfo>& nodes = *in.nodes;
  const size_t n = nodes.size();
  Decision d;
  d.num_nodes = static_cast<int>(n);

  // 1. Pre-filter.
  PodFilter pf = MakePodFilter(*in.pod, cfg.kube, &cfg.added_affinity);
  SetDeviceClassResources(in.device_resources, cfg.kube, &pf);
  const PodScoring pod{.requests = pf.requests,
                       .non_zero = PodScoringRequests(*in.pod)};
  static const VolumeCatalog* const kNoVolumes = new VolumeCatalog();
  const VolumeCatalog& catalog =
      in.volumes != nullptr ? *in.volumes : *kNoVolumes;
  std::string refused;
  if (!in.pod->claims.empty() || !in.pod->inline_disks.empty()) {
    refused = PreFilterVolumes(*in.pod, catalog, cfg.kube, &s.volumes);
    pf.volumes = &s.volumes;
  }
  if (refused.empty()) {
    refused = UnsupportedConstraints(*in.pod);
  }
  if (!refused.empty()) {
    d.filter_summary =
        absl::StrCat("0/", n, " nodes are available: ", refused, ".");
    RunPreemption(in, cfg, pf, /*pre_filter_rejected=*/true, s, d);
    if (in.explain) d.explanation = ExplainNodes(in, cfg, d, pf, s, refused);
    return d;
  }
  const NodeTable* table = in.table;
  if (table == nullptr || table->size() != n) {
    s.own_table.Build(nodes);
    table = &s.own_table;
  }
  static const NamespaceLabels* const kNoNamespaces = new NamespaceLabels();
  const NamespaceLabels& namespaces =
      in.namespaces != nullptr ? *in.namespaces : *kNoNamespaces;
  s.affinity_filter.Build(*in.pod, table->placed(nodes), namespaces);
  if (s.affinity_filter.active()) pf.pod_affinity = &s.affinity_filter;
  s.spread_filter.Build(*in.pod, table->placed(nodes), in.workloads);
  if (s.spread_filter.active()) pf.topology_spread = &s.spread_filter;

  // 2. Filter.
  Grow(s.feasible, n);
  size_t count = Filter(pf, nodes, *table, s.feasible.data());
  CollectNominated(in, s);
  count -= FilterNominated(pf, nodes, s);
  const int nominated_node = FeasibleNominatedNode(*in.pod, nodes, s);
  if (nominated_node >= 0) {
    std::fill_n(s.feasible.begin(), n, 0);
    s.feasible[nominated_node] = -1;
    count = 1;
  }

  // 3. Pre-score.
  PreScore(in, cfg, /*exclude=*/nominated_node < 0, count, s, d);
  d.num_feasible = static_cast<int>(count);

  if (count == 0) {
    d.filter_summary = NoFitSummary(nodes, cfg, pf, s);
    RunPreemption(in, cfg, pf, /*pre_filter_rejected=*/false, s, d);
  } else {
    // 4. Normalise. 5. Score. 6. Pick.
    s.context = {.pod = in.pod,
                 .requests = &pod.requests,
                 .non_zero = &pod.non_zero,
                 .nodes = &nodes,
                 .table = table,
                 .feasible = s.feasible.data(),
                 .config = &cfg,
                 .namespaces = &namespaces,
                 .workloads = in.workloads,
                 .recent_placements = in.recent_placements,
                 .siblings = in.siblings,
                 .volume_binding =
                     pf.volumes != nullptr ? &pf.volumes->binding : nullptr,
                 .volume_catalog = &catalog};
    PreScoreBuiltins(s);
    bool per_node_weights = false;
    const double metric_weight =
        Normalise(cfg, d.mode, count, s, per_node_weights);
    Score(in, cfg, *table, pod, metric_weight, per_node_weights, s);
    const size_t best = Pick(nodes, *table, in.seed, s);
    d.node_index = static_cast<int>(best);
    d.score = s.scores[best];
    NodeTerms(in, cfg, d.mode, s, best, &d.terms);
    if (pf.volumes != nullptr) {
      VolumeBindingCheck(s.volumes.binding, nodes[best].node, catalog,
                         &d.volume_bindings);
    }
  }

  // 7. Explain.
  if (in.explain) d.explanation = ExplainNodes(in, cfg, d, pf, s, "");
  return d;
}

}  // namespace ms
