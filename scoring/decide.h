// Decide: where one pod goes. The pure heart of the scheduler.
//
//   ScoringConfig scoring = ...;  // once (scheduler/cycle/scoring_profile.h)
//   NodeTable table; table.Build(nodes);                 // on node changes
//   MetricTable prepared; prepared.Build(columns, n);    // on metric changes
//   NodeBounds bounds;                 // on node, label, annotation changes
//   MatchNodeBounds(scoring.metrics, nodes, &bounds);
//   Workspace ws;                                        // one per thread
//   ...
//   DecideInput in{.pod = &pod, .nodes = &nodes, .table = &table,
//                  .metrics = &columns, .metric_table = &prepared,
//                  .node_bounds = &bounds, .recent_placements = &counts,
//                  .now_ms = now, .seed = seed};
//   Decision d = Decide(in, scoring, ws);
//   if (d.ok()) Bind(pod, nodes[d.node_index].node.name, SummarizeTerms(...));
//   else Report(pod, d.filter_summary);  // FailedScheduling message
//
// Phases, each rule in its plugin file under scoring/plugins/:
// 1. Pre-filter. Each filter plugin's per-pod facts are computed once
//    (filter.h): the volume plugins' claims and PVs (volume_binding.h and
//    the others), PodTopologySpread's and InterPodAffinity's counts over
//    the placed pods (pod_topology_spread.h, inter_pod_affinity.h). A
//    pre-filter that rejects the pod (a claim missing or unbound, dynamic
//    resource allocation, which is not implemented) rejects it on every
//    node: filter_summary says why.
// 2. Filter (filter.h). The feasible nodes F are kept as a mask over all
//    nodes, so that the per-metric passes read whole columns and vectorise.
//    A node with nominated pods of the pod's priority or higher must pass
//    with them added too (NominatedPod). When the pod has a
//    nominatedNodeName and that node passes, F is that node alone, as in
//    kube-scheduler (the `exclude` policy does not remove it).
// 3. Pre-score (metric_terms.h). The usable values of each metric and their
//    stats over F. A metric with no usable value on any node of F is
//    unused for this decision. When no metric is usable, or none is
//    configured, or force_fallback is set, the decision runs in fallback
//    mode: only the built-in terms score. Otherwise the metrics' own
//    filters apply: nodes without a usable value of an `exclude` metric,
//    and nodes whose usable value is beyond a metric's `filter` bounds,
//    leave F ("node(s) had cpu above 0.9"). A metric's bounds on a node are
//    its default bounds, or those of its first scope that selects the pod
//    and the node, or the node's annotation (filter_bounds.h): the pod's
//    side of the scopes is matched here, once; the node's side is read
//    from DecideInput::node_bounds. Missing values never fail a bound; in
//    fallback mode no metric filters.
// 4. Normalise (metric_terms.h). Each used metric's normalisation over F is
//    resolved into a plan; missing values follow their policy.
// 5. Score. The built-in terms (model/policy.h's kBuiltinTerms, each a
//    ScorePlugin of score_plugin.h): leastAllocated and balancedAllocation,
//    kube-scheduler's formulas, recentPlacements, herd avoidance from the
//    caller's per-node counts, then those that score only a pod they
//    concern (podTopologySpread, interPodAffinity, nodeAffinity,
//    taintToleration, imageLocality). A weight of 0 turns a term off.
//    Score(n) = sum(w_i * s_i(n)) / sum(w_i) over the terms counted for n,
//    in [0, 100] (0 when no term counts).
// 6. Pick. The highest score wins; ties are broken by a hash of (seed, node
//    name), so the same seed picks the same node whatever the order of the
//    node list.
// 7. Explain. The winner's terms always; every node's row when asked for.
// 8. Preemption, when no node fits and the caller asks (preemption.h).
//    For a pod with WaitForFirstConsumer claims, what binding them on the
//    winner takes (Decision::volume_bindings).
#ifndef METRICS_SCHEDULER_SCORING_DECIDE_H_
#define METRICS_SCHEDULER_SCORING_DECIDE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/metrics.h"
#include "model/node_info.h"
#include "model/pod.h"
#include "scoring/explanation.h"
#include "scoring/filter_bounds.h"
#include "scoring/metric_table.h"
#include "scoring/node_table.h"
#include "scoring/preemption.h"
#include "scoring/scoring_config.h"
#include "scoring/unseen_load.h"
#include "scoring/volume_catalog.h"

