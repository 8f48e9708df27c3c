// The binary's secure port (--secure-port) against the local control
// plane: /metrics answers only to a ServiceAccount bound to
// manifests/base/metrics-reader.yaml's ClusterRole (401 without a valid
// token, 403 for one not granted), as the apiserver decides through the
// TokenReviews and SubjectAccessReviews the scheduler identity sends with
// exactly manifests/rbac.yaml; the probes stay open; the certificate is a
// self-signed one, or the pair given by --tls-cert-file and
// --tls-private-key-file.
#include <simdjson.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/http.h"
#include "gtest/gtest.h"
#include "tests/testing/certificates.h"
#include "tests/testing/loopback.h"
#include "tests/testing/paths.h"
#include "tests/testing/scheduler_process.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::SchedulerProcess;
using ::ms::testing::Testenv;
using ::ms::testing::WaitFor;

constexpr char kConfig[] = R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
)";
constexpr char kReaderRole[] = "metrics-scheduler-metrics-reader";

class SecurePortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env_.server().empty());
    env_.ApplySchedulerRbac();
    env_.Kubectl(absl::StrCat("apply -f ", testing::SourceDir(),
                              "/manifests/base/metrics-reader.yaml"));
    static int tests = 0;
    suite_ = absl::StrCat("secure-", getpid(), "-", tests++);
    env_.CreateNamespace(suite_);
  }

  void TearDown() override {
    if (scheduler_ != nullptr) {
      if (HasFailure()) std::cerr << scheduler_->Log();
      scheduler_->Stop();
    }
    (void)env_.Admin(
        "DELETE",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/" + suite_);
    env_.DeleteNamespace(suite_);
  }

  // A ServiceAccount of the test's namespace and a token of it from the
  // TokenRequest API.
  std::string ServiceAccountToken(const std::string& name) {
    env_.AdminOk("POST", "/api/v1/namespaces/" + suite_ + "/serviceaccounts",
                 absl::StrCat(R"({"apiVersion":"v1","kind":"ServiceAccount",)",
                              R"("metadata":{"name":")", name, R"("}})"));
    std::string answer = env_.AdminOk(
        "POST",
        absl::StrCat("/api/v1/namespaces/", suite_, "/serviceaccounts/", name,
                     "/token"),
        R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest",)"
        R"("spec":{"expirationSeconds":3600}})");
    simdjson::dom::parser parser;
    std::string_view token;
    EXPECT_EQ(parser.parse(answer)["status"]["token"].get(token),
              simdjson::SUCCESS)
        << answer;
    return std::string(token);
  }

  // Binds the ServiceAccount to the metrics reader ClusterRole and waits
  // until the apiserver's authoriser says it may get /metrics.
  void GrantMetricsReader(const std::string& account) {
    env_.AdminOk(
        "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        absl::StrCat(
            R"({"apiVersion":"rbac.authorization.k8s.io/v1",)",
            R"("kind":"ClusterRoleBinding","metadata":{"name":")", suite_,
            R"("},"roleRef":{"apiGroup":"rbac.authorization.k8s.io",)",
            R"("kind":"ClusterRole","name":")", kReaderRole,
            R"("},"subjects":[{"kind":"ServiceAccount","name":")", account,
            R"(","namespace":")", suite_, R"("}]})"));
    const std::string user =
        absl::StrCat("system:serviceaccount:", suite_, ":", account);
    EXPECT_TRUE(WaitFor([&] {
      absl::StatusOr<HttpResponse> r = env_.Admin(
          "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
          absl::StrCat(
              R"({"apiVersion":"authorization.k8s.io/v1",)",
              R"("kind":"SubjectAccessReview","spec":{"user":")", user,
              R"(","nonResourceAttributes":{"path":"/metrics","verb":"get"}}})"));
      return r.ok() && r->body.find("\"allowed\":true") != std::string::npos;
    })) << user << " is not allowed to get /metrics";
  }

  // Starts the binary with the secure port on a free loopback port.
  void StartScheduler(std::vector<std::string> extra) {
    secure_port_ = testing::FreeLoopbackPort();
    ASSERT_GT(secure_port_, 0);
    extra.push_back("--leader-elect=false");
    extra.push_back(absl::StrCat("--secure-port=", secure_port_));
    extra.push_back("--bind-address=127.0.0.1");
    absl::StatusOr<std::unique_ptr<SchedulerProcess>> s =
        SchedulerProcess::Start({.config_yaml = kConfig,
                                 .kubeconfig =
                                     env_.dir() + "/scheduler.kubeconfig",
                                 .identity = suite_,
                                 .extra_args = std::move(extra)});
    ASSERT_TRUE(s.ok()) << s.status();
    scheduler_ = *std::move(s);
  }

  // GET `path` on the secure port with `client`, with a bearer token
  // unless it is empty.
  absl::StatusOr<HttpResponse> Get(HttpClient& client, const std::string& path,
                                   const std::string& token = "") {
    HttpRequest request{
        .url = absl::StrCat("https://127.0.0.1:", secure_port_, path),
        .timeout = absl::Seconds(10)};
    if (!token.empty()) {
      request.headers.emplace_back("Authorization", "Bearer " + token);
    }
    return client.Do(request);
  }

  // The status of GET `path`; 0 when the request failed.
  long Status(HttpClient& client, const std::string& path,  // NOLINT
              const std::string& token = "") {
    absl::StatusOr<HttpResponse> r = Get(client, path, token);
    return r.ok() ? r->status : 0;
  }

  Testenv env_;
  std::string suite_;
  int secure_port_ = 0;
  std::unique_ptr<SchedulerProcess> scheduler_;
};

