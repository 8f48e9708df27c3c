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
// Both judge only the nodes kube-scheduler names, with scoring/extender.h,
// and at most `max_node_names` of them per call (kDefaultMaxNodeNames;
// --extender-max-node-names): ClusterState::JudgeNodes holds the cluster
// state's lock (which every decision of the scheduling loop needs) for a
// time in proportion to the names, so a call with more is refused with
// HTTP 400 naming the limit and the flag, before the lock is taken (the
// /filter answer's body is still an ExtenderFilterResult, its Error
// saying so; kube-scheduler reports the status code).
// While no metric has a usable value (a cold or failed cache) every node
// passes and scores 0: kube-scheduler decides alone, as in fallback mode.
// A call with whole Nodes (nodeCacheCapable: false) is answered with an
// Error saying to set it. Every replica answers (standbys keep the cache
// and informers warm).
//
// Two ways to serve, as status_server.h's ports (the same connection
// limits):
//   Start()        plain HTTP, open to anyone who reaches the port (the
//                  default, as kube-scheduler's `urlPrefix: http://...`);
//   StartSecure()  HTTPS (--extender-secure), each call authenticated and
//                  authorised by the secure port's DelegatedAuth: a client
//                  certificate signed by --client-ca-file (what
//                  kube-scheduler's extender `tlsConfig: {certFile,
//                  keyFile}` sends; it cannot send a bearer token) or a
//                  bearer token, whose user must be allowed to `post` the
//                  non-resource URLs /filter and /prioritize. Refusals:
//                  401, 403, 429, 503 as the secure port's.
//
// Thread-safe.
#ifndef METRICS_SCHEDULER_SCHEDULER_SERVE_EXTENDER_SERVER_H_
#define METRICS_SCHEDULER_SCHEDULER_SERVE_EXTENDER_SERVER_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "metrics/cache.h"
#include "scheduler/cycle/cluster_state.h"
#include "scheduler/serve/delegated_auth.h"
#include "scheduler/serve/status_server.h"
#include "scheduler/telemetry/self_metrics.h"
#include "scoring/scoring_config.h"

namespace httplib {
class Server;
}

namespace ms {

class ExtenderServer {
 public:
  // A call's body holds a pod (at most 1.5 MiB, etcd's limit) and node
  // names (at most 253 bytes each): kDefaultMaxNodeNames of them fit with
  // room to spare.
  static constexpr size_t kMaxRequestBytes = 16 << 20;
  // Node names per call. kube-scheduler sends the nodes its filters passed,
  // at most the whole cluster (with percentageOfNodesToScore: 100; by
  // default far fewer). Kubernetes' scalability target is 5,000 nodes:
  // the default is three times that, and a larger cluster raises it with
  // the flag. A whole call
  // takes one to two microseconds a name on a test machine, JudgeNodes
  // under the lock most of it (ExtenderServerLimitTest logs it): this
  // bounds a call's hold to tens of milliseconds.
  static constexpr size_t kDefaultMaxNodeNames = 15000;

  // `cache` may be null (no query metric). All must outlive the server.
  ExtenderServer(ClusterState& state, const ScoringConfig& scoring,
                 const metrics::MetricsCache* cache, Registry& registry,
                 size_t max_node_names = kDefaultMaxNodeNames);
  ~ExtenderServer();

  // Listens on `address` ("[host]:port") over plain HTTP; returns the
  // port.
  absl::StatusOr<int> Start(const std::string& address,
                            const ConnectionLimits& limits = {});
  // Listens over TLS with `tls`, every call guarded by `auth` (which must
  // outlive the server); returns the port. InvalidArgument for a
  // certificate or CA OpenSSL refuses.
  absl::StatusOr<int> StartSecure(const std::string& address,
                                  const TlsServing& tls, DelegatedAuth& auth,
                                  const ConnectionLimits& limits = {});
  void Stop();

  // The error of a call with `count` names over the limit.
  static std::string TooManyNodeNames(size_t count, size_t limit);

  // The answers, for tests: the response body of a call with `body`, and
  // its HTTP status.
  std::string Filter(const std::string& body, int* status);
  std::string Prioritize(const std::string& body, int* status);

 private:
  absl::StatusOr<int> Serve(std::unique_ptr<httplib::Server> server,
                            const std::string& address);

  ClusterState& state_;
  const ScoringConfig& scoring_;
  const metrics::MetricsCache* const cache_;
  const size_t max_node_names_;
  Family<Counter>& requests_;
  Family<Histogram>& seconds_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_SERVE_EXTENDER_SERVER_H_
