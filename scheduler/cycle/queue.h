// SchedulingQueue: the pods waiting to be scheduled, kube-scheduler style.
//
// Three parts:
//   - active: ready to be tried, ordered by priority (highest first), then by
//     when the pod first entered the queue (oldest first);
//   - backoff: failed with an error (a binding that failed, say) and waiting
//     out a backoff of 1 s doubling to 10 s per attempt;
//   - unschedulable: no node fits; they go back to active (or to backoff, if
//     their backoff has not expired) when the cluster changes in a way that
//     may make them fit (MoveAllToActive), and after 5 minutes in any case.
// A pod is in at most one part, or "in flight" between Pop() and Done() /
// Requeue*(). Updates and deletes that arrive while a pod is in flight are
// kept and applied when it comes back. A pod Done() with (bound, or found
// bound or gone) is remembered until its deletion: the pending-pods watch
// may still deliver an update written before the binding (our own status
// patch) before the pod leaves it, and that must not queue a bound pod
// again (kube-scheduler skips updates of pods it has assumed or bound). A pod in flight does not miss a
// cluster change (kube-scheduler's moveRequestCycle): when MoveAllToActive()
// or a change to the pod's own spec comes while it is being tried, a
// RequeueUnschedulable() that follows sends it to backoff instead, so it
// is tried again against the changed cluster.
//
// Time comes from the injected Clock; the owner calls Flush() periodically
// (every second) to move pods whose backoff or unschedulable timeout has
// expired. Thread-safe.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_QUEUE_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_QUEUE_H_

#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "model/pod.h"

namespace ms {

struct QueueOptions {
  absl::Duration initial_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Seconds(10);
  absl::Duration unschedulable_timeout = absl::Minutes(5);
};

// A pod as handed out by Pop().
struct QueuedPod {
  Pod pod;
  int attempts = 0;           // scheduling attempts so far, this one included
  absl::Time first_enqueued;  // when the pod first entered the queue
};

struct QueueLengths {
  size_t active = 0;
  size_t backoff = 0;
  size_t unschedulable = 0;
  size_t in_flight = 0;
};

class SchedulingQueue {
 public:
  explicit SchedulingQueue(const Clock& clock, QueueOptions options = {});

  // A new pending pod. A pod already known is updated instead.
  void Add(const Pod& pod);
  // A newer version of a known pod: replaced where it is. An unschedulable
  // pod whose spec may now fit goes back to active.
  void Update(const Pod& pod);
  // The pod is gone (deleted, or bound by someone): forget it.
  void Delete(const std::string& key);

  // Blocks until a pod is active or the queue is closed (then nullopt). The
  // pod is in flight until Done() or Requeue*().
  std::optional<QueuedPod> Pop();

  // The in-flight pod was handled (bound, or found bound or gone): it is
  // not queued again, whatever updates of it come, until Delete() or a pod
  // of another uid under its name. If it was recreated under the same name
  // meanwhile, the new pod becomes active instead.
  void Done(const Pod& pod);
  // The in-flight pod fits no node: park it as unschedulable.
  void RequeueUnschedulable(const QueuedPod& pod);
  // The in-flight pod failed with an error: back off, then retry.
  void RequeueBackoff(const QueuedPod& pod);

  // Something changed that may let unschedulable pods fit (a node added or
  // updated, a pod deleted): move them to active, or to backoff while their
  // backoff lasts.
  void MoveAllToActive();

  // Moves pods whose backoff expired to active, and unschedulable pods older
  // than the unschedulable timeout to active.
  void Flush();

  // Wakes every Pop() with nullopt; later calls to Pop() return at once.
  void Close();

  QueueLengths Lengths() const;
  // Whether a pod is active: waiting for a decision (cheap, unlike
  // Lengths()).
  bool HasActive() const;
  // The backoff after `attempts` failed attempts: 1 s, 2 s, 4 s, 8 s, 10 s...
  absl::Duration Backoff(int attempts) const;

 private:
  // kDone: handled; kept only to ignore late updates of that uid.
  enum class Where { kActive, kBackoff, kUnschedulable, kInFlight, kDone };
  struct Entry {
    Pod pod;
    Where where = Where::kActive;
    int attempts = 0;
    absl::Time first_enqueued;
    absl::Time parked_at;      // when it entered backoff / unschedulable
    absl::Time backoff_until;  // end of its current backoff
    bool deleted_in_flight = false;
    // The cluster or the pod changed while it was in flight.
    bool moved_in_flight = false;
  };
  using ActiveKey = std::tuple<int32_t, absl::Time, std::string>;  // -prio

  static ActiveKey KeyOf(const Entry& e, const std::string& key);
  void ToActive(const std::string& key, Entry& e)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Upsert(const Pod& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Requeue(const QueuedPod& pod, Where where);

  const Clock& clock_;
  const QueueOptions options_;
  mutable absl::Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::set<ActiveKey> active_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_QUEUE_H_
