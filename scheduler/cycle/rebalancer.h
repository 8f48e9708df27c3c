// Rebalancer: moves pods off nodes that stay hot, only to where a decision
// places them better (docs/rebalance.md).
//
// Every `rebalance.interval`, on the leader only, it counts the metrics
// cache's new samples and plans the round (RebalancePlanner,
// scheduler/cycle/rebalance_planner.h), the interval's limits and the
// workloads' cool-downs holding, then carries each move out. In a dry run:
// a Normal Event WouldRebalance on the pod, and a count. Otherwise: an
// eviction through the Eviction API (PodDisruptionBudgets hold) begun
// inside the lease's write window, then an Event Rebalanced; until the
// bound's settle (default: the metric's estimate warmup) has passed, the
// node's samples, which still show the pod, are read less what it took, so
// the next round sheds more only if that is not enough. The node gets an
// Event too (Rebalancing, or WouldRebalance) naming what moves where.
// What it leaves, and why, is logged (-v=1; what may not move, -v=2) and
// counted.
//
// Thread-safe: the pod handlers from the informer threads, RunOnce() from
// its own thread (Start) or a test.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_REBALANCER_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_REBALANCER_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "config/config.h"
#include "metrics/cache.h"
#include "model/pod.h"
#include "scheduler/cycle/cluster_state.h"
#include "scheduler/cycle/event_recorder.h"
#include "scheduler/cycle/rebalance_planner.h"
#include "scheduler/cycle/scheduler_api.h"
#include "scheduler/ha/leadership.h"
#include "scheduler/telemetry/self_metrics.h"
#include "scoring/decide.h"
#include "scoring/rebalance.h"
#include "scoring/scoring_config.h"

namespace ms {

class Rebalancer {
 public:
  using Profile = RebalanceProfile;
  // What one round did, for tests and logs.
  struct Round {
    std::vector<HotNode> hot;
    // "ns/pod node -> node", per move carried out or (dry run) said.
    std::vector<std::string> moves;
  };

  // `profiles` in configuration order; each bound's metric is a term of
  // one of them (config/ checks it). `evict_timeout` bounds each eviction
  // (and the lease's write margin bounds it further).
  Rebalancer(const RebalanceConfig& config, std::vector<Profile> profiles,
             ClusterState& state, metrics::MetricsCache& cache,
             SchedulerApi& api, EventRecorder& recorder, Leadership& leadership,
             const Clock& clock, Registry& registry,
             absl::Duration evict_timeout);
  ~Rebalancer();

  // Pods on nodes (any scheduler's; only those a rebalanced profile names
  // are kept).
  void OnAssignedPod(const Pod& pod);
  void OnAssignedPodDeleted(const Pod& pod);

  // One round now.
  Round RunOnce();
  // Runs a round every interval on a thread of its own until Stop().
  void Start();
  void Stop();

 private:
  // The pods kept on `node`.
  std::vector<Pod> PodsOn(const std::string& node) const;
  // Counts what a plan left, and logs it.
  void CountLeft(const NodeRebalance& node);
  // Carries out (or, in a dry run, says) one planned move; true when the
  // pod was evicted (or said to be).
  bool Move(const NodeRebalance& node, const PlannedMove& move, int64_t now_ms,
            Round& round);
  void Loop();

  const RebalancePlanner planner_;
  ClusterState& state_;
  metrics::MetricsCache& cache_;
  SchedulerApi& api_;
  EventRecorder& recorder_;
  Leadership& leadership_;
  const Clock& clock_;
  const absl::Duration evict_timeout_;
  Family<Counter>& evictions_;
  Family<Counter>& left_;
  Family<Counter>& rounds_;

  // RunOnce's, under round_mu_: one round at a time.
  absl::Mutex round_mu_;
  HotTracker tracker_;
  MoveLimits limits_;
  Workspace workspace_;

  mutable absl::Mutex mu_;
  std::unordered_map<std::string, Pod> pods_ ABSL_GUARDED_BY(mu_);  // by key
  // Per node, the keys of its pods in pods_.
  std::unordered_map<std::string, std::set<std::string>> by_node_
      ABSL_GUARDED_BY(mu_);
  std::vector<HotNode> last_hot_ ABSL_GUARDED_BY(mu_);  // for the gauge
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_REBALANCER_H_
