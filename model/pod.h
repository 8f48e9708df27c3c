// Pod: what the scheduler knows of a Kubernetes Pod.
//
// A plain value decoded by kube/ and read by scoring/ and scheduler/. Only the
// fields that placement needs are kept; constraints this scheduler cannot
// honour yet are recorded as flags so that such a pod is never placed as if
// they were absent. Thread-compatible.
#ifndef METRICS_SCHEDULER_MODEL_POD_H_
#define METRICS_SCHEDULER_MODEL_POD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/kube_version.h"
#include "model/node.h"
#include "model/pod_affinity.h"
#include "model/resources.h"
#include "model/topology_spread.h"

namespace ms {

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };

enum class TolerationOperator { kEqual, kExists };

struct Toleration {
  std::string key;  // empty with kExists: tolerates every taint
  TolerationOperator op = TolerationOperator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // empty: every effect

  friend bool operator==(const Toleration&, const Toleration&) = default;
};

enum class SelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

struct NodeSelectorRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kIn;
  std::vector<std::string> values;

  friend bool operator==(const NodeSelectorRequirement&,
                         const NodeSelectorRequirement&) = default;
};

// One term of requiredDuringSchedulingIgnoredDuringExecution: all its
// requirements must hold. Terms are ORed.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;  // on node labels
  std::vector<NodeSelectorRequirement> match_fields;  // only metadata.name

  friend bool operator==(const NodeSelectorTerm&,
                         const NodeSelectorTerm&) = default;
};

// One term of preferredDuringSchedulingIgnoredDuringExecution: `weight`
// (1-100) counts for every node the preference matches.
struct PreferredNodeTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;

  friend bool operator==(const PreferredNodeTerm&,
                         const PreferredNodeTerm&) = default;
};

struct ContainerPort {
  int32_t host_port = 0;  // 0: no host port
  std::string protocol = "TCP";
  std::string host_ip;  // empty means 0.0.0.0

  friend bool operator==(const ContainerPort&, const ContainerPort&) = default;
};

// Which of cpu and memory a requests list names, even as "0". The non-zero
// defaults kube-scheduler scores with (100m, 200Mi) replace only amounts no
// list names; a non-zero amount counts as named whatever these say.
struct RequestNames {
  bool cpu = false;
  bool memory = false;

  friend bool operator==(const RequestNames&, const RequestNames&) = default;
};

struct Container {
  std::string name;
  std::string image;
  Resources requests;
  RequestNames named;  // which of cpu and memory `requests` names
  Resources limits;    // resources.limits
  std::vector<ContainerPort> ports;
  // For init containers: restartPolicy Always makes it a sidecar, whose
  // requests count for the pod's whole life.
  bool restart_always = false;

  friend bool operator==(const Container&, const Container&) = default;
};

// What the kubelet reports of a container's resources
// (status.containerStatuses[] and initContainerStatuses[]). After an
// in-place resize they may differ from the spec; kube-scheduler charges the
// largest of the three (see PodRequests for which release reads what).
// Kept when the status has allocatedResources or resources.
struct ContainerResourceStatus {
  std::string name;
  std::optional<Resources> allocated;  // allocatedResources
  std::optional<Resources> actual;     // resources.requests
  RequestNames allocated_named;        // which of cpu and memory each names
  RequestNames actual_named;
  // resources is set but without requests (limits only): 1.34 to 1.36 read
  // the status then, as if `actual` were empty; 1.37 takes `allocated` (or
  // the spec) for what is actuated.
  bool resources_without_requests = false;

  // status.resources is set (kube-scheduler 1.34 to 1.36 read a container's
  // status only then).
  bool reports_resources() const {
    return actual.has_value() || resources_without_requests;
  }

  friend bool operator==(const ContainerResourceStatus&,
                         const ContainerResourceStatus&) = default;
};

// What the kubelet reports of the whole pod's resources:
// status.allocatedResources (the pod's requests as the kubelet admitted
// them, its overhead included) and status.resources.requests (what its
// cgroup has). Kubelets with InPlacePodLevelResourcesVerticalScaling (on
// by default from 1.36) report both for every pod; older ones neither.
struct PodResourceStatus {
  std::optional<Resources> allocated;  // status.allocatedResources
  std::optional<Resources> actual;     // status.resources.requests
  RequestNames allocated_named;        // which of cpu and memory each names
  RequestNames actual_named;
  // status.resources is set but without requests.
  bool resources_without_requests = false;

