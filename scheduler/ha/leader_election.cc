#include "scheduler/ha/leader_election.h"

#include <algorithm>
#include <limits>

#include "common/logging.h"
#include "glog/logging.h"

namespace ms {
namespace {

bool SameRecord(const kube::Lease& a, const kube::Lease& b) {
  return a.resource_version == b.resource_version &&
         a.holder_identity == b.holder_identity &&
         a.renew_time == b.renew_time &&
         a.lease_duration_seconds == b.lease_duration_seconds &&
         a.lease_transitions == b.lease_transitions;
}

// leaseDurationSeconds is whole seconds: round up, so that a standby never
// waits less than configured.
int32_t LeaseSeconds(absl::Duration d) {
  int64_t seconds = absl::Ceil(d, absl::Seconds(1)) / absl::Seconds(1);
  return static_cast<int32_t>(std::clamp<int64_t>(
      seconds, 1, std::numeric_limits<int32_t>::max()));
}

}  // namespace

LeaderElector::LeaderElector(LeaseStore& store, const Clock& clock,
                             LeaderElectionOptions options,
                             Callbacks callbacks)
    : store_(store),
      clock_(clock),
      options_(std::move(options)),
      callbacks_(std::move(callbacks)),
      lease_seconds_(LeaseSeconds(options_.lease_duration)) {}

kube::Lease LeaderElector::Claim(kube::Lease desired) const {
  desired.name = options_.lease_name;
  desired.namespace_ = options_.lease_namespace;
  desired.holder_identity = options_.identity;
  desired.lease_duration_seconds = lease_seconds_;
  desired.renew_time = clock_.Now();
  return desired;
}

void LeaderElector::Observe(const kube::Lease& lease) {
  if (SameRecord(lease, observed_)) return;
  observed_ = lease;
  observed_at_ = clock_.Monotonic();
}

void LeaderElector::Wrote(const kube::Lease& lease, absl::Duration sent) {
  observed_ = lease;
  observed_at_ = clock_.Monotonic();
  absl::MutexLock lock(&mu_);
  written_at_ = sent;
  leading_.store(true);
}

void LeaderElector::EndLeadership() {
  absl::MutexLock lock(&mu_);
  leading_.store(false);
  renewing_ = false;
}

void LeaderElector::SetRenewing(bool renewing) {
  absl::MutexLock lock(&mu_);
  renewing_ = renewing;
}

LeaderElector::Attempt LeaderElector::Acquire() {
  const absl::Duration timeout = options_.renew_deadline;
  absl::StatusOr<kube::Lease> current =
      store_.Get(options_.lease_namespace, options_.lease_name, timeout);
  if (absl::IsNotFound(current.status())) {
    kube::Lease desired = Claim(kube::Lease{});
    desired.acquire_time = desired.renew_time;
    const absl::Duration sent = clock_.Monotonic();
    absl::StatusOr<kube::Lease> created = store_.Create(desired, timeout);
    if (!created.ok()) {
      MS_VLOG(1) << "leader election: create lease: " << created.status();
      return Attempt::kNotHeld;
    }
    Wrote(*created, sent);
    return Attempt::kHeld;
  }
  if (!current.ok()) {
    LOG(WARNING) << "leader election: get lease: " << current.status();
    return Attempt::kNotHeld;
  }
  Observe(*current);
  const bool mine = current->holder_identity == options_.identity;
  const bool held_by_other = !mine && !current->holder_identity.empty();
  if (held_by_other &&
      clock_.Monotonic() <
          observed_at_ + absl::Seconds(current->lease_duration_seconds)) {
    return Attempt::kNotHeld;  // someone else holds a lease not yet expired
  }
  kube::Lease desired = Claim(*current);
  if (!mine) {
    desired.acquire_time = desired.renew_time;
    desired.lease_transitions = current->lease_transitions + 1;
  }
  const absl::Duration sent = clock_.Monotonic();
  absl::StatusOr<kube::Lease> updated = store_.Update(desired, timeout);
  if (!updated.ok()) {
    MS_VLOG(1) << "leader election: take lease: " << updated.status();
    return Attempt::kNotHeld;
  }
  Wrote(*updated, sent);
  return Attempt::kHeld;
}

LeaderElector::Attempt LeaderElector::Renew(absl::Duration deadline) {
  // Optimistically from the record we wrote last: one call when nobody
  // else has written since.
  kube::Lease desired = Claim(observed_);
  absl::Duration sent = clock_.Monotonic();
  if (sent >= deadline) return Attempt::kNotHeld;
  absl::StatusOr<kube::Lease> updated =
      store_.Update(desired, deadline - sent);
  if (updated.ok()) {
    Wrote(*updated, sent);
    return Attempt::kHeld;
  }
  if (!absl::IsAborted(updated.status()) &&
      !absl::IsNotFound(updated.status())) {
    LOG(WARNING) << "leader election: renew lease: " << updated.status();
    return Attempt::kNotHeld;
  }
  // Written since our last write (perhaps by us, with the answer lost), or
  // deleted: read it and decide.
  absl::Duration now = clock_.Monotonic();
  if (now >= deadline) return Attempt::kNotHeld;
  absl::StatusOr<kube::Lease> current = store_.Get(
      options_.lease_namespace, options_.lease_name, deadline - now);
  if (absl::IsNotFound(current.status())) {
    LOG(ERROR) << "leader election: the lease was deleted";
    return Attempt::kLost;
  }
  if (!current.ok()) {
    LOG(WARNING) << "leader election: get lease: " << current.status();
    return Attempt::kNotHeld;
  }
  Observe(*current);
  if (current->holder_identity != options_.identity) {
    LOG(ERROR) << "leader election: the lease is now held by \""
               << current->holder_identity << "\"";
    return Attempt::kLost;
  }
  desired = Claim(*current);
  sent = clock_.Monotonic();
  if (sent >= deadline) return Attempt::kNotHeld;
  updated = store_.Update(desired, deadline - sent);
  if (!updated.ok()) {
    LOG(WARNING) << "leader election: renew lease: " << updated.status();
    return Attempt::kNotHeld;
  }
  Wrote(*updated, sent);
  return Attempt::kHeld;
}

bool LeaderElector::TryAcquireOrRenew() {
  if (!leading_.load()) return Acquire() == Attempt::kHeld;
  switch (Renew(clock_.Monotonic() + options_.renew_deadline)) {
    case Attempt::kHeld:
      return true;
    case Attempt::kNotHeld:
      return false;
    case Attempt::kLost:
      EndLeadership();
      return false;
  }
  return false;
}

LeaderElector::Cycle LeaderElector::RenewCycle(
    const absl::Notification& stop) {
  const absl::Duration deadline =
      clock_.Monotonic() + options_.renew_deadline;
  for (;;) {
    switch (Renew(deadline)) {
      case Attempt::kHeld:
        return Cycle::kRenewed;
      case Attempt::kLost:
        return Cycle::kLost;
      case Attempt::kNotHeld:
        break;
    }
    const absl::Duration left = deadline - clock_.Monotonic();
    if (left <= absl::ZeroDuration()) return Cycle::kTimedOut;
    if (stop.WaitForNotificationWithTimeout(
            std::min(options_.retry_period, left))) {
      return Cycle::kStopped;
    }
  }
}

void LeaderElector::Run(const absl::Notification& stop) {
  // Campaign.
  while (!stop.HasBeenNotified()) {
    if (TryAcquireOrRenew()) break;
    stop.WaitForNotificationWithTimeout(options_.retry_period);
  }
  if (stop.HasBeenNotified()) return;
  SetRenewing(true);
  LOG(INFO) << "leader election: " << options_.identity << " became leader ("
            << options_.lease_namespace << "/" << options_.lease_name << ")";
  if (callbacks_.on_started_leading) callbacks_.on_started_leading();

  // Renew.
  for (;;) {
    if (stop.WaitForNotificationWithTimeout(options_.retry_period)) {
      SetRenewing(false);
      return;
    }
    switch (RenewCycle(stop)) {
      case Cycle::kRenewed:
        continue;
      case Cycle::kStopped:
        SetRenewing(false);
        return;
      case Cycle::kTimedOut:
        LOG(ERROR) << "leader election: could not renew the lease within "
                   << options_.renew_deadline;
        break;
      case Cycle::kLost:
        break;
    }
    EndLeadership();
    LOG(ERROR) << "leader election: " << options_.identity
               << " stopped leading";
    if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
    return;
  }
}

bool LeaderElector::IsLeader() const { return leading_.load(); }

bool LeaderElector::WindowOpen() const {
  return clock_.Monotonic() - written_at_ < options_.renew_deadline;
}

bool LeaderElector::WindowSettled() const {
  return !leading_.load() || !renewing_ || WindowOpen();
}

bool LeaderElector::AwaitWriteWindow(absl::Duration max_wait) {
  // The wait is real time, whatever clock_ is.
  const absl::Duration give_up = RealClock::Get().Monotonic() + max_wait;
  absl::MutexLock lock(&mu_);
  for (;;) {
    if (!leading_.load()) return false;
    if (WindowOpen()) return true;
    if (!renewing_) return false;  // no renewal is coming
    const absl::Duration left = give_up - RealClock::Get().Monotonic();
    if (left <= absl::ZeroDuration()) return false;
    // Wakes on a renewal, on the end of leadership or of renewals. The
    // window may close again before this thread runs: then wait again.
    mu_.AwaitWithTimeout(absl::Condition(this, &LeaderElector::WindowSettled),
                         left);
  }
}

absl::Duration LeaderElector::WriteMargin() const {
  return options_.lease_duration - options_.renew_deadline;
}

void LeaderElector::Release() {
  {
    absl::MutexLock lock(&mu_);
    if (!leading_.load()) return;
    leading_.store(false);
    renewing_ = false;
  }
  const absl::Duration timeout = options_.renew_deadline;
  kube::Lease released = observed_;
  released.holder_identity.clear();
  released.lease_duration_seconds = 1;
  released.renew_time = clock_.Now();
  absl::StatusOr<kube::Lease> result = store_.Update(released, timeout);
  if (absl::IsAborted(result.status())) {
    // Written since our last write (ours, with the answer lost?): release
    // it if it is still ours.
    absl::StatusOr<kube::Lease> current =
        store_.Get(options_.lease_namespace, options_.lease_name, timeout);
    if (current.ok() && current->holder_identity != options_.identity) {
      LOG(INFO) << "leader election: the lease is no longer ours to release";
      return;
    }
    if (current.ok()) {
      released.resource_version = current->resource_version;
      result = store_.Update(released, timeout);
    } else {
      result = current.status();
    }
  }
  if (result.ok()) {
    observed_ = *result;
    LOG(INFO) << "leader election: released the lease";
  } else {
    LOG(WARNING) << "leader election: release: " << result.status();
  }
}

}  // namespace ms
