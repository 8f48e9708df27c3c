// What the load model exports for Prometheus to scrape: per node and per
// running pod, the counters real exporters would keep, in the text
// exposition format (docs/quality.md, "What Prometheus scrapes").
//
// Per node (labels: `node` = the node's name, `instance` = "ADDRESS:9100"
// for node-exporter's series, which name a node by its address):
//   node_cpu_busy_seconds_total{node}   core-seconds busy (a counter)
//   node_cpu_cores{node}                the node's cores (a gauge)
//   node_cpu_seconds_total{instance,cpu,mode="idle"|"user"}
//                                       node-exporter's, the busy time
//                                       spread evenly over the cores
//   http_request_duration_seconds_bucket{node,le}, _sum, _count
//   http_requests_total{node,code="200"|"500"}
//   node_disk_{reads,writes}_completed_total{instance}
//   node_disk_{read,write}_time_seconds_total{instance}
// Per running pod, as cAdvisor names its container's series:
//   container_cpu_usage_seconds_total{namespace,pod,container="app"}
//                                       core-seconds of CPU time the pod
//                                       used (PodCpuCores, integrated);
//                                       gone once the pod has ended
// so the queries users write (rate(...[2m]), histogram_quantile,
// sum by (namespace, pod) (rate(container_cpu_usage_seconds_total
// {container!=""}[1m]))) work on them unchanged.
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_EXPORTER_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_EXPORTER_H_

#include <array>
#include <string>
#include <vector>

#include "bench/quality/load_model.h"

namespace ms::quality {

// The request-duration histogram's upper bounds, seconds (+Inf is added).
inline constexpr std::array<double, 11> kLatencyBuckets = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

// Disk operations per second per IO unit of load.
inline constexpr double kDiskOpsPerIoUnit = 10;

// One node's counters since the start of the run.
struct NodeCounters {
  double seconds = 0;  // since the start
  double cpu_busy_seconds = 0;
  double requests = 0;
  double request_seconds = 0;                            // the histogram's _sum
  std::array<double, kLatencyBuckets.size()> buckets{};  // cumulative, <= le
  double errors = 0;
  double disk_ops = 0;
  double disk_seconds = 0;
};

// Adds `dt` seconds of `state` (a node of `cores` cores) to `counters`.
// Request times are exponential with the state's mean (an M/M/1 queue), so
// each bucket gains its share of the requests; each IO unit of load makes
// kDiskOpsPerIoUnit operations a second, each taking the state's IO
// latency.
void Accumulate(const NodeState& state, double cores, double dt,
                NodeCounters& counters);

// A node as exported.
struct ExportedNode {
  std::string name;
  std::string address;  // its InternalIP
  double cores = 0;
  NodeCounters counters;
};

// A running pod as exported: its one container's CPU time.
struct ExportedPod {
  std::string pod_namespace;
  std::string name;
  double cpu_seconds = 0;  // since it started
};

// The exposition text of `nodes` and `pods` (those running now: a pod left
// out has no series, as cAdvisor drops an ended pod's).
std::string RenderExposition(const std::vector<ExportedNode>& nodes,
                             const std::vector<ExportedPod>& pods);

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_EXPORTER_H_
