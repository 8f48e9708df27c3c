#include "model/metrics.h"

#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "model/quantity.h"

namespace ms {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const MetricValues* MetricsSnapshot::Find(absl::string_view name) const {
  for (const MetricValues& metric : metrics) {
    if (metric.name == name) return &metric;
  }
  return nullptr;
}

MetricColumn AlignMetric(const MetricValues& metric,
                         const std::vector<std::string>& node_names) {
  MetricColumn column;
  column.values.assign(node_names.size(), kNaN);
  column.time_ms.assign(node_names.size(), 0);
  for (size_t i = 0; i < node_names.size(); ++i) {
    auto it = metric.by_node.find(node_names[i]);
    if (it == metric.by_node.end()) continue;
    column.values[i] = it->second.value;
    column.time_ms[i] = it->second.time_ms;
  }
  return column;
}

double ParseAttributeValue(absl::string_view text) {
  // SimpleAtod would also take white space, "inf" and "nan": the
  // quantity grammar is the stricter judge of what is a number.
  if (text.empty() || text != absl::StripAsciiWhitespace(text)) return kNaN;
  double plain;
  if (absl::SimpleAtod(text, &plain) && std::isfinite(plain) &&
      ParseQuantityMilli(text).ok()) {
    return plain;
  }
  absl::StatusOr<int64_t> milli = ParseQuantityMilli(text);
  if (!milli.ok()) return kNaN;
  return static_cast<double>(*milli) / 1000;
}

MetricColumn NodeAttributeColumn(const MetricOrigin& origin,
                                 const std::vector<NodeInfo>& nodes) {
  MetricColumn column;
  column.values.assign(nodes.size(), kNaN);
  column.time_ms.assign(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::map<std::string, std::string>& from =
        origin.kind == MetricOrigin::Kind::kNodeLabel
            ? nodes[i].node.labels
            : nodes[i].node.annotations;
    auto it = from.find(origin.key);
    if (it == from.end()) continue;
    double v = ParseAttributeValue(it->second);
    if (std::isnan(v)) continue;
    column.values[i] = v;
    column.time_ms[i] = kAlwaysFresh;
  }
  return column;
}

}  // namespace ms
