#include "scheduler/ha/leader_election.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

constexpr char kName[] = "metrics-scheduler";

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
  void Steal(const std::string& thief) {
    absl::MutexLock lock(&mu_);
    kube::Lease& lease = leases_.at(absl::StrCat(kName, "/", kName));
    lease.holder_identity = thief;
    lease.resource_version = absl::StrCat(++version_);
  }
  kube::Lease Current() {
    absl::MutexLock lock(&mu_);
    return leases_.at(absl::StrCat(kName, "/", kName));
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, kube::Lease> leases_ ABSL_GUARDED_BY(mu_);
  int version_ ABSL_GUARDED_BY(mu_) = 0;
};

// A slow or broken apiserver on a FakeClock. Every call
// 1. runs the hook (Phase::kStarting), on the caller's thread;
// 2. moves the clock on by the current delay, or by its timeout and then
//    fails with DeadlineExceeded when the delay is not shorter; runs the
//    hook again (Phase::kDelayed): the test's window into what the elector
//    reports in the middle of a call;
// 3. while held, hangs until let go, or fails with DeadlineExceeded once
//    the clock reaches the call's deadline (its start + its timeout);
// 4. fails with Unavailable when failing, else reaches the store.
class SlowLeaseStore : public MemoryLeaseStore {
 public:
  enum class Phase { kStarting, kDelayed };

  SlowLeaseStore(FakeClock& clock, absl::Duration delay)
      : clock_(clock), delay_(delay) {}
  // Before any call is made.
  void SetHook(std::function<void(Phase)> hook) { hook_ = std::move(hook); }
  void SetDelay(absl::Duration delay) {
    absl::MutexLock lock(&mu_);
    delay_ = delay;
  }
  void Hold() {
    absl::MutexLock lock(&mu_);
    holding_ = true;
  }
  void LetGo() {
    absl::MutexLock lock(&mu_);
    holding_ = false;
  }
  void Fail(bool failing) {
    absl::MutexLock lock(&mu_);
    failing_ = failing;
  }
  // Calls that have hung / failed with Unavailable so far.
  int held() {
    absl::MutexLock lock(&mu_);
    return held_;
  }
  int failed() {
    absl::MutexLock lock(&mu_);
    return failed_;
  }
  // The deadline (monotonic) of the last call made.
  absl::Duration last_deadline() {
    absl::MutexLock lock(&mu_);
    return last_deadline_;
  }

  absl::StatusOr<kube::Lease> Get(const std::string& ns,
                                  const std::string& name,
                                  absl::Duration timeout) override {
    if (absl::Status s = Call(timeout); !s.ok()) return s;
    return MemoryLeaseStore::Get(ns, name, timeout);
  }
  absl::StatusOr<kube::Lease> Create(const kube::Lease& lease,
                                     absl::Duration timeout) override {
    if (absl::Status s = Call(timeout); !s.ok()) return s;
    return MemoryLeaseStore::Create(lease, timeout);
  }
  absl::StatusOr<kube::Lease> Update(const kube::Lease& lease,
                                     absl::Duration timeout) override {
    if (absl::Status s = Call(timeout); !s.ok()) return s;
    return MemoryLeaseStore::Update(lease, timeout);
  }

