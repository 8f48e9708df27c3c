// Thresholds scoped as operators scope them: a metric filter's bounds for a
// class of pods, a pool of nodes, or one node (docs/configuration.md,
// "Thresholds by pod class, node pool and node").
//
// config/ loads a metric's `filter.scopes` into ThresholdScope values;
// scheduler/cycle/scoring_profile copies them into scoring's MetricTerm;
// scoring/filter_bounds.h applies them: the pod's side of each scope once
// per decision (SelectsPod), the node's side and the nodes' own bounds
// (SelectsNode, FilterAnnotationBound) only when nodes or their labels or
// annotations change. Plain values and pure functions; thread-compatible.
#ifndef METRICS_SCHEDULER_MODEL_THRESHOLD_SCOPE_H_
#define METRICS_SCHEDULER_MODEL_THRESHOLD_SCOPE_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/pod_affinity.h"

namespace ms {

// A metric filter's bounds: a fresh value above `max` or below `min` fails
// the node. Infinite: no bound on that side.
struct FilterBounds {
  double max = std::numeric_limits<double>::infinity();
  double min = -std::numeric_limits<double>::infinity();

  friend bool operator==(const FilterBounds&, const FilterBounds&) = default;
};

// The pods a scope applies to: every condition given holds.
struct PodClass {
  // On the pod's metadata.labels; absent: any labels.
  std::optional<LabelSelector> labels;
  // On spec.priority, both inclusive; absent: no limit on that side.
  std::optional<int32_t> min_priority;
  std::optional<int32_t> max_priority;

  friend bool operator==(const PodClass&, const PodClass&) = default;
};

// One entry of a metric's `filter.scopes`. For a pod and a node that both
// sides select, `bounds` replace the metric's default bounds, both of
// them: a side the scope leaves infinite has no bound there. At least one
// of `nodes` and `pods` is given.
struct ThresholdScope {
  std::optional<LabelSelector> nodes;  // on the Node's labels; absent: any
  std::optional<PodClass> pods;        // absent: any pod
  FilterBounds bounds;

  friend bool operator==(const ThresholdScope&,
                         const ThresholdScope&) = default;
};

// A metric has at most this many scopes: scoring keeps which of them
// match as the bits of a uint64_t.
inline constexpr size_t kMaxThresholdScopes = 64;

// Whether `scope`'s pod side selects `pod` (always, without one).
bool SelectsPod(const ThresholdScope& scope, const Pod& pod);

// Whether `scope`'s node side selects `node` (always, without one).
bool SelectsNode(const ThresholdScope& scope, const Node& node);

// The Node annotations that set one node's bounds on a metric, whatever
// the pod: <prefix><metric name>, e.g.
// max.filter.metrics-scheduler.io/cpu: "0.95". Each overrides its own side
// only; the other side keeps the bound of the scope or default.
inline constexpr char kMaxFilterAnnotationPrefix[] =
    "max.filter.metrics-scheduler.io/";
inline constexpr char kMinFilterAnnotationPrefix[] =
    "min.filter.metrics-scheduler.io/";

// The annotation keys of `metric`'s two node bounds.
std::string MaxFilterAnnotation(absl::string_view metric);
std::string MinFilterAnnotation(absl::string_view metric);

// The bound the annotation `key` of `node` sets: a finite decimal (`0.9`,
// `-3`, `1e3`, no white space around it); NaN when the node lacks the
// annotation or its value is anything else, which is then ignored.
double FilterAnnotationBound(const Node& node, const std::string& key);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_THRESHOLD_SCOPE_H_
