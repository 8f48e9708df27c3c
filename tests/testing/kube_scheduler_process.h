// KubeSchedulerProcess: a kube-scheduler of the test's own (the testenv
// binary's built-in one, `testenv kube-scheduler`) with a
// KubeSchedulerConfiguration the test writes: its profiles and extenders.
// It runs beside the control plane's default kube-scheduler; give its
// profile a schedulerName of the test's own. No leader election and no
// serving port; its log is kept for a failed test.
//
//   ASSERT_OK_AND_ASSIGN(auto kube, KubeSchedulerProcess::Start(env, R"(
//   profiles: [{schedulerName: my-profile}]
//   extenders: [...]
//   )"));
#ifndef METRICS_SCHEDULER_TESTS_TESTING_KUBE_SCHEDULER_PROCESS_H_
#define METRICS_SCHEDULER_TESTS_TESTING_KUBE_SCHEDULER_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tests/testing/testenv.h"

namespace ms::testing {

class KubeSchedulerProcess {
 public:
  // `config_tail`: KubeSchedulerConfiguration keys after apiVersion, kind,
  // clientConnection (the admin identity) and leaderElection (off).
  static absl::StatusOr<std::unique_ptr<KubeSchedulerProcess>> Start(
      const Testenv& env, const std::string& config_tail);
  ~KubeSchedulerProcess();  // SIGKILL
  KubeSchedulerProcess(const KubeSchedulerProcess&) = delete;
  KubeSchedulerProcess& operator=(const KubeSchedulerProcess&) = delete;

  // Whether it is still running.
  bool Running();
  // The end of its log.
  std::string Log() const;

 private:
  KubeSchedulerProcess(pid_t pid, std::string dir);
  pid_t pid_;
  const std::string dir_;
};

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_KUBE_SCHEDULER_PROCESS_H_
