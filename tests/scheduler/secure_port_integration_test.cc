// The binary's secure port (--secure-port) against the local control
// plane: /metrics answers only to a ServiceAccount bound to
// manifests/base/metrics-reader.yaml's ClusterRole (401 without a valid
// token, 403 for one not granted), as the apiserver decides through the
// TokenReviews and SubjectAccessReviews the scheduler identity sends with
// exactly manifests/rbac.yaml; the probes stay open; the plain port
// (--http-address) keeps the probes only, its /metrics a 404 naming the
// secure port; the certificate is a self-signed one, or the pair given by
// --tls-cert-file and --tls-private-key-file. With --extender-secure, the
// extender port is HTTPS too, and a stock kube-scheduler calling it with
// a client certificate (its extender tlsConfig) is served only once RBAC
// lets the certificate's user post /filter and /prioritize.
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/http.h"
#include "gtest/gtest.h"
#include "tests/testing/certificates.h"
#include "tests/testing/kube_scheduler_process.h"
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
    for (const std::string& object :
         {"clusterrolebindings/" + suite_,
          "clusterrolebindings/" + suite_ + "-extender",
          "clusterroles/" + suite_ + "-extender"}) {
      (void)env_.Admin("DELETE",
                       "/apis/rbac.authorization.k8s.io/v1/" + object);
    }
    if (!node_.empty()) env_.DeleteNode(node_);
    env_.DeleteNamespace(suite_);
  }

  // A ServiceAccount of the test's namespace and a token of it.
  std::string ServiceAccountToken(const std::string& name) {
    return env_.ServiceAccountToken(suite_, name);
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
    EXPECT_TRUE(env_.WaitUntilAllowedToGet(user, "/metrics"))
        << user << " is not allowed to get /metrics";
  }

  // Starts the binary with the secure port on a free loopback port; its
  // Scrape() reads the secure port with `token`.
  void StartScheduler(std::vector<std::string> extra,
                      const std::string& token = "",
                      const std::string& config = kConfig) {
    extra.push_back("--leader-elect=false");
    absl::StatusOr<std::unique_ptr<SchedulerProcess>> s =
        SchedulerProcess::Start(
            {.config_yaml = config,
             .kubeconfig = env_.dir() + "/scheduler.kubeconfig",
             .identity = suite_,
             .extra_args = std::move(extra),
             .secure_port = true,
             .metrics_token = token});
    ASSERT_TRUE(s.ok()) << s.status();
    scheduler_ = *std::move(s);
    secure_port_ = scheduler_->secure_port();
    ASSERT_GT(secure_port_, 0);
  }

  // GET `path` on the plain port.
  absl::StatusOr<HttpResponse> GetPlain(const std::string& path) {
    HttpClient plain;
    return plain.Do(
        {.url = absl::StrCat("http://127.0.0.1:", scheduler_->port(), path),
         .timeout = absl::Seconds(10)});
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
  std::string node_;
  int secure_port_ = 0;
  std::unique_ptr<SchedulerProcess> scheduler_;
};

TEST_F(SecurePortTest, MetricsOnlyForGrantedIdentitiesProbesOpen) {
  const std::string reader = ServiceAccountToken("reader");
  const std::string stranger = ServiceAccountToken("stranger");
  ASSERT_FALSE(reader.empty());
  ASSERT_FALSE(stranger.empty());
  GrantMetricsReader("reader");
  ASSERT_NO_FATAL_FAILURE(StartScheduler({}, reader));

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

  // The plain port keeps the kubelet's probes and no longer serves
  // /metrics: it says where they are.
  for (const char* probe : {"/livez", "/healthz", "/readyz"}) {
    absl::StatusOr<HttpResponse> r = GetPlain(probe);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 200) << probe << ": " << r->body;
  }
  absl::StatusOr<HttpResponse> plain = GetPlain("/metrics");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->status, 404) << plain->body;
  EXPECT_EQ(
      plain->body,
      absl::StrCat("/metrics is served only on the secure port ", secure_port_,
                   " (https, with a bearer token allowed to get /metrics)\n"));
  // What the tests' SchedulerProcess scrapes: the secure port, with the
  // reader's token.
  absl::StatusOr<std::string> scraped = scheduler_->Scrape();
  ASSERT_TRUE(scraped.ok()) << scraped.status();
  EXPECT_NE(scraped->find("metrics_scheduler_build_info{"), std::string::npos);
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

