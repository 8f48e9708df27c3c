#include "scheduler/telemetry/liveness.h"

#include "absl/strings/str_cat.h"

namespace ms {

LivenessMonitor::LivenessMonitor(const Clock& clock, absl::Duration bound)
    : clock_(clock), bound_(bound) {}

LivenessMonitor::Part& LivenessMonitor::Register(std::string name) {
  absl::MutexLock lock(&mu_);
  return parts_.emplace_back(std::move(name));
}

LivenessMonitor::Busy::Busy(LivenessMonitor& monitor, Part& part)
    : part_(part) {
  if (part_.depth_.fetch_add(1) == 0) {
    part_.busy_since_ns_.store(absl::ToUnixNanos(monitor.clock_.Now()));
  }
}

LivenessMonitor::Busy::~Busy() {
  if (part_.depth_.fetch_sub(1) == 1) part_.busy_since_ns_.store(0);
}

std::vector<std::string> LivenessMonitor::Stalled() const {
  absl::Time now = clock_.Now();
  std::vector<std::string> out;
  absl::MutexLock lock(&mu_);
  for (const Part& part : parts_) {
    int64_t since = part.busy_since_ns_.load();
    if (since == 0) continue;
    absl::Duration busy = now - absl::FromUnixNanos(since);
    if (busy > bound_) {
      out.push_back(absl::StrCat(part.name(), " (busy ",
                                 absl::FormatDuration(absl::Trunc(
                                     busy, absl::Seconds(1))),
                                 ")"));
    }
  }
  return out;
}

}  // namespace ms
