// LeaderElector: one active replica at a time, through a coordination/v1
// Lease of the scheduler's own (never kube-system/kube-scheduler).
//
// The protocol is client-go's: a candidate takes the Lease when it does not
// exist, when it holds no holder, or when the holder has not renewed it for
// `lease_duration` as measured on the candidate's own clock (from when the
// candidate last saw the record change, so clock skew between replicas does
// not matter). Every write carries the resourceVersion read just before, so
// two candidates can never both win. The leader renews every `retry_period`;
// if it cannot renew for `renew_deadline` it stops being leader at once:
// IsLeader() is false from the moment the last successful renewal is
// `renew_deadline` old, even while a renewal call is still hanging, so it
// turns false before anyone else may take the Lease (renew_deadline <
// lease_duration). Each store call is bounded by half the renew deadline. Release() hands the Lease over at
// shutdown so a standby takes over without waiting out the duration.
//
// Thread safety: Run() on one thread; IsLeader() from any thread.
#ifndef METRICS_SCHEDULER_SCHEDULER_LEADER_ELECTION_H_
#define METRICS_SCHEDULER_SCHEDULER_LEADER_ELECTION_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "kube/client.h"
#include "kube/decode.h"

namespace ms {

// Where leases live: KubeLeaseStore over the apiserver; tests use an
// in-memory store with the same resourceVersion semantics. Each call gives
// up after `timeout`.
class LeaseStore {
 public:
  virtual ~LeaseStore() = default;
  // NotFound when there is none.
  virtual absl::StatusOr<kube::Lease> Get(const std::string& namespace_,
                                          const std::string& name,
                                          absl::Duration timeout) = 0;
  // AlreadyExists when someone created it first.
  virtual absl::StatusOr<kube::Lease> Create(const kube::Lease& lease,
                                             absl::Duration timeout) = 0;
  // Aborted when lease.resource_version is not the current one.
  virtual absl::StatusOr<kube::Lease> Update(const kube::Lease& lease,
                                             absl::Duration timeout) = 0;
};

class KubeLeaseStore final : public LeaseStore {
 public:
  explicit KubeLeaseStore(kube::KubeClient& client) : client_(client) {}
  absl::StatusOr<kube::Lease> Get(const std::string& namespace_,
                                  const std::string& name,
                                  absl::Duration timeout) override {
    return client_.GetLease(namespace_, name, timeout);
  }
  absl::StatusOr<kube::Lease> Create(const kube::Lease& lease,
                                     absl::Duration timeout) override {
    return client_.CreateLease(lease, timeout);
  }
  absl::StatusOr<kube::Lease> Update(const kube::Lease& lease,
                                     absl::Duration timeout) override {
    return client_.UpdateLease(lease, timeout);
  }

 private:
  kube::KubeClient& client_;
};

struct LeaderElectionOptions {
  std::string lease_name;
  std::string lease_namespace;
  std::string identity;  // unique per replica: hostname + random suffix
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
};

class LeaderElector {
 public:
  struct Callbacks {
    std::function<void()> on_started_leading;
    // Called once when leadership is lost; the scheduler stops binding and
    // exits, as kube-scheduler does.
    std::function<void()> on_stopped_leading;
  };

  LeaderElector(LeaseStore& store, const Clock& clock,
                LeaderElectionOptions options, Callbacks callbacks);

  // Campaigns, then renews, until `stop` is notified or leadership is lost.
  // Sleeps are real time (retry_period); decisions use the injected clock.
  void Run(const absl::Notification& stop);

  // One attempt to acquire or renew; true when this replica holds the Lease
  // afterwards. Run() calls it every retry_period; tests call it directly.
  bool TryAcquireOrRenew();

  // True while this replica leads: it won the Lease and its last successful
  // renewal is younger than renew_deadline.
  bool IsLeader() const;

  // If leader, clears the holder so that a standby takes over at once.
  void Release();

 private:
  LeaseStore& store_;
  const Clock& clock_;
  const LeaderElectionOptions options_;
  const Callbacks callbacks_;
  absl::Duration CallTimeout() const { return options_.renew_deadline / 2; }

  std::atomic<bool> leader_{false};
  // Clock time of the last successful acquire or renewal, in nanoseconds.
  std::atomic<int64_t> renewed_ns_{0};
  kube::Lease observed_;              // the record as last read or written
  absl::Time observed_at_ = absl::InfinitePast();  // local time of change
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_LEADER_ELECTION_H_
