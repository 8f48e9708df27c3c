// AdaptiveLimit: how many requests to keep in flight to the apiserver,
// following its answers rather than a fixed number.
//
// Additive increase, multiplicative decrease, as TCP's congestion window:
//   - An answer that says the server is overloaded (429 Too Many Requests,
//     which API Priority and Fairness answers when a queue is full, or no
//     answer in time) halves the limit.
//   - An answer much slower than the fastest of late (more than
//     `latency_tolerance` times the baseline, and `latency_slack` above
//     it: the server is queueing) takes a tenth off it.
//   - Any other answer, while requests were waiting for a slot, counts
//     toward one more: the limit grows by one per `limit` such answers
//     (a round). Answers while nothing waited count nothing, so an idle
//     limit does not grow without evidence.
// After a decrease, the next needs as many answers as the limit was
// before it, so one burst of refusals (every request then in flight)
// counts once. The baseline is the
// fastest answer of the last `window` answers and of the ones before them,
// so it follows the server when it gets slower for good.
//
// Not thread-safe: the caller holds its own lock.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_ADAPTIVE_LIMIT_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_ADAPTIVE_LIMIT_H_

#include "absl/time/time.h"

namespace ms {

struct AdaptiveLimitOptions {
  int min = 4;
  int max = 64;
  int initial = 32;
  double latency_tolerance = 4;
  absl::Duration latency_slack = absl::Seconds(1);
  int window = 256;
};

class AdaptiveLimit {
 public:
  explicit AdaptiveLimit(AdaptiveLimitOptions options = {});

  int limit() const { return limit_; }

  // One answer: how long it took, whether it said the server is
  // overloaded, and whether requests were waiting for a slot meanwhile.
  void Observe(absl::Duration latency, bool overloaded, bool waiting);

 private:
  void Decrease(double factor);

  const AdaptiveLimitOptions options_;
  const int min_;
  const int max_;
  int limit_;
  int credit_ = 0;  // answers toward the next increase
  absl::Duration baseline_ = absl::InfiniteDuration();    // previous window's
  absl::Duration window_min_ = absl::InfiniteDuration();  // this window's
  int in_window_ = 0;
  int since_decrease_ = 0;
  int decrease_after_ = 0;  // answers the next decrease waits for
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_ADAPTIVE_LIMIT_H_
