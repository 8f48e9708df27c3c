// MemoryApi: the apiserver's side of SchedulerApi kept in memory, for the
// binder's and the event recorder's unit tests. Thread-safe.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_MEMORY_API_H_
#define METRICS_SCHEDULER_TESTS_TESTING_MEMORY_API_H_

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "scheduler/cycle/scheduler_api.h"

namespace ms::testing {

// The apiserver's side: a pod binds once (409 Aborted after that), a pod
// that is gone is 404 NotFound. A failure can be scripted for the next
// binding of a pod, applied (the answer was lost) or not.
class MemoryApi final : public SchedulerApi {
 public:
  // Called, outside the lock, with each pod the apiserver binds: the
  // informers' view.
  std::function<void(const Pod&)> on_bound;

  void AddPod(const Pod& pod) {
    absl::MutexLock lock(&mu_);
    pods_[pod.Key()] = pod;
  }
  // The next binding of `key` fails with `status`, having taken effect or
  // not (`applied`); with `deleted`, the pod is deleted meanwhile.
  void FailNextBind(const std::string& key, absl::Status status, bool applied,
                    bool deleted = false) {
    absl::MutexLock lock(&mu_);
    failures_[key] = {std::move(status), applied, deleted};
  }
  // While unreachable, every binding and read fails with Unavailable,
  // changing nothing; while unreadable, every read does.
  void SetUnreachable(bool unreachable) {
    absl::MutexLock lock(&mu_);
    unreachable_ = unreachable;
  }
  void SetUnreadable(bool unreadable) {
    absl::MutexLock lock(&mu_);
    unreadable_ = unreadable;
  }
  // The apiserver commits a binding late (after its client gave up): the
  // pod is on `node` now; no informer is told.
  void BindLate(const std::string& key, const std::string& node) {
    absl::MutexLock lock(&mu_);
    pods_.at(key).node_name = node;
  }
  void RemovePod(const std::string& key) {
    absl::MutexLock lock(&mu_);
    pods_.erase(key);
  }

  absl::Status Bind(const Pod& pod, const std::string& node,
                    absl::Duration) override {
    Pod bound;
    absl::Status result;
    {
      absl::MutexLock lock(&mu_);
      ++bind_calls_[pod.Key()];
      if (unreachable_) return absl::UnavailableError("connection refused");
      auto it = pods_.find(pod.Key());
      if (it == pods_.end()) return absl::NotFoundError("pod not found");
      if (!it->second.node_name.empty()) {
        return absl::AbortedError(
            absl::StrCat("pod is already assigned to ", it->second.node_name));
      }
      if (auto f = failures_.find(pod.Key()); f != failures_.end()) {
        result = f->second.status;
        bool applied = f->second.applied;
        bool deleted = f->second.deleted;
        failures_.erase(f);
        if (deleted) pods_.erase(it);
        if (!applied || deleted) return result;
      }
      it->second.node_name = node;
      bound = it->second;
    }
    if (on_bound) on_bound(bound);
    return result;
  }

  // From DeferBinds() on, bindings sent without waiting are held until
  // AnswerOldest() answers them, one at a time.
  void DeferBinds() {
    absl::MutexLock lock(&mu_);
    defer_ = true;
  }
  void BindAsync(const Pod& pod, const std::string& node,
                 absl::Duration timeout, Done done) override {
    {
      absl::MutexLock lock(&mu_);
      if (defer_) {
        deferred_.push_back({pod, node, timeout, std::move(done)});
        max_deferred_ = std::max(max_deferred_, deferred_.size());
        return;
      }
    }
    done(Bind(pod, node, timeout));
  }
  size_t Deferred() {
    absl::MutexLock lock(&mu_);
    return deferred_.size();
  }
  // The most bindings held at once.
  size_t MaxDeferred() {
    absl::MutexLock lock(&mu_);
    return max_deferred_;
  }
  void AnswerOldest() {
    Held held;
    {
      absl::MutexLock lock(&mu_);
      held = std::move(deferred_.front());
      deferred_.pop_front();
    }
    held.done(Bind(held.pod, held.node, held.timeout));
  }

  // The volume writes; each hook, when set (before the scheduler runs),
  // answers for the apiserver. Unset: OK.
  std::function<absl::Status(const VolumeBindings::Bind&)> on_bind_volume;
  std::function<absl::Status(const VolumeBindings::Provision&,
                             const std::string&)>
      on_select_node;
  absl::Status BindVolume(const VolumeBindings::Bind& bind,
                          absl::Duration) override {
    return on_bind_volume ? on_bind_volume(bind) : absl::OkStatus();
  }
  absl::Status SelectNode(const VolumeBindings::Provision& claim,
                          const std::string& node, absl::Duration) override {
    return on_select_node ? on_select_node(claim, node) : absl::OkStatus();
  }

