// Process metrics: the process's CPU time, memory, file descriptors and
// start time, read from /proc/self when /metrics is scraped, under the
// names every Prometheus client library gives them (unprefixed, as Go
// components such as kube-scheduler export them):
//
//   process_cpu_seconds_total      counter  user and system CPU time
//   process_resident_memory_bytes  gauge    resident set size
//   process_virtual_memory_bytes   gauge    virtual memory size
//   process_open_fds               gauge    open file descriptors
//   process_max_fds                gauge    their limit (RLIMIT_NOFILE)
//   process_start_time_seconds     gauge    start, in seconds since the epoch
//
// Linux only. Thread-safe.
#ifndef METRICS_SCHEDULER_SCHEDULER_TELEMETRY_PROCESS_METRICS_H_
#define METRICS_SCHEDULER_SCHEDULER_TELEMETRY_PROCESS_METRICS_H_

#include "absl/status/statusor.h"
#include "scheduler/telemetry/self_metrics.h"

namespace ms {

struct ProcessStats {
  double cpu_seconds = 0;
  double resident_memory_bytes = 0;
  double virtual_memory_bytes = 0;
  double open_fds = 0;
  double max_fds = 0;
  double start_time_seconds = 0;
};

// Reads this process's figures. Unavailable when /proc cannot be read or
// parsed.
absl::StatusOr<ProcessStats> ReadProcessStats();

// Adds the families above to `registry`. A scrape on which /proc cannot be
// read shows them without samples.
void AddProcessMetrics(Registry& registry);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_TELEMETRY_PROCESS_METRICS_H_
