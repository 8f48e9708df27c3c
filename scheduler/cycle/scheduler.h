// Scheduler: takes every pod that asks for this scheduler, decides where it
// goes, and hands the binding to the Binder.
//
// One Scheduler serves every profile (Config::profiles): one queue, one
// ClusterState and one binder, so each profile sees what the others placed
// (kube-scheduler's profiles share its cache the same way); a pod is
// decided with the policy of the profile its schedulerName names.
//
// The informers call the On*() handlers; Run() is the scheduling loop, run
// by the leader only. One cycle:
//   1. Pop the next pod (priority, then age) from the SchedulingQueue.
//   2. Take the metrics cache's snapshot. While the cache has never
//      refreshed, wait for it, but only until the cold-cache deadline that
//      started with the first such wait; past it, decide in fallback mode.
//   3. ClusterState::DecideAndAssume: filter, score, pick, and charge the
//      chosen node at once.
//   4. No node fits: the EventRecorder writes FailedScheduling with
//      kube-scheduler's reasons and PodScheduled=False/Unschedulable (off
//      the loop, and only when the message changed), and the pod parks as
//      unschedulable until the cluster changes. When preemption can make
//      room (scoring/preemption.h), the pod is counted on the chosen node
//      at once and the Preemptor evicts the victims and nominates it
//      (scheduler/cycle/preemptor.h); their deletion retries it.
//   5. A node fits: the Binder binds it (scheduler/cycle/binder.h says how each
//      answer is settled) and the loop moves on.
// The loop never calls the apiserver itself. It is a part of the
// LivenessMonitor: a cycle that holds its pod past the monitor's bound
// fails /livez.
//
// Thread safety: handlers from the informer threads, Run() on one thread,
// Stop() from any thread.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_SCHEDULER_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_SCHEDULER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "config/config.h"
#include "metrics/cache.h"
#include "model/kube_version.h"
#include "model/node.h"
#include "model/pod.h"
#include "scheduler/cycle/binder.h"
#include "scheduler/cycle/cluster_state.h"
#include "scheduler/cycle/event_recorder.h"
#include "scheduler/cycle/preemptor.h"
#include "scheduler/cycle/queue.h"
#include "scheduler/cycle/rebalancer.h"
#include "scheduler/cycle/scheduler_api.h"
#include "scheduler/ha/leadership.h"
#include "scheduler/telemetry/attempt_metrics.h"
#include "scheduler/telemetry/liveness.h"
#include "scheduler/telemetry/self_metrics.h"
#include "scoring/decide.h"

namespace ms {

struct SchedulerOptions {
  std::string identity;  // reportingInstance of Events
  // Threads for the bindings that must wait (BinderOptions::workers), and
  // the most bindings in flight at once (BinderOptions::max_in_flight).
  int bind_workers = 8;
  int max_bindings_in_flight = 64;
  // A binding request gives up after this; keep it below the lease
  // duration minus the renew deadline (scheduler/cycle/binder.h).
  absl::Duration bind_timeout = absl::Seconds(4);
  // How long a pod's WaitForFirstConsumer claims may take to be bound
  // before its binding fails and the pod backs off
  // (BinderOptions::volume_binding_timeout).
  absl::Duration volume_binding_timeout = absl::Minutes(10);
  int event_workers = 2;  // threads for queued Event writes and retries
  uint64_t seed = 0;  // tie-break stream; fixed in tests
  QueueOptions queue;
  // Whose kube-scheduler rules to follow where releases differ: the
  // cluster's (ScoringConfig::kube, ClusterState).
  KubeVersion kube;
};

class Scheduler {
 public:
  // `cache` may be null (no metrics configured), `liveness` too (nothing
  // watches the loop). Everything passed must outlive the Scheduler.
  // `leadership` is asked before every binding.
  Scheduler(const Config& config, SchedulerOptions options, SchedulerApi& api,
            metrics::MetricsCache* cache, const Clock& clock,
            Registry& registry, Leadership& leadership,
            LivenessMonitor* liveness = nullptr);
  ~Scheduler();

