// The filter phase: which nodes can take a pod, and why the others cannot.
//
// The rules are kube-scheduler's default filter plugins, each in its file
// under scoring/plugins/, run here in kube-scheduler's order, stopping at the
// first plugin that rejects a node: NodeUnschedulable, NodeName,
// TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit
// (which reports every insufficient resource at once), VolumeRestrictions,
// NodeVolumeLimits, VolumeBinding, VolumeZone, PodTopologySpread,
// InterPodAffinity and, from Kubernetes 1.36, NodeDeclaredFeatures. Last, a
// request that only dynamic resource allocation could meet on the node
// (DynamicResources' place) fails it.
// The reason strings are kube-scheduler's, so FailedScheduling events read
// the same. As in kube-scheduler there is no readiness filter: a node
// that is not ready, unreachable or without network carries the node
// lifecycle controller's node.kubernetes.io/* NoSchedule taints, which
// TaintToleration applies (so a pod that tolerates them, as a CNI
// DaemonSet's does, can be placed there).
//
// MakePodFilter is the pre-filter: what each plugin needs of the pod,
// computed once per decision (PodTopologySpread's and InterPodAffinity's,
// which read the other pods, are built by the caller and attached). CheckNode
// is the exact, per-node reference. Decide (decide.h) runs a vectorised pass
// (internal/kernels.h) and calls CheckNode only for the nodes and pods that
// pass cannot settle, so both always agree. Pure functions; thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_FILTER_H_
#define METRICS_SCHEDULER_SCORING_FILTER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "model/device_class.h"
#include "model/kube_version.h"
#include "model/node.h"
#include "model/node_features.h"
#include "model/node_info.h"
#include "model/pod.h"
#include "model/resources.h"
#include "scoring/filter_bounds.h"
#include "scoring/filter_failure.h"
#include "scoring/plugins/inter_pod_affinity.h"
#include "scoring/plugins/node_affinity.h"
#include "scoring/plugins/node_name.h"
#include "scoring/plugins/node_ports.h"
#include "scoring/plugins/node_resources_fit.h"
#include "scoring/plugins/node_unschedulable.h"
#include "scoring/plugins/node_volume_limits.h"
#include "scoring/plugins/pod_topology_spread.h"
#include "scoring/plugins/taint_toleration.h"
#include "scoring/plugins/volume_binding.h"
#include "scoring/plugins/volume_restrictions.h"
#include "scoring/plugins/volume_zone.h"
#include "scoring/scoring_config.h"

namespace ms {

// A pod that a preemption made room for (status.nominatedNodeName, set by
// any scheduler) and that is not bound yet. While it waits, a pod of no
// higher priority is filtered as if it already ran there, so it never
// takes the room freed for it; scores do not see it (kube-scheduler's
// RunFilterPluginsWithNominatedPods).
struct NominatedPod {
  uint32_t node = 0;  // index into the nodes decided over
  PodCharge charge;   // its priority and uid are its PodInfo's

