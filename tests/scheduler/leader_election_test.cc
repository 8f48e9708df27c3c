#include "scheduler/leader_election.h"

#include <map>
#include <atomic>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

// Leases in memory with the apiserver's resourceVersion rules. Safe to use
// from the elector's thread and the test's at once, as the apiserver is.
class MemoryLeaseStore : public LeaseStore {
 public:
  absl::StatusOr<kube::Lease> Get(const std::string& ns,
                                  const std::string& name,
                                  absl::Duration) override {
    absl::MutexLock lock(&mu_);
    auto it = leases_.find(ns + "/" + name);
    if (it == leases_.end()) return absl::NotFoundError("no lease");
    return it->second;
  }
  absl::StatusOr<kube::Lease> Create(const kube::Lease& lease,
                                     absl::Duration) override {
    absl::MutexLock lock(&mu_);
    std::string key = lease.namespace_ + "/" + lease.name;
    if (leases_.contains(key)) return absl::AlreadyExistsError("exists");
    kube::Lease stored = lease;
    stored.resource_version = absl::StrCat(++version_);
    return leases_[key] = stored;
  }
  absl::StatusOr<kube::Lease> Update(const kube::Lease& lease,
                                     absl::Duration) override {
    absl::MutexLock lock(&mu_);
    std::string key = lease.namespace_ + "/" + lease.name;
    auto it = leases_.find(key);
    if (it == leases_.end()) return absl::NotFoundError("no lease");
    if (it->second.resource_version != lease.resource_version) {
      return absl::AbortedError("conflict");
    }
    kube::Lease stored = lease;
    stored.resource_version = absl::StrCat(++version_);
    return it->second = stored;
  }
  // Another writer takes the lease in one step, whatever its holder is
  // doing at the same moment.
  void Steal(const std::string& ns, const std::string& name,
             const std::string& thief) {
    absl::MutexLock lock(&mu_);
    kube::Lease& lease = leases_.at(ns + "/" + name);
    lease.holder_identity = thief;
    lease.resource_version = absl::StrCat(++version_);
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, kube::Lease> leases_ ABSL_GUARDED_BY(mu_);
  int version_ ABSL_GUARDED_BY(mu_) = 0;
};

LeaderElectionOptions Options(const std::string& identity) {
  return {.lease_name = "metrics-scheduler",
          .lease_namespace = "metrics-scheduler",
          .identity = identity};
}

// Runs an elector's loop on its own thread. Stops and joins it when the scope
// ends, so a failed assertion ends the test rather than the process.
class Running {
 public:
  explicit Running(LeaderElector& elector)
      : thread_([this, &elector] { elector.Run(stop_); }) {}
  ~Running() { Stop(); }
  void Stop() {
    if (!stop_.HasBeenNotified()) stop_.Notify();
    Join();
  }
  // Waits for Run() to return by itself.
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  absl::Notification stop_;
  std::thread thread_;
};

class LeaderElectionTest : public ::testing::Test {
 protected:
  MemoryLeaseStore store_;
  FakeClock clock_;
  LeaderElector a_{store_, clock_, Options("a"), {}};
  LeaderElector b_{store_, clock_, Options("b"), {}};
};

TEST_F(LeaderElectionTest, FirstCandidateCreatesTheLease) {
  EXPECT_TRUE(a_.TryAcquireOrRenew());
  kube::Lease lease = *store_.Get("metrics-scheduler", "metrics-scheduler", absl::Seconds(1));
  EXPECT_EQ(lease.holder_identity, "a");
  EXPECT_EQ(lease.lease_duration_seconds, 15);
  EXPECT_EQ(lease.lease_transitions, 0);
  EXPECT_FALSE(b_.TryAcquireOrRenew());
}

TEST_F(LeaderElectionTest, OtherWaitsUntilTheLeaseExpiresOnItsOwnClock) {
  ASSERT_TRUE(a_.TryAcquireOrRenew());
  EXPECT_FALSE(b_.TryAcquireOrRenew());  // b first sees the record now
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(a_.TryAcquireOrRenew());   // a renews
  clock_.Advance(absl::Seconds(10));
  EXPECT_FALSE(b_.TryAcquireOrRenew());  // changed 10 s ago: still held
  clock_.Advance(absl::Seconds(14));
  EXPECT_FALSE(b_.TryAcquireOrRenew());  // 14 s without renewal
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(b_.TryAcquireOrRenew());   // 15 s: expired, b takes it
  kube::Lease lease = *store_.Get("metrics-scheduler", "metrics-scheduler", absl::Seconds(1));
  EXPECT_EQ(lease.holder_identity, "b");
  EXPECT_EQ(lease.lease_transitions, 1);
  EXPECT_FALSE(a_.TryAcquireOrRenew());  // a lost it
}

TEST_F(LeaderElectionTest, RenewKeepsAcquireTime) {
  ASSERT_TRUE(a_.TryAcquireOrRenew());
  absl::Time acquired =
      store_.Get("metrics-scheduler", "metrics-scheduler", absl::Seconds(1))->acquire_time;
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(a_.TryAcquireOrRenew());
  kube::Lease lease = *store_.Get("metrics-scheduler", "metrics-scheduler", absl::Seconds(1));
  EXPECT_EQ(lease.acquire_time, acquired);
  EXPECT_EQ(lease.renew_time, clock_.Now());
}

// A renewal call that hangs must not keep a replica leading: leadership is
// judged by the age of the last successful renewal.
class HangingLeaseStore : public MemoryLeaseStore {
 public:
  absl::StatusOr<kube::Lease> Update(const kube::Lease& lease,
                                     absl::Duration timeout) override {
    if (hang_.load()) {
      release_.WaitForNotification();
      return absl::DeadlineExceededError("hung");
    }
    return MemoryLeaseStore::Update(lease, timeout);
  }
  std::atomic<bool> hang_{false};
  absl::Notification release_;
};

TEST(LeaderElectionHangTest, HangingRenewalStillStepsDownOnTime) {
  HangingLeaseStore store;
  FakeClock clock;
  LeaderElectionOptions options = Options("a");
  options.retry_period = absl::Milliseconds(10);
  LeaderElector runner(store, clock, options, {});
  Running running(runner);
  ASSERT_TRUE(testing::WaitFor([&] { return runner.IsLeader(); }));
  store.hang_.store(true);  // the next renewal never answers
  clock.Advance(absl::Seconds(9));
  EXPECT_TRUE(runner.IsLeader());
  clock.Advance(absl::Seconds(1));  // renew deadline (10 s) reached
  EXPECT_FALSE(runner.IsLeader());   // at once, with the call still hanging
  store.release_.Notify();
}

TEST_F(LeaderElectionTest, ConcurrentWritersCannotBothWin) {
  ASSERT_TRUE(a_.TryAcquireOrRenew());
  kube::Lease seen = *store_.Get("metrics-scheduler", "metrics-scheduler", absl::Seconds(1));
  ASSERT_TRUE(a_.TryAcquireOrRenew());  // moves the resourceVersion on
  seen.holder_identity = "b";
  EXPECT_EQ(store_.Update(seen, absl::Seconds(1)).status().code(), absl::StatusCode::kAborted);
}

TEST_F(LeaderElectionTest, RunLeadsUntilStoppedAndReleaseHandsOverAtOnce) {
  std::atomic<bool> started = false;
  LeaderElector runner(store_, clock_, Options("a"),
                       {.on_started_leading = [&] { started = true; }});
  Running running(runner);
  ASSERT_TRUE(testing::WaitFor([&] { return runner.IsLeader(); }));
  EXPECT_TRUE(started);
  EXPECT_FALSE(b_.TryAcquireOrRenew());
  running.Stop();
  EXPECT_TRUE(runner.IsLeader());  // stopping alone does not give it up
  runner.Release();
  EXPECT_FALSE(runner.IsLeader());
  EXPECT_TRUE(b_.TryAcquireOrRenew());  // no need to wait out 15 s
}

TEST_F(LeaderElectionTest, LeaderThatCannotRenewStepsDown) {
  std::atomic<bool> stopped = false;
  LeaderElectionOptions options = Options("a");
  options.retry_period = absl::Milliseconds(10);
  LeaderElector runner(store_, clock_, options,
                       {.on_stopped_leading = [&] { stopped = true; }});
  Running running(runner);
  ASSERT_TRUE(testing::WaitFor([&] { return runner.IsLeader(); }));
  // Another writer takes the lease behind the leader's back: its renewals
  // now fail, and after renew_deadline (10 s on the fake clock) it steps down.
  store_.Steal("metrics-scheduler", "metrics-scheduler", "thief");
  clock_.Advance(absl::Seconds(9));
  EXPECT_TRUE(runner.IsLeader());  // 9 s without renewal: still leader
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(testing::WaitFor([&] { return !runner.IsLeader(); }));
  running.Join();  // Run() returns once leadership is lost
  EXPECT_TRUE(stopped);
}

}  // namespace
}  // namespace ms
