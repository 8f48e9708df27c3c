#include "scheduler/leader_election.h"

#include "glog/logging.h"

namespace ms {
namespace {

bool SameRecord(const kube::Lease& a, const kube::Lease& b) {
  return a.holder_identity == b.holder_identity &&
         a.renew_time == b.renew_time &&
         a.lease_duration_seconds == b.lease_duration_seconds &&
         a.lease_transitions == b.lease_transitions;
}

}  // namespace

LeaderElector::LeaderElector(LeaseStore& store, const Clock& clock,
                             LeaderElectionOptions options,
                             Callbacks callbacks)
    : store_(store),
      clock_(clock),
      options_(std::move(options)),
      callbacks_(std::move(callbacks)) {}

bool LeaderElector::TryAcquireOrRenew() {
  absl::Time now = clock_.Now();
  kube::Lease desired;
  desired.name = options_.lease_name;
  desired.namespace_ = options_.lease_namespace;
  desired.holder_identity = options_.identity;
  desired.lease_duration_seconds =
      static_cast<int32_t>(absl::ToInt64Seconds(options_.lease_duration));
  desired.acquire_time = now;
  desired.renew_time = now;

  absl::StatusOr<kube::Lease> current =
      store_.Get(options_.lease_namespace, options_.lease_name, CallTimeout());
  if (absl::IsNotFound(current.status())) {
    absl::StatusOr<kube::Lease> created = store_.Create(desired, CallTimeout());
    if (!created.ok()) {
      VLOG(1) << "leader election: create lease: " << created.status();
      return false;
    }
    observed_ = *created;
    observed_at_ = now;
    renewed_ns_.store(absl::ToUnixNanos(now));
    return true;
  }
  if (!current.ok()) {
    LOG(WARNING) << "leader election: get lease: " << current.status();
    return false;
  }
  if (!SameRecord(*current, observed_)) {
    observed_ = *current;
    observed_at_ = now;
  }
  bool mine = current->holder_identity == options_.identity;
  bool held_by_other = !mine && !current->holder_identity.empty();
  absl::Duration their_duration =
      absl::Seconds(current->lease_duration_seconds);
  if (held_by_other && observed_at_ + their_duration > now) {
    return false;  // someone else holds a lease that has not expired
  }
  if (mine) {
    desired.acquire_time = current->acquire_time;
    desired.lease_transitions = current->lease_transitions;
  } else {
    desired.lease_transitions = current->lease_transitions + 1;
  }
  desired.resource_version = current->resource_version;
  absl::StatusOr<kube::Lease> updated = store_.Update(desired, CallTimeout());
  if (!updated.ok()) {
    VLOG(1) << "leader election: update lease: " << updated.status();
    return false;
  }
  observed_ = *updated;
  observed_at_ = now;
  renewed_ns_.store(absl::ToUnixNanos(now));
  return true;
}

void LeaderElector::Run(const absl::Notification& stop) {
  // Campaign.
  while (!stop.HasBeenNotified()) {
    if (TryAcquireOrRenew()) break;
    stop.WaitForNotificationWithTimeout(options_.retry_period);
  }
  if (stop.HasBeenNotified()) return;
  leader_.store(true);
  LOG(INFO) << "leader election: " << options_.identity << " became leader ("
            << options_.lease_namespace << "/" << options_.lease_name << ")";
  if (callbacks_.on_started_leading) callbacks_.on_started_leading();

  // Renew.
  while (!stop.WaitForNotificationWithTimeout(options_.retry_period)) {
    if (TryAcquireOrRenew()) continue;
    if (!IsLeader()) {
      leader_.store(false);
      LOG(ERROR) << "leader election: lost the lease (no renewal for "
                 << options_.renew_deadline << ")";
      if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
      return;
    }
  }
}

bool LeaderElector::IsLeader() const {
  return leader_.load() &&
         clock_.Now() - absl::FromUnixNanos(renewed_ns_.load()) <
             options_.renew_deadline;
}

void LeaderElector::Release() {
  if (!leader_.exchange(false)) return;
  kube::Lease released = observed_;
  released.holder_identity.clear();
  released.lease_duration_seconds = 1;
  released.renew_time = clock_.Now();
  absl::StatusOr<kube::Lease> result = store_.Update(released, CallTimeout());
  if (result.ok()) {
    LOG(INFO) << "leader election: released the lease";
  } else {
    LOG(WARNING) << "leader election: release: " << result.status();
  }
}

}  // namespace ms
