// PrometheusSource: metrics from a Prometheus-compatible HTTP API.
//
// Works with Prometheus, Thanos, VictoriaMetrics and Sysdig's PromQL
// endpoint (base URL `https://<region>.app.sysdig.com/prometheus`). Each
// Fetch() sends one instant query (`GET {url}/api/v1/query`, or a
// form-encoded POST when the query is long) with the backend's timeout as
// the server-side `timeout`, decodes the vector result and joins its series
// to nodes per the metric's `join` (join.h), or, for a metric without one,
// by the join detected on that answer (join_detect.h): one request per
// metric per refresh, whatever the number of nodes.
//
// Authentication, TLS, headers and proxy are the BackendClient's: a bearer
// token or basic auth, a client certificate, extra headers, each read from
// its file and re-read when it changes.
//
// Thread-safe: Fetch() may run on many threads at once.
#ifndef METRICS_SCHEDULER_METRICS_PROMETHEUS_SOURCE_H_
#define METRICS_SCHEDULER_METRICS_PROMETHEUS_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "metrics/backend_client.h"
#include "metrics/metrics_source.h"

namespace ms::metrics {

class PrometheusSource final : public MetricsSource {
 public:
  // Queries whose URL-encoded form is longer than this are POSTed.
  static constexpr size_t kMaxGetQueryBytes = 2048;

  // Reads the files the backend names once (BackendClient::Create), with
  // its errors; InvalidArgument when `backend.url` is empty.
  static absl::StatusOr<std::unique_ptr<PrometheusSource>> Create(
      const BackendConfig& backend);

  absl::StatusOr<FetchResult> Fetch(const MetricConfig& metric,
                                    const NodeSet& nodes,
                                    absl::Duration timeout) override;

  // The per-pod query, sent and decoded as Fetch()'s; series are keyed by
  // their `namespace` and `pod` labels.
  absl::StatusOr<PodFetchResult> FetchPods(const MetricConfig& metric,
                                           absl::Duration timeout) override;

  // HTTP requests sent so far (for tests and the benchmark).
  int64_t requests_sent() const { return requests_sent_.load(); }

 private:
  PrometheusSource(const BackendConfig& backend,
                   std::unique_ptr<BackendClient> client);

  // Sends `query` as an instant query, bounded by `timeout` and the
  // backend's; errors name `metric`.
  absl::StatusOr<HttpResponse> Query(const MetricConfig& metric,
                                     const std::string& query,
                                     absl::Duration timeout);

  // The answer's series joined by the metric's configured join.
  static absl::StatusOr<FetchResult> Join(const MetricConfig& metric,
                                          const NodeSet& nodes,
                                          const HttpResponse& response);
  // The answer's series joined by the candidate naming the most nodes
  // (JoinConfig::automatic).
  static absl::StatusOr<FetchResult> DetectJoin(const MetricConfig& metric,
                                                const NodeSet& nodes,
                                                const HttpResponse& response);

  const std::string query_url_;  // {url}/api/v1/query
  const absl::Duration timeout_;
  const size_t max_response_bytes_;
  const std::unique_ptr<BackendClient> client_;
  std::atomic<int64_t> requests_sent_{0};
};

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_PROMETHEUS_SOURCE_H_