namespace ms {

struct DecideInput {
  const Pod* pod = nullptr;                     // required
  const std::vector<NodeInfo>* nodes = nullptr;  // required
  // Optional: NodeTable built from `nodes` and kept in step with them.
  // Null: Decide builds one in the Workspace.
  const NodeTable* table = nullptr;
  // Optional: one column per ScoringConfig metric, aligned to `nodes`
  // (AlignMetric). Null or fewer columns: the missing metrics have no data.
  const std::vector<MetricColumn>* metrics = nullptr;
  // Optional: `metrics` prepared (MetricTable::Build), kept in step with
  // them. Null, or not matching: Decide prepares them in the Workspace.
  const MetricTable* metric_table = nullptr;
  // Optional: per metric, what estimates of load not yet sampled added to
  // each node's value in `metrics` (MetricViews::View::unseen), for the
  // explanation; an empty vector for a metric with none.
  const std::vector<std::vector<double>>* unseen = nullptr;
  // Optional: the node side of the metrics' scoped filters over `nodes`
  // (MatchNodeBounds), kept in step with the nodes' labels and
  // annotations. Null, or not matching (NodeBoundsMatch): Decide matches
  // them in the Workspace, O(nodes x scopes) per decision, when a metric
  // has a scoped filter.
  const NodeBounds* node_bounds = nullptr;
  // Optional: per node, the pods this scheduler placed there since that
  // node's metrics were sampled. Null: none anywhere.
  const std::vector<int32_t>* recent_placements = nullptr;
  // Optional: per metric term with estimate.siblings, what each
  // controller's pods measure (MetricViews::View::siblings), for
  // siblingSpread. Null: no controller is measured.
  const std::vector<SiblingUsages>* siblings = nullptr;
  // Optional: the namespaces' labels, for pod affinity terms'
  // namespaceSelector. Null: none known.
  const NamespaceLabels* namespaces = nullptr;
  // Optional: the workloads' selectors, for PodTopologySpread's system
  // default constraints. Null: no pod gets them.
  const WorkloadSelectors* workloads = nullptr;
  // Optional: the cluster's claims, volumes, classes and CSINodes, for a
  // pod with claims. Null: none known (such a pod's claims are missing).
  const VolumeCatalog* volumes = nullptr;
  // Optional: the extended resources DeviceClasses provide (from 1.36, on a
  // node that does not advertise one, a pod's request for it is for
  // dynamic resource allocation). Null: none.
  const DeviceClassResources* device_resources = nullptr;
  // Optional: the nominated pods, any order. Null: none.
  const std::vector<NominatedPod>* nominated = nullptr;
  // Optional: the PodDisruptionBudgets, for preemption. Null: none.
  const std::vector<PodDisruptionBudget>* budgets = nullptr;
  // When no node fits, find what preemption would take
  // (Decision::preemption), if the configuration enables it.
  bool preempt = false;
  int64_t now_ms = 0;  // for staleness; scoring has no clock
  uint64_t seed = 0;   // tie-break
  bool force_fallback = false;  // e.g. cold cache past its deadline
  bool explain = false;         // fill Decision::explanation
};

struct Decision {
  int node_index = -1;  // into DecideInput::nodes; -1 when no node fits
  double score = 0;     // the winner's total, in [0, 100]
  ScoringMode mode = ScoringMode::kFallback;
  FallbackReason fallback_reason = FallbackReason::kNone;
  int num_nodes = 0;
  int num_feasible = 0;  // after the filters and `exclude` policies
  // When node_index is -1: the FailedScheduling message, e.g.
  // "0/5 nodes are available: 2 node(s) were unschedulable, 3 Insufficient
  // cpu." Empty otherwise.
  std::string filter_summary;
  // The winner's terms (metrics in configuration order, then the built-ins);
  // see SummarizeTerms for the event message.
  std::vector<TermResult> terms;
  std::optional<Explanation> explanation;  // when DecideInput::explain
  // What binding the pod's unbound WaitForFirstConsumer claims on the
  // chosen node takes, to be done before the pod is bound; empty when
  // there is nothing to bind.
  VolumeBindings volume_bindings;
  // When no node fits and DecideInput::preempt: the node to nominate and
  // the pods to evict there, or why preemption cannot help (its message
  // also ends filter_summary).
  std::optional<Preemption> preemption;

  bool ok() const { return node_index >= 0; }
};

// Reusable per-thread scratch space. Decide sizes it to the node count the
// first time and reuses it after, so steady-state decisions allocate nothing
// proportional to the number of nodes. It also keeps the last pod shape's
// leastAllocated and balancedAllocation per block of the table's rows, for
// as long as the rows are not written (NodeTable::block_version), which
// is why a caller's table must be kept in step with its nodes. Not
// thread-safe: one per thread.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(Workspace&&) noexcept;
  Workspace& operator=(Workspace&&) noexcept;

  struct Scratch;  // decide.cc's business

 private:
  friend Decision Decide(const DecideInput&, const ScoringConfig&,
                         Workspace&);
  std::unique_ptr<Scratch> scratch_;
};

Decision Decide(const DecideInput& input, const ScoringConfig& config,
                Workspace& workspace);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_DECIDE_H_