 private:
  absl::Status Call(absl::Duration timeout) {
    if (hook_) hook_(Phase::kStarting);
    const absl::Duration deadline = clock_.Monotonic() + timeout;
    absl::Duration delay;
    {
      absl::MutexLock lock(&mu_);
      last_deadline_ = deadline;
      delay = delay_;
    }
    const bool times_out = delay >= timeout;
    clock_.Advance(times_out ? timeout : delay);
    if (hook_) hook_(Phase::kDelayed);
    if (times_out) return absl::DeadlineExceededError("slow store");

    absl::MutexLock lock(&mu_);
    if (holding_) {
      ++held_;
      auto let_go = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !holding_;
      };
      while (!mu_.AwaitWithTimeout(absl::Condition(&let_go),
                                   absl::Milliseconds(1))) {
        if (clock_.Monotonic() >= deadline) {
          return absl::DeadlineExceededError("hung store");
        }
      }
    }
    if (failing_) {
      ++failed_;
      return absl::UnavailableError("failing store");
    }
    return absl::OkStatus();
  }

  FakeClock& clock_;
  std::function<void(Phase)> hook_;
  absl::Mutex mu_;
  absl::Duration delay_ ABSL_GUARDED_BY(mu_);
  bool holding_ ABSL_GUARDED_BY(mu_) = false;
  bool failing_ ABSL_GUARDED_BY(mu_) = false;
  int held_ ABSL_GUARDED_BY(mu_) = 0;
  int failed_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration last_deadline_ ABSL_GUARDED_BY(mu_);
};

LeaderElectionOptions Options(const std::string& identity) {
  return {.lease_name = kName, .lease_namespace = kName, .identity = identity};
}

// Options for an elector driven by Run(): kube-scheduler's durations on the
// fake clock, and short real sleeps between attempts.
LeaderElectionOptions RunOptions(const std::string& identity) {
  LeaderElectionOptions options = Options(identity);
  options.retry_period = absl::Milliseconds(10);
  return options;
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
  kube::Lease lease = store_.Current();
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
  kube::Lease lease = store_.Current();
  EXPECT_EQ(lease.holder_identity, "b");
  EXPECT_EQ(lease.lease_transitions, 1);
  EXPECT_FALSE(a_.TryAcquireOrRenew());  // a lost it
}

// Expiry is judged from when the candidate *received* the record: a record
// written while the candidate's read was under way is as young as the read's
// end, not its start.
TEST(LeaderElectionObservedTest, ObservedTimeIsTakenAfterTheRead) {
  FakeClock clock;
  SlowLeaseStore store(clock, absl::ZeroDuration());
  LeaderElector a(store, clock, Options("a"), {});
  LeaderElector b(store, clock, Options("b"), {});
  ASSERT_TRUE(a.TryAcquireOrRenew());
  EXPECT_FALSE(b.TryAcquireOrRenew());  // b sees a's record

  // b's next read takes 4 s, and a renews before the read is served.
  bool renewed = false;
  store.SetHook([&](SlowLeaseStore::Phase phase) {
    if (phase != SlowLeaseStore::Phase::kDelayed || renewed) return;
    renewed = true;
    store.SetDelay(absl::ZeroDuration());
    EXPECT_TRUE(a.TryAcquireOrRenew());
  });
  store.SetDelay(absl::Seconds(4));
  EXPECT_FALSE(b.TryAcquireOrRenew());
  ASSERT_TRUE(renewed);
  // b received a's new record 4 s after its read began; 14 s after that
  // the record is 14 s old, and only at 15 s has it expired.
  clock.Advance(absl::Seconds(14));
  EXPECT_FALSE(b.TryAcquireOrRenew());
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(b.TryAcquireOrRenew());
}

TEST_F(LeaderElectionTest, RenewKeepsAcquireTime) {
  ASSERT_TRUE(a_.TryAcquireOrRenew());
  absl::Time acquired = store_.Current().acquire_time;
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(a_.TryAcquireOrRenew());
  kube::Lease lease = store_.Current();
  EXPECT_EQ(lease.acquire_time, acquired);
  EXPECT_EQ(lease.renew_time, clock_.Now());
}

