// The binary and its secrets, against loopback servers standing in for the
// apiserver and Prometheus: at the highest log verbosity it sends both
// bearer tokens and never writes either in its logs; rotated token files
// are picked up; turning TLS verification off is logged as a warning; and a
// metrics backend that cannot be reached at start does not stop it (it
// schedules with the built-in terms: docs/scoring.md, "Fallback"); an exec
// credential plugin's token is sent and never logged either.
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "kube/decode.h"
#include "model/topology_spread.h"
#include "tests/testing/exec_plugin.h"
#include "tests/testing/http_server.h"
#include "tests/testing/scheduler_process.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::HttpAnswer;
using ::ms::testing::RecordedRequest;
using ::ms::testing::SchedulerProcess;
using ::ms::testing::TestHttpServer;
using ::ms::testing::WaitFor;

constexpr char kNodeList[] =
    R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"5"},)"
    R"("items":[{"metadata":{"name":"n1","resourceVersion":"5"},"status":{)"
    R"("allocatable":{"cpu":"4","memory":"16Gi","pods":"110"},)"
    R"("conditions":[{"type":"Ready","status":"True"}]}}]})";
constexpr char kPodList[] =
    R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},)"
    R"("items":[]})";
constexpr char kNamespaceList[] =
    R"({"kind":"NamespaceList","apiVersion":"v1","metadata":)"
    R"({"resourceVersion":"5"},"items":[{"metadata":{"name":"default"}}]})";
constexpr char kEmptyList[] =
    R"({"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"5"},)"
    R"("items":[]})";
constexpr char kVector[] =
    R"({"status":"success","data":{"resultType":"vector","result":[)"
    R"({"metric":{"node":"n1"},"value":[1700000000,"0.1"]}]}})";

class SecretsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/secrets-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()
                            ->current_test_info()
                            ->name());
    ASSERT_EQ(std::system(("mkdir -p " + dir_).c_str()), 0);
    absl::StatusOr<std::unique_ptr<TestHttpServer>> api =
        TestHttpServer::Start();
    ASSERT_TRUE(api.ok()) << api.status();
    apiserver_ = std::move(*api);
    // Lists answer at once; a watch ends after a while with no events, so
    // the informers come back with new requests (and the current token).
    apiserver_->SetHandler([](const RecordedRequest& r) {
      if (absl::StrContains(r.target, "watch=")) {
        absl::SleepFor(absl::Milliseconds(200));
        return HttpAnswer{200, ""};
      }
      if (r.Path() == "/version") {
        return HttpAnswer{
            200, R"({"major":"1","minor":"37","gitVersion":"v1.37.2"})"};
      }
      if (r.Path() == "/api/v1/nodes") return HttpAnswer{200, kNodeList};
      if (r.Path() == "/api/v1/pods") return HttpAnswer{200, kPodList};
      if (r.Path() == "/api/v1/namespaces") {
        return HttpAnswer{200, kNamespaceList};
      }
      for (WorkloadKind kind : kWorkloadKinds) {
        if (r.Path() == kube::WorkloadPath(kind)) {
          return HttpAnswer{200, kEmptyList};
        }
      }
      for (const char* storage :
           {kube::kClaimsPath, kube::kVolumesPath, kube::kStorageClassesPath,
            kube::kCsiNodesPath, kube::kCsiDriversPath, kube::kCapacitiesPath,
            kube::kBudgetsPath}) {
        if (r.Path() == storage) return HttpAnswer{200, kEmptyList};
      }
      return HttpAnswer{404, R"({"kind":"Status","code":404})"};
    });
    absl::StatusOr<std::unique_ptr<TestHttpServer>> prom =
        TestHttpServer::Start();
    ASSERT_TRUE(prom.ok()) << prom.status();
    prometheus_ = std::move(*prom);
    prometheus_->SetAnswer(200, kVector);
  }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // A kubeconfig for the fake apiserver whose user reads `token_file`.
  std::string Kubeconfig(const std::string& token_file) {
    return Write("kubeconfig", absl::StrCat(R"(apiVersion: v1
kind: Config
current-context: c
clusters:
- name: k
  cluster: {server: ")", apiserver_->url(), R"("}
contexts:
- name: c
  context: {cluster: k, user: u}
users:
- name: u
  user: {tokenFile: ")", token_file, R"("}
)"));
  }

  static std::string Config(const std::string& url,
                            const std::string& token_file,
                            bool insecure_skip_verify) {
    return absl::StrCat(R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend:
  url: ")", url, R"("
  timeout: 1s
  tokenFile: ")", token_file, R"("
  insecureSkipVerify: )", insecure_skip_verify ? "true" : "false", R"(
cache: {ttl: 1s, maxStaleness: 5s, refreshTimeout: 1s}
metrics:
  - {name: latency, query: http_latency_seconds}
)");
  }

  // Whether `server` has received a request carrying `Bearer token`.
  static bool Saw(const TestHttpServer& server, const std::string& token) {
    for (const RecordedRequest& r : server.requests()) {
      if (r.Header("authorization") == "Bearer " + token) return true;
    }
    return false;
  }

  std::string dir_;
  std::unique_ptr<TestHttpServer> apiserver_;
  std::unique_ptr<TestHttpServer> prometheus_;
};

