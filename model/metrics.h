// The metrics snapshot: per-node metric values as the TTL cache publishes
// them, and the same values aligned to a node list for scoring.
//
// The cache (metrics/) builds a MetricsSnapshot after every refresh and
// publishes it as an immutable std::shared_ptr<const MetricsSnapshot>. The
// scheduler aligns it to its node list (AlignMetric) when either changes,
// so the scoring loop reads contiguous arrays indexed like the nodes.
// Thread-compatible; published snapshots are never mutated.
#ifndef METRICS_SCHEDULER_MODEL_METRICS_H_
#define METRICS_SCHEDULER_MODEL_METRICS_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/string_view.h"
#include "model/node_info.h"

namespace ms {

struct MetricSample {
  double value = 0;      // may be NaN or +-Inf, as the backend sent it
  int64_t time_ms = 0;   // when the backend sampled it, epoch milliseconds

  friend bool operator==(const MetricSample&, const MetricSample&) = default;
};

// A per-pod query's answer: "namespace/pod" -> value.
using PodSamples = std::unordered_map<std::string, MetricSample>;

// The latest known values of one configured metric.
struct MetricValues {
  std::string name;           // the metric's name in the configuration
  int64_t fetched_at_ms = 0;  // last successful refresh; 0 = never
  std::string last_error;     // empty when the last refresh succeeded
  std::unordered_map<std::string, MetricSample> by_node;  // node name -> value
  // The metric's estimate.siblings query: "namespace/pod" -> the pod's
  // measured usage. Null when it has none or was never fetched.
  std::shared_ptr<const PodSamples> by_pod;
};

struct MetricsSnapshot {
  // The query metrics of every profile, each name once (QueryMetrics).
  std::vector<MetricValues> metrics;

  // The metric named `name`; null when there is none.
  const MetricValues* Find(absl::string_view name) const;
};

// One metric aligned to a node list: entry i belongs to node i.
struct MetricColumn {
  std::vector<double> values;    // NaN where the node has no sample
  std::vector<int64_t> time_ms;  // sample time; 0 where the node has no sample
};

// Aligns `metric` to `node_names`.
MetricColumn AlignMetric(const MetricValues& metric,
                         const std::vector<std::string>& node_names);

// Where a configured metric's values come from: a backend query (through
// the cache's snapshot), or an annotation or label of the Node itself, read
// whenever the columns are aligned: as current as the node informer, never
// stale.
struct MetricOrigin {
  enum class Kind { kQuery, kNodeAnnotation, kNodeLabel };
  Kind kind = Kind::kQuery;
  std::string key;  // the annotation or label key; empty for a query

