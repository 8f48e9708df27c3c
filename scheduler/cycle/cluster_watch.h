// ClusterWatch: every informer the scheduler process runs, and where each
// event goes. The one place that says which objects are watched, with
// which selectors, and which of the scheduler's handlers (Scheduler::OnX,
// or shadow mode's) an event reaches.
//
// Watched: the pending pods of each profile (one informer per scheduler
// name: a field selector cannot say "one of"), the pods assigned to nodes,
// the nodes, the namespaces, the workloads' selectors, the nominated pods,
// the PodDisruptionBudgets and the storage objects. Every informer's
// handlers are a part of the liveness monitor (one that hangs fails
// /livez), and an object the decoder refuses is counted in
// metrics_scheduler_objects_rejected_total; a pending pod refused is also
// told why (Scheduler::OnPendingPodRejected).
//
// Thread-compatible: Start, Cancel and Stop from one thread; Synced from
// any.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_CLUSTER_WATCH_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_CLUSTER_WATCH_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "config/config.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "scheduler/cycle/scheduler.h"
#include "scheduler/cycle/shadow.h"
#include "scheduler/telemetry/liveness.h"
#include "scheduler/telemetry/self_metrics.h"

namespace ms {

class ClusterWatch {
 public:
  // `shadow` null: the pending pods of config's profiles go to
  // `scheduler`'s queue. Otherwise shadow mode: the watched scheduler's
  // pods, bound or not (so that a pod's binding follows its creation in
  // one stream), go to `shadow`, and nothing is queued. Everything passed
  // must outlive this object.
  ClusterWatch(kube::KubeClient& client, const Config& config,
               Scheduler& scheduler, Shadow* shadow, LivenessMonitor& liveness,
               Registry& registry);
  ~ClusterWatch();

  // Starts every informer: the cluster's objects first, the pending pods
  // last, so that a pod is decided on a synced cluster.
  void Start();

  // Whether every informer has listed, waiting up to `wait` for each.
  bool Synced(absl::Duration wait);

  // Ends every watch: each is told to end before any is waited for, so
  // they end together (kube::Informer::Cancel).
  void Stop();

 private:
  // The informers in start order, type-erased.
  struct Entry {
    std::function<void()> start, cancel, stop;
    std::function<bool(absl::Duration)> synced;
  };
  // An informer named `name`, whose handlers (add and update alike, then
  // delete) are the liveness monitor's part `part`.
  template <typename T>
  void Add(const std::string& name, const std::string& part,
           kube::InformerSource<T> source,
           std::function<void(const T&, bool deleted)> on_change,
           std::function<void(const kube::RejectedObject&)> on_reject,
           kube::InformerOptions options = {});

  // The cluster's objects, then the pending pods (see the constructor).
  void WatchCluster(kube::KubeClient& client, const Config& config,
                    Scheduler& scheduler);
  void WatchPending(kube::KubeClient& client, const Config& config,
                    Scheduler& scheduler, Shadow* shadow);
  // An object the decoder refused, in the rejected counter.
  void Count(const kube::RejectedObject& rejected);

  LivenessMonitor& liveness_;
  Family<Counter>& rejected_;
  std::vector<Entry> informers_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_CLUSTER_WATCH_H_
