#include "bench/harness/control_plane.h"

#include <stdlib.h>

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "bench/harness/process.h"

namespace ms::bench {

Admin::Admin(std::string server, std::string token, std::string ca)
    : server_(std::move(server)),
      token_(std::move(token)),
      ca_(std::move(ca)),
      http_(TlsOptions{.ca_file = ca_}) {}

absl::StatusOr<HttpResponse> Admin::Call(const std::string& method,
                                         const std::string& path,
                                         const std::string& body,
                                         const std::string& content_type) {
  HttpRequest r{.method = method,
                .url = server_ + path,
                .body = body,
                .timeout = absl::Seconds(120)};
  r.headers = {{"Authorization", "Bearer " + token_},
               {"Content-Type", content_type},
               {"Accept", "application/json"}};
  return http_.Do(r);
}

std::string Admin::Ok(const std::string& method, const std::string& path,
                      const std::string& body) {
  absl::StatusOr<HttpResponse> r = Call(method, path, body);
  if (!r.ok()) {
    Die(absl::StrCat(method, " ", path, ": ", r.status().ToString()));
  }
  if (r->status < 200 || r->status >= 300) {
    Die(absl::StrCat(method, " ", path, ": HTTP ", r->status, " ",
                     r->body.substr(0, 500)));
  }
  return r->body;
}

std::unique_ptr<Admin> Admin::Clone() const {
  return std::make_unique<Admin>(server_, token_, ca_);
}

kube::ClusterConfig Admin::Config() const {
  kube::ClusterConfig c;
  c.server = server_;
  c.tls.ca_file = ca_;
  c.token = token_;
  return c;
}

ControlPlane::ControlPlane(const std::string& testenv_bin, std::string dir,
                           const std::string& source_dir)
    : testenv_bin_(testenv_bin) {
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    dir =
        absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/ms-bench-XXXXXX");
    if (mkdtemp(dir.data()) == nullptr) Die("mkdtemp failed");
    own_dir_ = true;
  } else {
    RunCommand("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  }
  dir_ = dir;
  std::cerr << "control plane in " << dir_ << std::endl;
  std::string log = dir_ + "/up.log";
  testenv_pid_ =
      Spawn({testenv_bin_, "up", "--dir", dir_, "--with-scheduler"}, log);
  interrupt_ = std::make_unique<InterruptCleanup>([this] { Stop(); });
  AwaitLogLine(testenv_pid_, "testenv", log, "testenv ready", absl::Minutes(3));
  absl::StatusOr<kube::ClusterConfig> admin =
      kube::LoadKubeconfig(kubeconfig());
  if (!admin.ok()) Die(admin.status().ToString());
  admin_ = std::make_unique<Admin>(
      admin->server,
      std::string(absl::StripAsciiWhitespace(ReadAll(dir_ + "/admin.token"))),
      dir_ + "/pki/ca.crt");
  kube_scheduler_pid_ = ReadPid(dir_ + "/kube-scheduler.pid");
  apiserver_pid_ = ReadPid(dir_ + "/kube-apiserver.pid");
  // With the right to evict (manifests/components/rebalance): a
  // configuration that rebalances may use it.
  if (RunCommand(absl::StrCat(
          testenv_bin_, " kubectl --kubeconfig ", kubeconfig(), " apply -f ",
          source_dir, "/manifests/namespace.yaml -f ", source_dir,
          "/manifests/rbac.yaml -f ", source_dir,
          "/manifests/components/rebalance/rbac.yaml >/dev/null")) != 0) {
    Die("cannot apply manifests/rbac.yaml");
  }
}

ControlPlane::~ControlPlane() {
  interrupt_.reset();
  Stop();
}

void ControlPlane::Stop() {
  Terminate(testenv_pid_);
  if (own_dir_) RunCommand("rm -rf '" + dir_ + "'");
}

void ControlPlane::CreateNamespace(const std::string& name) {
  admin_->Ok("POST", "/api/v1/namespaces",
             absl::StrCat(R"({"apiVersion":"v1","kind":"Namespace",)",
                          R"("metadata":{"name":")", name, R"("}})"));
  // Pods are refused until the namespace has its default ServiceAccount,
  // which kube-controller-manager creates when it gets to it (not always
  // within a minute on a loaded machine): created here unless the
  // controller was first (409), as tests/testing/testenv.cc does.
  absl::StatusOr<HttpResponse> r = admin_->Call(
      "POST", absl::StrCat("/api/v1/namespaces/", name, "/serviceaccounts"),
      R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}})");
  if (!r.ok() || (r->status != 201 && r->status != 409)) {
    Die(absl::StrCat("creating the default ServiceAccount of ", name, ": ",
                     r.ok() ? absl::StrCat("HTTP ", r->status, " ", r->body)
                            : r.status().ToString()));
  }
}

}  // namespace ms::bench
