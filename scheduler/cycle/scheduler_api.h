// SchedulerApi: the writes the scheduler makes to the cluster.
//
// Binding a pod, recording an Event about it, setting its PodScheduled
// condition, reading a pod back (to learn whether a binding whose answer
// was lost took effect), and preemption's writes (a victim's
// DisruptionTarget condition and deletion, a preemptor's nominated node),
// and rebalancing's evictions. KubeSchedulerApi sends them to the
// apiserver; unit tests record them. Failure codes are KubeClient's
// (kube/client.h): Aborted for a pod already bound, NotFound for a pod that is
// gone, Unavailable and DeadlineExceeded for a server that could not answer.
//
// The binding and Event writes also come without waiting (BindAsync,
// RecordEventAsync): the answer goes to a callback, on the apiserver
// client's I/O thread for KubeSchedulerApi; by default, at once, from the
// blocking call.
//
// Thread-safe: the binder calls it from several threads at once.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_SCHEDULER_API_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_SCHEDULER_API_H_

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kube/client.h"
#include "model/pod.h"
#include "model/volumes.h"

namespace ms {

// A failure where the apiserver could not answer (restarting, overloaded, a
// broken connection): the same call may work a moment later, and a write
// may have taken effect even though its answer was lost.
inline bool IsTransient(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) ||
         absl::IsResourceExhausted(s);
}

// Like IsTransient, or PermissionDenied: a restarting kube-apiserver
// answers 403 for a moment, until its RBAC authorizer has synced. Retried
// for reads and Events, whose retry costs nothing.
inline bool IsTransientOrStarting(const absl::Status& s) {
  return IsTransient(s) || absl::IsPermissionDenied(s);
}

// How reads and Events are retried while the apiserver cannot answer:
// kRetryAttempts tries, waiting kRetryMin doubling to kRetryMax between
// them: about 25 s in all, enough for an apiserver restart.
inline constexpr int kRetryAttempts = 10;
inline constexpr absl::Duration kRetryMin = absl::Milliseconds(200);
inline constexpr absl::Duration kRetryMax = absl::Seconds(5);

// The wait after `tries` tries (at least 1) before the next: kRetryMin
// doubling to kRetryMax.
inline absl::Duration RetryBackoff(int tries) {
  absl::Duration backoff = kRetryMin;
  for (int i = 1; i < tries && backoff < kRetryMax; ++i) backoff *= 2;
  return std::min(backoff, kRetryMax);
}

// Calls `call` until it succeeds or fails for good (not
// IsTransientOrStarting), at most kRetryAttempts times, passing each wait
// between tries (RetryBackoff) to `wait`, which returns true to give up at
// once. Returns the last answer.
inline absl::Status RetryWhileUnavailable(
    absl::FunctionRef<absl::Status()> call,
    absl::FunctionRef<bool(absl::Duration)> wait) {
  absl::Status s = call();
  for (int tries = 1; IsTransientOrStarting(s) && tries < kRetryAttempts;
       ++tries) {
    if (wait(RetryBackoff(tries))) break;
    s = call();
  }
  return s;
}