// leaseDurationSeconds is a whole number: a fraction is rounded up, never
// down, so a standby never waits less than the configured duration.
TEST(LeaderElectionRoundingTest, LeaseDurationIsRoundedUpToWholeSeconds) {
  struct Case {
    absl::Duration configured;
    int32_t written;
  };
  const Case cases[] = {
      {absl::Seconds(15), 15},
      {absl::Milliseconds(1500), 2},
      {absl::Milliseconds(14001), 15},
      {absl::Milliseconds(999), 1},
      {absl::Milliseconds(500), 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::FormatDuration(c.configured));
    MemoryLeaseStore store;
    FakeClock clock;
    LeaderElectionOptions options = Options("a");
    options.lease_duration = c.configured;
    options.renew_deadline = c.configured / 2;
    options.retry_period = c.configured / 4;
    LeaderElector a(store, clock, options, {});
    ASSERT_TRUE(a.TryAcquireOrRenew());  // creates
    EXPECT_EQ(store.Current().lease_duration_seconds, c.written);
    ASSERT_TRUE(a.TryAcquireOrRenew());  // renews
    EXPECT_EQ(store.Current().lease_duration_seconds, c.written);
    // Taking over an expired lease writes the same.
    store.Steal("gone");
    LeaderElector b(store, clock, options, {});
    EXPECT_FALSE(b.TryAcquireOrRenew());
    clock.Advance(absl::Seconds(c.written));
    ASSERT_TRUE(b.TryAcquireOrRenew());
    EXPECT_EQ(store.Current().lease_duration_seconds, c.written);
  }
}

TEST_F(LeaderElectionTest, ConcurrentWritersCannotBothWin) {
  ASSERT_TRUE(a_.TryAcquireOrRenew());
  kube::Lease seen = store_.Current();
  ASSERT_TRUE(a_.TryAcquireOrRenew());  // moves the resourceVersion on
  seen.holder_identity = "b";
  EXPECT_EQ(store_.Update(seen, absl::Seconds(1)).status().code(),
            absl::StatusCode::kAborted);
}

TEST_F(LeaderElectionTest, RunLeadsUntilStoppedAndReleaseHandsOverAtOnce) {
  absl::Notification started;
  LeaderElector runner(store_, clock_, RunOptions("a"),
                       {.on_started_leading = [&] { started.Notify(); }});
  Running running(runner);
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(runner.IsLeader());
  EXPECT_FALSE(b_.TryAcquireOrRenew());
  running.Stop();
  // Stopping alone does not give the Lease up: writes may still start
  // until the window closes, none after, since no renewal is coming.
  EXPECT_TRUE(runner.IsLeader());
  EXPECT_TRUE(runner.AwaitWriteWindow(absl::ZeroDuration()));
  clock_.Advance(absl::Seconds(10));
  EXPECT_TRUE(runner.IsLeader());
  EXPECT_FALSE(runner.AwaitWriteWindow(absl::Seconds(60)));
  runner.Release();
  EXPECT_FALSE(runner.IsLeader());
  EXPECT_FALSE(runner.AwaitWriteWindow(absl::Seconds(60)));
  EXPECT_EQ(store_.Current().holder_identity, "");
  EXPECT_TRUE(b_.TryAcquireOrRenew());  // no need to wait out 15 s
}

