// Scheduler: takes every pod that asks for this scheduler, decides where it
// goes, binds it and tells the user why.
//
// The informers call the On*() handlers; Run() is the scheduling loop, run
// by the leader only. One cycle:
//   1. Pop the next pod (priority, then age) from the SchedulingQueue.
//   2. Take the metrics cache's snapshot. While the cache has never
//      refreshed, wait for it, but only until the cold-cache deadline that
//      started with the first such wait; past it, decide in fallback mode.
//   3. ClusterState::DecideAndAssume: filter, score, pick, and charge the
//      chosen node at once.
//   4. No node fits: a FailedScheduling Event with kube-scheduler's reasons,
//      PodScheduled=False/Unschedulable on the pod, and the pod parks as
//      unschedulable until the cluster changes.
//   5. A node fits: the binding goes to a pool of binder threads, so many
//      bindings are in flight at once and the loop moves on. A bound pod
//      gets a Scheduled Event naming the node, the mode and the top terms.
//      A 409 (someone bound it first) or 404 (gone) drops the assumption
//      without retry, and charges the node the pod is on. When the
//      apiserver did not answer (Unavailable, DeadlineExceeded), the binding
//      may have taken effect: the binder reads the pod back and, if it is
//      on the chosen node, counts the binding as done; if that cannot be
//      told, the chosen node stays charged and the pod backs off. Any
//      other failure drops the assumption and backs the pod off.
// Events that fail because the apiserver did not answer are retried (about
// 25 s, under one name so a lost answer does not make a duplicate).
// Events are written by a few threads of their own, so neither a binding
// nor the scheduling loop waits on them (kube-scheduler's event broadcaster
// works the same way). At most kMaxPendingEvents wait; beyond that new
// ones are dropped and counted (metrics_scheduler_events_dropped_total).
// A binder checks leadership before every binding: a replica that lost its
// lease binds nothing more.
//
// Thread safety: handlers from the informer threads, Run() on one thread,
// Stop() from any thread.
#ifndef METRICS_SCHEDULER_SCHEDULER_SCHEDULER_H_
#define METRICS_SCHEDULER_SCHEDULER_SCHEDULER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "config/config.h"
#include "metrics/cache.h"
#include "model/node.h"
#include "model/pod.h"
#include "scheduler/api.h"
#include "scheduler/cluster_state.h"
#include "scheduler/queue.h"
#include "scheduler/self_metrics.h"
#include "scoring/decide.h"

namespace ms {

struct SchedulerOptions {
  std::string identity;  // reportingInstance of Events
  int bind_workers = 32;
  int event_workers = 4;  // Events written at once
  uint64_t seed = 0;  // tie-break stream; fixed in tests
  QueueOptions queue;
};

class Scheduler {
 public:
  // `cache` may be null (no metrics configured). Everything passed must
  // outlive the Scheduler. `is_leader` is asked before every binding.
  Scheduler(const Config& config, SchedulerOptions options, SchedulerApi& api,
            metrics::MetricsCache* cache, const Clock& clock,
            Registry& registry, std::function<bool()> is_leader);
  ~Scheduler();

  // Pods with our schedulerName and no node yet.
  void OnPendingPod(const Pod& pod);
  void OnPendingPodDeleted(const Pod& pod);
  // Pods on nodes (any scheduler's), for resource accounting.
  void OnAssignedPod(const Pod& pod);
  void OnAssignedPodDeleted(const Pod& pod);
  void OnNode(const Node& node);
  void OnNodeDeleted(const Node& node);

  // Schedules until Stop(). (A housekeeping thread, started with the
  // Scheduler, flushes the queue and hands the node list to the metrics
  // cache every second.)
  void Run();
  // Stops taking pods, lets in-flight bindings finish, and returns once
  // Run() has returned. Idempotent.
  void Stop();

  ClusterState& state() { return state_; }
  SchedulingQueue& queue() { return queue_; }
  const ScoringConfig& scoring() const { return scoring_; }

 private:
  struct BindTask {
    QueuedPod queued;
    std::string node;
    Decision decision;
    absl::Time started;
  };

  void ScheduleOne(QueuedPod queued);
  std::shared_ptr<const MetricsSnapshot> MetricsForCycle(bool* force_fallback);
  void ReportUnschedulable(const QueuedPod& queued, const Decision& decision);
  void BindLoop();
  void Bind(BindTask task);
  // After a binding failed without an answer, or with a 409: the pod as
  // the apiserver has it now, read back with retries while it cannot
  // answer (about 25 s, cut short by Stop()); nullopt when that does not
  // tell (still unreachable, or the pod is gone or was recreated).
  std::optional<Pod> ReadBack(const Pod& pod);
  // Queues an Event for the event writers; never blocks on the network.
  void RecordEvent(kube::PodEvent event);
  void EventLoop();
  void Housekeeping();
  // Hands the node list to the metrics cache if it changed.
  void SyncNodesToCache();
  void RegisterMetrics();

  const Config& config_;
  const SchedulerOptions options_;
  const ScoringConfig scoring_;
  SchedulerApi& api_;
  metrics::MetricsCache* const cache_;
  const Clock& clock_;
  const std::function<bool()> is_leader_;

  SchedulingQueue queue_;
  ClusterState state_;
  Workspace workspace_;  // the scheduling loop's own
  std::mt19937_64 rng_;

  // Cold cache: when the first wait began (InfinitePast: not yet).
  absl::Time cold_since_ = absl::InfinitePast();

  absl::Mutex bind_mu_;
  std::deque<BindTask> bind_queue_ ABSL_GUARDED_BY(bind_mu_);
  int binding_ ABSL_GUARDED_BY(bind_mu_) = 0;  // tasks being bound now
  bool bind_closed_ ABSL_GUARDED_BY(bind_mu_) = false;
  std::vector<std::thread> binders_;

  static constexpr size_t kMaxPendingEvents = 10000;
  absl::Mutex event_mu_;
  std::deque<kube::PodEvent> event_queue_ ABSL_GUARDED_BY(event_mu_);
  bool events_closed_ ABSL_GUARDED_BY(event_mu_) = false;
  std::vector<std::thread> event_writers_;
  std::thread housekeeping_;

  absl::Mutex nodes_mu_;
  bool nodes_dirty_ ABSL_GUARDED_BY(nodes_mu_) = false;

  absl::Notification stopping_;
  absl::Notification stopped_;
  std::atomic<bool> running_{false};

  // Self metrics.
  Family<Counter>& attempts_;
  Family<Counter>& decisions_;
  Family<Histogram>& decision_seconds_;
  Family<Histogram>& binding_seconds_;
  Family<Histogram>& pending_to_bound_seconds_;
  Family<Counter>& events_dropped_;
  Registry& registry_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_SCHEDULER_H_