  const PodInfo& pod() const { return *charge.pod; }
};

// The pre-filters of the four volume plugins, for a pod with claims or
// inline disks.
struct VolumeFilters {
  const VolumeCatalog* catalog = nullptr;
  const std::vector<InlineDisk>* disks = nullptr;  // VolumeRestrictions
  // VolumeRestrictions: the pod's ReadWriteOncePod claims (each once),
  // how many of them are in use, and the uses added (AddPod) or taken off
  // (RemovePod) on the node being checked. The plugin is skipped (nothing
  // counts) for a pod without inline disks whose claims are not in use.
  std::vector<std::string> rwop_claims;
  int rwop_in_use = 0;
  int rwop_added = 0;
  std::vector<CsiVolume> csi;   // NodeVolumeLimits
  // NodeVolumeLimits from 1.37: a CSIDriver may require its driver on the
  // node (MissingCsiDriver).
  bool csi_drivers_required = false;
  VolumeBindingFilter binding;  // VolumeBinding
  VolumeTopology zone;          // VolumeZone
};

// Runs the volume plugins' pre-filters in kube-scheduler's order
// (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone) under
// `kube`'s rules: the first rejection, which holds for every node, or ""
// with *out filled.
std::string PreFilterVolumes(const Pod& pod, const VolumeCatalog& catalog,
                             KubeVersion kube, VolumeFilters* out);

// Pre-filter: the per-pod part of filtering, computed once per decision.
struct PodFilter {
  const Pod* pod = nullptr;
  Resources requests;                     // PodRequests(pod, kube)
  std::vector<ContainerPort> host_ports;  // PodHostPorts(pod)
  bool tolerates_unschedulable = false;
  // Node selector, required node affinity or a required addedAffinity.
  bool has_node_affinity = false;
  // The configuration's addedAffinity, required terms; null when none.
  const std::vector<NodeSelectorTerm>* added_affinity = nullptr;
  // PodTopologySpread's and InterPodAffinity's pre-filters; null when the
  // plugin is skipped.
  const PodTopologySpreadFilter* topology_spread = nullptr;
  const InterPodAffinityFilter* pod_affinity = nullptr;
  // The volume plugins'; null for a pod without claims or inline disks.
  const VolumeFilters* volumes = nullptr;
  // NodeDeclaredFeatures: the node features (model/node_features.h) the
  // pod needs under the release's rules; 0 skips the plugin.
  uint32_t required_features = 0;
  // From 1.36, bit i: requests.scalar[i] is an extended resource a
  // DeviceClass provides (SetDeviceClassResources), left to dynamic
  // resource allocation on a node that does not advertise it.
  uint64_t device_scalars = 0;
  const DeviceClassResources* device_resources = nullptr;
};

// `kube`: the release whose rules compute the pod's requests
// (ScoringConfig::kube). `added_affinity`: the configuration's
// addedAffinity required terms, or null.
PodFilter MakePodFilter(
    const Pod& pod, KubeVersion kube,
    const std::vector<NodeSelectorTerm>* added_affinity = nullptr);

// NodeResourcesFit from 1.36 (DRAExtendedResource): marks the requests of
// `f` that `classes` (which must outlive `f`) provide. Before 1.36 such a
// name is an extended resource like any other.
void SetDeviceClassResources(const DeviceClassResources* classes,
                             KubeVersion kube, PodFilter* f);

struct NodeCheck {
  uint32_t failures = 0;  // FilterFailure bits; 0 = feasible
  uint64_t scalars = 0;  // bit i: requests.scalar[i] is insufficient
  int metric = -1;       // a kFailMetric bit: the metric's index
  // kFailCsiDriverMissing: the index of the volume in VolumeFilters::csi
  // whose driver is missing.
  int csi_driver = -1;
  // kFailDeviceClassResource: bit i: requests.scalar[i] could only be
  // allocated from a DeviceClass on the node.
  uint64_t device_scalars = 0;
  // kFailMetricAbove or kFailMetricBelow: the bound the value crossed (the
  // node's for this pod, filter_bounds.h) and where it came from.
  double metric_bound = 0;
  BoundOrigin bound_origin;
  bool feasible() const { return failures == 0; }
};

// The exact filter for node i of `nodes` (the nodes the pod-to-pod plugins
// of `filter` were built over).
NodeCheck CheckNode(const PodFilter& filter, const std::vector<NodeInfo>& nodes,
                    size_t i);
// The same with `info` standing for node i: the node with pods added or
// removed (nominated pods, preemption victims), whose pre-filter states
// were updated alike (the plugins' AddPod).
NodeCheck CheckNode(const PodFilter& filter, const NodeInfo& info, size_t i);

// The reason for a metric failure bit (kFailMissingMetric,
// kFailMetricAbove, kFailMetricBelow) of the metric `name` whose value
// crossed `bound` (the bound that applied on the node, for the pod):
// "node(s) had no usable value for metric cpu", "node(s) had cpu above
// 0.9", "node(s) had cpu below 0.1".
std::string MetricReason(absl::string_view name, uint32_t bit, double bound);

// The reasons of one node, as kube-scheduler words them, in the order they
// are found. `metrics` names metrics for the kFailMetric bits.
std::vector<std::string> FailureReasons(
    const PodFilter& filter, const NodeCheck& check,
    const std::vector<MetricTerm>* metrics = nullptr);

// Counts reasons over the rejected nodes without building a string per
// node, then words the FailedScheduling message.
class FilterSummary {
 public:
  void Reset(const PodFilter* filter, const std::vector<MetricTerm>* metrics);
  void Add(const NodeCheck& check);

  // "0/N nodes are available: 3 Insufficient cpu, 2 node(s) were
  // unschedulable." Reasons are "COUNT REASON" strings sorted as strings,
  // as kube-scheduler sorts them; as there, nodes whose reasons read the
  // same are counted together (a metric's bound is part of its reason, so
  // nodes filtered at different bounds count apart). A message that would
  // reach 1024 bytes is cut after the last reason that fits and ends with
  // ", ...".
  std::string Message(int num_nodes) const;

 private:
  // Nodes a metric's filter removed: the metric index, the kFailMetric
  // bit, and the bound crossed (0 for kFailMissingMetric).
  struct MetricCount {
    int metric = -1;
    uint32_t bit = 0;
    double bound = 0;
    int count = 0;
  };

  const PodFilter* filter_ = nullptr;
  const std::vector<MetricTerm>* metrics_config_ = nullptr;
  int counts_[kNumFilterFailures] = {};
  std::vector<int> scalars_;  // by request index
  // kFailCsiDriverMissing: nodes by the driver missing there.
  std::vector<std::pair<std::string, int>> csi_drivers_;
  std::vector<int> device_scalars_;  // kFailDeviceClassResource, by request
  // One entry per (metric, bit, bound) seen; few: the bounds that applied.
  std::vector<MetricCount> metrics_;
};

// Pre-filter: constraints the pod requires that this scheduler does not
// implement (dynamic resource allocation's resource claims), as a
// sentence; empty when there are none. Such a pod is never placed.
std::string UnsupportedConstraints(const Pod& pod);

// kube-scheduler caps event messages; FilterSummary keeps under this.
inline constexpr size_t kMaxMessageBytes = 1024;

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_FILTER_H_