// A leader that reads another holder in the Lease steps down on that read,
// without waiting for its renew deadline (the fake clock never moves here).
TEST_F(LeaderElectionTest, LeaderStepsDownAtOnceWhenAnotherHolderAppears) {
  absl::Notification started, stopped;
  LeaderElector runner(store_, clock_, RunOptions("a"),
                       {.on_started_leading = [&] { started.Notify(); },
                        .on_stopped_leading = [&] { stopped.Notify(); }});
  Running running(runner);
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  store_.Steal("thief");
  ASSERT_TRUE(stopped.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(runner.IsLeader());
  EXPECT_FALSE(runner.AwaitWriteWindow(absl::Seconds(60)));
  running.Join();  // Run() returns once leadership is lost
  EXPECT_EQ(store_.Current().holder_identity, "thief");
}

// Leadership and expiry are measured on the monotonic clock: a step of the
// wall clock (NTP, an operator) neither ends a leader's term nor expires
// another's lease early.
TEST_F(LeaderElectionTest, WallClockStepsChangeNothing) {
  ASSERT_TRUE(a_.TryAcquireOrRenew());
  EXPECT_FALSE(b_.TryAcquireOrRenew());  // b sees a's record
  clock_.Set(clock_.Now() + absl::Hours(1));
  EXPECT_FALSE(b_.TryAcquireOrRenew());  // not expired: no time has passed
  clock_.Set(clock_.Now() - absl::Hours(2));
  EXPECT_FALSE(b_.TryAcquireOrRenew());
  EXPECT_TRUE(a_.IsLeader());
  EXPECT_TRUE(a_.AwaitWriteWindow(absl::ZeroDuration()));
  EXPECT_TRUE(a_.TryAcquireOrRenew());
  EXPECT_EQ(store_.Current().renew_time, clock_.Now());  // wall time
}

// Renewals against an apiserver so slow that each call takes most of the
// renew deadline (but a renewal still fits in it): the leader stays leader
// at every moment, and every pod that asks to bind is let through, at once
// or once the late renewal is done. The store's hook samples IsLeader() at
// the start and in the middle of every call made after winning.
class SlowRenewalTest : public ::testing::TestWithParam<absl::Duration> {};

TEST_P(SlowRenewalTest, LeadershipNeverFlickersAndEveryPodBinds) {
  FakeClock clock;
  SlowLeaseStore store(clock, GetParam());
  absl::Notification started;
  std::atomic<int> samples = 0;
  std::atomic<int> not_leader = 0;
  LeaderElector runner(store, clock, RunOptions("a"),
                       {.on_started_leading = [&] { started.Notify(); }});
  store.SetHook([&](SlowLeaseStore::Phase) {
    // The hook runs on Run()'s thread, as the callback does.
    if (!started.HasBeenNotified()) return;
    ++samples;
    if (!runner.IsLeader()) ++not_leader;
  });
  Running running(runner);
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(30)));

  std::atomic<bool> enough = false;
  std::atomic<int> bound = 0;
  std::atomic<int> turned_away = 0;
  std::vector<std::thread> binders;
  for (int i = 0; i < 4; ++i) {
    binders.emplace_back([&] {
      while (!enough) {
        if (runner.AwaitWriteWindow(absl::Seconds(60))) {
          ++bound;
        } else {
          ++turned_away;
        }
      }
    });
  }
  ASSERT_TRUE(testing::WaitFor([&] { return samples >= 40 && bound >= 100; }))
      << samples << " samples, " << bound << " pods bound";
  enough = true;
  for (std::thread& t : binders) t.join();
  running.Stop();
  EXPECT_EQ(not_leader, 0) << "of " << samples << " samples";
  EXPECT_EQ(turned_away, 0) << "and " << bound << " bound";
  EXPECT_TRUE(runner.IsLeader());
}

INSTANTIATE_TEST_SUITE_P(CallsOf, SlowRenewalTest,
                         ::testing::Values(absl::Seconds(4), absl::Seconds(8)),
                         [](const auto& info) {
                           return absl::StrCat(
                               absl::ToInt64Seconds(info.param), "s");
                         });

