// PodTopologySpread (kube-scheduler 1.34: plugins/podtopologyspread),
// filter and score, with kube-scheduler's default arguments (system
// defaulting).
//
// Constraints. The pod's own topologySpreadConstraints, or when it has none
// the system defaults: hostname maxSkew 3 and zone maxSkew 5, both
// ScheduleAnyway, selecting with the labels of the Services that select the
// pod merged with the selector of the ReplicaSet, StatefulSet or
// ReplicationController that controls it (none of those: no constraint).
// matchLabelKeys add the pod's values of those keys to the selector. Unset
// policies are nodeAffinityPolicy Honor (the pod's nodeSelector and required
// node affinity decide which nodes count) and nodeTaintsPolicy Ignore.
//
// Counting. A domain is a value of the constraint's topologyKey on a node
// that has every constraint's key and passes the constraint's inclusion
// policies; its count is the number of pods on those nodes in the incoming
// pod's namespace, not terminating, that the selector selects (an empty
// selector counts nothing).
//
// Filter (DoNotSchedule constraints, over all nodes): for each constraint
// the node must have the key ("node(s) didn't match pod topology spread
// constraints (missing required label)", unresolvable), and
//   count(node's domain) + (1 if the selector selects the pod) - min
// must not exceed maxSkew, where min is the smallest domain count, or 0 when
// there are fewer domains than minDomains ("node(s) didn't match pod
// topology spread constraints").
//
// Score (ScheduleAnyway constraints, over the feasible nodes): nodes lacking
// a key are ignored (score 0) unless the constraints are the system
// defaults. Per constraint, weight = ln(2 + the number of its domains among
// the feasible nodes, or for hostname the number of feasible nodes not
// ignored); raw(node) = round(sum over the constraints the node has a label
// for of count * weight + maxSkew - 1), where count is the node's own
// matching pods for hostname and its domain's count over all nodes
// otherwise. Normalised: 100 * (max + min - raw) / max, integer division
// (100 for all when max is 0). Pure functions over the nodes passed in;
// thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_POD_TOPOLOGY_SPREAD_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_POD_TOPOLOGY_SPREAD_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/node_info.h"
#include "model/pod.h"
#include "model/topology_spread.h"
#include "scoring/explanation.h"
#include "scoring/pod_label_index.h"
#include "scoring/score_plugin.h"
#include "scoring/topology_index.h"

namespace ms {

inline constexpr char kReasonTopologySpread[] =
    "node(s) didn't match pod topology spread constraints";
inline constexpr char kReasonTopologySpreadLabel[] =
    "node(s) didn't match pod topology spread constraints (missing required "
    "label)";

// A constraint ready to count with (kube-scheduler's
// topologySpreadConstraint).
struct SpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  std::optional<LabelSelector> selector;  // absent: selects nothing
  int32_t min_domains = 1;
  bool honor_node_affinity = true;
  bool honor_taints = false;

  friend bool operator==(const SpreadConstraint&,
                         const SpreadConstraint&) = default;
};

// The selector of the pod's system default constraints
// (helper.DefaultSelector); absent or empty when nothing selects the pod.
std::optional<LabelSelector> DefaultSpreadSelector(
    const Pod& pod, const WorkloadSelectors& workloads);

// The pod's constraints for `action`: its own, or the system defaults when
// it has none. `workloads` may be null (no defaults).
std::vector<SpreadConstraint> SpreadConstraints(
    const Pod& pod, UnsatisfiableAction action,
    const WorkloadSelectors* workloads);

class PodTopologySpreadFilter {
 public:
  enum class Verdict { kFits, kMissingLabel, kSkew };

  // Pre-filter over every node. Everything passed must outlive this
  // object.
  void Build(const Pod& pod, PlacedPods all,
             const WorkloadSelectors* workloads);
  // False when the plugin is skipped: every node fits.
  bool active() const { return !constraints_.empty(); }

  // Node i of the view.
  Verdict Check(size_t i) const;

  // kube-scheduler's AddPod/RemovePod pre-filter extensions: counts
  // `other` on node i (delta 1) or takes it off (-1), for a nominated pod
  // or a preemption victim. Only on the node's own domains, so the
  // minimum stays exact (as kube-scheduler's critical paths do for
  // updates on one node).
  void AddPod(size_t i, const PodInfo& other, int delta);

 private:
  void UpdateMin(size_t constraint);

  struct Counted {
    // By value id of the constraint's key: the matching pods of the
    // domain, or kUncounted when no node counts for it.
    std::vector<int64_t> domains;
    int64_t min = 0;   // what the skew is measured from
    int64_t self = 0;  // 1 when the selector selects the incoming pod
  };
  const Pod* pod_ = nullptr;
  const std::vector<NodeInfo>* nodes_ = nullptr;
  std::vector<SpreadConstraint> constraints_;
  std::vector<const TopologyIndex::Column*> columns_;  // by constraint
  std::vector<Counted> counted_;
  std::vector<int32_t> per_node_;  // scratch
};

class PodTopologySpreadScore {
 public:
  // Pre-score, over every node; `feasible[i] != 0` marks the feasible
  // nodes.
  void Build(const Pod& pod, PlacedPods all, const int64_t* feasible,
             const WorkloadSelectors* workloads);
  // False when the score is skipped for this pod.
  bool active() const { return !constraints_.empty(); }

  // Score: node i's raw score, or -1 when the node is ignored.
  int64_t Raw(size_t i) const;

 private:
  bool require_all_keys_ = false;
  std::vector<SpreadConstraint> constraints_;
  std::vector<const TopologyIndex::Column*> columns_;
  // Per constraint: the matching pods of each node, and of each domain by
  // value id, -1 when no feasible node is in it (not for hostname: a node
  // is its own domain).
  std::vector<std::vector<int32_t>> per_node_;
  std::vector<std::vector<int64_t>> domains_;
  std::vector<double> weights_;
};

// Normalise: raw[i] of the nodes with feasible[i] != 0 into out[i] in
// [0, 100]; out of the others is left alone.
void NormalizePodTopologySpread(const int64_t* raw, const int64_t* feasible,
                                size_t n, double* out);


// The podTopologySpread term: PodTopologySpreadScore, normalised.
std::unique_ptr<ScorePlugin> MakePodTopologySpreadPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_POD_TOPOLOGY_SPREAD_H_
