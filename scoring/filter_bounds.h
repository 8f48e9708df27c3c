// Filter bounds by pod and node: which bounds a metric's filter applies on
// each node for the pod being placed.
//
// A metric's filter (MetricTerm) has default bounds; scopes that replace
// both of them for the pods and nodes they select, the first that selects
// both winning; and, when it reads them, each node's own bounds from its
// annotations, each of which wins over the scope or default on its side
// (model/threshold_scope.h). Matching the scopes' label selectors per node
// per decision would cost O(nodes x scopes) label look-ups every time;
// instead the work is split by what it depends on:
//   - NodeBoundsColumn, per term, the node side: which scopes' node
//     selectors select each node, and each node's annotated bounds. It
//     changes only when nodes, their labels or their annotations do:
//     scheduler/cycle/metric_views.h builds it then and Decide reads it
//     (DecideInput::node_bounds).
//   - PodScopes, per term, the pod side, once per decision: which scopes
//     select the pod, as bits.
//   - BoundsAt, per node, O(1) and no allocation: the lowest bit set in
//     both is the first scope that selects the pod and the node.
// A term without scopes or annotations (has_scoped_filter() false) needs
// none of this: its default bounds hold everywhere, as they always did.
//
// Pure functions and plain values; thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_FILTER_BOUNDS_H_
#define METRICS_SCHEDULER_SCORING_FILTER_BOUNDS_H_

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/node_info.h"
#include "model/pod.h"
#include "model/threshold_scope.h"
#include "scoring/scoring_config.h"

namespace ms {

// Where one side of a node's bounds came from, for explain.
struct BoundOrigin {
  enum class Source : uint8_t {
    kDefault,         // the metric's filter.max or filter.min
    kScope,           // filter.scopes[scope]
    kNodeAnnotation,  // the node's max or min filter annotation
  };
  Source source = Source::kDefault;
  uint8_t scope = 0;  // for kScope: the index into MetricTerm::filter_scopes

  friend bool operator==(const BoundOrigin&, const BoundOrigin&) = default;
};

// A node's bounds on one metric for one pod, and where each side came from.
struct AppliedBounds {
  FilterBounds bounds;
  BoundOrigin max_origin;
  BoundOrigin min_origin;
};

// The node side of one term's filter over a node list.
struct NodeBoundsColumn {
  size_t num_nodes = 0;  // of the node list it was built over
  // [node]: bit k set when scope k's node side selects the node. Empty
  // when no scope has a node side: every node's bits are then every_node.
  std::vector<uint64_t> scopes;
  uint64_t every_node = 0;
  // [node]: the bound the node's annotation sets, NaN where it sets none.
  // Both empty when no node sets any.
  std::vector<double> max;
  std::vector<double> min;

  // Whether every node has the same node side: then a pod's bounds are
  // the same on every node.
  bool uniform() const { return scopes.empty() && max.empty(); }
};

// One column per MetricTerm of a ScoringConfig, in order; the column of a
// term without a scoped filter is empty (num_nodes 0) and never read.
using NodeBounds = std::vector<NodeBoundsColumn>;

// The node side of `term` over `nodes`: O(nodes x scopes) label look-ups,
// and two annotation look-ups per node when the term reads them.
NodeBoundsColumn MatchNodeBounds(const MetricTerm& term,
                                 const std::vector<NodeInfo>& nodes);

// The node side of every term with a scoped filter into *out, one column
// per term.
void MatchNodeBounds(const std::vector<MetricTerm>& terms,
                     const std::vector<NodeInfo>& nodes, NodeBounds* out);

// Whether `bounds` has a column over n nodes for every term of `terms`
// with a scoped filter: what Decide checks before trusting its caller's.
bool NodeBoundsMatch(const std::vector<MetricTerm>& terms,
                     const NodeBounds& bounds, size_t n);

// The rows `rows` of `column`, in that order (the extender's nodes); a row
// of -1 is a node not known: only the scopes without a node side select
// it, and no annotation bounds it.
NodeBoundsColumn PickNodes(const NodeBoundsColumn& column,
                           const std::vector<int64_t>& rows);

// The pod side of `term`'s scopes: bit k set when scope k selects `pod`.
uint64_t PodScopes(const MetricTerm& term, const Pod& pod);

// Node i's bounds on `term` for a pod whose scopes are `pod_scopes`:
// the node's annotation on each side it sets, else the bounds of the first
// scope that selects both the pod and the node, else the default bounds.
inline AppliedBounds BoundsAt(const MetricTerm& term, uint64_t pod_scopes,
                              const NodeBoundsColumn& column, size_t i) {
  using Source = BoundOrigin::Source;
  AppliedBounds out{.bounds = {term.filter_max, term.filter_min}};
  const uint64_t both = pod_scopes & (column.scopes.empty() ? column.every_node
                                                            : column.scopes[i]);
  if (both != 0) {
    const int k = std::countr_zero(both);
    out.bounds = term.filter_scopes[k].bounds;
    out.max_origin = out.min_origin = {Source::kScope, static_cast<uint8_t>(k)};
  }
  if (!column.max.empty()) {
    if (!std::isnan(column.max[i])) {
      out.bounds.max = column.max[i];
      out.max_origin = {Source::kNodeAnnotation};
    }
    if (!std::isnan(column.min[i])) {
      out.bounds.min = column.min[i];
      out.min_origin = {Source::kNodeAnnotation};
    }
  }
  return out;
}

// What the metrics' filters read of one decision besides the values: per
// term, the pod's scopes (PodScopes) and the node side. Null: the default
// bounds hold everywhere (no term has a scoped filter).
struct DecisionBounds {
  const uint64_t* pod_scopes = nullptr;     // [term]
  const NodeBoundsColumn* nodes = nullptr;  // [term]

  // Node i's bounds on term m (`term`).
  AppliedBounds At(const MetricTerm& term, size_t m, size_t i) const {
    if (nodes == nullptr || !term.has_scoped_filter()) {
      return AppliedBounds{.bounds = {term.filter_max, term.filter_min}};
    }
    return BoundsAt(term, pod_scopes[m], nodes[m], i);
  }
};

// Where a bound came from, as explain words it: "filter.scopes[1]",
// "annotation max.filter.metrics-scheduler.io/cpu"; "" for the default.
// `max`: the bound is the upper one.
std::string BoundOriginText(const MetricTerm& term, bool max,
                            const BoundOrigin& origin);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_FILTER_BOUNDS_H_