// --extender-secure with --client-ca-file: kube-scheduler, configured as
// the extender protocol asks (enableHTTPS, tlsConfig with a client
// certificate), is refused (403) until RBAC grants the certificate's user
// (its CN, "client") post on /filter and /prioritize, as the apiserver
// decides through the scheduler's SubjectAccessReviews; then its calls
// are served and its pod placed. A caller without a certificate or token
// gets 401.
TEST_F(SecurePortTest, SecureExtenderServesAnAuthorisedKubeScheduler) {
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/secure-extender-", getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  absl::StatusOr<testing::TestCertificates> certs =
      testing::MakeTestCertificates(dir);
  ASSERT_TRUE(certs.ok()) << certs.status();
  const std::string reader = ServiceAccountToken("reader");
  ASSERT_FALSE(reader.empty());
  GrantMetricsReader("reader");
  const int port = testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  ASSERT_NO_FATAL_FAILURE(StartScheduler(
      {"--extender-secure", "--client-ca-file=" + certs->ca,
       "--tls-cert-file=" + certs->server_cert,
       "--tls-private-key-file=" + certs->server_key},
      reader,
      absl::StrCat(kConfig, "extender: {listenAddress: \"127.0.0.1:", port,
                   "\"}\n")));
  const std::string url = absl::StrCat("https://127.0.0.1:", port);

  // The extender starts listening after the probes answer: wait until it
  // takes a connection.
  HttpClient anonymous(TlsOptions{.ca_file = certs->ca});
  absl::StatusOr<HttpResponse> refused;
  ASSERT_TRUE(WaitFor([&] {
    refused = anonymous.Do({.method = "POST",
                            .url = url + "/filter",
                            .body = "{}",
                            .timeout = absl::Seconds(10)});
    return refused.ok();
  })) << refused.status();
  EXPECT_EQ(refused->status, 401) << refused->body;

  node_ = suite_ + "-node";
  env_.CreateNode(node_);
  const std::string profile = suite_ + "-kube";
  absl::StatusOr<std::unique_ptr<testing::KubeSchedulerProcess>> kube =
      testing::KubeSchedulerProcess::Start(
          env_,
          absl::StrCat("profiles: [{schedulerName: ", profile, "}]\n",
                       "extenders:\n",
                       "  - urlPrefix: \"", url, "\"\n",
                       "    filterVerb: filter\n",
                       "    prioritizeVerb: prioritize\n",
                       "    weight: 1\n",
                       "    nodeCacheCapable: true\n",
                       "    ignorable: false\n",
                       "    httpTimeout: 5s\n",
                       "    enableHTTPS: true\n",
                       "    tlsConfig:\n",
                       "      certFile: \"", certs->client_cert, "\"\n",
                       "      keyFile: \"", certs->client_key, "\"\n",
                       "      caFile: \"", certs->ca, "\"\n"));
  ASSERT_TRUE(kube.ok()) << kube.status();
  auto pod_json = [&](const std::string& name) {
    return absl::StrCat(
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
        R"("},"spec":{"schedulerName":")", profile,
        R"(","containers":[{"name":"c","image":"pause",)",
        R"("resources":{"requests":{"cpu":"100m"}}}]}})");
  };

  // Not granted: kube-scheduler's calls are refused, and the extender not
  // being ignorable, the pod waits with the code in its event.
  env_.AdminOk("POST", "/api/v1/namespaces/" + suite_ + "/pods",
               pod_json("waits"));
  std::string events;
  EXPECT_TRUE(WaitFor(
      [&] {
        events = env_.AdminOk("GET", "/api/v1/namespaces/" + suite_ +
                                         "/events");
        return events.find("code 403") != std::string::npos;
      },
      absl::Seconds(60)))
      << events << (*kube)->Log();
  EXPECT_EQ(env_.PodNodes(suite_)["waits"], "");

  // Granted: served, and the pod placed.
  env_.AdminOk(
      "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
      absl::StrCat(R"({"apiVersion":"rbac.authorization.k8s.io/v1",)",
                   R"("kind":"ClusterRole","metadata":{"name":")", suite_,
                   R"(-extender"},"rules":[{"nonResourceURLs":["/filter",)",
                   R"("/prioritize"],"verbs":["post"]}]})"));
  env_.AdminOk(
      "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
      absl::StrCat(R"({"apiVersion":"rbac.authorization.k8s.io/v1",)",
                   R"("kind":"ClusterRoleBinding","metadata":{"name":")",
                   suite_, R"(-extender"},"roleRef":{"apiGroup":)",
                   R"("rbac.authorization.k8s.io","kind":"ClusterRole",)",
                   R"("name":")", suite_,
                   R"(-extender"},"subjects":[{"kind":"User",)",
                   R"("apiGroup":"rbac.authorization.k8s.io",)",
                   R"("name":"client"}]})"));
  EXPECT_TRUE(WaitFor([&] { return !env_.PodNodes(suite_)["waits"].empty(); },
                      absl::Seconds(90)))
      << (*kube)->Log();
  EXPECT_GE(scheduler_->Metric("metrics_scheduler_extender_requests_total{"
                               "verb=\"filter\",result=\"fallback\"}"),
            1);
  EXPECT_TRUE((*kube)->Running());
}

}  // namespace
}  // namespace ms
