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

#include "model/node.h"
#include "model/pod_affinity.h"
#include "model/topology_spread.h"
#include "model/resources.h"

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
  std::vector<ContainerPort> ports;
  // For init containers: restartPolicy Always makes it a sidecar, whose
  // requests count for the pod's whole life.
  bool restart_always = false;

  friend bool operator==(const Container&, const Container&) = default;
};

// What the kubelet reports of a container's resources
// (status.containerStatuses[] and initContainerStatuses[]). After an
// in-place resize they may differ from the spec; kube-scheduler charges the
// largest of the three (see PodRequests).
struct ContainerResourceStatus {
  std::string name;
  std::optional<Resources> allocated;  // allocatedResources
  // resources.requests; present (maybe empty) whenever status.resources
  // is, which is when kube-scheduler reads the status at all.
  std::optional<Resources> actual;
  RequestNames named;  // which of cpu and memory either list names

  friend bool operator==(const ContainerResourceStatus&,
                         const ContainerResourceStatus&) = default;
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
  // Status of containers that report resources (in-place resize), and
  // whether a PodResizePending condition says the resize is Infeasible.
  std::vector<ContainerResourceStatus> container_statuses;
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
  // spec.resourceClaims (dynamic resource allocation): not implemented; such
  // a pod is reported unschedulable, naming it.
  bool has_resource_claims = false;

  // "namespace/name", the key queues and logs use.
  std::string Key() const { return namespace_ + "/" + name; }

  friend bool operator==(const Pod&, const Pod&) = default;
};

// The pod's effective requests, as kube-scheduler v1.34 computes them
// (component-helpers' PodRequests with status resources and pod-level
// resources on, their defaults):
//   max(sum of containers + sum of sidecar init containers,
//       each regular init container + the sidecars started before it),
// where a container (or sidecar) whose status reports resources (after an
// in-place resize) counts the largest of its spec, allocated and actual
// requests, per resource (only the last two while the resize is
// infeasible); then each of cpu, memory and hugepages-* that the pod sets
// at pod level replaces that sum; plus the pod overhead. Sums saturate.
// `pods` is set to 1.
Resources PodRequests(const Pod& pod);

// What a node's non-zero requested sum charges for a placed pod (its
// PodInfo's Non0CPU and Non0Mem): as PodRequests, but a container that
// names no cpu counts 100m and one that names no memory counts 200Mi, so
// empty pods still spread. With pod-level requests the defaults apply
// only to a resource that neither the pod nor any container names.
Resources PodNonZeroRequests(const Pod& pod);

// What leastAllocated charges for the incoming pod: the containers' sum
// with the 100m/200Mi defaults for every container that does not name cpu
// or memory, plus the overhead; pod-level requests are NOT read.
// kube-scheduler v1.34's NodeResourcesFit builds its scorer without the
// PodLevelResources (and in-place resize) features, so its leastAllocated
// ignores them, while NodeResourcesBalancedAllocation (PodRequests) and the
// fit filter read them; this keeps that.
Resources PodScoringRequests(const Pod& pod);

// The host ports the pod claims: its containers' and its sidecar init
// containers' (regular init containers have exited before the pod runs).
std::vector<ContainerPort> PodHostPorts(const Pod& pod);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_POD_H_
