// The binary against the local control plane, at the highest log
// verbosity, with the scheduler identity's real token, and a metrics backend
// that cannot be reached from the start: it still binds a pod (fallback
// scoring), and neither the apiserver token nor the metrics token appears
// anywhere in its output.
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "tests/testing/paths.h"
#include "tests/testing/scheduler_process.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::SchedulerProcess;
using ::ms::testing::Testenv;
using ::ms::testing::WaitFor;

TEST(SecretsIntegrationTest, RealTokenNeverLoggedAndUnreachableBackendFallsBack) {
  Testenv env;
  ASSERT_FALSE(env.server().empty());
  env.ApplySchedulerRbac();
  const std::string suite = absl::StrCat("secrets-", getpid());
  env.CreateNamespace(suite);
  const std::string node = suite + "-n0";
  env.CreateNode(node, "4", "16Gi",
                 absl::StrCat(R"({"e2e-suite":")", suite, R"("})"));

  const std::string kube_token(absl::StripAsciiWhitespace(
      testing::ReadFileOrDie(env.dir() + "/scheduler.token")));
  ASSERT_FALSE(kube_token.empty());
  const std::string metrics_token = "metrics-3d5f7a9c1e3b5d7f9a1c";
  const std::string token_file =
      absl::StrCat(::testing::TempDir(), "/secrets-it-", getpid(), ".token");
  std::ofstream(token_file) << metrics_token << "\n";

  // Nothing listens on port 1: the backend is down from the start.
  std::string config = absl::StrCat(R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {url: "http://127.0.0.1:1", timeout: 1s, tokenFile: ")",
                                    token_file, R"("}
cache: {ttl: 1s, maxStaleness: 5s, refreshTimeout: 1s}
metrics:
  - {name: latency, query: http_latency_seconds}
)");
  absl::StatusOr<std::unique_ptr<SchedulerProcess>> s = SchedulerProcess::Start(
      {.config_yaml = config,
       .kubeconfig = env.dir() + "/scheduler.kubeconfig",
       .identity = suite,
       .extra_args = {"--leader-elect=false", "-v=3"}});
  ASSERT_TRUE(s.ok()) << s.status();
  SchedulerProcess& scheduler = **s;

  env.AdminOk(
      "POST", "/api/v1/namespaces/" + suite + "/pods",
      absl::StrCat(
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},)",
          R"("spec":{"schedulerName":"metrics-scheduler",)",
          R"("nodeSelector":{"e2e-suite":")", suite, R"("},)",
          R"("containers":[{"name":"c","image":"registry.k8s.io/pause:3.10"}]}})"));
  kube::KubeClient admin(env.AdminConfig());
  EXPECT_TRUE(WaitFor([&] {
    absl::StatusOr<kube::ObjectList<Pod>> pods = admin.ListPods(
        {.field_selector = "metadata.namespace=" + suite});
    return pods.ok() && pods->items.size() == 1 &&
           pods->items[0].node_name == node;
  })) << scheduler.Log();
  EXPECT_GE(
      scheduler.Metric("metrics_scheduler_decisions_total{mode=\"fallback\","
                       "profile=\"metrics-scheduler\"}"),
      1)
      << scheduler.Log();

  // The refresh failure is logged (without the token) once the cache has
  // tried the backend.
  EXPECT_TRUE(WaitFor([&] {
    return scheduler.Log().find("metric latency: refresh failed") !=
           std::string::npos;
  })) << scheduler.Log();
  EXPECT_EQ(scheduler.Stop(), 0);
  std::string log = scheduler.Log();
  EXPECT_EQ(log.find(kube_token), std::string::npos) << log;
  EXPECT_EQ(log.find(metrics_token), std::string::npos) << log;
  EXPECT_EQ(log.find("Bearer"), std::string::npos) << log;

  env.DeleteNamespace(suite);
  env.DeleteNode(node);
}

}  // namespace
}  // namespace ms
