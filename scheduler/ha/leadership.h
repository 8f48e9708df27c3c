// Leadership: may this replica write as the scheduler now? The gate the
// binder asks before it starts each binding.
//
// Only one replica may bind at a time. A replica leads from winning a Lease
// until it gives it up, but leading is not enough to start a write: the
// replica must also have renewed its Lease recently enough that no standby
// can take over before the write ends. AwaitWriteWindow() says so, waiting a
// little when a renewal is late rather than turning a pod away; the caller
// bounds each write by a timeout shorter than WriteMargin(), so a write
// begun inside the window ends before anyone else may lead.
//
// LeaderElector (leader_election.h) implements it; AlwaysLeader serves runs
// without leader election. Implementations are thread-safe: binder threads
// call them concurrently.
#ifndef METRICS_SCHEDULER_SCHEDULER_HA_LEADERSHIP_H_
#define METRICS_SCHEDULER_SCHEDULER_HA_LEADERSHIP_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ms {

class Leadership {
 public:
  virtual ~Leadership() = default;

  // True from winning the election until leadership is lost or handed over.
  // A state, not a clock reading: it does not turn false while a renewal is
  // merely slow.
  virtual bool IsLeader() const = 0;

  // True when a write may start now. When this replica leads but its write
  // window has closed (a renewal is late), waits up to `max_wait` for the
  // renewal (true) or for leadership to end (false). False at once when
  // this replica does not lead or can no longer renew.
  virtual bool AwaitWriteWindow(absl::Duration max_wait) = 0;

  // How long a write started inside the window may last and still end
  // before any other replica can lead. Bound write timeouts below it, with
  // room for the time between AwaitWriteWindow() returning and the write
  // starting.
  virtual absl::Duration WriteMargin() const = 0;
};

// What a write refused before it started because the window closed
// returns (FailedPrecondition), and how to recognise it.
inline constexpr absl::string_view kOutsideWriteWindow =
    "outside the lease's write window";
inline absl::Status OutsideWriteWindowError() {
  return absl::FailedPreconditionError(kOutsideWriteWindow);
}
inline bool IsOutsideWriteWindow(const absl::Status& s) {
  return absl::IsFailedPrecondition(s) && s.message() == kOutsideWriteWindow;
}

// A replica alone: leads always, never waits, no bound on writes.
class AlwaysLeader final : public Leadership {
 public:
  bool IsLeader() const override { return true; }
  bool AwaitWriteWindow(absl::Duration) override { return true; }
  absl::Duration WriteMargin() const override {
    return absl::InfiniteDuration();
  }
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_HA_LEADERSHIP_H_
