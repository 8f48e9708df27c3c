// Shadow: where metrics-scheduler would have placed another scheduler's
// pods, without placing any (`--shadow`), for a safe cut-over.
//
// An informer watches the other scheduler's pods (default
// `default-scheduler`), bound or not, so that each pod's events arrive in
// order; when one first seen pending is seen bound, it is decided as if it
// were still pending (its own charge left out, charging nothing, with the
// metrics of the moment) and the choice is compared with the node the
// other scheduler chose:
//
//   metrics_scheduler_shadow_decisions_total{agreed="true"|"false"}
//   metrics_scheduler_shadow_score_gap    our choice's total minus the
//                                         chosen node's, under our scoring
//                                         (0..100; not observed when that
//                                         node fails our filters)
//   metrics_scheduler_shadow_infeasible_total  the other scheduler's node
//                                         fails our filters (a metric
//                                         threshold, or a view that differs)
//
// Only pods seen pending first are judged: pods already bound when the
// process started were placed against a cluster it never saw. Nothing is
// written to the cluster. Disagreements are logged at -v=1.
//
// Thread-safe: the informers' threads call it.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_SHADOW_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_SHADOW_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "metrics/cache.h"
#include "model/pod.h"
#include "scheduler/cycle/cluster_state.h"
#include "scheduler/telemetry/self_metrics.h"
#include "scoring/decide.h"
#include "scoring/scoring_config.h"

namespace ms {

class Shadow {
 public:
  // `cache` may be null (no query metric). All must outlive the Shadow.
  Shadow(std::string watched, ClusterState& state, const ScoringConfig& scoring,
         const metrics::MetricsCache* cache, Registry& registry);

  const std::string& watched() const { return watched_; }

  // The watched scheduler's pods: an unbound one is remembered; a bound one
  // that was is judged, once.
  void OnPod(const Pod& pod);
  void OnPodDeleted(const Pod& pod);

 private:
  const std::string watched_;
  ClusterState& state_;
  const ScoringConfig& scoring_;
  const metrics::MetricsCache* const cache_;
  Family<Counter>& decisions_;
  Family<Counter>& infeasible_;
  Family<Histogram>& gap_;
  absl::Mutex mu_;
  // The uids of the watched pods seen pending and not judged yet.
  absl::flat_hash_set<std::string> pending_ ABSL_GUARDED_BY(mu_);
  Workspace workspace_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_SHADOW_H_
