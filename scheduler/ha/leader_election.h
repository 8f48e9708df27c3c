// LeaderElector: one active replica at a time, through a coordination/v1
// Lease of the scheduler's own (never kube-system/kube-scheduler).
//
// The protocol is client-go's:
// 1. Campaign. Every retry_period a candidate reads the Lease. It takes it
//    (create, or update with the resourceVersion it read, so two candidates
//    can never both win) when there is none, when it names no holder, or
//    when the holder has not renewed it for leaseDurationSeconds, measured
//    on the candidate's own monotonic clock from the moment the candidate
//    *received* a changed record (so clock skew between replicas and steps
//    of the wall clock do not matter).
// 2. Lead. From winning, IsLeader() is true: leadership is a state, not a
//    clock reading. retry_period after each successful renewal a renewal
//    cycle starts: an optimistic Update from the record last written (one
//    call); on a conflict, a Get, then an Update if the Lease is still ours.
//    Failed attempts are retried every retry_period within the cycle. Each
//    call's timeout is the time left in the cycle, so a hanging call cannot
//    outlast it.
// 3. Give up. Leadership ends when a cycle has not renewed within
//    renew_deadline of its start (monotonic clock), or at once when a read
//    shows another holder (or no Lease): on_stopped_leading is called and
//    Run() returns. Release() ends it too, and hands the Lease over.
//    Stopping Run() alone keeps the Lease held and IsLeader() true until
//    Release(), so that in-flight work can finish first; writes may start
//    until the write window closes, none after (no renewal is coming).
//
// Writes. A standby can take over no sooner than leaseDurationSeconds
// (>= lease_duration) after it received our last write, which it cannot
// receive before we sent it. AwaitWriteWindow() (see leadership.h) is
// therefore true while our last successful write was sent less than
// renew_deadline ago, and a write started in that window and bounded by
// WriteMargin() = lease_duration - renew_deadline ends before anyone else
// may lead (as long as the replicas' clocks run at the same rate). A late
// renewal closes the window without ending leadership; AwaitWriteWindow()
// then waits for it.
//
// leaseDurationSeconds is a whole number: lease_duration is rounded *up* to
// whole seconds (1500ms is written as 2, 500ms as 1), never down.
//
// Clocks: the Lease's acquireTime and renewTime are wall time (Clock::Now());
// every decision uses Clock::Monotonic(). Sleeps between attempts and the
// waits of AwaitWriteWindow() are real time.
//
// Thread safety: Run(), TryAcquireOrRenew() and Release() from one thread
// at a time (Release() once Run() has returned); IsLeader(),
// AwaitWriteWindow() and WriteMargin() from any thread. Callbacks run on
// Run()'s thread.
#ifndef METRICS_SCHEDULER_SCHEDULER_HA_LEADER_ELECTION_H_
#define METRICS_SCHEDULER_SCHEDULER_HA_LEADER_ELECTION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "kube/client.h"
#include "kube/decode.h"
#include "scheduler/ha/leadership.h"

namespace ms {

// Where leases live: KubeLeaseStore over the apiserver; tests use an
// in-memory store with the same resourceVersion semantics. Each call gives
// up after `timeout` (DeadlineExceeded or Unavailable).
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

// Validated by config/: 0 < retry_period < renew_deadline < lease_duration.
struct LeaderElectionOptions {
  std::string lease_name;
  std::string lease_namespace;
  std::string identity;  // unique per replica: hostname + random suffix
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
};

class LeaderElector final : public Leadership {
 public:
  struct Callbacks {
    std::function<void()> on_started_leading;
    // Called once when leadership is lost; the scheduler stops binding and
    // exits, as kube-scheduler does. Not called on stop nor on Release().
    std::function<void()> on_stopped_leading;
  };

  LeaderElector(LeaseStore& store, const Clock& clock,
                LeaderElectionOptions options, Callbacks callbacks);

  // Campaigns, then renews, until `stop` is notified or leadership is lost.
  void Run(const absl::Notification& stop);

  // One attempt to acquire or renew, each call bounded by renew_deadline;
  // true when this replica holds the Lease afterwards, and then leads.
  // Leadership ends when the attempt reads another holder. Run() uses it
  // to campaign; tests call it directly.
  bool TryAcquireOrRenew();

  // Leadership (see leadership.h and the protocol above).
  bool IsLeader() const override;
  bool AwaitWriteWindow(absl::Duration max_wait) override;
  // lease_duration - renew_deadline.
  absl::Duration WriteMargin() const override;

  // If leader, ends leadership and clears the holder so that a standby
  // takes over at once. Call after Run() has returned, once the writes
  // this replica started have ended.
  void Release();

 private:
  enum class Attempt {
    kHeld,     // we hold the Lease, having just written it
    kNotHeld,  // not this time: held by another, or a call failed
    kLost,     // we led, and the Lease is someone else's now (or gone)
  };
  enum class Cycle { kRenewed, kTimedOut, kLost, kStopped };

  Attempt Acquire();
  // Calls give up at `deadline` (monotonic).
  Attempt Renew(absl::Duration deadline);
  Cycle RenewCycle(const absl::Notification& stop);
  // Records a record just read; its observed time is now.
  void Observe(const kube::Lease& lease);
  // Records our successful write, sent at `sent` (monotonic).
  void Wrote(const kube::Lease& lease, absl::Duration sent);
  // `desired` with this replica's holder, duration and a fresh renew time.
  kube::Lease Claim(kube::Lease desired) const;
  void EndLeadership();
  void SetRenewing(bool renewing);
  bool WindowOpen() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool WindowSettled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  LeaseStore& store_;
  const Clock& clock_;
  const LeaderElectionOptions options_;
  const Callbacks callbacks_;
  const int32_t lease_seconds_;  // options_.lease_duration rounded up

  // Run()'s thread only.
  kube::Lease observed_;  // the record as last read or written
  absl::Duration observed_at_ = -absl::InfiniteDuration();  // monotonic

  // Shared with IsLeader() and AwaitWriteWindow().
  mutable absl::Mutex mu_;
  std::atomic<bool> leading_{false};  // written under mu_
  bool renewing_ ABSL_GUARDED_BY(mu_) = false;  // Run() is renewing
  // Monotonic time our last successful write was sent.
  absl::Duration written_at_ ABSL_GUARDED_BY(mu_) = -absl::InfiniteDuration();
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_HA_LEADER_ELECTION_H_