  // Answers for the apiserver when set (before the scheduler runs); an
  // Event it refuses is not recorded.
  std::function<absl::Status(const kube::PodEvent&)> on_event;
  absl::Status RecordEvent(const kube::PodEvent& event) override {
    if (on_event) {
      if (absl::Status s = on_event(event); !s.ok()) return s;
    }
    absl::MutexLock lock(&mu_);
    events_.push_back(event);
    return absl::OkStatus();
  }

  // From DeferEvents() on, Events sent without waiting are held until
  // AnswerOldestEvent() answers them, one at a time.
  void DeferEvents() {
    absl::MutexLock lock(&mu_);
    defer_events_ = true;
  }
  void RecordEventAsync(const kube::PodEvent& event, Done done) override {
    {
      absl::MutexLock lock(&mu_);
      if (defer_events_) {
        held_events_.push_back({event, std::move(done)});
        return;
      }
    }
    done(RecordEvent(event));
  }
  size_t HeldEvents() {
    absl::MutexLock lock(&mu_);
    return held_events_.size();
  }
  void AnswerOldestEvent() {
    std::pair<kube::PodEvent, Done> held;
    {
      absl::MutexLock lock(&mu_);
      held = std::move(held_events_.front());
      held_events_.pop_front();
    }
    held.second(RecordEvent(held.first));
  }
  absl::Status SetPodCondition(const Pod& pod,
                               const kube::PodCondition& condition,
                               absl::Duration) override {
    absl::MutexLock lock(&mu_);
    ++condition_writes_[pod.Key()];
    conditions_[pod.Key()] = condition;
    return absl::OkStatus();
  }

  absl::StatusOr<Pod> GetPod(const std::string& namespace_,
                             const std::string& name) override {
    absl::MutexLock lock(&mu_);
    const std::string key = namespace_ + "/" + name;
    if (unreachable_ || unreadable_) {
      return absl::UnavailableError("connection refused");
    }
    auto it = pods_.find(key);
    if (it == pods_.end()) return absl::NotFoundError("pod not found");
    return it->second;
  }

  // Evictions: `on_evict`, when set (before the scheduler runs), answers
  // for the apiserver (a budget's refusal, say); an eviction it allows
  // deletes the pod.
  std::function<absl::Status(const Pod&)> on_evict;
  absl::Status EvictPod(const Pod& pod, absl::Duration) override {
    if (on_evict) {
      if (absl::Status s = on_evict(pod); !s.ok()) return s;
    }
    absl::MutexLock lock(&mu_);
    evicted_.push_back(pod.Key());
    pods_.erase(pod.Key());
    return absl::OkStatus();
  }
  // The pods evicted, in order.
  std::vector<std::string> Evicted() {
    absl::MutexLock lock(&mu_);
    return evicted_;
  }

  // Where each pod is bound ("" for not bound).
  std::map<std::string, std::string> Placements() {
    absl::MutexLock lock(&mu_);
    std::map<std::string, std::string> out;
    for (const auto& [key, pod] : pods_) out[key] = pod.node_name;
    return out;
  }
  int BindCalls(const std::string& key) {
    absl::MutexLock lock(&mu_);
    auto it = bind_calls_.find(key);
    return it == bind_calls_.end() ? 0 : it->second;
  }
  int TotalBindCalls() {
    absl::MutexLock lock(&mu_);
    int total = 0;
    for (const auto& [key, n] : bind_calls_) total += n;
    return total;
  }
  // The pods named by Events with `reason`.
  std::multiset<std::string> EventPods(const std::string& reason) {
    absl::MutexLock lock(&mu_);
    std::multiset<std::string> out;
    for (const kube::PodEvent& e : events_) {
      if (e.reason == reason) out.insert(e.pod_namespace + "/" + e.pod_name);
    }
    return out;
  }
  std::vector<kube::PodEvent> Events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  int ConditionWrites(const std::string& key) {
    absl::MutexLock lock(&mu_);
    auto it = condition_writes_.find(key);
    return it == condition_writes_.end() ? 0 : it->second;
  }
  std::optional<kube::PodCondition> Condition(const std::string& key) {
    absl::MutexLock lock(&mu_);
    auto it = conditions_.find(key);
    if (it == conditions_.end()) return std::nullopt;
    return it->second;
  }

 private:
  struct Failure {
    absl::Status status;
    bool applied;
    bool deleted;
  };
  struct Held {
    Pod pod;
    std::string node;
    absl::Duration timeout;
    Done done;
  };
  absl::Mutex mu_;
  bool defer_ ABSL_GUARDED_BY(mu_) = false;
  bool defer_events_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::pair<kube::PodEvent, Done>> held_events_ ABSL_GUARDED_BY(mu_);
  std::deque<Held> deferred_ ABSL_GUARDED_BY(mu_);
  size_t max_deferred_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Pod> pods_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Failure> failures_ ABSL_GUARDED_BY(mu_);
  bool unreachable_ ABSL_GUARDED_BY(mu_) = false;
  bool unreadable_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, int> bind_calls_ ABSL_GUARDED_BY(mu_);
  std::vector<kube::PodEvent> events_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> evicted_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, kube::PodCondition> conditions_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> condition_writes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_MEMORY_API_H_
