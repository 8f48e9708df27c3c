// Binder: sends the bindings the scheduling loop decided, and settles each
// pod's charge and queue entry from the apiserver's answer.
//
// The scheduling loop has already charged the chosen node (assume); the
// binder turns that into a binding while the loop moves on. Most bindings
// need no wait before they are sent (no volumes, the lease's write window
// open, the node still there): Submit() sends those at once without
// waiting (SchedulerApi::BindAsync: the apiserver client's one I/O thread
// carries every binding in flight), and a successful answer settles the
// pod on that thread. The rest, and every answer other than success, go to
// a few threads that may wait (for the lease, for volumes, reading a pod
// back). So a pod bound at the first try wakes no thread of the binder's
// own: from the scheduling loop to the I/O thread, and done.
//
// How many bindings are in flight adapts to the apiserver's answers
// (AdaptiveLimit: fewer after 429s, timeouts or answers far slower than
// usual, more while bindings wait for a slot), between `min_in_flight` and
// `max_in_flight`; bindings beyond it wait in order for a slot.
//
// For each task:
//   1. Leadership. The binding starts only inside the lease's write window
//      (Leadership::AwaitWriteWindow): this replica leads and renewed its
//      lease less than the renew deadline ago. Each binding gives up after
//      `timeout`, which the caller keeps below lease duration minus renew
//      deadline, so no binding of a former leader is still in flight once a
//      standby may lead. Outside the window the pod is handed back to the
//      queue, never dropped.
//   2. The node. A binding to a node deleted since the decision is not
//      sent: the charge is dropped and the pod goes back to the queue.
//   2a. Volumes, for a pod whose WaitForFirstConsumer claims the decision
//      binds (Decision::volume_bindings), as kube-scheduler's VolumeBinding
//      PreBind: each chosen PV gets the claim as its claimRef, each claim
//      to provision gets the node as its selected-node annotation (the
//      resourceVersions the decision saw are preconditions); then the
//      worker waits, up to `volume_binding_timeout`, until the PV
//      controller (or the provisioner and the PV controller) has bound
//      every such claim, as the informers show it, and only then binds the
//      pod. A write refused, a claimRef or selected-node taken back (the
//      provisioner gave up), or the timeout: the pod backs off with a
//      FailedScheduling Event ("binding volumes: ..."); nothing written is
//      undone (the PV controller releases a PV whose claim went elsewhere),
//      as in kube-scheduler. A worker waits for volumes while others bind.
//   3. The answer. The pod's charge on the chosen node is dropped only on
//      evidence that the pod is not there and will not be: a refusal, the
//      pod gone, or the pod seen bound elsewhere.
//      - OK: done; a Scheduled Event names the node, the mode and the top
//        terms.
//      - No answer (Unavailable, DeadlineExceeded), turned away for load
//        (429, ResourceExhausted), or Aborted (409: bound already, or the
//        uid precondition failed): the binding may have taken effect, or
//        may still (a server can commit a write after its client gave up),
//        so the pod is read back, once. On the chosen node, with this
//        replica still inside its write window (asked after the read, so
//        no other replica can have led and bound it there): done, as if
//        OK. On another node, or on the chosen one once the window closed
//        (the next leader may have bound it): that node is charged, and
//        nothing is claimed (no Scheduled Event), done. Gone
//        (NotFound, or recreated under the same name): the charge is
//        dropped, done. Still unbound, or not readable: nothing is known,
//        so the same binding, to the same node, is sent again after a
//        backoff (RetryBackoff: 200 ms doubling to 5 s), the node kept
//        charged and the pod not decided again meanwhile. Sending it again
//        settles it: either it binds the pod, or a 409 says the first one
//        landed (read back: our node) or someone else bound it, or a 404
//        says the pod is gone. A binding sent again waits for the lease's
//        write window without giving the pod back (only the shutdown of a
//        replica that lost its lease abandons it), and is not sent when its
//        node was deleted (the charge is dropped and the pod placed again).
//      - NotFound: gone; the charge is dropped, done.
//      - Not sent (common/http.h IsNotSent: its deadline passed before it
//        left): certainly without effect. A first sending: the charge is
//        dropped and the pod placed again; a sending again: sent again
//        later, as the first one is still unknown.
//      - Anything else: the binding was refused; the charge is dropped and
//        the pod backs off with a FailedScheduling Event. A binding sent
//        again that is refused (a restarting apiserver's 403) proves
//        nothing of the first: the pod is read back as above.
// Each outcome is counted in metrics_scheduler_binding_outcomes_total.
//
// Thread-safe: Submit() from the scheduling loop, the rest from any thread.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_BINDER_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_BINDER_H_