TEST_F(SecurePortTest, MetricsOnlyForGrantedIdentitiesProbesOpen) {
  const std::string reader = ServiceAccountToken("reader");
  const std::string stranger = ServiceAccountToken("stranger");
  ASSERT_FALSE(reader.empty());
  ASSERT_FALSE(stranger.empty());
  GrantMetricsReader("reader");
  ASSERT_NO_FATAL_FAILURE(StartScheduler({}));

  // A self-signed certificate: served, but not one a client trusts.
  HttpClient insecure(TlsOptions{.insecure_skip_verify = true});
  ASSERT_TRUE(WaitFor([&] { return Status(insecure, "/healthz") == 200; }));
  HttpClient verifying;
  EXPECT_FALSE(Get(verifying, "/healthz").ok());

  // The probes, without a token.
  EXPECT_EQ(Status(insecure, "/livez"), 200);
  EXPECT_TRUE(WaitFor([&] { return Status(insecure, "/readyz") == 200; }));

  absl::StatusOr<HttpResponse> anonymous = Get(insecure, "/metrics");
  ASSERT_TRUE(anonymous.ok()) << anonymous.status();
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(anonymous->body, "Unauthorized: no bearer token\n");
  absl::StatusOr<HttpResponse> forged =
      Get(insecure, "/metrics", "not-a-token-the-apiserver-issued");
  ASSERT_TRUE(forged.ok()) << forged.status();
  EXPECT_EQ(forged->status, 401);
  EXPECT_EQ(forged->body, "Unauthorized: invalid token\n");

  absl::StatusOr<HttpResponse> refused = Get(insecure, "/metrics", stranger);
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->status, 403) << refused->body;
  EXPECT_EQ(refused->body,
            absl::StrCat("Forbidden: user \"system:serviceaccount:", suite_,
                         ":stranger\" may not get path \"/metrics\"\n"));

  absl::StatusOr<HttpResponse> allowed = Get(insecure, "/metrics", reader);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_EQ(allowed->status, 200) << allowed->body;
  EXPECT_NE(allowed->body.find("metrics_scheduler_build_info{"),
            std::string::npos)
      << allowed->body;
  // The grant is for /metrics only.
  EXPECT_EQ(Status(insecure, "/debug", reader), 403);
  // A token on a probe changes nothing.
  EXPECT_EQ(Status(insecure, "/healthz", stranger), 200);
}

TEST_F(SecurePortTest, ServesTheGivenCertificate) {
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/secure-port-", getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  absl::StatusOr<testing::TestCertificates> certs =
      testing::MakeTestCertificates(dir);
  ASSERT_TRUE(certs.ok()) << certs.status();
  ASSERT_NO_FATAL_FAILURE(
      StartScheduler({"--tls-cert-file=" + certs->server_cert,
                      "--tls-private-key-file=" + certs->server_key}));

  // Verified against the test CA: the pair given is the one served.
  HttpClient pinned(TlsOptions{.ca_file = certs->ca});
  EXPECT_TRUE(WaitFor([&] { return Status(pinned, "/healthz") == 200; }))
      << Get(pinned, "/healthz").status();
  EXPECT_EQ(Status(pinned, "/metrics"), 401);
}

}  // namespace
}  // namespace ms
