// EventRecorder: what the scheduler tells the cluster about a pod, written
// off the scheduling loop.
//
// Events (Scheduled, FailedScheduling, Preempted) and the pod's
// PodScheduled=False condition are written off the caller's thread, so
// neither the scheduling loop nor a binding waits on the apiserver
// (kube-scheduler's event broadcaster works the same way). Events are
// sent without waiting (SchedulerApi::RecordEventAsync, on the apiserver
// client's I/O thread), up to `max_in_flight` at a time, the rest queued
// in order and sent as answers come back. Events yield to the bindings,
// so that they do not take the apiserver's time from them: while bindings
// are in flight or wait for a slot (BindingsBusy) none is sent, and the
// binder lets them go once it is idle (SendWaiting); while pods wait for
// a decision (`busy`), at most `busy_in_flight` at a time. They are
// written later, each with the time it happened. Once kYieldBelow Events
// wait, they stop yielding, so that a long stream of bindings delays them
// without dropping any. Conditions are queued for a few threads of the
// recorder's own. A write the apiserver did not answer (or refused while
// starting) is retried, kRetryAttempts times over about 25 s
// (scheduler/cycle/scheduler_api.h), enough for an apiserver restart: it waits
// for its next attempt without holding a thread, so new writes never queue
// behind retries. An Event keeps one name across its attempts, so a retry after
// a lost answer is refused as a duplicate instead of recording the Event
// twice.
//
// Repeats are not written. A pod retried while nothing changed fails with
// the same message every time; kube-scheduler's event correlator folds such
// repeats into one Event. Here a FailedScheduling Event, and the
// PodScheduled=False condition, are written only when their message
// differs from the last one written for that pod (by uid); Forget() clears
// that memory when the pod is bound or gone. Suppressed repeats are counted
// (metrics_scheduler_events_suppressed_total).
//
// At most kMaxPending Events wait, as many conditions, and as many
// retries; beyond that they are dropped and counted
// (metrics_scheduler_events_dropped_total). What waits is a gauge
// (metrics_scheduler_events_pending).
//
// Thread-safe. The destructor writes what is queued (one attempt each once
// closing), joins the writers, and returns only once every Event sent has
// been answered and its callback has let go of the recorder (each request
// has its timeout, so this ends): the I/O thread that answers outlives
// the recorder. No method may be called once it has begun.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_EVENT_RECORDER_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_EVENT_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kube/client.h"
#include "model/pod.h"
#include "scheduler/cycle/scheduler_api.h"
#include "scheduler/telemetry/self_metrics.h"

namespace ms {

struct EventRecorderOptions {
  // reportingController: the profiles' scheduler names. An Event reports as
  // the profile of the pod it is about (of the preemptor for Preempted),
  // as the first for a pod of none.
  std::vector<std::string> components;
  std::string instance;   // reportingInstance: this replica's identity
  int workers = 2;        // threads for conditions and retries
  int max_in_flight = 16;  // Events sent without waiting at once
  // True while Events should yield to bindings; null: never.
  std::function<bool()> busy;
  int busy_in_flight = 2;  // Events sent at once while pods wait
};

class EventRecorder {
 public:
  static constexpr size_t kMaxPending = 10000;
  static constexpr size_t kYieldBelow = kMaxPending / 4;

  EventRecorder(EventRecorderOptions options, SchedulerApi& api,
                Registry& registry);
  ~EventRecorder();