#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "model/pod.h"
#include "scheduler/cycle/adaptive_limit.h"
#include "scheduler/cycle/cluster_state.h"
#include "scheduler/cycle/event_recorder.h"
#include "scheduler/cycle/queue.h"
#include "scheduler/cycle/scheduler_api.h"
#include "scheduler/ha/leadership.h"
#include "scheduler/telemetry/attempt_metrics.h"
#include "scheduler/telemetry/self_metrics.h"
#include "scoring/decide.h"

namespace ms {

struct BinderOptions {
  // Threads for the bindings that must wait (a late lease renewal,
  // volumes, reading a pod back); a pod waiting for its volumes holds one.
  int workers = 8;
  // Bounds of the adaptive number of bindings in flight, and where it
  // starts.
  int min_in_flight = 4;
  int max_in_flight = 64;
  int initial_in_flight = 32;
  // Each binding request gives up after this. Keep it below the lease
  // duration minus the renew deadline.
  absl::Duration timeout = absl::Seconds(4);
  // How long a binding waits for a late lease renewal before the pod is
  // handed back to the queue.
  absl::Duration leadership_wait = absl::Seconds(10);
  // How long a pod's claims may take to be bound once their PVs or nodes
  // are written (kube-scheduler's VolumeBindingArgs.bindTimeoutSeconds).
  absl::Duration volume_binding_timeout = absl::Minutes(10);
};

// A decision to carry out: the pod (as popped from the queue), its node,
// and the decision (for the Scheduled Event).
struct BindTask {
  QueuedPod queued;
  std::string node;
  Decision decision;
  absl::Time started;  // when the attempt began (absl::Now()), for metrics
  int sent = 0;        // times the binder sent this binding so far
};

class Binder {
 public:
  // Everything passed must outlive the Binder. Each attempt's end
  // (scheduled or error) is recorded in `attempts`.
  Binder(BinderOptions options, SchedulerApi& api, ClusterState& state,
         SchedulingQueue& queue, Leadership& leadership,
         EventRecorder& recorder, const Clock& clock, Registry& registry,
         AttemptMetrics& attempts);
  // Finishes every task submitted, then joins the workers.
  ~Binder();

  void Submit(BindTask task);
  // Blocks until every task submitted so far has been settled.
  void Drain();
  // Cuts short the waits of tasks in flight (leadership, volumes,
  // bindings to send again): shutting down. A binding not known to have
  // landed or not is abandoned with its node still charged.
  void Cancel();

 private:
  enum class Outcome {
    kBound,            // OK
    kLostAnswerBound,  // no answer (or 409); read back on the chosen node
    kBoundElsewhere,   // read back on another node
    kGone,             // the pod is gone or was recreated
    kNotBound,         // no answer; read back unbound: sent again
    kUnknown,          // no answer, and none on read-back: sent again
    kRefused,          // another error: retried
    kNotLeader,        // outside the lease's write window: handed back
    kNodeGone,         // the node was deleted since the decision
    kVolumesFailed,    // binding the pod's volumes failed: retried
    kNotSent,          // its deadline passed before it left: certainly not
                       // bound; placed again (or, sent again, still unknown)
    // (The last: the constructor counts on it.)
  };
  // What reading a pod back told.
  struct ReadBack {
    enum class Kind { kFound, kGone, kUnknown } kind = Kind::kUnknown;
    Pod pod;  // with kFound
  };

