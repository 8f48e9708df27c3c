#include "scoring/filter_bounds.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace ms {

NodeBoundsColumn MatchNodeBounds(const MetricTerm& term,
                                 const std::vector<NodeInfo>& nodes) {
  const size_t n = nodes.size();
  NodeBoundsColumn out{.num_nodes = n};
  if (!term.has_scoped_filter()) return out;
  const std::vector<ThresholdScope>& scopes = term.filter_scopes;
  bool node_sides = false;
  for (size_t k = 0; k < scopes.size() && k < kMaxThresholdScopes; ++k) {
    if (scopes[k].nodes) {
      node_sides = true;
    } else {
      out.every_node |= uint64_t{1} << k;
    }
  }
  if (node_sides) {
    out.scopes.assign(n, out.every_node);
    for (size_t k = 0; k < scopes.size() && k < kMaxThresholdScopes; ++k) {
      if (!scopes[k].nodes) continue;
      for (size_t i = 0; i < n; ++i) {
        if (SelectsNode(scopes[k], nodes[i].node)) {
          out.scopes[i] |= uint64_t{1} << k;
        }
      }
    }
  }
  if (term.filter_annotations) {
    const std::string max_key = MaxFilterAnnotation(term.name);
    const std::string min_key = MinFilterAnnotation(term.name);
    for (size_t i = 0; i < n; ++i) {
      const Node& node = nodes[i].node;
      if (node.annotations.empty()) continue;
      const double max = FilterAnnotationBound(node, max_key);
      const double min = FilterAnnotationBound(node, min_key);
      if (std::isnan(max) && std::isnan(min)) continue;
      if (out.max.empty()) {
        constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
        out.max.assign(n, kNaN);
        out.min.assign(n, kNaN);
      }
      out.max[i] = max;
      out.min[i] = min;
    }
  }
  return out;
}

void MatchNodeBounds(const std::vector<MetricTerm>& terms,
                     const std::vector<NodeInfo>& nodes, NodeBounds* out) {
  out->resize(terms.size());
  for (size_t m = 0; m < terms.size(); ++m) {
    (*out)[m] = terms[m].has_scoped_filter() ? MatchNodeBounds(terms[m], nodes)
                                             : NodeBoundsColumn{};
  }
}

bool NodeBoundsMatch(const std::vector<MetricTerm>& terms,
                     const NodeBounds& bounds, size_t n) {
  if (bounds.size() != terms.size()) return false;
  for (size_t m = 0; m < terms.size(); ++m) {
    if (terms[m].has_scoped_filter() && bounds[m].num_nodes != n) return false;
  }
  return true;
}

NodeBoundsColumn PickNodes(const NodeBoundsColumn& column,
                           const std::vector<int64_t>& rows) {
  NodeBoundsColumn out{.num_nodes = rows.size(),
                       .every_node = column.every_node};
  if (!column.scopes.empty()) {
    out.scopes.reserve(rows.size());
    for (int64_t r : rows) {
      out.scopes.push_back(r >= 0 ? column.scopes[r] : column.every_node);
    }
  }
  if (!column.max.empty()) {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    out.max.reserve(rows.size());
    out.min.reserve(rows.size());
    for (int64_t r : rows) {
      out.max.push_back(r >= 0 ? column.max[r] : kNaN);
      out.min.push_back(r >= 0 ? column.min[r] : kNaN);
    }
  }
  return out;
}

uint64_t PodScopes(const MetricTerm& term, const Pod& pod) {
  uint64_t out = 0;
  const std::vector<ThresholdScope>& scopes = term.filter_scopes;
  for (size_t k = 0; k < scopes.size() && k < kMaxThresholdScopes; ++k) {
    if (SelectsPod(scopes[k], pod)) out |= uint64_t{1} << k;
  }
  return out;
}

std::string BoundOriginText(const MetricTerm& term, bool max,
                            const BoundOrigin& origin) {
  switch (origin.source) {
    case BoundOrigin::Source::kDefault:
      return "";
    case BoundOrigin::Source::kScope:
      return absl::StrCat("filter.scopes[", static_cast<int>(origin.scope),
                          "]");
    case BoundOrigin::Source::kNodeAnnotation:
      return absl::StrCat("annotation ", max ? MaxFilterAnnotation(term.name)
                                             : MinFilterAnnotation(term.name));
  }
  return "";
}

}  // namespace ms
