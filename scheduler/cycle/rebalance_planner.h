// RebalancePlanner: what a rebalancing round would do, writing nothing
// (docs/rebalance.md). The Rebalancer (scheduler/cycle/rebalancer.h)
// carries its plans out every interval; `explain --rebalance` prints one.
//
// It counts each hot bound's samples in a metrics snapshot (HotTracker,
// scoring/rebalance.h) and, for each node that stays hot, plans the moves
// (PlanMoves): of its pods that may move (WhyUnmovable), as few as bring it
// to its target, by what each takes off it (ClusterState::Takes, in the
// first profile with the bound's metric), each only when a decision with
// its own profile, made for it as if it were pending (nothing assumed),
// puts it on another node that stays at or under the target.
//
// Thread-compatible: the caller serialises Plan() (it shares `workspace`).
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_REBALANCE_PLANNER_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_REBALANCE_PLANNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "config/config.h"
#include "model/metrics.h"
#include "model/pod.h"
#include "scheduler/cycle/cluster_state.h"
#include "scoring/decide.h"
#include "scoring/rebalance.h"
#include "scoring/scoring_config.h"

namespace ms {

// A profile pods may name: its schedulerName and its policy.
struct RebalanceProfile {
  std::string name;
  const ScoringConfig* scoring = nullptr;
};

// What a round would do about one hot node.
struct NodeRebalance {
  HotNode hot;
  std::vector<Pod> pods;  // the node's pods of the rebalanced profiles
  // Indices into `pods`: the moves and the pods left (MovePlan), and the
  // pods that may not move, with why.
  MovePlan plan;
  std::vector<std::pair<size_t, Unmovable>> unmovable;
  std::vector<size_t> unknown_load;    // may move, but take nothing known
  std::vector<std::string> takes_why;  // per pod: DescribeEstimate's
};

class RebalancePlanner {
 public:
  // `profiles` in configuration order; each bound's metric is a term of
  // one of them (config/ checks it).
  RebalancePlanner(const RebalanceConfig& config,
                   std::vector<RebalanceProfile> profiles);

  const RebalanceConfig& config() const { return config_; }
  // The scheduler names whose pods may move (config or every profile's).
  const std::vector<std::string>& names() const { return names_; }
  // The term bound `bound` reads, in the first profile that has it.
  const MetricTerm& Term(size_t bound) const;
  // How long after pods left a node its samples of bound `bound` still
  // show them: the bound's settle, else its term's estimate warmup.
  int64_t SettleMs(size_t bound) const;

  // Counts the samples of `snapshot` (null: none) over `state`'s nodes.
  void Observe(HotTracker& tracker, const ClusterState& state,
               const MetricsSnapshot* snapshot, int64_t now_ms) const;

  // Plans each of `hot` (a node hot on two bounds: the first only), its
  // pods from `pods_on(node)`; each move counts against `limits` as it is
  // planned. `seed`: the decisions' tie-break.
  std::vector<NodeRebalance> Plan(
      const std::vector<HotNode>& hot,
      absl::FunctionRef<std::vector<Pod>(const std::string& node)> pods_on,
      ClusterState& state,
      const std::shared_ptr<const MetricsSnapshot>& snapshot,
      MoveLimits& limits, int64_t now_ms, uint64_t seed,
      Workspace& workspace) const;

  // "cpu 0.93 above 0.85 for 3 samples".
  std::string WhyHot(const HotNode& hot) const;

 private:
  struct BoundTerm {
    const ScoringConfig* scoring = nullptr;
    size_t term = 0;
  };
  const RebalanceProfile* ProfileNamed(const std::string& name) const;

  const RebalanceConfig config_;
  const std::vector<RebalanceProfile> profiles_;
  const std::vector<std::string> names_;
  std::vector<BoundTerm> bound_terms_;  // per hot bound
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_REBALANCE_PLANNER_H_
