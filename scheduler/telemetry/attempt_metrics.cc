#include "scheduler/telemetry/attempt_metrics.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ms {
namespace {

// kube-scheduler's label values, indexed by AttemptMetrics::Result.
constexpr std::array<const char*, 3> kResultNames = {"scheduled",
                                                     "unschedulable", "error"};

}  // namespace

std::string AttemptMetrics::AttemptsLabel(int attempts) {
  return attempts >= kAttemptLabels ? absl::StrCat(kAttemptLabels, "+")
                                    : absl::StrCat(std::max(attempts, 1));
}

AttemptMetrics::AttemptMetrics(Registry& registry,
                               const std::vector<std::string>& profiles) {
  static_assert(kResultNames.size() == kResults);
  Family<Counter>& attempts = registry.AddCounter(
      "metrics_scheduler_schedule_attempts_total",
      "Attempts to schedule pods, by result: 'unschedulable' means no node "
      "fits the pod, 'error' that binding it failed.",
      {"result", "profile"});
  // kube-scheduler's buckets: 1 ms to 16 s; 10 ms to about 88 min.
  Family<Histogram>& durations = registry.AddHistogram(
      "metrics_scheduler_scheduling_attempt_duration_seconds",
      "Scheduling attempt latency in seconds (scheduling algorithm + "
      "binding), by result.",
      ExponentialBuckets(0.001, 2, 15), {"result", "profile"});
  Family<Histogram>& sli = registry.AddHistogram(
      "metrics_scheduler_pod_scheduling_sli_duration_seconds",
      "Time from a pod entering the scheduling queue until it is bound, "
      "through any number of attempts, by attempts.",
      ExponentialBuckets(0.01, 2, 20), {"attempts"});
  for (const std::string& profile : profiles) {
    ProfileSeries& series = profiles_.emplace_back();
    series.profile = profile;
    for (int r = 0; r < kResults; ++r) {
      series.attempts[r] = &attempts.With({kResultNames[r], profile});
      series.durations[r] = &durations.With({kResultNames[r], profile});
    }
  }
  for (int a = 1; a <= kAttemptLabels; ++a) {
    sli_[a - 1] = &sli.With({AttemptsLabel(a)});
  }
}

void AttemptMetrics::Attempted(absl::string_view profile, Result result,
                               absl::Time start) {
  const ProfileSeries* series = &profiles_.front();
  for (const ProfileSeries& s : profiles_) {
    if (s.profile == profile) series = &s;
  }
  const int r = static_cast<int>(result);
  series->attempts[r]->Inc();
  series->durations[r]->Observe(absl::ToDoubleSeconds(absl::Now() - start));
}

void AttemptMetrics::Bound(int attempts, absl::Duration since_queued) {
  const int index = std::clamp(attempts, 1, kAttemptLabels) - 1;
  sli_[index]->Observe(absl::ToDoubleSeconds(since_queued));
}

}  // namespace ms
