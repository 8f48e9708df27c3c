// Pod affinity and anti-affinity terms, and the label selectors they use.
//
// Plain values decoded by kube/ from spec.affinity.podAffinity and
// podAntiAffinity, read by scoring/plugins/inter_pod_affinity. The matching
// rules are kube-scheduler v1.34's (framework.AffinityTerm):
//   - a selector that is absent selects nothing; an empty one ({}) selects
//     everything (metav1.LabelSelectorAsSelector);
//   - a term applies to the namespaces it lists plus those its
//     namespaceSelector selects; with neither, to its own pod's namespace.
// matchLabelKeys and mismatchLabelKeys need nothing here: the apiserver
// merges them into the labelSelector when it admits the pod.
// Thread-compatible.
#ifndef METRICS_SCHEDULER_MODEL_POD_AFFINITY_H_
#define METRICS_SCHEDULER_MODEL_POD_AFFINITY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace ms {

using Labels = std::map<std::string, std::string>;

// What the scheduler knows of a Kubernetes Namespace: its labels, for
// namespaceSelector.
struct Namespace {
  std::string name;
  std::string uid;
  std::string resource_version;
  Labels labels;

  friend bool operator==(const Namespace&, const Namespace&) = default;
};

// The labels of each namespace, by name (for namespaceSelector).
using NamespaceLabels = absl::flat_hash_map<std::string, Labels>;

// The labels of namespace `name`; empty when it is not known.
const Labels& LabelsOf(const NamespaceLabels& namespaces,
                       const std::string& name);

enum class LabelOperator { kIn, kNotIn, kExists, kDoesNotExist };

struct LabelRequirement {
  std::string key;
  LabelOperator op = LabelOperator::kIn;
  std::vector<std::string> values;

  friend bool operator==(const LabelRequirement&,
                         const LabelRequirement&) = default;
};

// metav1.LabelSelector: every matchLabels pair and every requirement must
// hold.
struct LabelSelector {
  Labels match_labels;
  std::vector<LabelRequirement> match_expressions;

  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

// Whether `selector` selects `labels`; an absent selector selects nothing.
bool Selects(const std::optional<LabelSelector>& selector,
             const Labels& labels);

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;
  // Listed namespaces. Both empty and no namespace_selector: the namespace
  // of the pod the term belongs to (resolved by the decoder, so
  // `namespaces` is never empty then).
  std::vector<std::string> namespaces;
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;

  friend bool operator==(const PodAffinityTerm&,
                         const PodAffinityTerm&) = default;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;  // 1..100
  PodAffinityTerm term;

  friend bool operator==(const WeightedPodAffinityTerm&,
                         const WeightedPodAffinityTerm&) = default;
};

// requiredDuringScheduling... and preferredDuringScheduling... of a
// podAffinity or podAntiAffinity.
struct PodAffinityRules {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;

  bool empty() const { return required.empty() && preferred.empty(); }
  friend bool operator==(const PodAffinityRules&,
                         const PodAffinityRules&) = default;
};

// Whether `term` applies to a pod in `pod_namespace` labelled `pod_labels`;
// `namespaces` gives the labels of that namespace (none when it is not
// known), read only for a term with a namespaceSelector.
bool TermMatches(const PodAffinityTerm& term, const std::string& pod_namespace,
                 const Labels& pod_labels, const NamespaceLabels& namespaces);

// kube-scheduler 1.34 to 1.36 match the incoming pod's own terms against
// no namespace labels once they have listed the namespaces a
// namespaceSelector selects (the selector was meant to be cleared, but
// was cleared on a copy; fixed in 1.37), so a selector that is not empty
// yet selects a namespace without labels (only NotIn and DoesNotExist
// requirements) selects every namespace. This rewrites such selectors of
// `rules` to the empty selector, which selects every namespace; whether
// any was.
bool WidenNamespaceSelectorsAsBefore137(PodAffinityRules* rules);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_POD_AFFINITY_H_
