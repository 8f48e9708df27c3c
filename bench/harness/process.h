// Processes and /proc for the benchmarks that run the real binaries
// (bench/e2e_bench.cc, bench/quality/): start them with their output in a
// log, wait for a line of it, stop them, read what they cost.
#ifndef METRICS_SCHEDULER_BENCH_HARNESS_PROCESS_H_
#define METRICS_SCHEDULER_BENCH_HARNESS_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace ms::bench {

// Prints "PROGRAM: message" to stderr, runs the live InterruptCleanups and
// exits 1. Not to be called from a cleanup.
[[noreturn]] void Die(const std::string& message);

// The whole file; "" when it cannot be read.
std::string ReadAll(const std::string& path);

// The 1, 5 and 15 minute load averages, as /proc/loadavg says them.
std::string LoadAverage();

// The CPU time of a process, every thread's, in seconds: its CPU-time
// clock (clock_getcpuclockid), or utime + stime from /proc when that
// clock cannot be read.
double CpuSeconds(pid_t pid);

// A "VmRSS" or "VmHWM" line of /proc/PID/status, in MB.
double StatusMb(pid_t pid, const std::string& field);

// Runs args[0] (a path) with `args`, stdout and stderr appended to `log`,
// with this process's environment and `env` ("NAME=value" each) added;
// the child is killed if this process dies.
pid_t Spawn(const std::vector<std::string>& args, const std::string& log,
            const std::vector<std::string>& env = {});

// SIGTERM, then SIGKILL after 20 s; reaps it. Does nothing for pid <= 0.
void Terminate(pid_t pid);

// Waits until `log` says `ready`; dies, showing the log, if process `pid`
// (`what`) exits first or `timeout` passes.
void AwaitLogLine(pid_t pid, const std::string& what, const std::string& log,
                  const std::string& ready, absl::Duration timeout);

// While alive, `cleanup` runs when this process receives SIGINT or SIGTERM:
// a thread of its own then runs every live cleanup, the latest registered
// first, and exits 130 (SIGINT) or 143 (SIGTERM). This is how a benchmark
// interrupted by Ctrl-C stops what it started and removes its directories;
// the children started by Spawn die with the process anyway.
class InterruptCleanup {
 public:
  explicit InterruptCleanup(std::function<void()> cleanup);
  // Unregisters; waits while the cleanups run (the process then exits).
  ~InterruptCleanup();
  InterruptCleanup(const InterruptCleanup&) = delete;
  InterruptCleanup& operator=(const InterruptCleanup&) = delete;

 private:
  std::function<void()> cleanup_;
};

// std::system's exit code; -1 when the command did not exit.
int RunCommand(const std::string& command);

// The pid written in a file; dies when there is none.
pid_t ReadPid(const std::string& path);

}  // namespace ms::bench

#endif  // METRICS_SCHEDULER_BENCH_HARNESS_PROCESS_H_