  // Pods with our schedulerName and no node yet.
  void OnPendingPod(const Pod& pod);
  void OnPendingPodDeleted(const Pod& pod);
  // A pod meant for us that our decoder refused (kube/decode.h): it is
  // told why on the pod (FailedScheduling), once per message, and waits.
  void OnPendingPodRejected(const kube::RejectedObject& rejected);
  // Unassigned pods with status.nominatedNodeName (any scheduler's): the
  // room a preemption freed for them is kept (ClusterState).
  void OnNominatedPod(const Pod& pod, bool deleted);
  // PodDisruptionBudgets, for preemption.
  void OnBudget(const PodDisruptionBudget& budget, bool deleted);
  // Pods on nodes (any scheduler's), for resource accounting.
  void OnAssignedPod(const Pod& pod);
  void OnAssignedPodDeleted(const Pod& pod);
  void OnNode(const Node& node);
  void OnNodeDeleted(const Node& node);
  // Namespaces' labels, for pod affinity's namespaceSelector.
  void OnNamespace(const Namespace& ns);
  void OnNamespaceDeleted(const Namespace& ns);
  // Services, ReplicaSets, StatefulSets, ReplicationControllers: their
  // selectors, for the default topology spread of the pods they select.
  void OnWorkload(const Workload& workload);
  void OnWorkloadDeleted(const Workload& workload);
  // PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
  // CSIDrivers, CSIStorageCapacities, for the volume plugins; any change may
  // let a pod with claims fit, so unschedulable pods are retried.
  void OnStorage(const PersistentVolumeClaim& claim, bool deleted);
  void OnStorage(const PersistentVolume& volume, bool deleted);
  void OnStorage(const StorageClass& storage_class, bool deleted);
  void OnStorage(const CsiNode& node, bool deleted);
  void OnStorage(const CsiDriver& driver, bool deleted);
  void OnStorage(const CsiStorageCapacity& capacity, bool deleted);
  // DeviceClasses: which extended resources dynamic resource allocation
  // provides (a pod asking for one is retried when they change).
  void OnDeviceClass(const DeviceClass& device_class, bool deleted);

  // Schedules until Stop(). (A housekeeping thread, started with the
  // Scheduler, flushes the queue, hands the node list to the metrics
  // cache and retries pods a metric's filter kept out on new metric
  // values, every second.)
  void Run();
  // Stops taking pods, lets in-flight bindings settle, and returns once
  // Run() has returned. Idempotent.
  void Stop();

  ClusterState& state() { return state_; }
  SchedulingQueue& queue() { return queue_; }
  // The first profile's policy: what extender calls and shadow mode use.
  const ScoringConfig& scoring() const { return profiles_.front().scoring; }

 private:
  struct Profile {
    std::string name;  // schedulerName
    ScoringConfig scoring;
  };

  // The profile of the pod's schedulerName (the first for any other: the
  // pending informers only ever pass pods of ours).
  const Profile& ProfileOf(const Pod& pod) const;
  void ScheduleOne(QueuedPod queued);
  // Hands what a decision's preemption takes to the Preemptor.
  void Preempt(const Pod& pod, const Preemption& preemption);
  std::shared_ptr<const MetricsSnapshot> MetricsForCycle(bool* force_fallback);
  void Housekeeping();
  // Hands the node list to the metrics cache if it changed.
  void SyncNodesToCache();
  // New metric values may let a pod a metric's filter kept out fit: retries
  // unschedulable pods when the cache published since the last call and a
  // query metric of some profile has a filter.
  void RetryOnNewMetrics();
  void RegisterMetrics();
  // Whether the pending pod `key` waits on its scheduling gates.
  void SetGated(const std::string& key, bool gated);

  const Config& config_;
  const SchedulerOptions options_;
  // Never resized: ClusterState knows each policy by its address.
  const std::vector<Profile> profiles_;
  // A query metric of some profile has a filter (RetryOnNewMetrics).
  const bool filters_on_queries_;
  metrics::MetricsCache* const cache_;
  const Clock& clock_;
  Leadership& leadership_;
  LivenessMonitor* const liveness_;         // null: not watched
  LivenessMonitor::Part* const loop_part_;  // null: not watched

  SchedulingQueue queue_;
  ClusterState state_;
  Workspace workspace_;  // the scheduling loop's own
  std::mt19937_64 rng_;

  // Cold cache: when the first wait began (InfinitePast: not yet).
  absl::Time cold_since_ = absl::InfinitePast();

  // Self metrics.
  AttemptMetrics attempts_;
  Family<Counter>& decisions_;
  Family<Histogram>& decision_seconds_;
  Registry& registry_;

  // Declared after what they use, so they are destroyed first: the binder
  // settles its last tasks, then the recorder writes what they said.
  EventRecorder recorder_;
  Binder binder_;
  Preemptor preemptor_;
  // With rebalance.mode dryRun or evict; run beside Run().
  std::unique_ptr<Rebalancer> rebalancer_;

  // The snapshot RetryOnNewMetrics last saw (housekeeping thread only).
  std::shared_ptr<const MetricsSnapshot> seen_metrics_;
  std::thread housekeeping_;
  // Pending pods held back by their scheduling gates (not queued).
  mutable absl::Mutex gated_mu_;
  std::unordered_set<std::string> gated_ ABSL_GUARDED_BY(gated_mu_);
  // The ClusterState::NodeAddressesVersion last handed to the cache.
  std::atomic<uint64_t> synced_addresses_{0};

  absl::Notification stopping_;
  absl::Notification stopped_;
  std::atomic<bool> running_{false};
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_SCHEDULER_H_
