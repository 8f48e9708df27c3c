// ClusterState: the nodes, what runs on them, and what this scheduler has
// placed but not yet seen bound.
//
// The informers feed it (nodes, pods assigned to nodes); the scheduling
// cycle asks it for a decision. It keeps, under one lock, everything a
// decision reads: the NodeInfo list (with the pods placed on each), the
// namespaces' labels, the workloads' selectors, the NodeTable beside it,
// and, per policy decided with (a ScoringConfig: one per profile), its
// metric columns aligned to that list and its herd counts (pods this
// scheduler placed on each node since that node's metrics were sampled,
// within the policy's herd window). Every policy sees every placement.
//
// Assume before bind: DecideAndAssume charges the chosen node with the pod
// at once, so the next decision sees it, and binding runs asynchronously.
// When the informer later shows the pod on that node the charge is simply
// confirmed; when binding fails, Forget() removes the charge (unless the
// informer already showed the pod bound). A confirmed charge is never
// dropped by a new decision for the same pod, and follows the pod's
// requests when they change in place (a resize). Pods seen on nodes that
// are not known yet are charged when the node arrives. Sums saturate.
//
// Thread-safe; every method takes the one lock. A decision holds it for the
// length of Decide (tens of microseconds at 5,000 nodes).
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_CLUSTER_STATE_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_CLUSTER_STATE_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "metrics/node_set.h"
#include "model/device_class.h"
#include "model/disruption_budget.h"
#include "model/kube_version.h"
#include "model/metrics.h"
#include "model/node_info.h"
#include "model/pod.h"
#include "model/volumes.h"
#include "scheduler/cycle/metric_views.h"
#include "scoring/decide.h"
#include "scoring/extender.h"
#include "scoring/metric_table.h"
#include "scoring/volume_catalog.h"

namespace ms {

struct DecisionRequest {
  const Pod* pod = nullptr;
  const ScoringConfig* config = nullptr;
  // The metrics to score with; null: none (fallback).
  std::shared_ptr<const MetricsSnapshot> metrics;
  bool force_fallback = false;
  bool explain = false;
  // When no node fits, find what preemption would take
  // (Decision::preemption).
  bool preempt = false;
  uint64_t seed = 0;
  // False: decide only, charging nothing, and as if the pod were not placed
  // even if it is (shadow mode's what-if).
  bool assume = true;
};

class ClusterState {
 public:
  // `kube`: the cluster's release, whose kube-scheduler rules charge the
  // pods placed on nodes (PodCharge::Of); the policies decided with should
  // carry the same (ScoringConfig::kube), which charges the pod decided.
  // `longest_herd_window`: the longest ScoringConfig::herd_window_ms of
  // the policies decided with; `longest_estimate_window` their longest
  // EstimateWindow (MetricViews).
  ClusterState(const Clock& clock, KubeVersion kube,
               absl::Duration longest_herd_window,
               absl::Duration longest_estimate_window = absl::ZeroDuration());

  // Node informer. Returns true when the node is new or changed in a way
  // that may let a pending pod fit (the caller then retries unschedulable
  // pods). A status write that changes nothing a Node holds (a kubelet's
  // heartbeat: only the resourceVersion moves) changes nothing here.
  bool UpsertNode(const Node& node);
  void RemoveNode(const std::string& name);

  // Informer of pods assigned to nodes (running or pending on a node).
  // Returns true when the pod is new here or its labels changed, other than
  // by our own binding (a pod with pod affinity may fit now).
  bool UpsertAssignedPod(const Pod& pod);
  void RemoveAssignedPod(const Pod& pod);

  // Informer of unassigned pods with status.nominatedNodeName (any
  // scheduler's): counted on their nominated node when filtering a pod of
  // no higher priority, as kube-scheduler does (scoring/decide.h,
  // NominatedPod). A pod whose nomination is cleared, or which is bound,
  // is removed; while this scheduler has it assumed it is not counted
  // twice.
  void UpsertNominatedPod(const Pod& pod);
  void RemoveNominatedPod(const Pod& pod);
  size_t NumNominated() const;

  // PodDisruptionBudget informer, for preemption.
  void UpsertBudget(const PodDisruptionBudget& budget);
  void RemoveBudget(const PodDisruptionBudget& budget);

