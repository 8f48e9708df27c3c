#include "scoring/scoring_config.h"

#include <limits>

namespace ms {

constexpr double kInf = std::numeric_limits<double>::infinity();

ScoringConfig MakeScoringConfig(const Config& config,
                                const ProfileConfig& profile) {
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
    });
  }
  out.least_allocated_weight = profile.builtins.least_allocated;
  out.balanced_allocation_weight = profile.builtins.balanced_allocation;
  out.recent_placements_weight = profile.builtins.recent_placements;
  out.inter_pod_affinity_weight = profile.builtins.inter_pod_affinity;
  out.pod_topology_spread_weight = profile.builtins.pod_topology_spread;
  out.node_affinity_weight = profile.builtins.node_affinity;
  out.taint_toleration_weight = profile.builtins.taint_toleration;
  out.image_locality_weight = profile.builtins.image_locality;
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

}  // namespace ms
