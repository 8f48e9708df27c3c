// The local control plane for the benchmarks (bench/e2e_bench.cc,
// bench/quality/): the testenv's kube-apiserver, kube-controller-manager and
// kube-scheduler started as `testenv up --with-scheduler` in a directory of
// their own, and the admin identity's view of the apiserver.
#ifndef METRICS_SCHEDULER_BENCH_HARNESS_CONTROL_PLANE_H_
#define METRICS_SCHEDULER_BENCH_HARNESS_CONTROL_PLANE_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "bench/harness/process.h"
#include "common/http.h"
#include "kube/cluster_config.h"

namespace ms::bench {

// The admin identity's view of the apiserver: one HttpClient per thread
// that uses it (Clone()), so concurrent requests use connections of their
// own.
class Admin {
 public:
  Admin(std::string server, std::string token, std::string ca);

  absl::StatusOr<HttpResponse> Call(
      const std::string& method, const std::string& path,
      const std::string& body = "",
      const std::string& content_type = "application/json");
  // The answer's body; dies unless it is a 2xx.
  std::string Ok(const std::string& method, const std::string& path,
                 const std::string& body = "");

  std::unique_ptr<Admin> Clone() const;
  kube::ClusterConfig Config() const;

 private:
  const std::string server_, token_, ca_;
  HttpClient http_;
};

class ControlPlane {
 public:
  // Starts `testenv_bin` up in `dir` (emptied first; "" for a temporary
  // directory, removed by the destructor) and applies the project's
  // namespace and RBAC manifests from `source_dir` (rebalancing's right to
  // evict included). Dies, with the log, when
  // the plane does not come up within 3 minutes. Interrupted (process.h),
  // it stops the plane and removes the temporary directory.
  ControlPlane(const std::string& testenv_bin, std::string dir,
               const std::string& source_dir);
  // Stops the plane (kube-scheduler with it).
  ~ControlPlane();

  // Creates namespace `name` with its default ServiceAccount, which pods
  // need to pass admission.
  void CreateNamespace(const std::string& name);

  Admin& admin() { return *admin_; }
  const std::string& dir() const { return dir_; }
  const std::string& testenv_bin() const { return testenv_bin_; }
  std::string kubeconfig() const { return dir_ + "/admin.kubeconfig"; }
  pid_t kube_scheduler_pid() const { return kube_scheduler_pid_; }
  pid_t apiserver_pid() const { return apiserver_pid_; }

 private:
  // Stops testenv and removes the directory if it is the plane's own.
  void Stop();

  const std::string testenv_bin_;
  std::string dir_;
  bool own_dir_ = false;
  pid_t testenv_pid_ = -1;
  pid_t kube_scheduler_pid_ = -1;
  pid_t apiserver_pid_ = -1;
  std::unique_ptr<Admin> admin_;
  std::unique_ptr<InterruptCleanup> interrupt_;
};

}  // namespace ms::bench

#endif  // METRICS_SCHEDULER_BENCH_HARNESS_CONTROL_PLANE_H_
