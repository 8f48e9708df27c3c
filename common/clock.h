// Clock: where time comes from, so that tests can control it.
//
// Production code takes a Clock& and calls Now(); RealClock reads the system
// clock, tests pass a FakeClock they advance by hand. Implementations must be
// thread-safe.
#ifndef METRICS_SCHEDULER_COMMON_CLOCK_H_
#define METRICS_SCHEDULER_COMMON_CLOCK_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ms {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
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
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_CLOCK_H_
