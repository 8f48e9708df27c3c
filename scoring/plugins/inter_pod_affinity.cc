#include "scoring/plugins/inter_pod_affinity.h"

#include <algorithm>
#include <limits>

namespace ms {
namespace {

// Whether `term` of the incoming pod selects the placed pod `other`.
bool Selects(const PodAffinityTerm& term, const PodInfo& other,
             const NamespaceLabels& namespaces) {
  return TermMatches(term, other.namespace_, other.labels, namespaces);
}

// Whether `term` of a placed pod selects the incoming `pod`.
bool Selects(const PodAffinityTerm& term, const Pod& pod,
             const NamespaceLabels& namespaces) {
  return TermMatches(term, pod.namespace_, pod.labels, namespaces);
}

// Calls f(node index, pod) for every placed pod `term` may select (`all`
// lists every node); the caller checks the whole term.
template <typename F>
void ForEachCandidate(const PodAffinityTerm& term, PlacedPods all, F&& f) {
  if (!term.label_selector) return;  // selects nothing
  ms::ForEachCandidate(*term.label_selector, *all.nodes, all.pods, f);
}

}  // namespace

void TopologyCounts::Reset(const TopologyIndex* topology) {
  topology_ = topology;
  keys_.clear();
  nonzero_ = 0;
}

const TopologyCounts::Key* TopologyCounts::Find(const std::string& key) const {
  for (const Key& k : keys_) {
    if (k.key == &key || *k.key == key) return &k;
  }
  return nullptr;
}

bool TopologyCounts::Add(size_t node, const std::string& key, int64_t v) {
  auto it = std::find_if(keys_.begin(), keys_.end(), [&](const Key& k) {
    return k.key == &key || *k.key == key;
  });
  const TopologyIndex::Column* column =
      it != keys_.end() ? it->column : topology_->Find(key);
  const int32_t id = DomainOf(column, node);
  if (id == TopologyIndex::kNone) return false;
  if (it == keys_.end()) {
    keys_.push_back(
        {&key, column, std::vector<int64_t>(column->num_values(), 0)});
    it = keys_.end() - 1;
  }
  int64_t& count = it->counts[id];
  nonzero_ -= count != 0;
  count += v;
  nonzero_ += count != 0;
  return true;
}

int64_t TopologyCounts::On(size_t node, const std::string& key) const {
  const Key* k = Find(key);
  if (k == nullptr) return 0;
  const int32_t id = k->column->ids[node];
  return id == TopologyIndex::kNone ? 0 : k->counts[id];
}

int64_t TopologyCounts::SumOn(size_t node) const {
  int64_t sum = 0;
  for (const Key& k : keys_) {
    const int32_t id = k.column->ids[node];
    if (id != TopologyIndex::kNone) sum += k.counts[id];
  }
  return sum;
}

void InterPodAffinityFilter::Build(const Pod& pod, PlacedPods all,
                                   const NamespaceLabels& namespaces) {
  pod_ = &pod;
  namespaces_ = &namespaces;
  existing_anti_.Reset(all.topology);
  affinity_.Reset(all.topology);
  anti_.Reset(all.topology);
  ForEachPodWithTerms(PodTerms::kRequiredAntiAffinity, all,
                      [&](size_t i, const PodInfo& other) {
                        for (const PodAffinityTerm& t :
                             other.anti_affinity().required) {
                          if (Selects(t, pod, namespaces)) {
                            existing_anti_.Add(i, t.topology_key, 1);
                          }
                        }
                      });

  const std::vector<PodAffinityTerm>& affinity = pod.pod_affinity.required;
  const std::vector<PodAffinityTerm>& anti = pod.pod_anti_affinity.required;
  // A pod counts for affinity when it matches every term: the candidates
  // of the first term are enough to look at.
  affinity_keys_.clear();
  for (const PodAffinityTerm& t : affinity) {
    affinity_keys_.push_back(all.topology->Find(t.topology_key));
  }
  if (!affinity.empty()) {
    ForEachCandidate(affinity[0], all, [&](size_t i, const PodInfo& other) {
      for (const PodAffinityTerm& t : affinity) {
        if (!Selects(t, other, namespaces)) return;
      }
      for (const PodAffinityTerm& t : affinity) {
        affinity_.Add(i, t.topology_key, 1);
      }
    });
  }
  for (const PodAffinityTerm& t : anti) {
    ForEachCandidate(t, all, [&](size_t i, const PodInfo& other) {
      if (Selects(t, other, namespaces)) anti_.Add(i, t.topology_key, 1);
    });
  }
  matches_own_terms_ =
      !affinity.empty() &&
      std::all_of(affinity.begin(), affinity.end(),
                  [&](const PodAffinityTerm& t) {
                    return TermMatches(t, pod.namespace_, pod.labels,
                                       namespaces);
                  });
  active_ = !existing_anti_.empty() || !affinity.empty() || !anti.empty();
}

void InterPodAffinityFilter::AddPod(size_t i, const PodInfo& other,
                                    int delta) {
  if (!active_) return;  // skipped plugins have no AddPod either
  for (const PodAffinityTerm& t : other.anti_affinity().required) {
    if (Selects(t, *pod_, *namespaces_)) {
      existing_anti_.Add(i, t.topology_key, delta);
    }
  }
  const std::vector<PodAffinityTerm>& affinity = pod_->pod_affinity.required;
  if (!affinity.empty() &&
      std::all_of(affinity.begin(), affinity.end(),
                  [&](const PodAffinityTerm& t) {
                    return Selects(t, other, *namespaces_);
                  })) {
    for (const PodAffinityTerm& t : affinity) {
      affinity_.Add(i, t.topology_key, delta);
    }
  }
  for (const PodAffinityTerm& t : pod_->pod_anti_affinity.required) {
    if (Selects(t, other, *namespaces_)) anti_.Add(i, t.topology_key, delta);
  }
}

InterPodAffinityFilter::Verdict InterPodAffinityFilter::Check(
    size_t i) const {
  if (!active_) return Verdict::kFits;
  bool pods_exist = true;
  const std::vector<PodAffinityTerm>& affinity = pod_->pod_affinity.required;
  for (size_t k = 0; k < affinity.size(); ++k) {
    if (DomainOf(affinity_keys_[k], i) == TopologyIndex::kNone) {
      return Verdict::kAffinity;
    }
    if (affinity_.On(i, affinity[k].topology_key) <= 0) pods_exist = false;
  }
  // The first pod of a group that selects itself may go anywhere its other
  // constraints allow, but only while no pod matches at all.
  if (!pods_exist && !(affinity_.empty() && matches_own_terms_)) {
    return Verdict::kAffinity;
  }
  if (!anti_.empty()) {
    for (const PodAffinityTerm& t : pod_->pod_anti_affinity.required) {
      if (anti_.On(i, t.topology_key) > 0) return Verdict::kAntiAffinity;
    }
  }
  if (!existing_anti_.empty() && existing_anti_.SumOn(i) > 0) {
    return Verdict::kExistingAntiAffinity;
  }
  return Verdict::kFits;
}

void InterPodAffinityScore::Build(const Pod& pod, PlacedPods all,
                                  const NamespaceLabels& namespaces) {
  scores_.Reset(all.topology);
  const std::vector<WeightedPodAffinityTerm>& preferred =
      pod.pod_affinity.preferred;
  const std::vector<WeightedPodAffinityTerm>& preferred_anti =
      pod.pod_anti_affinity.preferred;
  bool touched = false;
  // Adds `weight` on the node's pair for the term's key when `matches`.
  auto add = [&](size_t i, const PodAffinityTerm& t, bool matches,
                 int64_t weight) {
    if (matches && scores_.Add(i, t.topology_key, weight)) touched = true;
  };
  // The incoming pod's terms, over the pods they may select.
  for (const auto* terms : {&preferred, &preferred_anti}) {
    const int64_t sign = terms == &preferred ? 1 : -1;
    for (const WeightedPodAffinityTerm& w : *terms) {
      ForEachCandidate(w.term, all, [&](size_t i, const PodInfo& other) {
        add(i, w.term, Selects(w.term, other, namespaces), sign * w.weight);
      });
    }
  }
  // The placed pods' terms, over the pods that have any.
  ForEachPodWithTerms(PodTerms::kAny, all, [&](size_t i, const PodInfo& other) {
    for (const PodAffinityTerm& t : other.affinity().required) {
      add(i, t, Selects(t, pod, namespaces), 1);
    }
    for (const WeightedPodAffinityTerm& w : other.affinity().preferred) {
      add(i, w.term, Selects(w.term, pod, namespaces), w.weight);
    }
    for (const WeightedPodAffinityTerm& w : other.anti_affinity().preferred) {
      add(i, w.term, Selects(w.term, pod, namespaces), -w.weight);
    }
  });
  active_ = touched;
}

int64_t InterPodAffinityScore::Raw(size_t i) const {
  if (!active_) return 0;
  return scores_.SumOn(i);
}

void NormalizeInterPodAffinity(const int64_t* raw, const int64_t* feasible,
                               size_t n, double* out) {
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < n; ++i) {
    if (feasible[i] == 0) continue;
    lo = std::min(lo, raw[i]);
    hi = std::max(hi, raw[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    if (feasible[i] == 0) continue;
    double score = 0;
    if (hi > lo) {
      score = kMaxNodeScore * (static_cast<double>(raw[i] - lo) /
                               static_cast<double>(hi - lo));
    }
    out[i] = static_cast<double>(static_cast<int64_t>(score));
  }
}

namespace {

class InterPodAffinityPlugin final : public NormalizedScorePlugin {
 public:
  InterPodAffinityPlugin()
      : NormalizedScorePlugin(BuiltinTerm::kInterPodAffinity) {}

  bool PreScore(const ScoreContext& ctx) override {
    score_.Build(*ctx.pod, ctx.table->placed(*ctx.nodes), *ctx.namespaces);
    if (!score_.active()) return false;
    const size_t n = ctx.num_nodes();
    Reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (ctx.feasible[i] != 0) raw_[i] = score_.Raw(i);
    }
    NormalizeInterPodAffinity(raw_.data(), ctx.feasible, n, scores_.data());
    return true;
  }

 private:
  InterPodAffinityScore score_;
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeInterPodAffinityPlugin() {
  return std::make_unique<InterPodAffinityPlugin>();
}

}  // namespace ms
