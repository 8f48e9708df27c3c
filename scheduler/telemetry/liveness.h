// Liveness: whether the scheduler's loops still make progress.
//
// A loop that must never wedge (the scheduling loop, each informer's
// handlers) registers a Part and marks when it takes work in hand and when
// it is done with it. A part that has held one piece of work longer than
// the bound is stalled: /livez (and /healthz) then fail, and the kubelet
// restarts the container, as it would a kube-scheduler whose loop hung.
// A part waiting for work (an empty queue, a quiet watch) is never
// stalled: only work in hand counts, so a quiet cluster or a standby
// replica stays live.
//
//   LivenessMonitor monitor(RealClock::Get(), absl::Seconds(60));
//   LivenessMonitor::Part& loop = monitor.Register("scheduling loop");
//   { LivenessMonitor::Busy busy(loop); ScheduleOne(pod); }
//   std::vector<std::string> stalled = monitor.Stalled();  // {} when live
//
// Thread-safe: parts are marked from their own threads, Stalled() from the
// HTTP server's. Register() before the part is used; parts live as long as
// the monitor.
#ifndef METRICS_SCHEDULER_SCHEDULER_TELEMETRY_LIVENESS_H_
#define METRICS_SCHEDULER_SCHEDULER_TELEMETRY_LIVENESS_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace ms {

class LivenessMonitor {
 public:
  class Part {
   public:
    explicit Part(std::string name) : name_(std::move(name)) {}
    const std::string& name() const { return name_; }

   private:
    friend class LivenessMonitor;
    const std::string name_;
    // Clock time (Unix nanoseconds) since which it holds work; 0: idle.
    std::atomic<int64_t> busy_since_ns_{0};
    std::atomic<int> depth_{0};  // nested Busy scopes on the part's thread
  };

  // Marks `part` busy for the scope's lifetime.
  class Busy {
   public:
    Busy(LivenessMonitor& monitor, Part& part);
    ~Busy();
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;

   private:
    Part& part_;
  };

  LivenessMonitor(const Clock& clock, absl::Duration bound);

  Part& Register(std::string name);

  // The names of the parts that have held work longer than the bound, each
  // with how long ("scheduling loop (busy 75s)"); empty when all progress.
  std::vector<std::string> Stalled() const;

  absl::Duration bound() const { return bound_; }

 private:
  const Clock& clock_;
  const absl::Duration bound_;
  mutable absl::Mutex mu_;
  std::deque<Part> parts_ ABSL_GUARDED_BY(mu_);  // stable addresses
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_TELEMETRY_LIVENESS_H_
