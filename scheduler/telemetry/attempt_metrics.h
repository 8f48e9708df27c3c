// AttemptMetrics: kube-scheduler's metrics of scheduling attempts, under
// the names and labels kube-scheduler v1.34 gives them with our prefix, so
// that its dashboards and alerts translate by the prefix alone:
//
//   metrics_scheduler_schedule_attempts_total{result,profile}        counter
//   metrics_scheduler_scheduling_attempt_duration_seconds{result,profile}
//                                                                    histogram
//   metrics_scheduler_pod_scheduling_sli_duration_seconds{attempts}  histogram
//
// An attempt starts when the scheduling loop takes a pod from the queue and
// ends with its result: `scheduled` once the binding succeeded,
// `unschedulable` when no node fits (preemption may follow), `error` when
// the binding failed or the pod was found gone or bound elsewhere.
// `profile` is the schedulerName of the pod's profile. The SLI histogram
// observes, for each bound pod, the time since it first entered the queue
// (once its scheduling gates were removed), by `attempts` ("1" to "14",
// then "15+"). Buckets are kube-scheduler's. Every child exists from the
// start, at zero.
//
// Thread-safe; recording takes no lock.
#ifndef METRICS_SCHEDULER_SCHEDULER_TELEMETRY_ATTEMPT_METRICS_H_
#define METRICS_SCHEDULER_SCHEDULER_TELEMETRY_ATTEMPT_METRICS_H_

#include <array>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "scheduler/telemetry/self_metrics.h"

namespace ms {

class AttemptMetrics {
 public:
  enum class Result { kScheduled, kUnschedulable, kError };

  // Adds the families to `registry`, which must outlive this object, with
  // the series of each of `profiles` (at least one).
  AttemptMetrics(Registry& registry, const std::vector<std::string>& profiles);

  // An attempt of a pod of `profile` (counted as the first profile's when
  // it is none of them) that began at `start` (absl::Now() then) ended
  // now.
  void Attempted(absl::string_view profile, Result result, absl::Time start);
  // A pod was bound at its `attempts`-th attempt (1 or more),
  // `since_queued` after it first entered the queue.
  void Bound(int attempts, absl::Duration since_queued);

  // The `attempts` label of a pod bound at its `attempts`-th attempt.
  static std::string AttemptsLabel(int attempts);

 private:
  static constexpr int kResults = 3;
  static constexpr int kAttemptLabels = 15;  // "1".."14", "15+"
  struct ProfileSeries {
    std::string profile;
    std::array<Counter*, kResults> attempts;
    std::array<Histogram*, kResults> durations;
  };
  std::vector<ProfileSeries> profiles_;
  std::array<Histogram*, kAttemptLabels> sli_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_TELEMETRY_ATTEMPT_METRICS_H_
