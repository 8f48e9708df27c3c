// MetricsServerSource: node usage from the resource metrics API
// (`GET /apis/metrics.k8s.io/v1beta1/nodes`), which metrics-server serves
// through the apiserver's aggregation layer in most clusters, so that CPU
// and memory can be scored with no Prometheus at all.
//
// A metric's `query` names what it reads of each node
// (config.h's kMetricsServerQueries):
//   cpu                CPU in use, cores
//   memory             memory in use (metrics-server's working set), bytes
//   cpuUtilization     cpu over the Node's allocatable cpu (0.5 = half)
//   memoryUtilization  memory over the Node's allocatable memory
// Items are matched to nodes by name; a sample's time is the item's
// `timestamp` (the end of metrics-server's window). A node without an
// allocatable value has no utilisation. One refresh pass lists the nodes
// once, whatever the number of metrics (FetchAll).
//
// The list goes through the apiserver connection the scheduler already
// has: the source is given a function that GETs a path there (KubeClient's
// Get), so metrics/ stays free of Kubernetes clients. Its body is bounded
// by backend.maxResponseBytes (64 MiB by default) as a Prometheus answer
// is: a larger one is refused as it arrives, with ResourceExhausted naming
// the limit and the setting, and the metrics fall back.
//
// Thread-safe: Fetch() and FetchAll() may run on many threads at once.
#ifndef METRICS_SCHEDULER_METRICS_METRICS_SERVER_SOURCE_H_
#define METRICS_SCHEDULER_METRICS_METRICS_SERVER_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "config/config.h"
#include "metrics/metrics_source.h"

namespace ms::metrics {

inline constexpr char kNodeMetricsPath[] =
    "/apis/metrics.k8s.io/v1beta1/nodes";

class MetricsServerSource final : public MetricsSource {
 public:
  // GETs a path on the apiserver: the body of a 2xx answer, or the
  // KubeClient's status for anything else; a body over
  // `max_response_bytes` is refused with common/http.h's
  // ResponseTooLarge (KubeClient::Get does).
  using ApiGet = std::function<absl::StatusOr<std::string>(
      const std::string& path, absl::Duration timeout,
      size_t max_response_bytes)>;

  // `backend.timeout` bounds each list, `backend.max_response_bytes` its
  // body.
  MetricsServerSource(const BackendConfig& backend, ApiGet get);

  absl::StatusOr<FetchResult> Fetch(const MetricConfig& metric,
                                    const NodeSet& nodes,
                                    absl::Duration timeout) override;
  void FetchAll(absl::Span<const MetricConfig* const> metrics,
                const NodeSet& nodes, absl::Duration timeout,
                FetchDone done) override;

  // Lists sent so far (for tests).
  int64_t requests_sent() const { return requests_sent_.load(); }

 private:
  const absl::Duration timeout_;
  const size_t max_response_bytes_;
  const ApiGet get_;
  std::atomic<int64_t> requests_sent_{0};
};

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_METRICS_SERVER_SOURCE_H_
