// Explain: `metrics-scheduler explain`, where a pod would go and why,
// without binding anything.
//
// A one-shot run of one scheduling cycle, from the live cluster and metrics:
// list the nodes and the pods on them through kube/, build a ClusterState,
// fetch every metric of the pod's profile (by its schedulerName; the first
// profile for a pod of another scheduler) once through a MetricsCache
// (RefreshAll), decide with explain on, and print the per-node score table
// (FormatExplanation): each term's raw value, normalised score and weight,
// the total, and the filter reason of nodes that do not fit.
//
//   absl::StatusOr<ExplainTarget> target = ParseExplainTarget("shop/web-1");
//   absl::StatusOr<std::string> text =
//       Explain(config, client, source.get(), *target, /*seed=*/0);
//   if (text.ok()) std::cout << *text;
//
// What it cannot know: the running scheduler's recent placements (the herd
// term counts none) and its pods assumed but not yet bound.
//
// Thread-compatible; each call builds its own state.
#ifndef METRICS_SCHEDULER_SCHEDULER_CMD_EXPLAIN_H_
#define METRICS_SCHEDULER_SCHEDULER_CMD_EXPLAIN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "kube/client.h"
#include "metrics/metrics_source.h"
#include "model/disruption_budget.h"
#include "model/kube_version.h"
#include "model/node.h"
#include "model/pod.h"
#include "scoring/preemption.h"

namespace ms {

// The pod to explain, as named on the command line.
struct ExplainTarget {
  // A pod in the cluster ("NAMESPACE/NAME", or "NAME" in `default`)...
  std::string pod_namespace;
  std::string pod_name;
  // ...or a hypothetical one, from a manifest file.
  std::optional<Pod> manifest;
};

// `arg` is a manifest file (YAML or JSON, "-" for stdin) when such a file
// exists, else NAMESPACE/NAME or NAME. InvalidArgument for a file that
// holds no decodable pod, or a name that is neither.
absl::StatusOr<ExplainTarget> ParseExplainTarget(const std::string& arg);

// What explain reads of the cluster.
struct ClusterView {
  // The release whose kube-scheduler rules to follow (charging the pods on
  // nodes, scoring): the cluster's, from its /version.
  KubeVersion kube;
  std::vector<Node> nodes;
  std::vector<Pod> assigned;  // pods on nodes, neither Succeeded nor Failed
  // Unassigned pods with status.nominatedNodeName.
  std::vector<Pod> nominated;
  std::vector<PodDisruptionBudget> budgets;
  std::vector<Namespace> namespaces;
  std::vector<Workload> workloads;  // Services, ReplicaSets, ...
  // For the volume plugins.
  std::vector<PersistentVolumeClaim> claims;
  std::vector<PersistentVolume> volumes;
  std::vector<StorageClass> storage_classes;
  std::vector<CsiNode> csi_nodes;
  std::vector<CsiDriver> csi_drivers;
  std::vector<CsiStorageCapacity> capacities;
  std::vector<DeviceClass> device_classes;
};

// Asks the cluster's release, and lists the nodes, the pods assigned to them,
// the namespaces, the workloads whose selectors the default topology spread
// reads, and the storage objects the volume plugins read. Nodes keep the
// annotations `config`'s node-attribute metrics and metric filters read
// (NodeAnnotationKeys). Errors as KubeClient returns them (Unavailable
// when the apiserver cannot be reached).
absl::StatusOr<ClusterView> ReadCluster(kube::KubeClient& client,
                                        const Config& config);

// Decides where `pod` would go on `cluster` with `config`'s scoring and
// metrics fetched once from `source` (may be null when no metric is
// configured), and returns the text explain prints: a header (the pod, its
// requests, how many nodes have data per metric, any fetch error), the
// table, and the best node. The pod's own charge is left out when it is
// already on a node. Unavailable when metrics are configured and none
// could be fetched (the backend cannot be reached).
// What preemption would take, for a person: "preemption would help: on n1,
// evicting 1 pod(s): ns/a (priority 0)", or why it would not.
std::string FormatPreemption(const Preemption& preemption);

absl::StatusOr<std::string> ExplainPlacement(const Config& config,
                                             const ClusterView& cluster,
                                             const Pod& pod,
                                             metrics::MetricsSource* source,
                                             uint64_t seed);

// `explain --rebalance`: what a rebalancing round would do now on
// `cluster` with `config.rebalance`, the metrics fetched once from
// `source`, writing nothing. A node counts as hot when its one sample now
// is above its threshold (the scheduler waits for `samples` in a row);
// for each such node, the pods that would move and where, and those that
// would stay and why (docs/rebalance.md). FailedPrecondition when no `hot`
// metric is configured; Unavailable as ExplainPlacement.
absl::StatusOr<std::string> ExplainRebalancePlan(const Config& config,
                                                 const ClusterView& cluster,
                                                 metrics::MetricsSource* source,
                                                 uint64_t seed);

// The whole `explain --rebalance`: ReadCluster, ExplainRebalancePlan.
absl::StatusOr<std::string> ExplainRebalance(const Config& config,
                                             kube::KubeClient& client,
                                             metrics::MetricsSource* source,
                                             uint64_t seed);

// The whole command: the target's pod (GetPod, or the manifest with
// namespace `default` when it has none), ReadCluster, ExplainPlacement.
// NotFound when the pod does not exist; otherwise as those.
absl::StatusOr<std::string> Explain(const Config& config,
                                    kube::KubeClient& client,
                                    metrics::MetricsSource* source,
                                    const ExplainTarget& target,
                                    uint64_t seed);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CMD_EXPLAIN_H_
