#include "metrics/metrics_source.h"

#include <thread>

#include "absl/strings/str_cat.h"

namespace ms::metrics {

void MetricsSource::FetchAll(absl::Span<const MetricConfig* const> metrics,
                             const NodeSet& nodes, absl::Duration timeout,
                             FetchDone done) {
  if (metrics.empty()) return;
  std::vector<std::thread> helpers;
  helpers.reserve(metrics.size() - 1);
  for (size_t i = 1; i < metrics.size(); ++i) {
    helpers.emplace_back([&, i] { done(i, Fetch(*metrics[i], nodes, timeout)); });
  }
  done(0, Fetch(*metrics[0], nodes, timeout));
  for (std::thread& t : helpers) t.join();
}

absl::StatusOr<PodFetchResult> MetricsSource::FetchPods(
    const MetricConfig& metric, absl::Duration) {
  return absl::UnimplementedError(absl::StrCat(
      "metric ", metric.name, ": this backend cannot answer per-pod queries"));
}

}  // namespace ms::metrics
