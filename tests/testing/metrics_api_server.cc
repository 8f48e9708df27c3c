#include "tests/testing/metrics_api_server.h"

#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/testing/certificates.h"

namespace ms::testing {
namespace {

constexpr char kApiServicePath[] =
    "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io";
constexpr char kServiceName[] = "metrics-server";

constexpr char kDiscovery[] =
    R"({"kind":"APIResourceList","apiVersion":"v1",)"
    R"("groupVersion":"metrics.k8s.io/v1beta1","resources":[)"
    R"({"name":"nodes","singularName":"","namespaced":false,)"
    R"("kind":"NodeMetrics","verbs":["get","list"]},)"
    R"({"name":"pods","singularName":"","namespaced":true,)"
    R"("kind":"PodMetrics","verbs":["get","list"]}]})";

}  // namespace

MetricsApiServer::MetricsApiServer(Testenv& env, std::string namespace_)
    : env_(env), namespace_(std::move(namespace_)) {}

absl::StatusOr<std::unique_ptr<MetricsApiServer>> MetricsApiServer::Start(
    Testenv& env, const std::string& namespace_, const std::string& dir) {
  absl::StatusOr<TestCertificates> certs = MakeTestCertificates(dir);
  if (!certs.ok()) return certs.status();
  std::unique_ptr<MetricsApiServer> s(new MetricsApiServer(env, namespace_));
  s->server_ = std::make_unique<httplib::SSLServer>(certs->server_cert.c_str(),
                                                    certs->server_key.c_str());
  if (!s->server_->is_valid()) {
    return absl::InternalError("cannot load the server certificate");
  }
  MetricsApiServer* self = s.get();
  s->server_->Get("/apis/metrics.k8s.io/v1beta1",
                  [](const httplib::Request&, httplib::Response& res) {
                    res.set_content(kDiscovery, "application/json");
                  });
  s->server_->Get(
      "/apis/metrics.k8s.io/v1beta1/nodes",
      [self](const httplib::Request&, httplib::Response& res) {
        int fail;
        {
          absl::MutexLock lock(&self->mu_);
          ++self->node_lists_;
          fail = self->fail_with_;
        }
        if (fail != 0) {
          res.status = fail;
          res.set_content(
              absl::StrCat(R"({"kind":"Status","apiVersion":"v1",)",
                           R"("status":"Failure","message":"failing on )",
                           R"(purpose","code":)", fail, "}"),
              "application/json");
          return;
        }
        res.set_content(self->NodeList(), "application/json");
      });
  s->port_ = s->server_->bind_to_any_port("127.0.0.1");
  if (s->port_ <= 0) return absl::InternalError("cannot bind 127.0.0.1");
  s->thread_ = std::thread([self] { self->server_->listen_after_bind(); });

  // What installing metrics-server registers, pointed at this server. A
  // registration left by an interrupted run is replaced.
  (void)env.Admin("DELETE", kApiServicePath);
  env.AdminOk("POST", absl::StrCat("/api/v1/namespaces/", namespace_,
                                   "/services"),
              absl::StrCat(R"({"apiVersion":"v1","kind":"Service",)",
                           R"("metadata":{"name":")", kServiceName,
                           R"("},"spec":{"type":"ExternalName",)",
                           R"("externalName":"localhost"}})"));
  env.AdminOk(
      "POST", "/apis/apiregistration.k8s.io/v1/apiservices",
      absl::StrCat(
          R"({"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService",)",
          R"("metadata":{"name":"v1beta1.metrics.k8s.io"},"spec":{)",
          R"("group":"metrics.k8s.io","version":"v1beta1",)",
          R"("service":{"namespace":")", namespace_, R"(","name":")",
          kServiceName, R"(","port":)", s->port_, "},",
          R"("insecureSkipTLSVerify":true,"groupPriorityMinimum":100,)",
          R"("versionPriority":100}})"));
  // Available once the aggregator has checked the server and proxies to it.
  bool available = WaitFor(
      [&] {
        absl::StatusOr<HttpResponse> r =
            env.Admin("GET", "/apis/metrics.k8s.io/v1beta1/nodes");
        return r.ok() && r->status == 200;
      },
      absl::Seconds(60));
  if (!available) {
    absl::StatusOr<HttpResponse> r = env.Admin("GET", kApiServicePath);
    return absl::DeadlineExceededError(absl::StrCat(
        "the APIService did not become available: ", r.ok() ? r->body : ""));
  }
  absl::MutexLock lock(&s->mu_);
  s->node_lists_ = 0;
  return s;
}

MetricsApiServer::~MetricsApiServer() {
  (void)env_.Admin("DELETE", kApiServicePath);
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

void MetricsApiServer::SetUsage(const std::string& node,
                                const std::string& cpu,
                                const std::string& memory) {
  absl::MutexLock lock(&mu_);
  usage_[node] = {cpu, memory};
}

void MetricsApiServer::RemoveUsage(const std::string& node) {
  absl::MutexLock lock(&mu_);
  usage_.erase(node);
}

void MetricsApiServer::FailWith(int status) {
  absl::MutexLock lock(&mu_);
  fail_with_ = status;
}

int MetricsApiServer::node_lists() const {
  absl::MutexLock lock(&mu_);
  return node_lists_;
}

std::string MetricsApiServer::NodeList() const {
  // metrics-server scrapes continuously: every sample is recent.
  const std::string now =
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  std::string out = absl::StrCat(
      R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1",)",
      R"("metadata":{"resourceVersion":""},"items":[)");
  absl::MutexLock lock(&mu_);
  bool first = true;
  for (const auto& [node, usage] : usage_) {
    absl::StrAppend(&out, first ? "" : ",", R"({"metadata":{"name":")", node,
                    R"(","creationTimestamp":")", now, R"("},"timestamp":")",
                    now, R"(","window":"20.015s","usage":{"cpu":")", usage.cpu,
                    R"(","memory":")", usage.memory, R"("}})");
    first = false;
  }
  return out + "]}";
}

}  // namespace ms::testing
