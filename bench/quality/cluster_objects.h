// How the benchmark's pools, nodes and pods appear in the cluster: their
// names, labels and JSON (docs/quality.md, "One run").
//
// Pool "<trace>-<policy>" has the trace's nodes, each named
// "<pool>-<node>" and labelled quality.metrics-scheduler.io/pool=<pool>;
// every pod of the pool selects that label (spec.nodeSelector), so each
// scheduler, ours, kube-scheduler and the harness's, places it among the
// pool's nodes only. A pod is named "<pool>-<pod>".
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_CLUSTER_OBJECTS_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_CLUSTER_OBJECTS_H_

#include <string>

#include "bench/quality/load_model.h"

namespace ms::quality {

inline constexpr char kPoolLabel[] = "quality.metrics-scheduler.io/pool";

std::string PoolName(const std::string& trace, const std::string& policy);
std::string NodeName(const std::string& pool, const NodeSpec& node);
std::string PodName(const std::string& pool, const PodSpec& pod);

// The InternalIP of the `index`th node created by the benchmark:
// 10.200.(index / 250).(index % 250 + 1).
std::string NodeAddress(int index);

// The Node object (POST /api/v1/nodes) and its status (a strategic merge
// patch of /status): Ready, with the spec's cores and memory allocatable,
// room for 110 pods, and its InternalIP.
std::string NodeJson(const std::string& name, const std::string& pool);
std::string NodeStatusPatch(const NodeSpec& node, const std::string& name,
                            const std::string& address);

// The Pod object (POST /api/v1/namespaces/NS/pods): one container
// requesting the spec's CPU and memory, `scheduler` as its schedulerName,
// selecting its pool.
std::string PodJson(const std::string& name, const std::string& pool,
                    const std::string& scheduler, const PodSpec& pod);

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_CLUSTER_OBJECTS_H_
