// ScoringConfig: what scoring/ needs of the configuration, resolved once.
//
// scheduler/cycle/scoring_profile.h makes one from a validated Config's
// profile; tests build one by hand. Plain value; thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_SCORING_CONFIG_H_
#define METRICS_SCHEDULER_SCORING_SCORING_CONFIG_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model/kube_version.h"
#include "model/metrics.h"
#include "model/pod.h"
#include "model/policy.h"
#include "model/threshold_scope.h"

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
  // filter_min fails the node. Infinite: no bound. These are the default
  // bounds; scopes and node annotations may replace them (filter_bounds.h).
  double filter_max = std::numeric_limits<double>::infinity();
  double filter_min = -std::numeric_limits<double>::infinity();
  // The first scope that selects both the pod and the node gives both
  // bounds instead. At most kMaxThresholdScopes.
  std::vector<ThresholdScope> filter_scopes;
  // Whether a node's annotations max.filter.metrics-scheduler.io/<name>
  // and min.filter.metrics-scheduler.io/<name> override its bounds, when
  // the term has a filter (MakeScoringConfig sets it for every metric; the
  // node informer keeps those annotations).
  bool filter_annotations = false;
  UnseenLoadEstimate estimate;  // what pods add before a sample shows them
  UnloadedValue unloaded;       // scored for the node's speed, not its load
  bool has_filter() const {
    return filter_max != std::numeric_limits<double>::infinity() ||
           filter_min != -std::numeric_limits<double>::infinity() ||
           !filter_scopes.empty();
  }
  // Whether the bounds may differ by pod or node: a filter with scopes, or
  // read from the nodes' annotations. Without, one pair of bounds holds
  // for every decision.
  bool has_scoped_filter() const {
    return has_filter() && (!filter_scopes.empty() || filter_annotations);
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
  BuiltinWeights builtins;          // <= 0 turns a term off
  // NodeAffinity's addedAffinity: required terms (ORed; empty: none) and
  // preferred terms, for every pod.
  std::vector<NodeSelectorTerm> added_affinity;
  std::vector<PreferredNodeTerm> added_preferred_affinity;
  double penalty_per_placement = 10;  // herd.penaltyPerPlacement
  // herd.window: placements older than this no longer count
  // (ClusterState).
  int64_t herd_window_ms = 30000;
  PreemptionSettings preemption;
  // Whose kube-scheduler rules the built-in terms follow where releases
  // differ (NodeResourcesBalancedAllocation's formula, ImageLocality's
  // image volumes).
  KubeVersion kube;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_SCORING_CONFIG_H_
