// Topology spread constraints, and what the system default constraints need
// to know of the workloads that own or serve a pod.
//
// Plain values decoded by kube/ from spec.topologySpreadConstraints,
// metadata.ownerReferences and the Services, ReplicaSets, StatefulSets and
// ReplicationControllers of the cluster; read by
// scoring/plugins/pod_topology_spread. Thread-compatible.
#ifndef METRICS_SCHEDULER_MODEL_TOPOLOGY_SPREAD_H_
#define METRICS_SCHEDULER_MODEL_TOPOLOGY_SPREAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/pod_affinity.h"

namespace ms {

enum class UnsatisfiableAction { kDoNotSchedule, kScheduleAnyway };

enum class NodeInclusionPolicy { kHonor, kIgnore };

// One entry of spec.topologySpreadConstraints, as written.
struct TopologySpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  UnsatisfiableAction when_unsatisfiable = UnsatisfiableAction::kDoNotSchedule;
  std::optional<LabelSelector> label_selector;  // absent: selects nothing
  std::optional<int32_t> min_domains;           // absent: 1
  // Absent: Honor for node affinity, Ignore for taints.
  std::optional<NodeInclusionPolicy> node_affinity_policy;
  std::optional<NodeInclusionPolicy> node_taints_policy;
  std::vector<std::string> match_label_keys;

  friend bool operator==(const TopologySpreadConstraint&,
                         const TopologySpreadConstraint&) = default;
};

// The ownerReference of a pod that has controller: true.
struct ControllerRef {
  std::string api_version;  // "apps/v1", "v1", ...
  std::string kind;         // "ReplicaSet", ...
  std::string name;
  std::string uid;

  friend bool operator==(const ControllerRef&, const ControllerRef&) = default;
};

enum class WorkloadKind {
  kService,
  kReplicaSet,
  kStatefulSet,
  kReplicationController,
};
inline constexpr WorkloadKind kWorkloadKinds[] = {
    WorkloadKind::kService, WorkloadKind::kReplicaSet,
    WorkloadKind::kStatefulSet, WorkloadKind::kReplicationController};

// What the scheduler knows of a Service, ReplicaSet, StatefulSet or
// ReplicationController: its selector.
struct Workload {
  WorkloadKind kind = WorkloadKind::kService;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  // spec.selector; a Service's or ReplicationController's (a map) as
  // match_labels. Absent when the object has none.
  std::optional<LabelSelector> selector;

  friend bool operator==(const Workload&, const Workload&) = default;
};

// The selectors of the workloads in the cluster, from which kube-scheduler
// derives the selector of a pod's system default spread constraints
// (helper.DefaultSelector): the Services of the pod's namespace that select
// it, and the ReplicaSet, StatefulSet or ReplicationController that
// controls it.
struct WorkloadSelectors {
  // Keeps (or replaces) the workload's selector; Remove forgets it.
  void Upsert(const Workload& w);
  void Remove(WorkloadKind kind, const std::string& namespace_,
              const std::string& name);

  // By namespace, then Service name: spec.selector. Services without one
  // (or with an empty one) select nothing and add nothing, so are not kept.
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, Labels>>
      services;
  // By "namespace/name": spec.selector (absent when the object has none).
  absl::flat_hash_map<std::string, std::optional<LabelSelector>> replica_sets;
  absl::flat_hash_map<std::string, std::optional<LabelSelector>> stateful_sets;
  absl::flat_hash_map<std::string, Labels> replication_controllers;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_TOPOLOGY_SPREAD_H_
