#include "scoring/plugins/inter_pod_affinity.h"

#include <algorithm>
#include <limits>

namespace ms {
namespace {

// Adds `value` to the node's pair for `key`, if the node has that label.
void AddOnNode(TopologyCounts& counts, const Node& node,
               const std::string& key, int64_t value) {
  auto it = node.labels.find(key);
  if (it == node.labels.end()) return;
  counts[{key, it->second}] += value;
}

int64_t CountOf(const TopologyCounts& counts, absl::string_view key,
                absl::string_view value) {
  auto it = counts.find(std::make_pair(key, value));
  return it == counts.end() ? 0 : it->second;
}

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

// Calls f(node, pod) for every placed pod `term` may select (`all` lists
// every node); the caller checks the whole term.
template <typename F>
void ForEachCandidate(const PodAffinityTerm& term, NodeSubset all, F&& f) {
  if (!term.label_selector) return;  // selects nothing
  ms::ForEachCandidate(*term.label_selector, *all.nodes, all.index,
                       [&](size_t i, const PodInfo& pod) {
                         f((*all.nodes)[i], pod);
                       });
}

}  // namespace

void InterPodAffinityFilter::Build(const Pod& pod, NodeSubset all,
                                   NodeSubset with_required_anti,
                                   const NamespaceLabels& namespaces) {
  pod_ = &pod;
  existing_anti_.clear();
  affinity_.clear();
  anti_.clear();
  with_required_anti.ForEach([&](const NodeInfo& info) {
    for (const auto& other : info.pods) {
      for (const PodAffinityTerm& t : other->anti_affinity.required) {
        if (Selects(t, pod, namespaces)) {
          AddOnNode(existing_anti_, info.node, t.topology_key, 1);
        }
      }
    }
  });

  const std::vector<PodAffinityTerm>& affinity = pod.pod_affinity.required;
  const std::vector<PodAffinityTerm>& anti = pod.pod_anti_affinity.required;
  // A pod counts for affinity when it matches every term: the candidates
  // of the first term are enough to look at.
  if (!affinity.empty()) {
    ForEachCandidate(affinity[0], all,
                     [&](const NodeInfo& info, const PodInfo& other) {
                       for (const PodAffinityTerm& t : affinity) {
                         if (!Selects(t, other, namespaces)) return;
                       }
                       for (const PodAffinityTerm& t : affinity) {
                         AddOnNode(affinity_, info.node, t.topology_key, 1);
                       }
                     });
  }
  for (const PodAffinityTerm& t : anti) {
    ForEachCandidate(t, all, [&](const NodeInfo& info, const PodInfo& other) {
      if (Selects(t, other, namespaces)) {
        AddOnNode(anti_, info.node, t.topology_key, 1);
      }
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

InterPodAffinityFilter::Verdict InterPodAffinityFilter::Check(
    const Node& node) const {
  if (!active_) return Verdict::kFits;
  bool pods_exist = true;
  for (const PodAffinityTerm& t : pod_->pod_affinity.required) {
    auto it = node.labels.find(t.topology_key);
    if (it == node.labels.end()) return Verdict::kAffinity;
    if (CountOf(affinity_, t.topology_key, it->second) <= 0) {
      pods_exist = false;
    }
  }
  // The first pod of a group that selects itself may go anywhere its other
  // constraints allow, but only while no pod matches at all.
  if (!pods_exist && !(affinity_.empty() && matches_own_terms_)) {
    return Verdict::kAffinity;
  }
  if (!anti_.empty()) {
    for (const PodAffinityTerm& t : pod_->pod_anti_affinity.required) {
      auto it = node.labels.find(t.topology_key);
      if (it != node.labels.end() &&
          CountOf(anti_, t.topology_key, it->second) > 0) {
        return Verdict::kAntiAffinity;
      }
    }
  }
  if (!existing_anti_.empty()) {
    for (const auto& [key, value] : node.labels) {
      if (CountOf(existing_anti_, key, value) > 0) {
        return Verdict::kExistingAntiAffinity;
      }
    }
  }
  return Verdict::kFits;
}

void InterPodAffinityScore::Build(const Pod& pod, NodeSubset all,
                                  NodeSubset with_affinity,
                                  const NamespaceLabels& namespaces) {
  scores_.clear();
  const std::vector<WeightedPodAffinityTerm>& preferred =
      pod.pod_affinity.preferred;
  const std::vector<WeightedPodAffinityTerm>& preferred_anti =
      pod.pod_anti_affinity.preferred;
  bool touched = false;
  // Adds `weight` on the node's pair for the term's key when `matches`.
  auto add = [&](const Node& node, const PodAffinityTerm& t, bool matches,
                 int64_t weight) {
    if (!matches) return;
    auto it = node.labels.find(t.topology_key);
    if (it == node.labels.end()) return;
    scores_[{t.topology_key, it->second}] += weight;
    touched = true;
  };
  // The incoming pod's terms, over the pods they may select.
  for (const auto* terms : {&preferred, &preferred_anti}) {
    const int64_t sign = terms == &preferred ? 1 : -1;
    for (const WeightedPodAffinityTerm& w : *terms) {
      ForEachCandidate(w.term, all,
                       [&](const NodeInfo& info, const PodInfo& other) {
                         add(info.node, w.term,
                             Selects(w.term, other, namespaces),
                             sign * w.weight);
                       });
    }
  }
  // The placed pods' terms, over the pods that have any.
  with_affinity.ForEach([&](const NodeInfo& info) {
    const Node& node = info.node;
    for (const auto& other : info.pods) {
      if (!other->has_affinity()) continue;
      for (const PodAffinityTerm& t : other->affinity.required) {
        add(node, t, Selects(t, pod, namespaces), 1);
      }
      for (const WeightedPodAffinityTerm& w : other->affinity.preferred) {
        add(node, w.term, Selects(w.term, pod, namespaces), w.weight);
      }
      for (const WeightedPodAffinityTerm& w : other->anti_affinity.preferred) {
        add(node, w.term, Selects(w.term, pod, namespaces), -w.weight);
      }
    }
  });
  active_ = touched;
}

int64_t InterPodAffinityScore::Raw(const Node& node) const {
  if (!active_) return 0;
  int64_t sum = 0;
  for (const auto& [key, value] : node.labels) {
    sum += CountOf(scores_, key, value);
  }
  return sum;
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

TermResult InterPodAffinityTerm(int64_t raw, double score, double weight) {
  return BuiltinTermRow(kTermInterPodAffinity, static_cast<double>(raw), score,
                        weight);
}

}  // namespace ms
