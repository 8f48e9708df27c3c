// SysdigSource: metrics from Sysdig's data API (`POST {url}/api/data/`).
//
// Each Fetch() asks for one metric grouped by the metric's join label
// (default `host.hostName`), with `last`, `sampling` and `dataSourceType`
// from the backend configuration and the metric's time and group
// aggregations, and pages through the rows (one row per host) until the
// backend has no more: one request per metric per refresh when the account
// has no more hosts than a page holds. A host name joins to the node of that
// name or of its short form (join.h, JoinOptions::short_names).
//
// Request:  {"metrics":[{"id":"host.hostName"},{"id":QUERY,"aggregations":
//            {"time":"timeAvg","group":"avg"}}],"dataSourceType":"host",
//            "last":60,"sampling":60,"paging":{"from":0,"to":N-1}}
// Response: {"start":T0,"end":T1,"data":[{"t":T,"d":["node-1",61664.877]}]}
// Errors:   HTTP >= 300 with {"errors":[{"message":..,"reason":..}]} or
//           {"message":..}; the message reaches the caller.
//
// Authentication: `Authorization: Bearer` with the token read from
// `tokenFile`, re-read when the file changes; TLS, headers and proxy as
// BackendClient sends them. Sysdig's PromQL endpoint is served by
// PrometheusSource instead.
//
// Thread-safe: Fetch() may run on many threads at once.
#ifndef METRICS_SCHEDULER_METRICS_SYSDIG_SOURCE_H_
#define METRICS_SCHEDULER_METRICS_SYSDIG_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "metrics/backend_client.h"
#include "metrics/metrics_source.h"

namespace ms::metrics {

class SysdigSource final : public MetricsSource {
 public:
  // Rows asked for per request: the node count plus headroom for hosts
  // that are not nodes, within these bounds.
  static constexpr int kMinPageSize = 100;
  static constexpr int kMaxPageSize = 10000;

  // Reads the files the backend names once (BackendClient::Create), with
  // its errors; InvalidArgument when `backend.url` is empty.
  static absl::StatusOr<std::unique_ptr<SysdigSource>> Create(
      const BackendConfig& backend);

  absl::StatusOr<FetchResult> Fetch(const MetricConfig& metric,
                                    const NodeSet& nodes,
                                    absl::Duration timeout) override;

  // HTTP requests sent so far (for tests and the benchmark).
  int64_t requests_sent() const { return requests_sent_.load(); }

 private:
  SysdigSource(const BackendConfig& backend,
               std::unique_ptr<BackendClient> client);

  const std::string data_url_;  // {url}/api/data/
  const absl::Duration timeout_;
  const size_t max_response_bytes_;
  const SysdigConfig sysdig_;
  const std::unique_ptr<BackendClient> client_;
  std::atomic<int64_t> requests_sent_{0};
};

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_SYSDIG_SOURCE_H_