  static const char* OutcomeName(Outcome outcome);
  void Loop();
  // Whether the task may be sent without waiting: no volumes to bind, the
  // lease's write window open now, the node still there.
  bool Ready(const BindTask& task);
  // Tells the recorder whether bindings are in flight or waiting for a
  // slot, when that changed; returns true when it became false (the caller
  // then lets the held Events go, outside the lock).
  bool TellRecorder() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sends a task that is Ready() and holds a slot, or hands it to the
  // workers when it no longer is.
  void Dispatch(BindTask task);
  // The answer to a binding sent by Dispatch(), on the I/O thread.
  void Answered(BindTask task, absl::Status status, absl::Duration latency);
  // Steps 1 to 3 for a task that must wait, on a worker.
  void Bind(BindTask& task);
  // Step 3: settles the pod from the answer to its binding.
  void Resolve(BindTask& task, const absl::Status& status);
  // Resolve's part for an answer that settles nothing by itself (none, a
  // 409, or a refusal of a binding sent again): decided by reading the pod
  // back.
  void ResolveByReadBack(BindTask& task, const absl::Status& status);
  // One read (no retries: sending the binding again is the retry).
  ReadBack ReadPodBack(const Pod& pod);
  // Nothing is known of the binding: it is sent again after a backoff,
  // the node kept charged.
  void SendAgainLater(BindTask task);
  // A binding sent again, on a worker.
  void SendAgain(BindTask& task);
  // Step 1: whether the lease allows writing now; if not, the pod is
  // handed back to the queue (HandBack).
  bool InWriteWindow(const BindTask& task);
  void HandBack(const BindTask& task);
  // Step 2a: writes the pod's volume bindings and waits until its claims
  // are bound.
  absl::Status BindVolumes(const BindTask& task);
  void Count(Outcome outcome);
  void Succeeded(const BindTask& task);
  // Not bound by us, and nothing to retry (gone, or bound by someone
  // else): drops the charge and forgets the pod.
  void Settle(const BindTask& task, Outcome outcome);
  // Drops the charge and puts the pod in backoff, saying why on the pod
  // when `message` is not empty.
  void Retry(const BindTask& task, const std::string& message);

  const BinderOptions options_;
  SchedulerApi& api_;
  ClusterState& state_;
  SchedulingQueue& queue_;
  Leadership& leadership_;
  EventRecorder& recorder_;
  const Clock& clock_;
  AttemptMetrics& attempts_;
  Family<Counter>& outcomes_;
  Family<Histogram>& binding_seconds_;
  Family<Histogram>& pending_to_bound_seconds_;

  // A binding to send again, and when.
  struct Resend {
    absl::Time due;
    BindTask task;
  };

  absl::Notification cancelled_;
  absl::Mutex mu_;
  bool cancelling_ ABSL_GUARDED_BY(mu_) = false;
  // For the workers: tasks that must wait, failed answers, and bindings to
  // send again.
  std::deque<BindTask> tasks_ ABSL_GUARDED_BY(mu_);
  std::deque<std::pair<BindTask, absl::Status>> answers_ ABSL_GUARDED_BY(mu_);
  std::deque<Resend> resends_ ABSL_GUARDED_BY(mu_);
  uint64_t resends_added_ ABSL_GUARDED_BY(mu_) = 0;
  int binding_ ABSL_GUARDED_BY(mu_) = 0;  // tasks the workers hold now
  // Sent without waiting: how many may be, are, and wait for a slot.
  AdaptiveLimit limit_ ABSL_GUARDED_BY(mu_);
  int sending_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<BindTask> waiting_ ABSL_GUARDED_BY(mu_);
  // What the recorder was last told (EventRecorder::BindingsBusy).
  bool told_busy_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_BINDER_H_
