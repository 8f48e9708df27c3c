#include "scheduler/cycle/queue.h"

#include <algorithm>
#include <vector>

namespace ms {

SchedulingQueue::SchedulingQueue(const Clock& clock, QueueOptions options)
    : clock_(clock), options_(options) {}

SchedulingQueue::ActiveKey SchedulingQueue::KeyOf(const Entry& e,
                                                  const std::string& key) {
  return {-e.pod.priority, e.first_enqueued, key};
}

void SchedulingQueue::ToActive(const std::string& key, Entry& e) {
  e.where = Where::kActive;
  active_.insert(KeyOf(e, key));
}

absl::Duration SchedulingQueue::Backoff(int attempts) const {
  absl::Duration d = options_.initial_backoff;
  for (int i = 1; i < attempts && d < options_.max_backoff; ++i) d *= 2;
  return std::min(d, options_.max_backoff);
}

void SchedulingQueue::Add(const Pod& pod) {
  absl::MutexLock lock(&mu_);
  Upsert(pod);
}

void SchedulingQueue::Update(const Pod& pod) {
  absl::MutexLock lock(&mu_);
  Upsert(pod);
}

void SchedulingQueue::Upsert(const Pod& pod) {
  std::string key = pod.Key();
  auto [it, inserted] = entries_.try_emplace(key);
  Entry& e = it->second;
  if (e.where == Where::kDone) {
    if (e.pod.uid == pod.uid) return;  // a late update of a bound pod
    inserted = true;  // a new pod under the name
    e = Entry{};
  }
  e.deleted_in_flight = false;  // whatever was deleted, this pod exists
  if (inserted) {
    e.pod = pod;
    e.first_enqueued = clock_.Now();
    ToActive(key, e);
    return;
  }
  if (e.where == Where::kActive) {
    active_.erase(KeyOf(e, key));
    e.pod = pod;
    active_.insert(KeyOf(e, key));
    return;
  }
  // A changed unschedulable pod may fit now (kube-scheduler does the same
  // for updates to a pod's scheduling-relevant fields). An update that only
  // moved its resourceVersion, such as our own status patch, changes
  // nothing that placement reads.
  Pod old = std::move(e.pod);
  e.pod = pod;
  old.resource_version = pod.resource_version;
  if (old == pod) return;
  if (e.where == Where::kUnschedulable) ToActive(key, e);
  if (e.where == Where::kInFlight) e.moved_in_flight = true;
}

void SchedulingQueue::Delete(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (e.where == Where::kInFlight) {
    e.deleted_in_flight = true;
    return;
  }
  if (e.where == Where::kActive) active_.erase(KeyOf(e, key));
  entries_.erase(it);
}

std::optional<QueuedPod> SchedulingQueue::Pop() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](SchedulingQueue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) {
        return q->closed_ || !q->active_.empty();
      },
      this));
  if (closed_) return std::nullopt;
  auto first = active_.begin();
  std::string key = std::get<2>(*first);
  active_.erase(first);
  Entry& e = entries_.at(key);
  e.where = Where::kInFlight;
  e.moved_in_flight = false;
  e.attempts++;
  return QueuedPod{e.pod, e.attempts, e.first_enqueued};
}

void SchedulingQueue::Done(const Pod& pod) {
  std::string key = pod.Key();
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.where != Where::kInFlight) return;
  Entry& e = it->second;
  if (!e.deleted_in_flight && e.pod.uid != pod.uid) {
    // The pod was recreated under the same name while in flight: the new
    // one still needs a node.
    e.attempts = 0;
    e.first_enqueued = clock_.Now();
    ToActive(key, e);
    return;
  }
  if (e.deleted_in_flight) {
    entries_.erase(it);
    return;
  }
  e.where = Where::kDone;
}

void SchedulingQueue::Requeue(const QueuedPod& pod, Where where) {
  std::string key = pod.pod.Key();
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.where != Where::kInFlight) return;
  Entry& e = it->second;
  if (e.deleted_in_flight) {
    entries_.erase(it);
    return;
  }
  absl::Time now = clock_.Now();
  e.parked_at = now;
  e.backoff_until = now + Backoff(e.attempts);
  // It may fit since the change it missed while in flight: retry it once
  // its backoff ends, as a pod in backoff.
  if (where == Where::kUnschedulable && e.moved_in_flight) {
    where = Where::kBackoff;
  }
  e.where = where;
}

void SchedulingQueue::RequeueUnschedulable(const QueuedPod& pod) {
  Requeue(pod, Where::kUnschedulable);
}

void SchedulingQueue::RequeueBackoff(const QueuedPod& pod) {
  Requeue(pod, Where::kBackoff);
}

void SchedulingQueue::MoveAllToActive() {
  absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  for (auto& [key, e] : entries_) {
    if (e.where == Where::kInFlight) e.moved_in_flight = true;
    if (e.where != Where::kUnschedulable) continue;
    if (now < e.backoff_until) {
      e.where = Where::kBackoff;
    } else {
      ToActive(key, e);
    }
  }
}

void SchedulingQueue::Flush() {
  absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  for (auto& [key, e] : entries_) {
    if (e.where == Where::kBackoff && now >= e.backoff_until) {
      ToActive(key, e);
    } else if (e.where == Where::kUnschedulable &&
               now - e.parked_at >= options_.unschedulable_timeout) {
      ToActive(key, e);
    }
  }
}

void SchedulingQueue::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

bool SchedulingQueue::HasActive() const {
  absl::MutexLock lock(&mu_);
  return !active_.empty();
}

QueueLengths SchedulingQueue::Lengths() const {
  absl::MutexLock lock(&mu_);
  QueueLengths l;
  for (const auto& [key, e] : entries_) {
    switch (e.where) {
      case Where::kActive: l.active++; break;
      case Where::kBackoff: l.backoff++; break;
      case Where::kUnschedulable: l.unschedulable++; break;
      case Where::kInFlight: l.in_flight++; break;
      case Where::kDone: break;
    }
  }
  return l;
}

}  // namespace ms
