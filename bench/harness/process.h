// Processes and /proc for the benchmarks that run the real binaries
// (bench/e2e_bench.cc, bench/quality/): start them with their output in a
// log, wait for a line of it, stop them, read what they cost.
#ifndef METRICS_SCHEDULER_BENCH_HARNESS_PROCESS_H_
#define METRICS_SCHEDULER_BENCH_HARNESS_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace ms::bench {

// Prints "PROGRAM: message" to stderr and exits 1.
[[noreturn]] void Die(const std::string& message);

// The whole file; "" when it cannot be read.
std::string ReadAll(const std::string& path);

// The 1, 5 and 15 minute load averages, as /proc/loadavg says them.
std::string LoadAverage();

// utime + stime of a process, in seconds.
double CpuSeconds(pid_t pid);

// A "VmRSS" or "VmHWM" line of /proc/PID/status, in MB.
double StatusMb(pid_t pid, const std::string& field);

// Runs args[0] (a path) with `args`, stdout and stderr appended to `log`;
// the child is killed if this process dies.
pid_t Spawn(const std::vector<std::string>& args, const std::string& log);

// SIGTERM, then SIGKILL after 20 s; reaps it. Does nothing for pid <= 0.
void Terminate(pid_t pid);

// Waits until `log` says `ready`; dies, showing the log, if process `pid`
// (`what`) exits first or `timeout` passes.
void AwaitLogLine(pid_t pid, const std::string& what, const std::string& log,
                  const std::string& ready, absl::Duration timeout);

// std::system's exit code; -1 when the command did not exit.
int RunCommand(const std::string& command);

// The pid written in a file; dies when there is none.
pid_t ReadPid(const std::string& path);

}  // namespace ms::bench

#endif  // METRICS_SCHEDULER_BENCH_HARNESS_PROCESS_H_
