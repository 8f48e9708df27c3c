#include "model/metrics.h"

#include <limits>

namespace ms {

std::vector<MetricColumn> AlignMetrics(
    const MetricsSnapshot& snapshot,
    const std::vector<std::string>& node_names) {
  std::vector<MetricColumn> columns(snapshot.metrics.size());
  for (size_t m = 0; m < snapshot.metrics.size(); ++m) {
    const MetricValues& metric = snapshot.metrics[m];
    MetricColumn& column = columns[m];
    column.values.assign(node_names.size(),
                         std::numeric_limits<double>::quiet_NaN());
    column.time_ms.assign(node_names.size(), 0);
    for (size_t i = 0; i < node_names.size(); ++i) {
      auto it = metric.by_node.find(node_names[i]);
      if (it == metric.by_node.end()) continue;
      column.values[i] = it->second.value;
      column.time_ms[i] = it->second.time_ms;
    }
  }
  return columns;
}

}  // namespace ms
