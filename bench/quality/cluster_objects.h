// How the benchmark's pools, nodes and pods appear in the cluster: their
// names, labels and JSON (docs/quality.md, "One run").
//
// Pool "<trace>-<policy>" has the trace's nodes, each named
// "<pool>-<node>" and labelled quality.metrics-scheduler.io/pool=<pool>;
// every pod of the pool selects that label (spec.nodeSelector), so each
// scheduler, ours, kube-scheduler and the harness's, places it among the
// pool's nodes only. A pod is named "<pool>-<pod>", in namespace
// kPodNamespace.
//
// A pod with an owner in the trace is controlled by a ConfigMap named
// "<pool>-<owner>" (so pools never share siblings): a real object, which
// kube-controller-manager's garbage collector finds, so it leaves the pod
// alone, and which no controller manages pods for, so none adopts,
// releases or deletes it (a ReplicaSet, Job or StatefulSet would).
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_CLUSTER_OBJECTS_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_CLUSTER_OBJECTS_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "bench/quality/load_model.h"

namespace ms::quality {

inline constexpr char kPoolLabel[] = "quality.metrics-scheduler.io/pool";
inline constexpr char kPodNamespace[] = "quality";

std::string PoolName(const std::string& trace, const std::string& policy);
std::string NodeName(const std::string& pool, const NodeSpec& node);
std::string PodName(const std::string& pool, const PodSpec& pod);
// The owner object of the pool's pods whose trace owner is `owner`.
std::string OwnerName(const std::string& pool, const std::string& owner);

// The InternalIP of the `index`th node created by the benchmark:
// 10.200.(index / 250).(index % 250 + 1).
std::string NodeAddress(int index);

// The Node object (POST /api/v1/nodes) and its status (a strategic merge
// patch of /status): Ready, with the spec's cores and memory allocatable,
// room for 110 pods, and its InternalIP.
std::string NodeJson(const std::string& name, const std::string& pool);
std::string NodeStatusPatch(const NodeSpec& node, const std::string& name,
                            const std::string& address);

// The owner object (POST /api/v1/namespaces/NS/configmaps), labelled with
// its pool.
std::string OwnerJson(const std::string& name, const std::string& pool);

// The owner object as a pod's controlling ownerReference names it.
struct OwnerRef {
  std::string name;
  std::string uid;
};

// metadata.uid of the object in `json` (an apiserver's answer);
// InvalidArgument when there is none.
absl::StatusOr<std::string> ObjectUid(absl::string_view json);

// The Pod object (POST /api/v1/namespaces/NS/pods): one container, "app",
// requesting the spec's CPU and memory, `scheduler` as its schedulerName,
// selecting its pool; controlled by `owner` when there is one.
std::string PodJson(const std::string& name, const std::string& pool,
                    const std::string& scheduler, const PodSpec& pod,
                    const std::optional<OwnerRef>& owner);

// What a kubelet writes once it has started the pod, in the smallest form
// the schedulers read (a JSON merge patch of
// /api/v1/namespaces/NS/pods/NAME/status): phase Running, startTime `start`
// and the conditions PodScheduled and Ready, both True. startTime is RFC
// 3339 in UTC, whole seconds truncated, as metav1.Time serialises it
// ("2026-11-28T07:01:02Z"). PodScheduled is repeated because a merge patch
// replaces a list whole: without it the patch would drop the condition the
// binding set (a kubelet's strategic merge patch merges conditions by type).
std::string PodRunningPatch(absl::Time start);

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_CLUSTER_OBJECTS_H_