  // status.resources is set.
  bool reports_resources() const {
    return actual.has_value() || resources_without_requests;
  }

  friend bool operator==(const PodResourceStatus&,
                         const PodResourceStatus&) = default;
};

// A claim a pod's spec.volumes names: a persistentVolumeClaim volume, or a
// generic ephemeral volume (whose claim is "<pod name>-<volume name>",
// created for the pod by the ephemeral volume controller).
struct PodClaim {
  std::string name;  // the PersistentVolumeClaim's name, in the pod's namespace
  bool ephemeral = false;

  friend bool operator==(const PodClaim&, const PodClaim&) = default;
};

// An in-tree disk written inline in a pod's spec.volumes, of the kinds
// that two pods on one node may not share (kube-scheduler's
// VolumeRestrictions): gcePersistentDisk (pdName), awsElasticBlockStore
// (volumeID), iscsi (iqn) and rbd (pool and image, on any shared monitor).
struct InlineDisk {
  enum class Kind : uint8_t { kGcePersistentDisk, kAwsElasticBlockStore, kIscsi, kRbd };
  Kind kind = Kind::kGcePersistentDisk;
  std::string id;                     // pdName, volumeID, iqn; rbd: image
  std::string pool;                   // rbd
  std::vector<std::string> monitors;  // rbd
  bool read_only = false;

  friend bool operator==(const InlineDisk&, const InlineDisk&) = default;
};

struct Pod {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  Labels labels;
  std::string scheduler_name;
  std::string node_name;           // spec.nodeName; empty while unbound
  // status.nominatedNodeName: where a preemption made room for this pod.
  std::string nominated_node_name;
  // spec.schedulingGates is not empty: the pod waits, unattempted, until
  // its gates are removed.
  bool scheduling_gated = false;
  bool deleting = false;           // metadata.deletionTimestamp is set
  // Its first DisruptionTarget condition is True with reason
  // PreemptionByScheduler: a scheduler's preemption is evicting it.
  bool preempted = false;
  PodPhase phase = PodPhase::kPending;
  int32_t priority = 0;
  // spec.preemptionPolicy is Never: it waits rather than evict others.
  bool never_preempts = false;
  int64_t creation_time_ms = 0;    // metadata.creationTimestamp, epoch ms
  int64_t start_time_ms = 0;       // status.startTime, epoch ms; 0: not set
  // Its annotations estimate.metrics-scheduler.io/<metric>, by metric name:
  // what it adds to that metric before a sample shows it (model/metrics.h).
  std::map<std::string, std::string> estimates;
  std::map<std::string, std::string> node_selector;
  // spec.affinity.nodeAffinity.requiredDuringScheduling...: ORed terms.
  // Absent when the pod has no required node affinity.
  std::optional<std::vector<NodeSelectorTerm>> required_node_affinity;
  std::vector<PreferredNodeTerm> preferred_node_affinity;
  PodAffinityRules pod_affinity;       // spec.affinity.podAffinity
  PodAffinityRules pod_anti_affinity;  // spec.affinity.podAntiAffinity
  std::vector<TopologySpreadConstraint> topology_spread;
  std::optional<ControllerRef> controller;  // the controlling ownerReference
  std::vector<Toleration> tolerations;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  Resources overhead;  // spec.overhead
  // spec.resources.requests (pod-level resources): only cpu, memory and
  // hugepages-*, the amounts kube-scheduler takes instead of the
  // containers' sum. Absent when the pod names none of them.
  std::optional<Resources> pod_requests;
  RequestNames pod_requests_named;
  Resources pod_limits;  // spec.resources.limits (pod-level resources)
  // Status of containers and init containers that report resources
  // (in-place resize), of the whole pod, and whether a PodResizePending
  // condition says the resize is Infeasible.
  std::vector<ContainerResourceStatus> container_statuses;
  PodResourceStatus resource_status;
  bool resize_infeasible = false;

  // The PersistentVolumeClaims its volumes name, in spec.volumes order.
  std::vector<PodClaim> claims;
  std::vector<InlineDisk> inline_disks;
  // An emptyDir or hostPath volume: data on the node, lost when the pod
  // moves (rebalancing leaves such pods unless told otherwise).
  bool local_storage = false;
  // A mirror pod: the apiserver's copy of a static pod the kubelet runs
  // from a file (annotation kubernetes.io/config.mirror); evicting it does
  // nothing.
  bool mirror = false;
  // The images of its image volumes (spec.volumes[].image.reference),
  // which ImageLocality counts from Kubernetes 1.36.
  std::vector<std::string> image_volumes;
  // What its spec needs of a node's declared features
  // (model/node_features.h bits): NodeDeclaredFeatures.
  uint32_t required_features = 0;
  // spec.resourceClaims (dynamic resource allocation): not implemented; such
  // a pod is reported unschedulable, naming it.
  bool has_resource_claims = false;

