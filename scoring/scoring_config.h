// ScoringConfig: what scoring/ needs of the configuration, resolved once.
//
// MakeScoringConfig converts a validated Config's profile; tests build one
// by hand.
// Plain value; thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_SCORING_CONFIG_H_
#define METRICS_SCHEDULER_SCORING_SCORING_CONFIG_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "config/config.h"

namespace ms {

// One metric term, from MetricConfig.
struct MetricTerm {
  std::string name;
  double weight = 1;
  Direction direction = Direction::kLower;
  NormalizationConfig normalization;
  MissingPolicy missing = MissingPolicy::kNeutral;
  int64_t max_staleness_ms = 120000;
  MetricOrigin origin;  // a query unless a node attribute
  // The threshold filter: a fresh value above filter_max or below
  // filter_min fails the node. Infinite: no bound.
  double filter_max = std::numeric_limits<double>::infinity();
  double filter_min = -std::numeric_limits<double>::infinity();
  bool has_filter() const {
    return filter_max != std::numeric_limits<double>::infinity() ||
           filter_min != -std::numeric_limits<double>::infinity();
  }
};

// What scoring needs of the configuration, with durations in milliseconds.
// DefaultPreemption's arguments (scoring/preemption.h).
struct PreemptionSettings {
  bool enabled = true;
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
};

struct ScoringConfig {
  std::vector<MetricTerm> metrics;  // in configuration order
  double least_allocated_weight = 1;
  double balanced_allocation_weight = 1;
  double recent_placements_weight = 1;
  double inter_pod_affinity_weight = 2;
  double pod_topology_spread_weight = 2;
  double node_affinity_weight = 2;
  double taint_toleration_weight = 3;
  double image_locality_weight = 1;
  // NodeAffinity's addedAffinity: required terms (ORed; empty: none) and
  // preferred terms, for every pod.
  std::vector<NodeSelectorTerm> added_affinity;
  std::vector<PreferredNodeTerm> added_preferred_affinity;
  double penalty_per_placement = 10;  // herd.penaltyPerPlacement
  // herd.window: placements older than this no longer count
  // (ClusterState).
  int64_t herd_window_ms = 30000;
  PreemptionSettings preemption;
};

// The policy of `profile` (one of config.profiles) with the settings all
// profiles share (nodeAffinity, preemption).
ScoringConfig MakeScoringConfig(const Config& config,
                                const ProfileConfig& profile);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_SCORING_CONFIG_H_