TEST_F(SecretsTest, TokensAreSentAndRotatedButNeverLogged) {
  // Each token is written in full nowhere but in its file and on the wire.
  const std::string kube_token = "kube-7f3c9a1e2b4d6f8a0c1e3b5d";
  const std::string kube_token_2 = "kube-rotated-5e7a9c1b3d5f7a9c1e";
  const std::string metrics_token = "metrics-9b8a7c6d5e4f3a2b1c0d";
  const std::string metrics_token_2 = "metrics-rotated-2c4e6a8b0d2f4a6c8e";
  std::string kube_file = Write("kube-token", kube_token + "\n");
  std::string metrics_file = Write("metrics-token", metrics_token + "\n");

  absl::StatusOr<std::unique_ptr<SchedulerProcess>> s = SchedulerProcess::Start(
      {.config_yaml = Config(prometheus_->url(), metrics_file, true),
       .kubeconfig = Kubeconfig(kube_file),
       .extra_args = {"--leader-elect=false", "-v=3"}});
  ASSERT_TRUE(s.ok()) << s.status();
  SchedulerProcess& scheduler = **s;

  EXPECT_TRUE(WaitFor([&] { return Saw(*apiserver_, kube_token); }))
      << scheduler.Log();
  EXPECT_TRUE(WaitFor([&] { return Saw(*prometheus_, metrics_token); }))
      << scheduler.Log();

  // The kubelet rotates a mounted token by replacing the file.
  Write("kube-token.new", kube_token_2 + "\n");
  Write("metrics-token.new", metrics_token_2 + "\n");
  ASSERT_EQ(rename((kube_file + ".new").c_str(), kube_file.c_str()), 0);
  ASSERT_EQ(rename((metrics_file + ".new").c_str(), metrics_file.c_str()), 0);
  EXPECT_TRUE(WaitFor([&] { return Saw(*apiserver_, kube_token_2); }))
      << scheduler.Log();
  EXPECT_TRUE(WaitFor([&] { return Saw(*prometheus_, metrics_token_2); }))
      << scheduler.Log();

  EXPECT_EQ(scheduler.Stop(), 0);
  std::string log = scheduler.Log();
  EXPECT_NE(log.find("metrics backend's TLS certificate is not verified"),
            std::string::npos)
      << log;
  for (const std::string& secret :
       {kube_token, kube_token_2, metrics_token, metrics_token_2}) {
    EXPECT_EQ(log.find(secret), std::string::npos) << secret << " in\n" << log;
    // Not even a recognisable part of it.
    EXPECT_EQ(log.find(secret.substr(secret.size() - 12)), std::string::npos)
        << secret;
  }
  EXPECT_EQ(log.find("Bearer"), std::string::npos) << log;
}