  // Namespace informer: their labels, for pod affinity's namespaceSelector.
  // Returns true when the labels changed.
  bool UpsertNamespace(const Namespace& ns);
  void RemoveNamespace(const std::string& name);

  // Service, ReplicaSet, StatefulSet and ReplicationController informers:
  // their selectors, for PodTopologySpread's system default constraints.
  // (They change scores only, so never make a pending pod fit.)
  void UpsertWorkload(const Workload& workload);
  void RemoveWorkload(const Workload& workload);

  // PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode,
  // CSIDriver and CSIStorageCapacity informers, for the volume plugins. Any
  // change may let a pod with claims fit (the caller retries unschedulable
  // pods).
  void UpsertClaim(const PersistentVolumeClaim& claim);
  void RemoveClaim(const PersistentVolumeClaim& claim);
  void UpsertVolume(const PersistentVolume& volume);
  void RemoveVolume(const PersistentVolume& volume);
  void UpsertStorageClass(const StorageClass& storage_class);
  void RemoveStorageClass(const StorageClass& storage_class);
  void UpsertCsiNode(const CsiNode& node);
  void RemoveCsiNode(const CsiNode& node);
  void UpsertCsiDriver(const CsiDriver& driver);
  void RemoveCsiDriver(const CsiDriver& driver);
  void UpsertCapacity(const CsiStorageCapacity& capacity);
  void RemoveCapacity(const CsiStorageCapacity& capacity);
  // DeviceClass informer: the extended resources they provide (from 1.36).
  void UpsertDeviceClass(const DeviceClass& device_class);
  void RemoveDeviceClass(const DeviceClass& device_class);

  // What the binder waits for once it has written a pod's volume bindings:
  // the claims as the informer shows them, PVs the same. Null when unknown.
  // Blocks until the claims or volumes change after `seen` (a count
  // returned by the previous call; 0 at first) or `deadline` passes, then
  // calls `fn` under the lock and returns the new count.
  uint64_t AwaitVolumes(
      uint64_t seen, absl::Time deadline,
      absl::FunctionRef<void(const VolumeCatalog&)> fn) const;

  // Decides where `request.pod` goes and, when a node fits, charges it
  // there at once (assume; not when request.assume is false).
  // `request.config` is a policy: each address is aligned and counted on
  // its own, so it must stay put and unchanged while this state is used. The
  // Decision's node_index is only meaningful with `node_name`, which names
  // the chosen node ("" when none fits).
  Decision DecideAndAssume(const DecisionRequest& request, Workspace& workspace,
                           std::string* node_name);

  // For kube-scheduler's extender calls (scheduler/serve/extender_server.h):
  // the metric filters and scores (scoring/extender.h) of the nodes named, in
  // that order, from the same metric columns decisions read, with the
  // filters' bounds that apply to `pod` (its labels and priority; null:
  // the default bounds) on each node. A name not known here has no metric
  // values.
  MetricVerdict JudgeNodes(
      const std::vector<std::string>& names, const ScoringConfig& config,
      const std::shared_ptr<const MetricsSnapshot>& metrics,
      const Pod* pod = nullptr);

  // For rebalancing (scheduler/cycle/rebalancer.h), from `config`'s view
  // with `metrics`: what `pod`, running on its node, takes off metric term
  // `term` (an index into config.metrics) when it leaves (PodTakes, with
  // its own fresh sample of the term's per-pod query); and the term's value
  // on `node` as decisions read it (estimates included) plus what `pod`
  // would add there. NaN when the node is not known or has no value.
  PodEstimate Takes(const ScoringConfig& config,
                    const std::shared_ptr<const MetricsSnapshot>& metrics,
                    size_t term, const Pod& pod);
  double ValueWith(const ScoringConfig& config,
                   const std::shared_ptr<const MetricsSnapshot>& metrics,
                   size_t term, const std::string& node, const Pod& pod);

  // Binding failed: removes the charge of an assumed pod, unless the
  // informer has meanwhile shown it bound, and what was assumed of its
  // volumes (Decision::volume_bindings).
  void Forget(const Pod& pod);

  // The image ids held for node `name` when its Node::images_digest is
  // `digest` (kube::DecodeContext<Node>::known_images): a heartbeat then
  // skips the names.
  bool KnownImages(std::string_view name, uint64_t digest,
                   std::vector<uint32_t>& images) const;