class SchedulerApi {
 public:
  virtual ~SchedulerApi() = default;
  // Gives up after `timeout`; the binding may then have taken effect.
  virtual absl::Status Bind(const Pod& pod, const std::string& node,
                            absl::Duration timeout) = 0;
  virtual absl::Status RecordEvent(const kube::PodEvent& event) = 0;
  // Bind() and RecordEvent() without waiting: `done` gets their answer and
  // must not block.
  using Done = std::function<void(absl::Status)>;
  virtual void BindAsync(const Pod& pod, const std::string& node,
                         absl::Duration timeout, Done done) {
    done(Bind(pod, node, timeout));
  }
  virtual void RecordEventAsync(const kube::PodEvent& event, Done done) {
    done(RecordEvent(event));
  }
  // Gives up after `timeout`.
  virtual absl::Status SetPodCondition(const Pod& pod,
                                       const kube::PodCondition& condition,
                                       absl::Duration timeout) = 0;
  // A pod's volume bindings (kube::KubeClient::BindVolume, SelectNode).
  // Unimplemented by default.
  virtual absl::Status BindVolume(const VolumeBindings::Bind& bind,
                                  absl::Duration timeout) {
    (void)bind;
    (void)timeout;
    return absl::UnimplementedError("BindVolume");
  }
  virtual absl::Status SelectNode(const VolumeBindings::Provision& claim,
                                  const std::string& node,
                                  absl::Duration timeout) {
    (void)claim;
    (void)node;
    (void)timeout;
    return absl::UnimplementedError("SelectNode");
  }
  // The pod as the apiserver has it now. Unimplemented by default.
  virtual absl::StatusOr<Pod> GetPod(const std::string& namespace_,
                                     const std::string& name) {
    (void)namespace_;
    (void)name;
    return absl::UnimplementedError("GetPod");
  }
  // Preemption (kube::KubeClient::DeletePod, SetNominatedNode), each
  // giving up after `timeout`. Unimplemented by default.
  virtual absl::Status DeletePod(const std::string& namespace_,
                                 const std::string& name,
                                 const std::string& uid,
                                 absl::Duration timeout) {
    (void)namespace_;
    (void)name;
    (void)uid;
    (void)timeout;
    return absl::UnimplementedError("DeletePod");
  }
  virtual absl::Status SetNominatedNode(const Pod& pod, const std::string& node,
                                        absl::Duration timeout) {
    (void)pod;
    (void)node;
    (void)timeout;
    return absl::UnimplementedError("SetNominatedNode");
  }
  // Rebalancing (kube::KubeClient::EvictPod): the Eviction API, which
  // PodDisruptionBudgets hold. Unimplemented by default.
  virtual absl::Status EvictPod(const Pod& pod, absl::Duration timeout) {
    (void)pod;
    (void)timeout;
    return absl::UnimplementedError("EvictPod");
  }
};

class KubeSchedulerApi final : public SchedulerApi {
 public:
  explicit KubeSchedulerApi(kube::KubeClient& client) : client_(client) {}
  absl::Status Bind(const Pod& pod, const std::string& node,
                    absl::Duration timeout) override {
    return client_.Bind(pod, node, timeout);
  }
  absl::Status RecordEvent(const kube::PodEvent& event) override {
    return client_.CreateEvent(event);
  }
  void BindAsync(const Pod& pod, const std::string& node,
                 absl::Duration timeout, Done done) override {
    client_.BindAsync(pod, node, timeout, std::move(done));
  }
  void RecordEventAsync(const kube::PodEvent& event, Done done) override {
    client_.CreateEventAsync(event, std::move(done));
  }
  absl::Status SetPodCondition(const Pod& pod,
                               const kube::PodCondition& condition,
                               absl::Duration timeout) override {
    return client_.PatchPodCondition(pod.namespace_, pod.name, condition,
                                     timeout);
  }
  absl::Status BindVolume(const VolumeBindings::Bind& bind,
                          absl::Duration timeout) override {
    return client_.BindVolume(bind, timeout);
  }
  absl::Status SelectNode(const VolumeBindings::Provision& claim,
                          const std::string& node,
                          absl::Duration timeout) override {
    return client_.SelectNode(claim, node, timeout);
  }
  absl::StatusOr<Pod> GetPod(const std::string& namespace_,
                             const std::string& name) override {
    return client_.GetPod(namespace_, name);
  }
  absl::Status DeletePod(const std::string& namespace_,
                         const std::string& name, const std::string& uid,
                         absl::Duration timeout) override {
    return client_.DeletePod(namespace_, name, uid, timeout);
  }
  absl::Status SetNominatedNode(const Pod& pod, const std::string& node,
                                absl::Duration timeout) override {
    return client_.SetNominatedNode(pod.namespace_, pod.name, node, timeout);
  }
  absl::Status EvictPod(const Pod& pod, absl::Duration timeout) override {
    return client_.EvictPod(pod.namespace_, pod.name, pod.uid, timeout);
  }

 private:
  kube::KubeClient& client_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_SCHEDULER_API_H_