  bool is_query() const { return kind == Kind::kQuery; }
  friend bool operator==(const MetricOrigin&, const MetricOrigin&) = default;
};

// What a pod adds to a query metric's value on its node before a sample
// shows it (docs/configuration.md, "Load the metrics have not seen yet").
// A pod's annotation estimate.metrics-scheduler.io/<metric> (a decimal, in
// the metric's units) overrides the basis for that pod.
struct UnseenLoadEstimate {
  enum class Basis {
    kNone,            // nothing: the metric as sampled
    kCpuRequests,     // factor x the pod's CPU requests / node allocatable
    kMemoryRequests,  // factor x the pod's memory requests / allocatable
    // As kCpuRequests and kMemoryRequests, with the pod's limit (PodLimits,
    // model/pod.h) for its requests when it has one.
    kCpuLimits,
    kMemoryLimits,
    kPerPod,  // factor, whatever the pod
    // factor x the node's value as sampled, whatever the pod: a response
    // time each pod pushes up by a share of itself, so a slow node's more
    // than a fast one's.
    kPerPodShare,
    // The metric grows with another metric's unseen load as a queue's
    // response time grows with its utilisation: x (1 - u) / (1 - u - du),
    // u that metric's sampled value, du its estimate (QueueingGrowth,
    // scoring/unseen_load.h).
    kQueueing,
  };
  Basis basis = Basis::kNone;
  // For a basis on resources, the metric's value on a node whose allocatable
  // is all in use (1 for a fraction, 100 for a percentage, more when pods
  // use more than they request); for perPod what one pod adds; for
  // perPodShare the share of the sampled value one pod adds (0.1: a tenth).
  double factor = 1;
  // A sample shows a pod once taken at least this long after the pod
  // started: the pod's own warm-up plus the query's rate window.
  int64_t warmup_ms = 60000;
  // For a basis on resources: a query for each pod's measured usage in the
  // basis' unit (cores for CPU, bytes for memory), one series per pod
  // labelled `namespace` and `pod`. A pod whose siblings (pods of the same
  // controller) have usage samples is estimated from their mean usage
  // instead of its requests or limits. Empty: requests or limits only.
  std::string siblings_query;
  // A sibling's sample of that query counts once taken at least this long
  // after the sibling started (its warm-up plus that query's window, which
  // may be shorter than the metric's); unset: warmup_ms.
  std::optional<int64_t> siblings_warmup_ms;
  // For queueing: the metric, in the same list, whose value is the node's
  // utilisation (0..1) and whose estimate (on resources) is the load
  // its sample has not seen.
  std::string utilisation;
  // For queueing: the utilisation metric's value on a node fully busy (1
  // for a fraction, 100 for a percentage).
  double full = 1;
  // How a pod's estimate ends: all of it until a sample a warm-up after
  // its start (step), or less as the sample is taken later, from all of
  // it at the start to none a warm-up after (linear: a rate over a window
  // shows a new load in proportion to the part of the window it covers),
  // or all of it less what its own sample of the siblings query already
  // shows (measured).
  enum class Fade { kStep, kLinear, kMeasured };
  Fade fade = Fade::kStep;

  bool enabled() const { return basis != Basis::kNone; }
  int64_t sibling_warmup_ms() const {
    return siblings_warmup_ms.value_or(warmup_ms);
  }
  // A basis on the pod's CPU or memory: requests or limits.
  bool on_resources() const { return on_cpu() || on_memory(); }
  bool on_cpu() const {
    return basis == Basis::kCpuRequests || basis == Basis::kCpuLimits;
  }
  bool on_memory() const {
    return basis == Basis::kMemoryRequests || basis == Basis::kMemoryLimits;
  }
  bool on_limits() const {
    return basis == Basis::kCpuLimits || basis == Basis::kMemoryLimits;
  }
  friend bool operator==(const UnseenLoadEstimate&,
                         const UnseenLoadEstimate&) = default;
};

// A term scored for the node's speed rather than its load (`unloaded`,
// docs/configuration.md): the value read is the sample x (1 - u / full),
// u the `utilisation` metric's value on the node as sampled, u / full held
// to [0, 0.9] (Unloaded, scoring/unseen_load.h). For a queue's response
// time S / (1 - u) that is its service time S, which does not rise with the
// pods just placed on the node: the load they add is the utilisation
// metric's to estimate.
struct UnloadedValue {
  std::string utilisation;  // a metric in the same list; empty: off
  double full = 1;          // its value on a node fully busy
  bool enabled() const { return !utilisation.empty(); }
  friend bool operator==(const UnloadedValue&, const UnloadedValue&) = default;
};

// The prefix of the pod annotations that override an estimate:
// estimate.metrics-scheduler.io/<metric name>.
inline constexpr char kEstimateAnnotationPrefix[] =
    "estimate.metrics-scheduler.io/";

// The sample time of a node attribute's value: fresh at any clock.
inline constexpr int64_t kAlwaysFresh = std::numeric_limits<int64_t>::max();

// A node attribute's value: a decimal (`0.42`, `-3`, `1e3`) or a Kubernetes
// quantity (`250m`, `2Ki`), to a thousandth; NaN for anything else (empty,
// not a number, infinite, beyond int64 thousandths).
double ParseAttributeValue(absl::string_view text);

// The column of a node attribute (`origin` not a query) over `nodes`: each
// value parsed, NaN (time 0) where the node lacks it or it does not parse,
// time kAlwaysFresh elsewhere.
MetricColumn NodeAttributeColumn(const MetricOrigin& origin,
                                 const std::vector<NodeInfo>& nodes);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_METRICS_H_
