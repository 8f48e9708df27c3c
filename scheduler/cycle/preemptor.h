// Preemptor: carries out what a decision's preemption takes
// (scoring/preemption.h), off the scheduling loop, as kube-scheduler's
// prepareCandidate does, on one thread of its own (preemptions are rare;
// their writes are few and in order):
//   1. Leadership: every write (each condition, deletion and nomination)
//      starts inside the lease's write window and gives up after
//      `timeout`, which the scheduler keeps below the lease's margin as it
//      does for bindings; so a former leader evicts nothing once a standby
//      may lead. Outside the window the preemption stops where it is and
//      is reported as not carried out.
//   2. Each victim, most important first: the DisruptionTarget condition
//      (True, reason PreemptionByScheduler, "<scheduler>: preempting to
//      accommodate a higher priority pod"), then its deletion with its uid
//      as precondition (graceful: it keeps its room until it is gone), then
//      a Preempted Event on it. A victim already gone, or recreated under
//      its name, is passed over.
//   3. The pods of lower priority nominated to that node lose their
//      nomination.
//   4. The preemptor's status.nominatedNodeName is set.
// The scheduler counts the preemptor on the node as soon as it submits
// (ClusterState::UpsertNominatedPod), so no pod takes the room meanwhile,
// and retries it when pods are deleted; when any write fails, that local
// nomination is dropped and the preemptor is retried as any unschedulable
// pod. Writes the apiserver did not answer are retried as Events are
// (about 25 s), each try inside the window; Cancel() (shutting down) ends
// the waits between tries. Outcomes are counted in
// metrics_scheduler_preemption_outcomes_total, victims in
// metrics_scheduler_preemption_victims.
//
// Thread-safe: Submit() from the scheduling loop, Drain() from any thread.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_PREEMPTOR_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_PREEMPTOR_H_

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "model/node_info.h"
#include "model/pod.h"
#include "scheduler/cycle/event_recorder.h"
#include "scheduler/cycle/scheduler_api.h"
#include "scheduler/ha/leadership.h"
#include "scheduler/telemetry/self_metrics.h"

namespace ms {

struct PreemptionTask {
  Pod preemptor;
  std::string node;
  std::vector<std::shared_ptr<const PodInfo>> victims;
  std::vector<std::shared_ptr<const PodInfo>> lower_nominated;
};

struct PreemptorOptions {
  // How long a write waits for a late lease renewal before the preemption
  // is dropped.
  absl::Duration leadership_wait = absl::Seconds(10);
  // Each write gives up after this. Keep it below the lease duration minus
  // the renew deadline (scheduler/cycle/binder.h).
  absl::Duration timeout = absl::Seconds(4);
};

class Preemptor {
 public:
  // `failed` is called (on the preemptor's thread) with a preemptor whose
  // preemption was not carried out.
  Preemptor(PreemptorOptions options, SchedulerApi& api,
            EventRecorder& recorder, Leadership& leadership,
            Registry& registry, std::function<void(const Pod&)> failed);
  ~Preemptor();  // Drain()s

  void Submit(PreemptionTask task);
  // Whether a preemption for the pod with this uid is queued or running:
  // the scheduler does not preempt for it again meanwhile.
  bool InFlight(const std::string& uid);
  // Carries out what is queued, then stops taking tasks.
  void Drain();
  // Ends the waits between the tries of a write: shutting down. The
  // preemption under way is then reported as not carried out.
  void Cancel();

 private:
  void Loop();
  // True when every write took effect (or was moot).
  bool Run(const PreemptionTask& task);
  // One write, `call(timeout)`, tried while the apiserver does not answer,
  // each try inside the lease's write window. OutsideWriteWindowError()
  // (scheduler/ha/leadership.h) when the window is closed.
  absl::Status Write(absl::FunctionRef<absl::Status(absl::Duration)> call);

  const PreemptorOptions options_;
  SchedulerApi& api_;
  EventRecorder& recorder_;
  Leadership& leadership_;
  const std::function<void(const Pod&)> failed_;
  Family<Counter>& outcomes_;
  Family<Histogram>& victims_;

  absl::Notification cancelled_;
  absl::Mutex mu_;
  std::deque<PreemptionTask> queue_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> in_flight_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_PREEMPTOR_H_