// The kubeconfig comes from $KUBECONFIG, two files; --context picks the
// second file's context, whose user is an exec plugin. Its token reaches
// the apiserver and appears nowhere in the log; with no expiry and no 401
// the plugin runs once for every request.
TEST_F(SecretsTest, ExecPluginFromKubeconfigListAndContext) {
  const std::string token = "exec-4f1d8b2a6c3e9f7a5d0b8c2e";
  const std::string plugin = dir_ + "/plugin";
  const std::string runs = dir_ + "/runs";
  testing::WriteScript(plugin,
                       testing::CountRuns(runs) +
                           testing::PrintCredential(testing::TokenCredential(
                               token, "",
                               "client.authentication.k8s.io/v1beta1")));
  std::string first = Write("first-kubeconfig", R"(
current-context: elsewhere
clusters: [{name: elsewhere, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: nobody, user: {token: wrong}}]
contexts: [{name: elsewhere, context: {cluster: elsewhere, user: nobody}}]
)");
  std::string second = Write("second-kubeconfig", absl::StrCat(R"(
clusters: [{name: fake, cluster: {server: ")", apiserver_->url(), R"("}}]
users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: )", plugin, R"(
contexts: [{name: fake, context: {cluster: fake, user: plugin}}]
)"));
  absl::StatusOr<std::unique_ptr<SchedulerProcess>> s = SchedulerProcess::Start(
      {.config_yaml = Config(prometheus_->url(),
                             Write("metrics-token", "m\n"), false),
       .env = {{"KUBECONFIG", first + ":" + second}},
       .extra_args = {"--context=fake", "--leader-elect=false", "-v=3"}});
  ASSERT_TRUE(s.ok()) << s.status();
  SchedulerProcess& scheduler = **s;
  EXPECT_TRUE(WaitFor([&] { return Saw(*apiserver_, token); }))
      << scheduler.Log();
  EXPECT_EQ(scheduler.Stop(), 0);
  for (const RecordedRequest& r : apiserver_->requests()) {
    EXPECT_EQ(r.Header("authorization"), "Bearer " + token) << r.target;
  }
  EXPECT_EQ(testing::RunsCounted(runs), 1);
  std::string log = scheduler.Log();
  EXPECT_NE(log.find("exec plugin " + plugin + ": new credential"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find(token), std::string::npos) << log;
  EXPECT_EQ(log.find(token.substr(token.size() - 12)), std::string::npos);
}

TEST_F(SecretsTest, TlsVerificationIsOnByDefault) {
  std::string metrics_file = Write("metrics-token", "t0k3n\n");
  absl::StatusOr<std::unique_ptr<SchedulerProcess>> s = SchedulerProcess::Start(
      {.config_yaml = Config(prometheus_->url(), metrics_file, false),
       .kubeconfig = Kubeconfig(Write("kube-token", "k\n")),
       .extra_args = {"--leader-elect=false", "-v=3"}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(WaitFor([&] { return prometheus_->request_count() > 0; }));
  EXPECT_EQ((*s)->Stop(), 0);
  EXPECT_EQ((*s)->Log().find("not verified"), std::string::npos)
      << (*s)->Log();
}

TEST_F(SecretsTest, UnreachableBackendAtStartDoesNotStopTheScheduler) {
  // Nothing listens on port 1: every refresh fails at once.
  absl::StatusOr<std::unique_ptr<SchedulerProcess>> s = SchedulerProcess::Start(
      {.config_yaml = Config("http://127.0.0.1:1",
                             Write("metrics-token", "t\n"), false),
       .kubeconfig = Kubeconfig(Write("kube-token", "k\n")),
       .extra_args = {"--leader-elect=false"}});
  ASSERT_TRUE(s.ok()) << s.status();
  SchedulerProcess& scheduler = **s;
  EXPECT_TRUE(WaitFor([&] { return scheduler.Ready(); })) << scheduler.Log();
  EXPECT_TRUE(WaitFor([&] {
    return absl::StrContains(scheduler.Log(), "metric latency: refresh failed");
  })) << scheduler.Log();
  EXPECT_TRUE(scheduler.Ready());
  EXPECT_EQ(scheduler.Stop(), 0) << scheduler.Log();
}

}  // namespace
}  // namespace ms
