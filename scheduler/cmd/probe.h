// Probe: `metrics-scheduler probe`, whether the configured queries name the
// cluster's nodes, before the scheduler relies on them.
//
// Lists the nodes, fetches every query metric of the configuration once
// (through a MetricsCache, as explain does) and reports per metric: the
// nodes with a fresh value out of all (the coverage), the series the
// backend returned, those that matched no node (with examples: usually a
// join that names nodes another way), the join detected for a metric
// without one (metrics/join_detect.h), the nodes whose value is stale and
// those with none. A metric whose coverage is below `min_coverage` fails
// the probe.
//
//   absl::StatusOr<ProbeReport> r = Probe(config, client, source, 0.9);
//   std::cout << r->text;
//   return r->below.empty() ? 0 : 1;
#ifndef METRICS_SCHEDULER_SCHEDULER_CMD_PROBE_H_
#define METRICS_SCHEDULER_SCHEDULER_CMD_PROBE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "kube/client.h"
#include "metrics/cache.h"
#include "metrics/metrics_source.h"
#include "model/metrics.h"

namespace ms {

struct ProbeReport {
  std::string text;
  // The metrics whose coverage is below the minimum, in configuration
  // order.
  std::vector<std::string> below;
};

// The report of one fetch: `stats` and `snapshot` from the cache that
// fetched `metrics` (QueryMetrics), with `backend` naming where from. A
// node the cache counts without data is stale when the snapshot holds a
// sample for it (too old, or not finite), else it has no value.
ProbeReport FormatProbe(const std::vector<MetricConfig>& metrics,
                        const std::vector<metrics::MetricStats>& stats,
                        const MetricsSnapshot& snapshot,
                        const std::string& backend, double min_coverage);

// Lists the nodes through `client` and fetches `config`'s query metrics
// once from `source`. Unavailable when the nodes cannot be listed or no
// metric could be fetched; FailedPrecondition when the configuration has
// no query metric.
absl::StatusOr<ProbeReport> Probe(const Config& config,
                                  kube::KubeClient& client,
                                  metrics::MetricsSource* source,
                                  double min_coverage);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CMD_PROBE_H_