  // A Normal "Scheduled" Event (action Binding).
  void Scheduled(const Pod& pod, std::string message);
  // A Warning "FailedScheduling" Event with `action` ("Scheduling",
  // "Binding"), unless the last one written for this pod said the same.
  void FailedScheduling(const Pod& pod, absl::string_view action,
                        std::string message);
  // No node fits: FailedScheduling, and PodScheduled=False with reason
  // Unschedulable, each unless it repeats the last one for this pod.
  void Unschedulable(const Pod& pod, const std::string& message);
  // A Warning Event about something wrong on the pod itself (reason such
  // as "InvalidEstimate", action "Scheduling") that did not stop it from
  // being scheduled.
  void Warning(const Pod& pod, absl::string_view reason,
               absl::string_view action, std::string message);
  // A Normal Event about the pod (reason such as "Rebalanced", action
  // "Rebalancing").
  void Normal(const Pod& pod, absl::string_view reason,
              absl::string_view action, std::string message);
  // A Normal Event about node `node` (rebalancing's: reason
  // "Rebalancing" or "WouldRebalance"), reported as the first profile.
  void NodeEvent(const std::string& node, absl::string_view reason,
                 absl::string_view action, std::string message);
  // A Normal "Preempted" Event on a victim (action Preempting), as
  // kube-scheduler words it: "Preempted by pod <uid> on node <node>".
  void Preempted(const Pod& victim, const Pod& preemptor,
                 const std::string& node);
  // The pod is bound or gone: forget what was last written for it.
  void Forget(const Pod& pod);

  // The binder has bindings in flight or waiting for a slot (true) or none
  // (false): Events yield while it has. Cheap; callable under the binder's
  // lock.
  void BindingsBusy(bool busy) { bindings_busy_.store(busy); }
  // Sends the Events that were held back, as far as there is room now
  // (after BindingsBusy(false); not under the caller's locks).
  void SendWaiting() { Pump(); }

 private:
  struct Write {
    std::optional<kube::PodEvent> event;
    Pod pod;  // for a condition: namespace, name, uid
    std::optional<kube::PodCondition> condition;
    int attempts = 0;  // made so far
    absl::Time due;    // of the next attempt, for a retry
  };
  // What was last written for a pod.
  struct Said {
    std::string failed_message;     // FailedScheduling
    std::string condition_message;  // PodScheduled=False
  };

  // An Event about `pod`, reported as the profile of `by`.
  kube::PodEvent MakeEvent(const Pod& pod, const Pod& by,
                           absl::string_view type, absl::string_view reason,
                           absl::string_view action, std::string message) const;
  void Enqueue(Write write);
  // Sends queued Events while there is room in flight. One thread pumps at
  // a time; a call meanwhile (an answer on another thread, or one given at
  // once by the API) asks it for another round instead of nesting.
  void Pump();
  // The answer to an Event sent without waiting, on the I/O thread.
  void Sent(Write write, const absl::Status& status);
  void Loop();
  // One attempt at a write; a failure the apiserver may get over puts it
  // back among the retries, unless it has had all its attempts.
  void Attempt(Write write);
  // Puts a write that failed for a moment among the retries, due
  // RetryBackoff(attempts) from now (dropped and counted when too many wait).
  void Retry(Write write) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Failed(const Write& write, const absl::Status& status);

  const EventRecorderOptions options_;
  SchedulerApi& api_;
  Family<Counter>& dropped_;
  Family<Counter>& suppressed_;

  absl::Mutex mu_;
  std::deque<Write> events_ ABSL_GUARDED_BY(mu_);   // Events to send
  std::deque<Write> queue_ ABSL_GUARDED_BY(mu_);    // conditions
  std::vector<Write> retries_ ABSL_GUARDED_BY(mu_);  // awaiting `due`
  uint64_t retries_added_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int sending_ ABSL_GUARDED_BY(mu_) = 0;  // Events sent, not yet answered
  // Callbacks given to RecordEventAsync that have not yet returned: the
  // destructor waits until there are none.
  int callbacks_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<bool> bindings_busy_{false};
  bool pumping_ ABSL_GUARDED_BY(mu_) = false;
  bool pump_again_ ABSL_GUARDED_BY(mu_) = false;
  std::unordered_map<std::string, Said> said_ ABSL_GUARDED_BY(mu_);  // by uid
  std::vector<std::thread> writers_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_EVENT_RECORDER_H_
