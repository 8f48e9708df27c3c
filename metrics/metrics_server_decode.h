// Decoding the resource metrics API's node list (metrics.k8s.io/v1beta1
// NodeMetricsList, served by metrics-server; its types are in k8s.io/metrics,
// pkg/apis/metrics/v1beta1/types.go).
//
// MetricsServerSource calls it on every list; the unit tests and the fuzz
// target call it on bodies of their own. No simdjson type leaves
// metrics_server_decode.cc.
//
// Thread-safe: each thread decodes with a parser of its own.
#ifndef METRICS_SCHEDULER_METRICS_METRICS_SERVER_DECODE_H_
#define METRICS_SCHEDULER_METRICS_METRICS_SERVER_DECODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ms::metrics {

// One item of the list: a node's usage over the window ending at `time_ms`.
struct NodeUsage {
  std::string name;          // metadata.name: the Node's name
  int64_t time_ms = 0;       // `timestamp`, epoch milliseconds
  std::optional<double> cpu_cores;     // usage.cpu ("250m", "123456789n")
  std::optional<double> memory_bytes;  // usage.memory ("1024Ki")

  friend bool operator==(const NodeUsage&, const NodeUsage&) = default;
};

// Decodes `{"kind":"NodeMetricsList","items":[...]}`. An item without a
// name or a parseable timestamp is left out; a usage value that is not a
// Kubernetes quantity is left unset. InvalidArgument when the body is not
// a NodeMetricsList.
absl::StatusOr<std::vector<NodeUsage>> DecodeNodeMetricsList(
    absl::string_view body);

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_METRICS_SERVER_DECODE_H_
