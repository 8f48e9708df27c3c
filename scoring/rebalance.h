// Rebalancing's decisions (docs/rebalance.md): which nodes stay hot, which
// pods may move off them, which of those to move, and how many moves the
// limits allow now. Plain values and functions of what they are given
// (times included); scheduler/cycle/rebalancer.h runs them against the
// cluster and asks a scheduling decision where each pod would go.
// Thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_REBALANCE_H_
#define METRICS_SCHEDULER_SCORING_REBALANCE_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "config/config.h"
#include "model/metrics.h"
#include "model/pod.h"

namespace ms {

// A node that stays hot on one of the bounds.
struct HotNode {
  size_t bound = 0;  // index into the bounds HotTracker was given
  std::string node;
  double value = 0;      // its latest sample, less what moved off (moved_off)
  double threshold = 0;  // what it is above: high, or the mean + aboveMean
  // What moving pods must bring it to, and what a node taking one must
  // stay at or under: the bound's low, or less when the fleet's mean plus
  // aboveMean is lower (a node hot only against the fleet is brought back
  // to it).
  double target = 0;
  int samples = 0;  // consecutive fresh samples above the threshold
  // What pods that left took, which the latest sample still shows.
  double moved_off = 0;
};

// Counts, per bound and node, the consecutive fresh samples above the
// bound. A sample counts once (a node moves on only when its sample is
// newer than the last it counted), and only when fresh and finite; a
// missing, stale or non-finite value starts the node's count again, as
// does a value at or under the threshold. Pods that left a node are taken
// off its samples until samples taken a settle time later show them gone,
// so a node that shed enough is not hot on samples that lag, and one that
// did not sheds more at the next round without waiting for them.
class HotTracker {
 public:
  explicit HotTracker(std::vector<HotBound> bounds);

  // Bound `bound`'s metric sampled over `nodes` (column[i] is nodes[i]'s,
  // AlignMetric), at `now_ms`; a sample older than `max_staleness_ms` is
  // stale. Nodes not in `nodes` are forgotten, their settle times too.
  void Observe(size_t bound, const std::vector<std::string>& nodes,
               const MetricColumn& column, int64_t now_ms,
               int64_t max_staleness_ms);

  // A pod that took `takes` of bound `bound`'s metric just left `node`:
  // the node's samples taken before `until_ms` still show it, so they are
  // read less `takes` (and a value brought to the threshold or under it
  // starts the count again at once).
  void Left(size_t bound, const std::string& node, double takes,
            int64_t until_ms);

  // The nodes whose count reached their bound's `samples`, hottest over
  // its threshold first.
  std::vector<HotNode> Hot() const;

  const std::vector<HotBound>& bounds() const { return bounds_; }

 private:
  struct Streak {
    int64_t last_sample_ms = 0;  // of the last sample counted
    int count = 0;
    double sample = 0;     // the last sample counted, as taken
    double moved_off = 0;  // what left that it still shows
    double value() const { return sample - moved_off; }
    double threshold = 0;
    double target = 0;
  };
  struct Departure {
    double takes = 0;
    int64_t until_ms = 0;
  };
  // The streak's value with what left that `sample_ms` still shows; drops
  // the departures samples from then on show.
  void ReadLessWhatLeft(Streak& s, std::vector<Departure>& left,
                        int64_t sample_ms);

