#include "scheduler/cycle/adaptive_limit.h"

#include <algorithm>

namespace ms {

AdaptiveLimit::AdaptiveLimit(AdaptiveLimitOptions options)
    : options_(options),
      min_(std::clamp(options.min, 1, std::max(1, options.max))),
      max_(std::max(1, options.max)),
      limit_(std::clamp(options.initial, min_, max_)) {}

void AdaptiveLimit::Decrease(double factor) {
  if (since_decrease_ < decrease_after_) return;  // this round counted
  decrease_after_ = limit_;
  limit_ = std::max(min_, static_cast<int>(limit_ * factor));
  since_decrease_ = 0;
  credit_ = 0;
}

void AdaptiveLimit::Observe(absl::Duration latency, bool overloaded,
                            bool waiting) {
  ++since_decrease_;
  window_min_ = std::min(window_min_, latency);
  const absl::Duration baseline = std::min(baseline_, window_min_);
  if (++in_window_ >= options_.window) {
    baseline_ = window_min_;
    window_min_ = absl::InfiniteDuration();
    in_window_ = 0;
  }
  if (overloaded) {
    Decrease(0.5);
    return;
  }
  if (latency > baseline * options_.latency_tolerance &&
      latency > baseline + options_.latency_slack) {
    Decrease(0.9);
    return;
  }
  if (waiting && ++credit_ >= limit_) {
    limit_ = std::min(max_, limit_ + 1);
    credit_ = 0;
  }
}

}  // namespace ms
