#include "tests/testing/testenv.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/token_file.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "simdjson.h"

namespace ms::testing {
namespace {

std::string Trimmed(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    ADD_FAILURE() << text.status();
    return "";
  }
  return std::string(absl::StripAsciiWhitespace(*text));
}

}  // namespace

Testenv::Testenv() {
  const char* dir = std::getenv("TESTENV_DIR");
  if (dir == nullptr) {
    ADD_FAILURE() << "TESTENV_DIR is not set: run integration tests through "
                     "ctest (make test), which starts the control plane";
    return;
  }
  dir_ = dir;
  absl::StatusOr<kube::ClusterConfig> admin =
      kube::LoadKubeconfig(dir_ + "/admin.kubeconfig");
  if (!admin.ok()) {
    ADD_FAILURE() << "control plane not ready: " << admin.status();
    return;
  }
  server_ = admin->server;
  admin_token_ = Trimmed(dir_ + "/admin.token");
  scheduler_token_ = Trimmed(dir_ + "/scheduler.token");
  ca_file_ = dir_ + "/pki/ca.crt";
  http_ = std::make_unique<HttpClient>(TlsOptions{.ca_file = ca_file_});
}

kube::ClusterConfig Testenv::AdminConfig() const {
  kube::ClusterConfig config;
  config.server = server_;
  config.tls.ca_file = ca_file_;
  config.token = admin_token_;
  return config;
}

kube::ClusterConfig Testenv::SchedulerConfig() const {
  kube::ClusterConfig config = AdminConfig();
  config.token = scheduler_token_;
  return config;
}

absl::StatusOr<HttpResponse> Testenv::Admin(const std::string& method,
                                            const std::string& path,
                                            const std::string& body,
                                            const std::string& content_type) {
  if (http_ == nullptr) return absl::FailedPreconditionError("no testenv");
  HttpRequest request{.method = method, .url = server_ + path, .body = body};
  request.headers = {{"Authorization", "Bearer " + admin_token_},
                     {"Content-Type", content_type},
                     {"Accept", "application/json"}};
  return http_->Do(request);
}

std::string Testenv::AdminOk(const std::string& method,
                             const std::string& path, const std::string& body,
                             const std::string& content_type) {
  absl::StatusOr<HttpResponse> r = Admin(method, path, body, content_type);
  if (!r.ok()) {
    ADD_FAILURE() << method << " " << path << ": " << r.status();
    return "";
  }
  if (r->status < 200 || r->status >= 300) {
    ADD_FAILURE() << method << " " << path << ": HTTP " << r->status << " "
                  << r->body;
  }
  return r->body;
}

std::string Testenv::Kubectl(const std::string& args) {
  const char* bin = std::getenv("TESTENV_BIN");
  if (bin == nullptr) {
    ADD_FAILURE() << "TESTENV_BIN is not set";
    return "";
  }
  std::string command = absl::StrCat(bin, " kubectl --kubeconfig ", dir_,
                                     "/admin.kubeconfig ", args, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return "";
  }
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  int rc = pclose(pipe);
  if (rc != 0) ADD_FAILURE() << command << " failed (" << rc << "):\n" << output;
  return output;
}

void Testenv::CreateNamespace(const std::string& name) {
  AdminOk("POST", "/api/v1/namespaces",
          absl::StrCat(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")",
                       name, R"("}})"));
  // Pods are refused until the namespace has its default ServiceAccount,
  // which kube-controller-manager creates when it gets to it: once, right
  // after the apiserver-restart fault test on a loaded machine, not within
  // a minute. The tests need the account, not the controller: it is created
  // here unless the controller was first (409).
  absl::StatusOr<HttpResponse> r = Admin(
      "POST", "/api/v1/namespaces/" + name + "/serviceaccounts",
      R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}})");
  if (!r.ok() || (r->status != 201 && r->status != 409)) {
    ADD_FAILURE() << "creating the default ServiceAccount of " << name << ": "
                  << (r.ok() ? absl::StrCat("HTTP ", r->status, " ", r->body)
                             : r.status().ToString());
  }
}

void Testenv::DeleteNamespace(const std::string& name) {
  (void)Admin("DELETE", "/api/v1/namespaces/" + name);
}

void Testenv::CreateNode(const std::string& name, const std::string& cpu,
                         const std::string& memory,
                         const std::string& labels_json,
                         const std::string& ip) {
  AdminOk("POST", "/api/v1/nodes",
          absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")",
                       name, R"(","labels":)", labels_json, "}}"));
  std::string addresses =
      ip.empty() ? absl::StrCat(R"([{"type":"Hostname","address":")", name, R"("}])")
                 : absl::StrCat(R"([{"type":"InternalIP","address":")", ip,
                                R"("},{"type":"Hostname","address":")", name,
                                R"("}])");
  std::string resources = absl::StrCat(R"({"cpu":")", cpu, R"(","memory":")",
                                       memory,
                                       R"(","pods":"110","ephemeral-storage":"100Gi"})");
  AdminOk("PATCH", "/api/v1/nodes/" + name + "/status",
          absl::StrCat(R"({"status":{"capacity":)", resources,
                       R"(,"allocatable":)", resources,
                       R"(,"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"testenv"}],"addresses":)",
                       addresses, "}}"),
          "application/strategic-merge-patch+json");
}

void Testenv::DeleteNode(const std::string& name) {
  (void)Admin("DELETE", "/api/v1/nodes/" + name);
}

std::map<std::string, std::string> Testenv::PodNodes(
    const std::string& namespace_) {
  kube::KubeClient admin(AdminConfig());
  absl::StatusOr<kube::ObjectList<Pod>> pods = admin.ListPods(
      {.field_selector = "metadata.namespace=" + namespace_,
       .page_size = 5000});
  std::map<std::string, std::string> out;
  if (!pods.ok()) return out;
  for (const Pod& p : pods->items) out[p.name] = p.node_name;
  return out;
}

void Testenv::ApplySchedulerRbac() {
  const char* src = std::getenv("MS_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  Kubectl(absl::StrCat("apply -f ", src, "/manifests/namespace.yaml -f ", src,
                       "/manifests/rbac.yaml"));
}

std::string Testenv::ServiceAccountToken(const std::string& namespace_,
                                         const std::string& name) {
  AdminOk("POST", "/api/v1/namespaces/" + namespace_ + "/serviceaccounts",
          absl::StrCat(R"({"apiVersion":"v1","kind":"ServiceAccount",)",
                       R"("metadata":{"name":")", name, R"("}})"));
  const std::string answer = AdminOk(
      "POST",
      absl::StrCat("/api/v1/namespaces/", namespace_, "/serviceaccounts/",
                   name, "/token"),
      R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest",)"
      R"("spec":{"expirationSeconds":3600}})");
  simdjson::dom::parser parser;
  std::string_view token;
  if (parser.parse(answer)["status"]["token"].get(token) != simdjson::SUCCESS) {
    ADD_FAILURE() << "no token in the TokenRequest's answer: " << answer;
    return "";
  }
  return std::string(token);
}

bool Testenv::WaitUntilAllowedToGet(const std::string& user,
                                    const std::string& path) {
  const std::string review = absl::StrCat(
      R"({"apiVersion":"authorization.k8s.io/v1",)",
      R"("kind":"SubjectAccessReview","spec":{"user":")", user,
      R"(","nonResourceAttributes":{"path":")", path, R"(","verb":"get"}}})");
  return WaitFor([&] {
    absl::StatusOr<HttpResponse> r = Admin(
        "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review);
    return r.ok() && r->body.find("\"allowed\":true") != std::string::npos;
  });
}

bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

}  // namespace ms::testing
