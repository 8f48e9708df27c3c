// The metrics snapshot: per-node metric values as the TTL cache publishes
// them, and the same values aligned to a node list for scoring.
//
// The cache (metrics/) builds a MetricsSnapshot after every refresh and
// publishes it as an immutable std::shared_ptr<const MetricsSnapshot>. The
// scheduler aligns it to its node list (AlignMetrics) when either changes,
// so the scoring loop reads contiguous arrays indexed like the nodes.
// Thread-compatible; published snapshots are never mutated.
#ifndef METRICS_SCHEDULER_MODEL_METRICS_H_
#define METRICS_SCHEDULER_MODEL_METRICS_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace ms {

struct MetricSample {
  double value = 0;      // may be NaN or +-Inf, as the backend sent it
  int64_t time_ms = 0;   // when the backend sampled it, epoch milliseconds

  friend bool operator==(const MetricSample&, const MetricSample&) = default;
};

// The latest known values of one configured metric.
struct MetricValues {
  std::string name;           // the metric's name in the configuration
  int64_t fetched_at_ms = 0;  // last successful refresh; 0 = never
  std::string last_error;     // empty when the last refresh succeeded
  std::unordered_map<std::string, MetricSample> by_node;  // node name -> value
};

struct MetricsSnapshot {
  std::vector<MetricValues> metrics;  // in configuration order
};

// One metric aligned to a node list: entry i belongs to node i.
struct MetricColumn {
  std::vector<double> values;    // NaN where the node has no sample
  std::vector<int64_t> time_ms;  // sample time; 0 where the node has no sample
};

// Aligns every metric of `snapshot` to `node_names`, in snapshot order.
std::vector<MetricColumn> AlignMetrics(
    const MetricsSnapshot& snapshot, const std::vector<std::string>& node_names);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_METRICS_H_
