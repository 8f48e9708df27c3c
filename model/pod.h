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

struct ContainerPort {
  int32_t host_port = 0;  // 0: no host port
  std::string protocol = "TCP";
  std::string host_ip;  // empty means 0.0.0.0

  friend bool operator==(const ContainerPort&, const ContainerPort&) = default;
};

struct Container {
  std::string name;
  Resources requests;
  std::vector<ContainerPort> ports;
  // For init containers: restartPolicy Always makes it a sidecar, whose
  // requests count for the pod's whole life.
  bool restart_always = false;

  friend bool operator==(const Container&, const Container&) = default;
};

// What the kubelet reports of a container's resources
// (status.containerStatuses[] and initContainerStatuses[]). After an
// in-place resize they may differ from the spec; kube-scheduler charges the
// larger of the three (see PodRequests).
struct ContainerResourceStatus {
  std::string name;
  std::optional<Resources> allocated;  // allocatedResources
  std::optional<Resources> actual;     // resources.requests

  friend bool operator==(const ContainerResourceStatus&,
                         const ContainerResourceStatus&) = default;
};

struct Pod {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  Labels labels;
  std::string scheduler_name;
  std::string node_name;           // spec.nodeName; empty while unbound
  bool deleting = false;           // metadata.deletionTimestamp is set
  PodPhase phase = PodPhase::kPending;
  int32_t priority = 0;
  int64_t creation_time_ms = 0;    // metadata.creationTimestamp, epoch ms
  std::map<std::string, std::string> node_selector;
  // spec.affinity.nodeAffinity.requiredDuringScheduling...: ORed terms.
  // Absent when the pod has no required node affinity.
  std::optional<std::vector<NodeSelectorTerm>> required_node_affinity;
  PodAffinityRules pod_affinity;       // spec.affinity.podAffinity
  PodAffinityRules pod_anti_affinity;  // spec.affinity.podAntiAffinity
  std::vector<TopologySpreadConstraint> topology_spread;
  std::optional<ControllerRef> controller;  // the controlling ownerReference
  std::vector<Toleration> tolerations;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  Resources overhead;  // spec.overhead
  // Status of containers that report resources (in-place resize), and
  // whether a PodResizePending condition says the resize is Infeasible.
  std::vector<ContainerResourceStatus> container_statuses;
  bool resize_infeasible = false;

  // Constraints not implemented yet; a pod with any of them is reported
  // unschedulable, naming the constraint.
  bool has_claim_volumes = false;      // persistentVolumeClaim / ephemeral

  // "namespace/name", the key queues and logs use.
  std::string Key() const { return namespace_ + "/" + name; }

  friend bool operator==(const Pod&, const Pod&) = default;
};

// The pod's effective requests, as kube-scheduler (v1.34) computes them:
// max(sum of containers + sum of sidecar init containers,
//     each regular init container + the sidecars started before it)
// plus the pod overhead. After an in-place resize, the larger of that sum
// over the spec, over what the kubelet allocated and over what it actuated
// (container_statuses); the spec is left out while the resize is
// infeasible. Sums saturate. `pods` is set to 1.
Resources PodRequests(const Pod& pod);

// Requests used for scoring: like PodRequests, but a container that requests
// no cpu counts 100m and one that requests no memory counts 200Mi
// (kube-scheduler's non-zero defaults), so empty pods still spread.
Resources PodNonZeroRequests(const Pod& pod);

// The host ports the pod's containers (and init containers) claim.
std::vector<ContainerPort> PodHostPorts(const Pod& pod);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_POD_H_
