// The metrics cache's series on /metrics: how each query metric's fetches
// go, and how many nodes it covers.
//
//   metrics_scheduler_backend_query_duration_seconds{metric,outcome}
//       histogram: each fetch's duration, by its outcome (FetchOutcome)
//   metrics_scheduler_metric_refreshes_total{metric,result}
//       counter: fetches by result, success or failure
//   metrics_scheduler_metric_last_success_timestamp_seconds{metric}
//       gauge: when the metric was last fetched successfully, in seconds
//       since the epoch; absent until the first success (then
//       metrics_scheduler_metric_refreshes_total{result="success"} is 0).
//       Age: time() - metrics_scheduler_metric_last_success_timestamp_seconds.
//   metrics_scheduler_metric_nodes_with_data{metric}
//   metrics_scheduler_metric_nodes_missing{metric}
//       gauges: known nodes with and without a fresh, finite value
//
// main() creates the BackendQueryMetrics first, so that the cache's
// CacheOptions::on_fetch can observe into it, then the cache, then calls
// AddCacheMetrics. Thread-safe.
#ifndef METRICS_SCHEDULER_SCHEDULER_TELEMETRY_CACHE_METRICS_H_
#define METRICS_SCHEDULER_SCHEDULER_TELEMETRY_CACHE_METRICS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "config/config.h"
#include "metrics/cache.h"
#include "scheduler/telemetry/self_metrics.h"

namespace ms {

// The `outcome` label of a fetch that ended with `status`, by what an
// operator does next (metrics/metrics_source.h's failure contract):
// success; timeout (DeadlineExceeded); unavailable (the backend is down or
// overloaded); invalid (the backend rejected the query or its answer is
// not a per-node vector: fix the query); denied (401/403: fix the
// credentials); error (anything else).
const char* FetchOutcome(const absl::Status& status);

class BackendQueryMetrics {
 public:
  // Adds the histogram to `registry` (which must outlive this object),
  // with a child for each of `metrics` and each outcome.
  BackendQueryMetrics(Registry& registry,
                      const std::vector<MetricConfig>& metrics);

  // A fetch of `metric` took `duration` and ended with `status`: the
  // signature of CacheOptions::on_fetch.
  void Observe(const MetricConfig& metric, absl::Duration duration,
               const absl::Status& status);

 private:
  Family<Histogram>& family_;
};

// Adds the per-metric gauges and counters above, read from `cache` (which
// must outlive `registry`'s scrapes) at scrape time.
void AddCacheMetrics(Registry& registry, const metrics::MetricsCache& cache);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_TELEMETRY_CACHE_METRICS_H_
