// MetricsSource: where per-node metric values come from.
//
// One implementation per backend: PrometheusSource (prometheus_source.h,
// any Prometheus-compatible HTTP API), SysdigSource (sysdig_source.h,
// Sysdig's data API) and MetricsServerSource (metrics_server_source.h, the
// resource metrics API). The TTL cache (cache.h) is the only caller in the
// scheduler: it calls FetchAll() once per refresh pass with the metrics due,
// from its refresh thread, and never on a scheduling cycle. Tests use a
// map-backed fake.
//
// Thread safety: implementations must allow concurrent Fetch() calls (the
// default FetchAll() queries its metrics in parallel).
#ifndef METRICS_SCHEDULER_METRICS_METRICS_SOURCE_H_
#define METRICS_SCHEDULER_METRICS_METRICS_SOURCE_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "config/config.h"
#include "metrics/node_set.h"
#include "model/metrics.h"

namespace ms::metrics {

// The answer to one Fetch().
struct FetchResult {
  // Node name -> its value and the time the backend sampled it. A node the
  // backend has no series for is absent. Values may be NaN or +-Inf.
  std::unordered_map<std::string, MetricSample> by_node;
  int series = 0;      // series (rows) the backend returned
  int unmatched = 0;   // series that named no node of the NodeSet
  int duplicates = 0;  // series naming a node an earlier series named; the
                       // first one is kept
  // Up to kMaxExamples label sets (or label values) of unmatched series,
  // for the message that tells the user why a join matched nothing.
  std::vector<std::string> unmatched_examples;
  std::vector<std::string> warnings;  // as the backend sent them
  // For a metric whose join is detected (JoinConfig::automatic): the
  // candidate the series were joined by, as DescribeJoin writes it
  // ("instance (address)"; join_detect.h), or "" when none named a node.
  // "" for a configured join.
  std::string detected_join;

  static constexpr int kMaxExamples = 3;
};

// The answer to one FetchPods().
struct PodFetchResult {
  PodSamples by_pod;   // "namespace/pod" -> its value and sample time
  int series = 0;      // series (rows) the backend returned
  int unlabelled = 0;  // series without a namespace or pod label
  int duplicates = 0;  // series naming a pod an earlier one named
  std::vector<std::string> warnings;  // as the backend sent them
};

class MetricsSource {
 public:
  virtual ~MetricsSource() = default;

  // Fetches `metric` for every node of `nodes` with one query (a source
  // that must page may send a few requests), giving up after `timeout`.
  //
  // Failure contract, by what the caller does next:
  // - Unavailable: the backend could not be reached, broke the connection
  //   or is overloaded; a later retry may work.
  // - DeadlineExceeded: `timeout` (or the backend's own per-query limit)
  //   passed; a later retry may work.
  // - InvalidArgument: the backend rejected the query, or its result is not
  //   a per-node vector; the configuration must be fixed. The message names
  //   the metric and carries the backend's own message.
  // - PermissionDenied: the backend refused the credentials (401/403).
  // - FailedPrecondition: anything else that needs the configuration or the
  //   backend fixed (a URL that serves no such API, a TLS verify failure).
  virtual absl::StatusOr<FetchResult> Fetch(const MetricConfig& metric,
                                            const NodeSet& nodes,
                                            absl::Duration timeout) = 0;

  // Fetches every metric of one refresh pass: calls `done(i, answer)` once
  // for each metrics[i], with what Fetch() would answer, possibly from
  // several threads at once, and returns after the last call. The default
  // runs Fetch() for each on a thread of its own; a source whose one
  // request answers several metrics (MetricsServerSource) sends it once.
  // Fetches `metric`'s per-pod query (estimate.siblings_query): one series
  // per pod, labelled `namespace` and `pod`. Fails as Fetch() does; the
  // default, for backends that cannot answer one, is Unimplemented.
  virtual absl::StatusOr<PodFetchResult> FetchPods(const MetricConfig& metric,
                                                   absl::Duration timeout);

  using FetchDone =
      absl::FunctionRef<void(size_t index, absl::StatusOr<FetchResult> answer)>;
  virtual void FetchAll(absl::Span<const MetricConfig* const> metrics,
                        const NodeSet& nodes, absl::Duration timeout,
                        FetchDone done);
};

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_METRICS_SOURCE_H_