// The write window, step by step on the fake clock: open for renew_deadline
// after each successful write was sent, whatever else happens.
TEST_F(LeaderElectionTest, WriteWindowFollowsTheLastWrite) {
  EXPECT_FALSE(a_.AwaitWriteWindow(absl::ZeroDuration()));  // not leading
  EXPECT_FALSE(a_.AwaitWriteWindow(absl::Seconds(60)));
  ASSERT_TRUE(a_.TryAcquireOrRenew());
  EXPECT_EQ(a_.WriteMargin(), absl::Seconds(5));  // 15 s - 10 s
  EXPECT_TRUE(a_.AwaitWriteWindow(absl::ZeroDuration()));
  clock_.Advance(absl::Seconds(10) - absl::Nanoseconds(1));
  EXPECT_TRUE(a_.AwaitWriteWindow(absl::ZeroDuration()));
  clock_.Advance(absl::Nanoseconds(1));
  EXPECT_TRUE(a_.IsLeader());  // still leads: nobody gave it up
  // Closed, and without Run() no renewal is coming: no wait.
  EXPECT_FALSE(a_.AwaitWriteWindow(absl::Seconds(60)));
  ASSERT_TRUE(a_.TryAcquireOrRenew());
  EXPECT_TRUE(a_.AwaitWriteWindow(absl::ZeroDuration()));
  store_.Steal("thief");
  EXPECT_FALSE(a_.TryAcquireOrRenew());  // reads the thief: steps down
  EXPECT_FALSE(a_.IsLeader());
  EXPECT_FALSE(a_.AwaitWriteWindow(absl::ZeroDuration()));

  AlwaysLeader alone;
  EXPECT_TRUE(alone.IsLeader());
  EXPECT_TRUE(alone.AwaitWriteWindow(absl::ZeroDuration()));
  EXPECT_EQ(alone.WriteMargin(), absl::InfiniteDuration());
}

// An elector running on a SlowLeaseStore and a FakeClock, leading already,
// with its callbacks recorded.
class RunningOnSlowStoreTest : public ::testing::Test {
 protected:
  explicit RunningOnSlowStoreTest(absl::Duration delay = absl::ZeroDuration())
      : store_(clock_, delay) {}
  void SetUp() override {
    running_ = std::make_unique<Running>(runner_);
    ASSERT_TRUE(started_.WaitForNotificationWithTimeout(absl::Seconds(30)));
  }
  void TearDown() override {
    store_.LetGo();
    running_.reset();
  }

  FakeClock clock_;
  SlowLeaseStore store_;
  absl::Notification started_, stopped_;
  LeaderElector runner_{store_, clock_, RunOptions("a"),
                        {.on_started_leading = [this] { started_.Notify(); },
                         .on_stopped_leading = [this] { stopped_.Notify(); }}};
  std::unique_ptr<Running> running_;
};

// Each renewal call takes 8 s of the 10 s renew deadline.
class LeaderElectionLateTest : public RunningOnSlowStoreTest {
 protected:
  LeaderElectionLateTest() : RunningOnSlowStoreTest(absl::Seconds(8)) {}
};
using LeaderElectionHangTest = RunningOnSlowStoreTest;
using LeaderElectionFailingTest = RunningOnSlowStoreTest;

// A renewal is late: its call (8 s) still runs when the window of the
// previous write (10 s) has closed. A pod that asks then waits, and binds
// once the renewal is done. If instead the renewal cannot finish within its
// cycle's renew deadline, leadership ends, and the waiting pod is turned
// away rather than bound late.
TEST_F(LeaderElectionLateTest, APodWaitsForALateRenewal) {

  // A renewal (cycle start C) hangs in the store at C + 8 s. The previous
  // write was sent at C - 8 s or before: the window has closed.
  store_.Hold();
  ASSERT_TRUE(testing::WaitFor([&] { return store_.held() == 1; }));
  EXPECT_TRUE(runner_.IsLeader());
  EXPECT_FALSE(runner_.AwaitWriteWindow(absl::ZeroDuration()));
  std::atomic<bool> bound = false;
  absl::Notification answered;
  std::thread pod([&] {
    bound = runner_.AwaitWriteWindow(absl::Seconds(60));
    answered.Notify();
  });
  EXPECT_FALSE(answered.HasBeenNotified());  // nothing can answer it yet
  store_.LetGo();  // the renewal completes at C + 8 s: the window reopens
  pod.join();
  EXPECT_TRUE(bound);
  EXPECT_TRUE(runner_.IsLeader());

  // The next renewal (cycle start C') hangs at C' + 8 s; a pod waits.
  store_.Hold();
  ASSERT_TRUE(testing::WaitFor([&] { return store_.held() == 2; }));
  absl::Duration cycle_start = clock_.Monotonic() - absl::Seconds(8);
  EXPECT_EQ(store_.last_deadline(), cycle_start + absl::Seconds(10));
  std::atomic<bool> late_bound = true;
  std::thread late_pod(
      [&] { late_bound = runner_.AwaitWriteWindow(absl::Seconds(60)); });
  clock_.Advance(absl::Seconds(2));  // C' + 10 s: the cycle's deadline
  EXPECT_TRUE(stopped_.WaitForNotificationWithTimeout(absl::Seconds(30)));
  late_pod.join();
  EXPECT_FALSE(late_bound);
  EXPECT_FALSE(runner_.IsLeader());
  store_.LetGo();
}

