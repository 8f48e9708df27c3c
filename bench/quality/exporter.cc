#include "bench/quality/exporter.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/quality/number_text.h"

namespace ms::quality {

void Accumulate(const NodeState& state, double cores, double dt,
                NodeCounters& counters) {
  counters.seconds += dt;
  counters.cpu_busy_seconds += state.cpu_busy * cores * dt;
  const double requests = state.request_rate * dt;
  counters.requests += requests;
  counters.request_seconds += requests * state.mean_latency_s;
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    counters.buckets[i] +=
        requests * LatencyCdf(state.mean_latency_s, kLatencyBuckets[i]);
  }
  counters.errors += requests * state.error_ratio;
  const double ops = state.io_units * kDiskOpsPerIoUnit * dt;
  counters.disk_ops += ops;
  counters.disk_seconds += ops * state.io_latency_s;
}

namespace {

void Type(std::string& out, const char* name, const char* type,
          const char* help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ",
                  type, "\n");
}

// cAdvisor's series, one per container; the pods have one, "app" (as
// PodJson names it).
void RenderPods(std::string& out, const std::vector<ExportedPod>& pods) {
  Type(out, "container_cpu_usage_seconds_total", "counter",
       "Cumulative cpu time consumed in seconds.");
  for (const ExportedPod& p : pods) {
    absl::StrAppend(&out, "container_cpu_usage_seconds_total{namespace=\"",
                    p.pod_namespace, "\",pod=\"", p.name,
                    "\",container=\"app\"} ", NumberText(p.cpu_seconds), "\n");
  }
}

}  // namespace

std::string RenderExposition(const std::vector<ExportedNode>& nodes,
                             const std::vector<ExportedPod>& pods) {
  std::string out;
  Type(out, "node_cpu_busy_seconds_total", "counter",
       "Core-seconds the node's CPUs were busy.");
  for (const ExportedNode& n : nodes) {
    absl::StrAppend(&out, "node_cpu_busy_seconds_total{node=\"", n.name, "\"} ",
                    NumberText(n.counters.cpu_busy_seconds), "\n");
  }
  Type(out, "node_cpu_cores", "gauge", "The node's allocatable cores.");
  for (const ExportedNode& n : nodes) {
    absl::StrAppend(&out, "node_cpu_cores{node=\"", n.name, "\"} ",
                    NumberText(n.cores), "\n");
  }
  Type(out, "node_cpu_seconds_total", "counter",
       "Seconds the CPUs spent in each mode.");
  for (const ExportedNode& n : nodes) {
    const int cpus = std::max(1, static_cast<int>(std::lround(n.cores)));
    const double busy = n.counters.cpu_busy_seconds / cpus;
    const double idle = n.cores * n.counters.seconds / cpus - busy;
    for (int cpu = 0; cpu < cpus; ++cpu) {
      for (const auto& [mode, value] :
           {std::pair<const char*, double>{"idle", idle}, {"user", busy}}) {
        absl::StrAppend(&out, "node_cpu_seconds_total{instance=\"", n.address,
                        ":9100\",cpu=\"", cpu, "\",mode=\"", mode, "\"} ",
                        NumberText(std::max(0.0, value)), "\n");
      }
    }
  }
  Type(out, "http_request_duration_seconds", "histogram",
       "Time to answer the requests to the node's pods.");
  for (const ExportedNode& n : nodes) {
    const NodeCounters& c = n.counters;
    for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
      absl::StrAppend(&out, "http_request_duration_seconds_bucket{node=\"",
                      n.name, "\",le=\"", NumberText(kLatencyBuckets[i]),
                      "\"} ", NumberText(c.buckets[i]), "\n");
    }
    absl::StrAppend(&out, "http_request_duration_seconds_bucket{node=\"",
                    n.name, "\",le=\"+Inf\"} ", NumberText(c.requests), "\n");
    absl::StrAppend(&out, "http_request_duration_seconds_sum{node=\"", n.name,
                    "\"} ", NumberText(c.request_seconds), "\n");
    absl::StrAppend(&out, "http_request_duration_seconds_count{node=\"", n.name,
                    "\"} ", NumberText(c.requests), "\n");
  }
  Type(out, "http_requests_total", "counter",
       "Requests to the node's pods, by status code.");
  for (const ExportedNode& n : nodes) {
    const NodeCounters& c = n.counters;
    absl::StrAppend(&out, "http_requests_total{node=\"", n.name,
                    "\",code=\"200\"} ", NumberText(c.requests - c.errors),
                    "\n");
    absl::StrAppend(&out, "http_requests_total{node=\"", n.name,
                    "\",code=\"500\"} ", NumberText(c.errors), "\n");
  }
  // node-exporter's disk series, half the operations reads, half writes.
  struct Disk {
    const char* name;
    const char* help;
    double NodeCounters::*field;
  };
  for (const Disk& d :
       {Disk{"node_disk_reads_completed_total", "Reads completed.",
             &NodeCounters::disk_ops},
        Disk{"node_disk_writes_completed_total", "Writes completed.",
             &NodeCounters::disk_ops},
        Disk{"node_disk_read_time_seconds_total", "Seconds spent reading.",
             &NodeCounters::disk_seconds},
        Disk{"node_disk_write_time_seconds_total", "Seconds spent writing.",
             &NodeCounters::disk_seconds}}) {
    Type(out, d.name, "counter", d.help);
    for (const ExportedNode& n : nodes) {
      absl::StrAppend(&out, d.name, "{instance=\"", n.address, ":9100\"} ",
                      NumberText(n.counters.*(d.field) / 2), "\n");
    }
  }
  RenderPods(out, pods);
  return out;
}

}  // namespace ms::quality
