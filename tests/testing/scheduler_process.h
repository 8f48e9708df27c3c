// SchedulerProcess: build/metrics-scheduler run as a child process, for the
// end-to-end tests.
//
// Starts the real binary with a configuration text, the scheduler
// identity's kubeconfig and a free loopback port for its endpoints (and
// one for its secure port, when asked); waits for /healthz; scrapes
// /metrics; stops it with SIGTERM (returning the exit code) or kills it
// with SIGKILL. Its output goes to a log file that a failing test prints.
// Thread-compatible.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_SCHEDULER_PROCESS_H_
#define METRICS_SCHEDULER_TESTS_TESTING_SCHEDULER_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/http.h"

namespace ms::testing {

class SchedulerProcess {
 public:
  struct Options {
    std::string config_yaml;  // written to a file and passed as --config
    std::string kubeconfig;   // --kubeconfig; "" for none
    // Set in its environment, over the test's (e.g. KUBECONFIG).
    std::vector<std::pair<std::string, std::string>> env;
    std::string identity = "e2e";
    std::vector<std::string> extra_args;  // e.g. "--leader-elect=false"
    // Serve the secure port too: --secure-port on a free loopback port,
    // --bind-address=127.0.0.1, a self-signed certificate. The plain port
    // then serves the probes only, and Scrape() and Metric() read
    // /metrics over HTTPS (certificate unverified) with `metrics_token` as
    // bearer token: one the apiserver allows to get /metrics.
    bool secure_port = false;
    std::string metrics_token;
  };

  // Starts the binary ($MS_BINARY_DIR/metrics-scheduler) and waits until
  // /healthz answers. InternalError with the log's end when it does not.
  static absl::StatusOr<std::unique_ptr<SchedulerProcess>> Start(
      const Options& options);
  ~SchedulerProcess();  // kills the process if still running

  // SIGTERM, then waits for the exit (SIGKILL after `grace`). Returns the
  // exit code, or -signal when it was killed.
  int Stop(absl::Duration grace = absl::Seconds(30));
  // SIGKILL, no clean-up: what a crash looks like to the cluster.
  void Kill();
  // Whether the process still runs (one that has exited is reaped, and its
  // exit code kept for WaitForExit).
  bool Running();
  // Waits, sending no signal, until the process exits by itself or
  // `timeout` passes. Its exit code (-signal when killed by one), or
  // nullopt when it still runs (or was stopped or killed by this object).
  std::optional<int> WaitForExit(absl::Duration timeout);

  // GET /readyz returned 200.
  bool Ready();
  // The value of one sample of /metrics, e.g.
  // Metric("metrics_scheduler_leader"); 0 when absent.
  double Metric(const std::string& sample);
  // The text of /metrics (the secure port's with Options::secure_port); an
  // error when it cannot be scraped.
  absl::StatusOr<std::string> Scrape();
  std::string Log() const;
  const std::string& identity() const { return identity_; }
  // The loopback port of its plain endpoints (/metrics, /healthz, ...).
  int port() const { return port_; }
  // The loopback port of its secure endpoints; 0 without
  // Options::secure_port.
  int secure_port() const { return secure_port_; }

 private:
  SchedulerProcess(pid_t pid, int port, int secure_port,
                   std::string metrics_token, std::string log,
                   std::string identity);
  pid_t pid_;
  std::optional<int> exit_code_;  // once Running() has seen it exit
  const int port_;
  const int secure_port_;
  const std::string metrics_token_;
  const std::string log_;
  const std::string identity_;
  HttpClient http_;
  HttpClient https_{TlsOptions{.insecure_skip_verify = true}};
};

// The scheduler processes of one test. A failed start is a test failure.
class SchedulerProcesses {
 public:
  // Starts one; it runs until StopAll(). Null when it did not start.
  SchedulerProcess* Start(const SchedulerProcess::Options& options);
  // Stops them all; when `print_logs` (the test failed), first prints the
  // end of each one's log to stderr.
  void StopAll(bool print_logs);

 private:
  std::vector<std::unique_ptr<SchedulerProcess>> processes_;
};

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_SCHEDULER_PROCESS_H_