// A renewal call that never answers: the call's timeout is the time left in
// its cycle, so the elector gives up at the cycle's renew deadline. Here the
// clock stands still until the call hangs, so the cycle starts when the last
// successful write was sent, and the elector gives up renew_deadline after
// it: the test moves the clock exactly that far and no further.
TEST_F(LeaderElectionHangTest, AHangingRenewalGivesUpAtTheDeadline) {
  const absl::Duration last_write = clock_.Monotonic();
  store_.Hold();
  ASSERT_TRUE(testing::WaitFor([&] { return store_.held() == 1; }));
  EXPECT_EQ(store_.last_deadline(), last_write + absl::Seconds(10));

  clock_.Advance(absl::Seconds(9));
  EXPECT_TRUE(runner_.IsLeader());
  EXPECT_TRUE(runner_.AwaitWriteWindow(absl::ZeroDuration()));
  clock_.Advance(absl::Seconds(1));  // last write + renew_deadline
  EXPECT_FALSE(runner_.AwaitWriteWindow(absl::Seconds(60)));
  ASSERT_TRUE(stopped_.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(runner_.IsLeader());
  running_->Join();
}

// Renewals that fail (an apiserver answering 503) are retried every
// retry_period within the cycle, each call bounded by the time left in it;
// at the cycle's renew deadline the elector gives up.
TEST_F(LeaderElectionFailingTest, FailingRenewalsGiveUpAtTheDeadline) {
  const absl::Duration cycle_start = clock_.Monotonic();
  store_.Fail(true);
  ASSERT_TRUE(testing::WaitFor([&] { return store_.failed() >= 3; }));
  EXPECT_EQ(store_.last_deadline(), cycle_start + absl::Seconds(10));
  clock_.Advance(absl::Seconds(4));
  int failed = store_.failed();
  ASSERT_TRUE(testing::WaitFor([&] { return store_.failed() > failed + 1; }));
  // Calls made 4 s into the cycle get 6 s.
  EXPECT_EQ(store_.last_deadline(), cycle_start + absl::Seconds(10));
  clock_.Advance(absl::Seconds(5));
  EXPECT_TRUE(runner_.IsLeader());
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(stopped_.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(runner_.IsLeader());
  EXPECT_FALSE(runner_.AwaitWriteWindow(absl::Seconds(60)));
}

// The same on the real clocks, as main() runs it: leads, lets pods through,
// hands over.
TEST(LeaderElectionRealClockTest, LeadsAndHandsOverOnRealTime) {
  MemoryLeaseStore store;
  LeaderElectionOptions options = Options("a");
  options.lease_duration = absl::Seconds(8);
  options.renew_deadline = absl::Seconds(5);
  options.retry_period = absl::Milliseconds(50);
  absl::Notification started;
  LeaderElector runner(store, RealClock::Get(), options,
                       {.on_started_leading = [&] { started.Notify(); }});
  Running running(runner);
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(runner.AwaitWriteWindow(absl::Seconds(30)));
  }
  EXPECT_EQ(runner.WriteMargin(), absl::Seconds(3));
  running.Stop();
  runner.Release();
  EXPECT_FALSE(runner.IsLeader());
  EXPECT_EQ(store.Current().holder_identity, "");
}

}  // namespace
}  // namespace ms
