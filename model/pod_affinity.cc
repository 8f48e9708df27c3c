#include "model/pod_affinity.h"

#include <algorithm>

namespace ms {
namespace {

bool Holds(const LabelRequirement& r, const Labels& labels) {
  auto it = labels.find(r.key);
  const bool has = it != labels.end();
  auto listed = [&] {
    return std::find(r.values.begin(), r.values.end(), it->second) !=
           r.values.end();
  };
  switch (r.op) {
    case LabelOperator::kIn:
      return has && listed();
    case LabelOperator::kNotIn:
      return !has || !listed();
    case LabelOperator::kExists:
      return has;
    case LabelOperator::kDoesNotExist:
      return !has;
  }
  return false;
}

}  // namespace

const Labels& LabelsOf(const NamespaceLabels& namespaces,
                       const std::string& name) {
  static const Labels* const kNone = new Labels();
  auto it = namespaces.find(name);
  return it == namespaces.end() ? *kNone : it->second;
}

bool Selects(const std::optional<LabelSelector>& selector,
             const Labels& labels) {
  if (!selector) return false;
  for (const auto& [key, value] : selector->match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const LabelRequirement& r : selector->match_expressions) {
    if (!Holds(r, labels)) return false;
  }
  return true;
}

bool TermMatches(const PodAffinityTerm& term, const std::string& pod_namespace,
                 const Labels& pod_labels, const NamespaceLabels& namespaces) {
  if (!Selects(term.label_selector, pod_labels)) return false;
  return std::find(term.namespaces.begin(), term.namespaces.end(),
                   pod_namespace) != term.namespaces.end() ||
         (term.namespace_selector &&
          Selects(term.namespace_selector, LabelsOf(namespaces, pod_namespace)));
}

bool WidenNamespaceSelectorsAsBefore137(PodAffinityRules* rules) {
  bool changed = false;
  auto widen = [&](PodAffinityTerm& term) {
    std::optional<LabelSelector>& s = term.namespace_selector;
    if (s && (!s->match_labels.empty() || !s->match_expressions.empty()) &&
        Selects(s, Labels{})) {
      s = LabelSelector{};
      changed = true;
    }
  };
  for (PodAffinityTerm& t : rules->required) widen(t);
  for (WeightedPodAffinityTerm& t : rules->preferred) widen(t.term);
  return changed;
}

}  // namespace ms
