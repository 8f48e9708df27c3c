// ExtenderServer: kube-scheduler's extender protocol, served from this
// scheduler's metrics cache and scoring code, so that a cluster that needs
// kube-scheduler's whole default profile runs a stock kube-scheduler with
// metrics-scheduler as its extender (KubeSchedulerConfiguration
// `extenders`, nodeCacheCapable: true):
//
//   POST /filter      ExtenderArgs -> ExtenderFilterResult. A node whose
//                     fresh value is beyond a metric's `filter` bound, or
//                     that has no usable value of an `exclude` metric,
//                     fails (as unresolvable: preemption cannot change a
//                     node's metrics), worded as in FailedScheduling.
//   POST /prioritize  ExtenderArgs -> HostPriorityList: the weighted mean
//                     of the metric terms (no built-in term: kube-scheduler
//                     scores those itself) on the extender's 0..10 scale.
//
// Both judge only the nodes kube-scheduler names, with scoring/extender.h.
// While no metric has a usable value (a cold or failed cache) every node
// passes and scores 0: kube-scheduler decides alone, as in fallback mode.
// A call with whole Nodes (nodeCacheCapable: false) is answered with an
// Error saying to set it. Every replica answers (standbys keep the cache
// and informers warm). Serves on its own threads (cpp-httplib).
//
// Thread-safe.
#ifndef METRICS_SCHEDULER_SCHEDULER_EXTENDER_SERVER_H_
#define METRICS_SCHEDULER_SCHEDULER_EXTENDER_SERVER_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "metrics/cache.h"
#include "scheduler/cluster_state.h"
#include "scheduler/self_metrics.h"
#include "scoring/scoring_config.h"

namespace httplib {
class Server;
}

namespace ms {

class ExtenderServer {
 public:
  // A call's body may hold a pod and thousands of node names.
  static constexpr size_t kMaxRequestBytes = 16 << 20;

  // `cache` may be null (no query metric). All must outlive the server.
  ExtenderServer(ClusterState& state, const ScoringConfig& scoring,
                 const metrics::MetricsCache* cache, Registry& registry);
  ~ExtenderServer();

  // Listens on `address` ("[host]:port"); returns the port.
  absl::StatusOr<int> Start(const std::string& address);
  void Stop();

  // The answers, for tests: the response body of a call with `body`, and
  // its HTTP status.
  std::string Filter(const std::string& body, int* status);
  std::string Prioritize(const std::string& body, int* status);

 private:
  ClusterState& state_;
  const ScoringConfig& scoring_;
  const metrics::MetricsCache* const cache_;
  Family<Counter>& requests_;
  Family<Histogram>& seconds_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_EXTENDER_SERVER_H_
