#include "scoring/plugins/pod_topology_spread.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "scoring/plugins/node_affinity.h"
#include "scoring/plugins/taint_toleration.h"

namespace ms {
namespace {

// The system default constraints (kube-scheduler's systemDefaultConstraints),
// in its order.
struct DefaultConstraint {
  const char* key;
  int32_t max_skew;
};
constexpr DefaultConstraint kSystemDefaults[] = {
    {"kubernetes.io/hostname", 3},
    {"topology.kubernetes.io/zone", 5},
};

constexpr char kHostnameKey[] = "kubernetes.io/hostname";

// An empty selector (labels.Everything()) counts no pod, though it selects
// the incoming one.
bool IsEmpty(const LabelSelector& s) {
  return s.match_labels.empty() && s.match_expressions.empty();
}

// Appends `pairs` to `selector` as In requirements, so that a pair that
// contradicts one already there selects nothing instead of replacing it.
void AddPairs(const Labels& pairs, LabelSelector& selector) {
  for (const auto& [key, value] : pairs) {
    selector.match_expressions.push_back(
        {.key = key, .op = LabelOperator::kIn, .values = {value}});
  }
}

// The workload selector (an RS or SS spec.selector) added to `out`: none
// when absent (it selects nothing, and adds no requirement).
void AddSelector(const std::optional<LabelSelector>& s, LabelSelector& out) {
  if (!s) return;
  AddPairs(s->match_labels, out);
  out.match_expressions.insert(out.match_expressions.end(),
                               s->match_expressions.begin(),
                               s->match_expressions.end());
}

// counts[i]: the pods of node i in `ns` that the constraint's selector
// selects, leaving out terminating ones (countPodsMatchSelector), found
// through the index.
void CountPerNode(const SpreadConstraint& c, const std::string& ns,
                  PlacedPods all, std::vector<int32_t>& counts) {
  counts.assign(all.nodes->size(), 0);
  if (!c.selector || IsEmpty(*c.selector)) return;
  const LabelSelector& selector = *c.selector;
  ForEachCandidate(selector, *all.nodes, all.pods,
                   [&](size_t i, const PodInfo& p) {
                     if (p.terminating || p.namespace_ != ns ||
                         !Selects(selector, p.labels)) {
                       return;
                     }
                     ++counts[i];
                   });
}

// The columns of the constraints' keys.
void FindColumns(const std::vector<SpreadConstraint>& constraints,
                 const TopologyIndex& topology,
                 std::vector<const TopologyIndex::Column*>& columns) {
  columns.clear();
  for (const SpreadConstraint& c : constraints) {
    columns.push_back(topology.Find(c.topology_key));
  }
}

// Whether node i has every constraint's key.
bool HasAllKeys(const std::vector<const TopologyIndex::Column*>& columns,
                size_t i) {
  for (const TopologyIndex::Column* column : columns) {
    if (DomainOf(column, i) == TopologyIndex::kNone) return false;
  }
  return true;
}

// Whether the node counts for the constraint under its inclusion policies.
bool Includes(const SpreadConstraint& c, const Pod& pod, const Node& node) {
  if (c.honor_node_affinity && HasNodeAffinity(pod) &&
      !MatchesNodeAffinity(pod, node)) {
    return false;
  }
  if (c.honor_taints &&
      FirstUntoleratedTaint(pod.tolerations, node.taints) != nullptr) {
    return false;
  }
  return true;
}

// Node i's slot for a column's counts: its value's id or, when it lacks
// the label, the slot of "" (kube-scheduler reads a missing label as the
// empty value). Counts have num_values() + 1 slots; the last is "" when
// no node has that value.
size_t SlotOf(const TopologyIndex::Column* column, size_t i) {
  if (column == nullptr) return 0;
  const int32_t id = column->ids[i];
  if (id != TopologyIndex::kNone) return static_cast<size_t>(id);
  auto empty = column->by_value.find("");
  return empty != column->by_value.end() ? static_cast<size_t>(empty->second)
                                         : column->num_values();
}

size_t NumSlots(const TopologyIndex::Column* column) {
  return column == nullptr ? 1 : column->num_values() + 1;
}

// A domain no node counts for.
constexpr int64_t kUncounted = std::numeric_limits<int64_t>::min();

int64_t CountOf(int64_t domain) { return domain == kUncounted ? 0 : domain; }

}  // namespace

std::optional<LabelSelector> DefaultSpreadSelector(
    const Pod& pod, const WorkloadSelectors& workloads) {
  LabelSelector out;
  if (auto it = workloads.services.find(pod.namespace_);
      it != workloads.services.end()) {
    for (const auto& [name, selector] : it->second) {
      if (!selector.empty() && Selects(LabelSelector{.match_labels = selector},
                                       pod.labels)) {
        for (const auto& [k, v] : selector) out.match_labels[k] = v;
      }
    }
  }
  if (!pod.controller) return out;
  const ControllerRef& owner = *pod.controller;
  const std::string key = absl::StrCat(pod.namespace_, "/", owner.name);
  if (owner.api_version == "v1" && owner.kind == "ReplicationController") {
    if (auto it = workloads.replication_controllers.find(key);
        it != workloads.replication_controllers.end()) {
      for (const auto& [k, v] : it->second) out.match_labels[k] = v;
    }
  } else if (owner.api_version == "apps/v1" && owner.kind == "ReplicaSet") {
    if (auto it = workloads.replica_sets.find(key);
        it != workloads.replica_sets.end()) {
      AddSelector(it->second, out);
    }
  } else if (owner.api_version == "apps/v1" && owner.kind == "StatefulSet") {
    if (auto it = workloads.stateful_sets.find(key);
        it != workloads.stateful_sets.end()) {
      AddSelector(it->second, out);
    }
  }
  return out;
}

std::vector<SpreadConstraint> SpreadConstraints(
    const Pod& pod, UnsatisfiableAction action,
    const WorkloadSelectors* workloads) {
  std::vector<SpreadConstraint> out;
  if (pod.topology_spread.empty()) {
    // The system defaults are all ScheduleAnyway.
    if (action != UnsatisfiableAction::kScheduleAnyway || workloads == nullptr) {
      return out;
    }
    std::optional<LabelSelector> selector =
        DefaultSpreadSelector(pod, *workloads);
    if (!selector || IsEmpty(*selector)) return out;
    for (const DefaultConstraint& d : kSystemDefaults) {
      out.push_back({.max_skew = d.max_skew,
                     .topology_key = d.key,
                     .selector = selector});
    }
    return out;
  }
  for (const TopologySpreadConstraint& c : pod.topology_spread) {
    if (c.when_unsatisfiable != action) continue;
    SpreadConstraint sc{
        .max_skew = c.max_skew,
        .topology_key = c.topology_key,
        .selector = c.label_selector,
        .min_domains = c.min_domains.value_or(1),
        .honor_node_affinity =
            c.node_affinity_policy.value_or(NodeInclusionPolicy::kHonor) ==
            NodeInclusionPolicy::kHonor,
        .honor_taints =
            c.node_taints_policy.value_or(NodeInclusionPolicy::kIgnore) ==
            NodeInclusionPolicy::kHonor,
    };
    // matchLabelKeys: the pod's values of those keys join the selector
    // (a selector that selects nothing stays so).
    if (sc.selector) {
      Labels pairs;
      for (const std::string& k : c.match_label_keys) {
        if (auto it = pod.labels.find(k); it != pod.labels.end()) {
          pairs[k] = it->second;
        }
      }
      AddPairs(pairs, *sc.selector);
    }
    out.push_back(std::move(sc));
  }
  return out;
}

void PodTopologySpreadFilter::Build(const Pod& pod, PlacedPods all,
                                    const WorkloadSelectors* workloads) {
  constraints_ =
      SpreadConstraints(pod, UnsatisfiableAction::kDoNotSchedule, workloads);
  counted_.assign(constraints_.size(), {});
  if (constraints_.empty()) return;
  FindColumns(constraints_, *all.topology, columns_);
  const std::vector<NodeInfo>& nodes = *all.nodes;
  for (size_t i = 0; i < constraints_.size(); ++i) {
    const SpreadConstraint& c = constraints_[i];
    Counted& k = counted_[i];
    // A domain is counted once a node of it is.
    k.domains.assign(NumSlots(columns_[i]), kUncounted);
    CountPerNode(c, pod.namespace_, all, per_node_);
    for (size_t j = 0; j < nodes.size(); ++j) {
      if (!HasAllKeys(columns_, j) || !Includes(c, pod, nodes[j].node)) {
        continue;
      }
      int64_t& count = k.domains[SlotOf(columns_[i], j)];
      count = CountOf(count) + per_node_[j];
    }
  }
  pod_ = &pod;
  nodes_ = all.nodes;
  for (size_t i = 0; i < constraints_.size(); ++i) {
    counted_[i].self = Selects(constraints_[i].selector, pod.labels) ? 1 : 0;
    UpdateMin(i);
  }
}

void PodTopologySpreadFilter::UpdateMin(size_t i) {
  Counted& k = counted_[i];
  k.min = std::numeric_limits<int32_t>::max();  // no domain: no skew
  size_t domains = 0;
  for (int64_t count : k.domains) {
    if (count == kUncounted) continue;
    ++domains;
    k.min = std::min(k.min, count);
  }
  if (domains < static_cast<size_t>(std::max(constraints_[i].min_domains, 0))) {
    k.min = 0;
  }
}

void PodTopologySpreadFilter::AddPod(size_t j, const PodInfo& other,
                                     int delta) {
  if (constraints_.empty() || other.namespace_ != pod_->namespace_ ||
      !HasAllKeys(columns_, j)) {
    return;
  }
  const Node& node = (*nodes_)[j].node;
  for (size_t i = 0; i < constraints_.size(); ++i) {
    const SpreadConstraint& c = constraints_[i];
    // kube-scheduler's updateWithPod: the selector as it is (an empty one
    // selects every pod here), terminating pods included.
    if (!Selects(c.selector, other.labels) || !Includes(c, *pod_, node)) {
      continue;
    }
    int64_t& count = counted_[i].domains[SlotOf(columns_[i], j)];
    count = CountOf(count) + delta;
    UpdateMin(i);
  }
}

PodTopologySpreadFilter::Verdict PodTopologySpreadFilter::Check(
    size_t j) const {
  for (size_t i = 0; i < constraints_.size(); ++i) {
    const SpreadConstraint& c = constraints_[i];
    const int32_t id = DomainOf(columns_[i], j);
    if (id == TopologyIndex::kNone) return Verdict::kMissingLabel;
    const Counted& k = counted_[i];
    const int64_t count = CountOf(k.domains[id]);
    if (count + k.self - k.min > c.max_skew) return Verdict::kSkew;
  }
  return Verdict::kFits;
}

void PodTopologySpreadScore::Build(const Pod& pod, PlacedPods all,
                                   const int64_t* feasible,
                                   const WorkloadSelectors* workloads) {
  const std::vector<NodeInfo>& nodes = *all.nodes;
  constraints_ =
      SpreadConstraints(pod, UnsatisfiableAction::kScheduleAnyway, workloads);
  if (constraints_.empty() || nodes.empty()) {
    constraints_.clear();
    return;
  }
  FindColumns(constraints_, *all.topology, columns_);
  domains_.resize(constraints_.size());
  per_node_.resize(constraints_.size());
  weights_.assign(constraints_.size(), 0);
  // A domain is counted (>= 0) once a feasible node of it is.
  for (size_t i = 0; i < constraints_.size(); ++i) {
    domains_[i].assign(NumSlots(columns_[i]), -1);
  }
  // Only the system defaults may score nodes that lack one of the keys.
  require_all_keys_ = !pod.topology_spread.empty();
  const size_t n = nodes.size();
  size_t scored = 0;  // feasible and not ignored
  std::vector<size_t> sizes(constraints_.size(), 0);
  for (size_t j = 0; j < n; ++j) {
    if (feasible[j] == 0) continue;
    if (require_all_keys_ && !HasAllKeys(columns_, j)) continue;
    ++scored;
    for (size_t i = 0; i < constraints_.size(); ++i) {
      if (constraints_[i].topology_key == kHostnameKey) continue;
      int64_t& count = domains_[i][SlotOf(columns_[i], j)];
      if (count < 0) {
        count = 0;
        ++sizes[i];
      }
    }
  }
  for (size_t i = 0; i < constraints_.size(); ++i) {
    const size_t size =
        constraints_[i].topology_key == kHostnameKey ? scored : sizes[i];
    weights_[i] = std::log(static_cast<double>(size + 2));
  }
  // The domains' counts, over every node.
  for (size_t i = 0; i < constraints_.size(); ++i) {
    const SpreadConstraint& c = constraints_[i];
    CountPerNode(c, pod.namespace_, all, per_node_[i]);
    if (c.topology_key == kHostnameKey) continue;
    for (size_t j = 0; j < n; ++j) {
      if (require_all_keys_ && !HasAllKeys(columns_, j)) continue;
      if (!Includes(c, pod, nodes[j].node)) continue;
      int64_t& count = domains_[i][SlotOf(columns_[i], j)];
      if (count >= 0) count += per_node_[i][j];  // else no feasible node there
    }
  }
}

int64_t PodTopologySpreadScore::Raw(size_t j) const {
  if (require_all_keys_ && !HasAllKeys(columns_, j)) return -1;
  double score = 0;
  for (size_t i = 0; i < constraints_.size(); ++i) {
    const SpreadConstraint& c = constraints_[i];
    const int32_t id = DomainOf(columns_[i], j);
    if (id == TopologyIndex::kNone) continue;
    const int64_t count = c.topology_key == kHostnameKey
                              ? per_node_[i][j]
                              : std::max<int64_t>(domains_[i][id], 0);
    score += static_cast<double>(count) * weights_[i] +
             static_cast<double>(c.max_skew - 1);
  }
  return static_cast<int64_t>(std::round(score));
}

void NormalizePodTopologySpread(const int64_t* raw, const int64_t* feasible,
                                size_t n, double* out) {
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = 0;
  for (size_t i = 0; i < n; ++i) {
    if (feasible[i] == 0 || raw[i] < 0) continue;
    lo = std::min(lo, raw[i]);
    hi = std::max(hi, raw[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    if (feasible[i] == 0) continue;
    if (raw[i] < 0) {
      out[i] = 0;
    } else if (hi == 0) {
      out[i] = kMaxNodeScore;
    } else {
      out[i] = static_cast<double>(
          static_cast<int64_t>(kMaxNodeScore) * (hi + lo - raw[i]) / hi);
    }
  }
}

namespace {

class PodTopologySpreadPlugin final : public NormalizedScorePlugin {
 public:
  PodTopologySpreadPlugin()
      : NormalizedScorePlugin(BuiltinTerm::kPodTopologySpread) {}

  bool PreScore(const ScoreContext& ctx) override {
    score_.Build(*ctx.pod, ctx.table->placed(*ctx.nodes), ctx.feasible,
                 ctx.workloads);
    if (!score_.active()) return false;
    const size_t n = ctx.num_nodes();
    Reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (ctx.feasible[i] != 0) raw_[i] = score_.Raw(i);
    }
    NormalizePodTopologySpread(raw_.data(), ctx.feasible, n, scores_.data());
    return true;
  }

 private:
  PodTopologySpreadScore score_;
};

}  // namespace

std::unique_ptr<ScorePlugin> MakePodTopologySpreadPlugin() {
  return std::make_unique<PodTopologySpreadPlugin>();
}

}  // namespace ms
