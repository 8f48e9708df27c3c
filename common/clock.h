// Clock: where time comes from, so that tests can control it.
//
// Two readings, for two uses:
// - Now() is wall time, for timestamps other hosts read (a Lease's
//   renewTime, an Event). It may jump, backwards too, when the system clock
//   is set.
// - Monotonic() is the time elapsed since an arbitrary origin fixed for the
//   process; it never goes backwards nor jumps with the wall clock. Measure
//   intervals, timeouts and deadlines with it.
//
// Production code takes a Clock& ; RealClock reads the system clocks, tests
// pass a FakeClock they advance by hand. Implementations must be
// thread-safe.
#ifndef METRICS_SCHEDULER_COMMON_CLOCK_H_
#define METRICS_SCHEDULER_COMMON_CLOCK_H_

#include <chrono>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ms {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  virtual absl::Duration Monotonic() const = 0;
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  // std::chrono::steady_clock (CLOCK_MONOTONIC); absl::Now() and
  // absl::GetCurrentTimeNanos() follow the wall clock.
  absl::Duration Monotonic() const override {
    return absl::FromChrono(std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch()));
  }
  // A process-wide instance.
  static RealClock& Get() {
    static RealClock clock;
    return clock;
  }
};

// A clock that only moves when told to. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000))
      : now_(start) {}
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  absl::Duration Monotonic() const override {
    absl::MutexLock lock(&mu_);
    return monotonic_;
  }
  // Time passes: both readings move on by `d`.
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
    monotonic_ += d;
  }
  // The wall clock is set, as an operator or NTP would: Now() jumps to `t`,
  // Monotonic() does not move.
  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  // An arbitrary origin, far from zero, so that code assuming one shows.
  absl::Duration monotonic_ ABSL_GUARDED_BY(mu_) = absl::Hours(1000);
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_CLOCK_H_