  // Whether the node is known (not deleted).
  bool HasNode(const std::string& name) const;

  // Every node's name, in the order decisions see them.
  std::vector<std::string> NodeNames() const;
  // Names and addresses of every node, for the metrics cache's joins.
  std::vector<metrics::NodeAddresses> NodeAddressList() const;
  // Changes whenever NodeAddressList would: a node added or removed, or
  // one's NodeAddressesOf changed.
  uint64_t NodeAddressesVersion() const;

  // For explain and tests: the nodes as the next decision will see them.
  std::vector<NodeInfo> Nodes() const;
  size_t NumNodes() const;
  size_t NumAssumed() const;
  // Pods this scheduler placed on `node` that still count for herd
  // avoidance under `config`, as of its last decision.
  int RecentPlacements(const std::string& node,
                       const ScoringConfig& config) const;

 private:
  struct PlacedPod {
    std::string node;
    PodCharge charge;
    bool assumed = false;  // placed by us, not yet seen bound
    // What was assumed of its volumes with it; null when nothing (most
    // pods: an entry is kept for every pod on a node).
    std::unique_ptr<const VolumeBindings> volumes;

    const std::string& uid() const { return charge.pod->uid; }
  };
  struct Nominated {
    std::string node;
    PodCharge charge;
  };

  void Charge(const std::string& node, const PodCharge& charge)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Uncharge(const std::string& node, const PodCharge& charge)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemovePlaced(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The nominated pods on known nodes, for a decision; null when none.
  const std::vector<NominatedPod>* NominatedView()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The node list, for metric_views_.
  NodeLayout Layout() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The view of `config` over the node list, the NodeTable built first.
  const MetricViews::View& View(
      const ScoringConfig& config,
      const std::shared_ptr<const MetricsSnapshot>& metrics, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Clock& clock_;
  const KubeVersion kube_;

  mutable absl::Mutex mu_;
  std::vector<NodeInfo> nodes_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> names_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, size_t> index_ ABSL_GUARDED_BY(mu_);
  NodeTable table_ ABSL_GUARDED_BY(mu_);
  bool layout_changed_ ABSL_GUARDED_BY(mu_) = true;  // table_ to rebuild
  // Bumped when nodes are added or removed, and when a node's labels or
  // annotations change: what views are aligned to.
  uint64_t layout_version_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t attributes_version_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t addresses_version_ ABSL_GUARDED_BY(mu_) = 1;
  // Charges for nodes not known yet, applied when they arrive.
  std::unordered_map<std::string, NodeInfo> orphans_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, PlacedPod> pods_ ABSL_GUARDED_BY(mu_);
  // By pod key.
  std::unordered_map<std::string, Nominated> nominated_ ABSL_GUARDED_BY(mu_);
  std::vector<NominatedPod> nominated_view_ ABSL_GUARDED_BY(mu_);
  // By key; budgets_view_ lists them for decisions, rebuilt on change, in
  // key order (from 1.37 preemption's budget count depends on the order:
  // scoring/preemption.cc, SplitByBudget).
  std::map<std::string, PodDisruptionBudget> budgets_ ABSL_GUARDED_BY(mu_);
  std::vector<PodDisruptionBudget> budgets_view_ ABSL_GUARDED_BY(mu_);
  bool budgets_changed_ ABSL_GUARDED_BY(mu_) = false;
  NamespaceLabels namespaces_ ABSL_GUARDED_BY(mu_);
  WorkloadSelectors workloads_ ABSL_GUARDED_BY(mu_);
  VolumeCatalog volumes_ ABSL_GUARDED_BY(mu_);
  uint64_t volume_changes_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, DeviceClass> device_classes_ ABSL_GUARDED_BY(mu_);
  DeviceClassResources device_resources_ ABSL_GUARDED_BY(mu_);
  size_t num_assumed_ ABSL_GUARDED_BY(mu_) = 0;

  MetricViews metric_views_ ABSL_GUARDED_BY(mu_);
};

// What the metrics cache needs of a node to join series to it.
metrics::NodeAddresses NodeAddressesOf(const Node& node);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_CLUSTER_STATE_H_
