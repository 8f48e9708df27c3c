// A profile of the configuration as scoring/ applies it.
//
// Who calls it: the scheduler, once per profile at start, and explain.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_SCORING_PROFILE_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_SCORING_PROFILE_H_

#include "config/config.h"
#include "scoring/scoring_config.h"

namespace ms {

// The policy of `profile` (one of config.profiles) with the settings all
// profiles share (nodeAffinity, preemption).
ScoringConfig MakeScoringConfig(const Config& config,
                                const ProfileConfig& profile);

// How long a pod's start can matter to `profile`'s estimated metrics: the
// longest warm-up plus maxStaleness among them (MetricViews); 0 when none
// has an estimate.
absl::Duration EstimateWindow(const ProfileConfig& profile);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_SCORING_PROFILE_H_