  std::vector<HotBound> bounds_;
  // Per bound, by node.
  std::vector<std::unordered_map<std::string, Streak>> streaks_;
  std::vector<std::unordered_map<std::string, std::vector<Departure>>> left_;
};

// Why a pod may not move, or kMovable.
enum class Unmovable {
  kMovable,
  kOtherScheduler,  // its schedulerName is not one rebalancing moves
  kNamespace,       // not in pods.namespaces, or in excludeNamespaces
  kLabels,          // pods' label selector does not select it
  kPriority,        // above pods.maxPriority
  kNotRunning,      // not Running, or being deleted
  kTooYoung,        // started less than minAge ago, or not started
  kLocalStorage,    // an emptyDir or hostPath volume, not allowed
  kMirror,          // a static pod's mirror
  kNoController,    // nothing recreates it
  kDaemonSet,       // its DaemonSet puts it back on the same node
};

// A short name for metrics labels and logs: "other-scheduler",
// "namespace", "labels", "priority", "not-running", "too-young",
// "local-storage", "mirror", "no-controller", "daemonset" ("" for
// kMovable).
absl::string_view UnmovableName(Unmovable why);

// Whether `pod` may move under `rules` at `now_ms`; `scheduler_names`: the
// names rules.scheduler_names gives, or the profiles' when it is empty.
Unmovable WhyUnmovable(const Pod& pod, const RebalancePods& rules,
                       const std::vector<std::string>& scheduler_names,
                       int64_t now_ms);

// A pod on a hot node that may move, and what its leaving takes off the
// node's value (its estimate: annotation, its own or its siblings'
// measured usage, or requests).
struct MoveCandidate {
  size_t pod = 0;  // the caller's index
  double takes = 0;
};

// Where a decision would place a pod's replacement: `node` ("" when no
// node fits) and that node's value with it.
struct Replacement {
  std::string node;
  double value_with_pod = 0;
};

// Why a candidate the plan needed was left where it is.
enum class LeftBecause {
  kReturns,     // the decision puts its replacement back on the hot node
  kNowhere,     // no node fits it
  kWouldBeHot,  // its new node would be above the target with it
  kLimited,     // a limit or a cool-down (MoveLimits)
};
absl::string_view LeftBecauseName(LeftBecause why);  // "returns", ...

struct PlannedMove {
  size_t pod = 0;
  std::string to;
  double takes = 0;
  double to_value = 0;  // the new node's value with the pod
};
struct LeftPod {
  size_t pod = 0;
  LeftBecause why = LeftBecause::kReturns;
  std::string node;  // where the decision put it, when it did
};
struct MovePlan {
  std::vector<PlannedMove> moves;
  std::vector<LeftPod> left;
  double value_after = 0;  // the hot node's value less what the moves take
};

// Chooses which of `candidates` leave `hot`: as few as can bring its
// value to its target, the largest first, but for the last one the
// smallest that is enough on its own. A candidate moves only when
// `allowed(pod)` (the limits) and `place(pod)` puts its replacement on
// another node whose value with it stays at or under the target (a node
// whose value is unknown never does); one that does not is left, with
// why, and the next is tried. `moved(pod)` hears of each move as it is
// planned (so that the limits count it before the next is asked). Stops
// once the target is reached or the candidates run out: a node that
// cannot be brought to its target still sheds what helps. `taken`, when
// not null, is what the round's earlier plans send to each node, counted
// on top of `place`'s value there, and gets this plan's moves.
MovePlan PlanMoves(const HotNode& hot, std::vector<MoveCandidate> candidates,
                   absl::FunctionRef<bool(size_t pod)> allowed,
                   absl::FunctionRef<Replacement(size_t pod)> place,
                   absl::FunctionRef<void(size_t pod)> moved,
                   std::unordered_map<std::string, double>* taken = nullptr);

// The limits of one interval: evictions per node, namespace, workload and
// in all, and each workload's cool-down after it lost a pod.
class MoveLimits {
 public:
  explicit MoveLimits(RebalanceLimits limits) : limits_(limits) {}

  // A new interval starts at `now_ms`: the counts start again; cool-downs
  // over are forgotten.
  void StartInterval(int64_t now_ms);
  // Whether a pod of `workload` (its controller's uid) in `namespace_` may
  // leave `node` now.
  bool Allows(const std::string& node, const std::string& namespace_,
              const std::string& workload, int64_t now_ms) const;
  // Counts a move made (or, in a dry run, one that would have been).
  void Record(const std::string& node, const std::string& namespace_,
              const std::string& workload, int64_t now_ms);

 private:
  RebalanceLimits limits_;
  int total_ = 0;
  std::unordered_map<std::string, int> per_node_;
  std::unordered_map<std::string, int> per_namespace_;
  std::unordered_map<std::string, int> per_workload_;
  std::unordered_map<std::string, int64_t> cooling_until_ms_;  // by workload
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_REBALANCE_H_