  // "namespace/name", the key queues and logs use.
  std::string Key() const { return namespace_ + "/" + name; }

  friend bool operator==(const Pod&, const Pod&) = default;
};

// The pod's effective requests, as kube-scheduler of release `kube`
// computes them for a placed pod and for NodeResourcesBalancedAllocation
// (component-helpers' PodRequests with the default features: status
// resources, pod-level resources, and from 1.36 pod-level in-place resize).
// Every release starts from the sidecar KEP's sum of the containers,
//   max(sum of containers + sum of sidecar init containers,
//       each regular init container + the sidecars started before it),
// ends with the pod-level requests replacing it for cpu, memory and
// hugepages-*, and adds the pod overhead. They differ in the statuses read:
//   1.34, 1.35: a container or sidecar whose status reports resources counts
//     the largest of its spec, allocated and actual requests per resource
//     (spec left out while the resize is infeasible), then the sum is
//     taken; regular init containers count their spec; the pod-level
//     requests are the spec's.
//   1.36: as 1.35, but once status.resources is set each resource the pod
//     sets at pod level takes max(spec, status.resources.requests,
//     status.allocatedResources) (0 when an infeasible resize leaves none).
//   1.37: the largest, per resource, of three sums (each the sidecar KEP's,
//     over every container, regular init ones included): of the specs, of
//     what is allocated (allocatedResources, else the spec) and of what is
//     actuated (resources.requests, else allocatedResources, else the
//     spec); an infeasible resize leaves the specs out. When the pod's
//     status has allocatedResources and resources.requests, they stand for
//     the last two sums. Pod-level: every pod-level resource that the
//     spec, status.resources.requests or status.allocatedResources names
//     takes the largest of the three (the spec left out while infeasible).
// E.g. containers A (spec 1 cpu, actual 2) and B (spec 2, actual 1) cost
// 2 + 2 = 4 cpu up to 1.36 and max(1 + 2, 2 + 1) = 3 in 1.37. Sums
// saturate. `pods` is set to 1.
Resources PodRequests(const Pod& pod, KubeVersion kube);

// What a node's non-zero requested sum charges for a placed pod (its
// PodInfo's Non0CPU and Non0Mem): as PodRequests, but a container that
// names no cpu counts 100m and one that names no memory counts 200Mi, so
// empty pods still spread (in 1.37 in each of the three sums; the pod's
// own status lists take no default). With pod-level requests the defaults
// apply only to a resource that nothing PodRequests read names.
Resources PodNonZeroRequests(const Pod& pod, KubeVersion kube);

// What leastAllocated charges for the incoming pod: the containers' specs
// summed with the 100m/200Mi defaults for every container that does not
// name cpu or memory, plus the overhead; neither pod-level requests nor
// statuses are read. kube-scheduler's NodeResourcesFit (1.34 to 1.37)
// builds its scorer without the PodLevelResources and in-place resize
// features, so its leastAllocated ignores them, while
// NodeResourcesBalancedAllocation (PodRequests) and the fit filter read
// pod-level requests; this keeps that.
Resources PodScoringRequests(const Pod& pod);

// A pod's CPU and memory limits (an estimate from limits reads them);
// 0 where it has none.
struct CpuMemoryLimits {
  int64_t milli_cpu = 0;
  int64_t memory = 0;  // bytes

  friend bool operator==(const CpuMemoryLimits&,
                         const CpuMemoryLimits&) = default;
};

// The limits of the pod's cgroup, as the kubelet sets them
// (ResourceConfigForPod): per resource, the pod-level limit when set;
// else, when every container and init container sets a non-zero limit,
// the sidecar KEP's sum of them (as PodRequests); plus the overhead. 0
// when some container sets none: the pod may use the whole node.
CpuMemoryLimits PodLimits(const Pod& pod);

// The host ports the pod claims: its containers' and its sidecar init
// containers' (regular init containers have exited before the pod runs).
std::vector<ContainerPort> PodHostPorts(const Pod& pod);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_POD_H_
