#include "scheduler/telemetry/cache_metrics.h"

#include <array>

namespace ms {
namespace {

constexpr std::array<const char*, 6> kOutcomes = {
    "success", "timeout", "unavailable", "invalid", "denied", "error"};

}  // namespace

const char* FetchOutcome(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk: return "success";
    case absl::StatusCode::kDeadlineExceeded: return "timeout";
    case absl::StatusCode::kUnavailable: return "unavailable";
    case absl::StatusCode::kInvalidArgument: return "invalid";
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated: return "denied";
    default: return "error";
  }
}

BackendQueryMetrics::BackendQueryMetrics(
    Registry& registry, const std::vector<MetricConfig>& metrics)
    : family_(registry.AddHistogram(
          "metrics_scheduler_backend_query_duration_seconds",
          "Duration of each query of the metrics backend, by metric and "
          "outcome: success, timeout, unavailable, invalid (the query or "
          "its answer), denied (the credentials), error.",
          // Prometheus' default buckets, 5 ms to 10 s: a query ends
          // within cache.refreshTimeout (5 s by default).
          {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
          {"metric", "outcome"})) {
  for (const MetricConfig& metric : metrics) {
    for (const char* outcome : kOutcomes) family_.With({metric.name, outcome});
  }
}

void BackendQueryMetrics::Observe(const MetricConfig& metric,
                                  absl::Duration duration,
                                  const absl::Status& status) {
  family_.With({metric.name, FetchOutcome(status)})
      .Observe(absl::ToDoubleSeconds(duration));
}

void AddCacheMetrics(Registry& registry, const metrics::MetricsCache& cache) {
  // One sample per metric, of `value(stats)`.
  auto per_metric = [&cache](double (*value)(const metrics::MetricStats&)) {
    return [&cache, value] {
      Registry::GaugeSamples out;
      for (const metrics::MetricStats& s : cache.Stats()) {
        out.push_back({{s.name}, value(s)});
      }
      return out;
    };
  };
  registry.AddCounterFunc(
      "metrics_scheduler_metric_refreshes_total",
      "Fetches of the metric, by result: success or failure.",
      {"metric", "result"}, [&cache] {
        Registry::GaugeSamples out;
        for (const metrics::MetricStats& s : cache.Stats()) {
          out.push_back({{s.name, "success"},
                         static_cast<double>(s.refresh_successes)});
          out.push_back({{s.name, "failure"},
                         static_cast<double>(s.refresh_failures)});
        }
        return out;
      });
  registry.AddGauge(
      "metrics_scheduler_metric_last_success_timestamp_seconds",
      "When the metric was last fetched successfully, in seconds since the "
      "epoch; absent until the first success.",
      {"metric"}, [&cache] {
        Registry::GaugeSamples out;
        for (const metrics::MetricStats& s : cache.Stats()) {
          if (s.refresh_successes == 0) continue;
          out.push_back(
              {{s.name}, static_cast<double>(s.last_success_ms) / 1000});
        }
        return out;
      });
  registry.AddGauge("metrics_scheduler_metric_nodes_with_data",
                    "Known nodes with a fresh, finite value of the metric.",
                    {"metric"}, per_metric([](const metrics::MetricStats& s) {
                      return static_cast<double>(s.nodes_with_data);
                    }));
  registry.AddGauge("metrics_scheduler_metric_nodes_missing",
                    "Known nodes without a usable value of the metric.",
                    {"metric"}, per_metric([](const metrics::MetricStats& s) {
                      return static_cast<double>(s.nodes_known -
                                                 s.nodes_with_data);
                    }));
}

}  // namespace ms
