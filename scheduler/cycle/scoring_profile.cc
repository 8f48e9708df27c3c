#include "scheduler/cycle/scoring_profile.h"

#include <algorithm>
#include <limits>

namespace ms {

ScoringConfig MakeScoringConfig(const Config& config,
                                const ProfileConfig& profile) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  ScoringConfig out;
  for (const MetricConfig& m : profile.metrics) {
    out.metrics.push_back(MetricTerm{
        .name = m.name,
        .weight = m.weight,
        .direction = m.direction,
        .normalization = m.normalization,
        .missing = m.missing,
        .max_staleness_ms = absl::ToInt64Milliseconds(m.max_staleness),
        .origin = m.origin,
        .filter_max = m.filter.max.value_or(kInf),
        .filter_min = m.filter.min.value_or(-kInf),
        .filter_scopes = m.filter.scopes,
        .filter_annotations = true,
        .estimate = m.estimate,
        .unloaded = m.unloaded,
    });
  }
  out.builtins = profile.builtins;
  out.added_affinity = config.node_affinity.added_required;
  out.added_preferred_affinity = config.node_affinity.added_preferred;
  out.penalty_per_placement = profile.herd.penalty_per_placement;
  out.herd_window_ms = absl::ToInt64Milliseconds(profile.herd.window);
  out.preemption = {
      .enabled = config.preemption.enabled,
      .min_candidate_nodes_percentage =
          config.preemption.min_candidate_nodes_percentage,
      .min_candidate_nodes_absolute =
          config.preemption.min_candidate_nodes_absolute};
  return out;
}

absl::Duration EstimateWindow(const ProfileConfig& profile) {
  absl::Duration longest = absl::ZeroDuration();
  for (const MetricConfig& m : profile.metrics) {
    if (!m.estimate.enabled()) continue;
    longest = std::max(longest, absl::Milliseconds(m.estimate.warmup_ms) +
                                    m.max_staleness);
  }
  return longest;
}

}  // namespace ms
