// What manifests/ promises a cluster operator, checked in the YAML itself:
// the Deployment's hardening, probes and resources, its PodDisruptionBudget
// and priority, the metrics token mounted as a file and never passed
// through the environment, least-privilege RBAC, /metrics served and
// scraped on the secure port only, and configurations that the scheduler
// accepts. The checks are manifest_checks.h's, which the Helm
// chart's test applies to the chart too.

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "gtest/gtest.h"
#include "tests/manifests/manifest_checks.h"
#include "yaml-cpp/yaml.h"

namespace ms {
namespace {

using manifests::ExpectBudgetKeepsOneReplica;
using manifests::ExpectHardened;
using manifests::ExpectMayGetMetricsOnly;
using manifests::ExpectMetricsOnSecurePortOnly;
using manifests::ExpectProbesAndDefaultResources;
using manifests::ExpectSecureScrape;
using manifests::ExpectSchedulerPod;
using manifests::ExpectTokenIsAFile;
using manifests::Grants;
using manifests::ResourceNames;
using manifests::SchedulerGrants;

std::string Manifest(const std::string& relative) {
  const char* src = std::getenv("MS_SOURCE_DIR");
  EXPECT_NE(src, nullptr) << "MS_SOURCE_DIR is not set";
  return std::string(src == nullptr ? "." : src) + "/manifests/" + relative;
}

// The one document of `kind` in a file of manifests/.
YAML::Node Only(const std::string& relative, const std::string& kind) {
  SCOPED_TRACE(relative);
  return manifests::Only(YAML::LoadAllFromFile(Manifest(relative)), kind);
}

class DeploymentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    deployment_ = Only("base/deployment.yaml", "Deployment");
    ASSERT_TRUE(deployment_.IsMap());
  }

  YAML::Node deployment_;
};

TEST_F(DeploymentTest, TwoReplicasWithLeaderElection) {
  EXPECT_EQ(deployment_["metadata"]["namespace"].as<std::string>(),
            "metrics-scheduler");
  EXPECT_EQ(deployment_["spec"]["replicas"].as<int>(), 2);
  const YAML::Node pod = deployment_["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"].as<std::string>(), "metrics-scheduler");
  ExpectSchedulerPod(deployment_);
  std::set<std::string> args;
  for (const YAML::Node& a : pod["containers"][0]["args"]) {
    args.insert(a.as<std::string>());
  }
  EXPECT_EQ(args, (std::set<std::string>{
                      "--config=/etc/metrics-scheduler/config.yaml",
                      "--leader-elect=true", "--identity=$(POD_NAME)",
                      "--secure-port=10259", "--bind-address=$(POD_IP)",
                      "-v=1"}));
}

TEST_F(DeploymentTest, RunsHardened) { ExpectHardened(deployment_); }

TEST_F(DeploymentTest, ProbesAndResources) {
  ExpectProbesAndDefaultResources(deployment_);
}

// As kube-scheduler: /metrics on the secure port alone, which the Service
// exposes; the probes on the plain port, which it does not.
TEST_F(DeploymentTest, MetricsOnlyOnTheSecurePort) {
  ExpectMetricsOnSecurePortOnly(
      deployment_, Only("base/service.yaml", "Service"), 10259);
}

TEST_F(DeploymentTest, TokenIsAFileNeverAnEnvironmentVariable) {
  ExpectTokenIsAFile(deployment_, "metrics-scheduler-metrics-token");
  absl::StatusOr<Config> sysdig =
      LoadConfigFile(Manifest("overlays/sysdig/config.yaml"));
  ASSERT_TRUE(sysdig.ok()) << sysdig.status();
  EXPECT_EQ(sysdig->backend.token_file,
            "/var/run/secrets/metrics-scheduler/token");
  // The template carries no data, so re-applying never wipes a real token.
  YAML::Node secret = Only("base/secret.yaml", "Secret");
  EXPECT_FALSE(secret["data"]);
  EXPECT_FALSE(secret["stringData"]);
}

TEST_F(DeploymentTest, BudgetKeepsOneReplicaThroughADrain) {
  ExpectBudgetKeepsOneReplica(Only("base/pdb.yaml", "PodDisruptionBudget"),
                              deployment_);
}

TEST(ManifestsTest, BaseListsEveryFile) {
  YAML::Node kustomization =
      YAML::LoadFile(Manifest("base/kustomization.yaml"));
  std::set<std::string> resources;
  for (const YAML::Node& r : kustomization["resources"]) {
    resources.insert(r.as<std::string>());
  }
  EXPECT_EQ(resources, (std::set<std::string>{
                           "namespace.yaml", "rbac.yaml",
                           "metrics-reader.yaml", "secret.yaml",
                           "deployment.yaml", "pdb.yaml", "service.yaml"}));
}

TEST(ManifestsTest, ExistingSecretComponentDropsTheTemplate) {
  YAML::Node component = YAML::LoadFile(
      Manifest("components/existing-secret/kustomization.yaml"));
  EXPECT_EQ(component["kind"].as<std::string>(), "Component");
  ASSERT_EQ(component["patches"].size(), 1u);
  YAML::Node patch =
      YAML::Load(component["patches"][0]["patch"].as<std::string>());
  EXPECT_EQ(patch["$patch"].as<std::string>(), "delete");
  EXPECT_EQ(patch["kind"].as<std::string>(), "Secret");
  YAML::Node secret = Only("base/secret.yaml", "Secret");
  EXPECT_EQ(patch["metadata"]["name"].as<std::string>(),
            secret["metadata"]["name"].as<std::string>());
  EXPECT_EQ(patch["metadata"]["namespace"].as<std::string>(),
            secret["metadata"]["namespace"].as<std::string>());
}

TEST(ManifestsTest, ConfigurationsAreValid) {
  absl::StatusOr<Config> prometheus = LoadConfigFile(Manifest("config.yaml"));
  ASSERT_TRUE(prometheus.ok()) << prometheus.status();
  EXPECT_EQ(prometheus->backend.type, BackendType::kPrometheus);
  absl::StatusOr<Config> sysdig =
      LoadConfigFile(Manifest("overlays/sysdig/config.yaml"));
  ASSERT_TRUE(sysdig.ok()) << sysdig.status();
  EXPECT_EQ(sysdig->backend.type, BackendType::kSysdig);
  auto names = [](const Config& c) {
    std::vector<std::string> out;
    for (const MetricConfig& m : c.profiles[0].metrics) out.push_back(m.name);
    return out;
  };
  EXPECT_EQ(names(*prometheus),
            (std::vector<std::string>{"cpu", "cpu_2m", "http_latency"}));
  // The latency is read as the node's speed, over its own window's CPU.
  EXPECT_EQ(prometheus->profiles[0].metrics[2].unloaded.utilisation, "cpu_2m");
  EXPECT_EQ(prometheus->profiles[0].metrics[1].weight, 0);
  EXPECT_EQ(names(*sysdig), (std::vector<std::string>{
                                "cpu", "http_latency", "io_latency",
                                "error_rate"}));
  for (const Config* c : {&*prometheus, &*sysdig}) {
    // The CPU metric charges pods the metrics have not seen yet.
    EXPECT_EQ(c->profiles[0].metrics[0].estimate.basis,
              UnseenLoadEstimate::Basis::kCpuRequests);
    // The Lease rbac.yaml grants, and the port the Deployment exposes.
    EXPECT_EQ(c->leader_election.lease_namespace, "metrics-scheduler");
    EXPECT_EQ(c->leader_election.lease_name, "metrics-scheduler");
    EXPECT_EQ(c->http.listen_address, ":10260");
  }
}

TEST(ManifestsTest, LeaseRoleNamesTheConfiguredLease) {
  EXPECT_EQ(ResourceNames(Only("rbac.yaml", "Role")),
            (std::set<std::string>{"metrics-scheduler"}));
}

// Least privilege, exactly: every verb the scheduler calls and no other
// (kube/client.h lists the calls). A verb removed by mistake fails the e2e
// tests, which run as the scheduler's identity with these rules only.
TEST(ManifestsTest, ClusterRoleGrantsExactlyTheCallsMade) {
  EXPECT_EQ(Grants(Only("rbac.yaml", "ClusterRole")), SchedulerGrants());
}

// The secure port's scrapers are granted GET /metrics and nothing else.
TEST(ManifestsTest, MetricsReaderMayGetMetricsOnly) {
  YAML::Node role = Only("base/metrics-reader.yaml", "ClusterRole");
  ASSERT_TRUE(role.IsMap());
  EXPECT_EQ(role["metadata"]["name"].as<std::string>(),
            "metrics-scheduler-metrics-reader");
  ExpectMayGetMetricsOnly(role);
}

// manifests/monitoring/ scrapes what the base serves: the Service's
// https-metrics port, as a Prometheus the binding lets read /metrics.
TEST(ManifestsTest, MonitoringScrapesTheSecurePort) {
  YAML::Node monitor = Only("monitoring/servicemonitor.yaml", "ServiceMonitor");
  ASSERT_TRUE(monitor.IsMap());
  ASSERT_EQ(monitor["spec"]["endpoints"].size(), 1u);
  ExpectSecureScrape(monitor["spec"]["endpoints"][0]);
  YAML::Node service = Only("base/service.yaml", "Service");
  EXPECT_EQ(monitor["spec"]["endpoints"][0]["port"].as<std::string>(),
            service["spec"]["ports"][0]["name"].as<std::string>());

  // kube-prometheus' Prometheus, bound to the reader role and nothing else.
  YAML::Node binding =
      Only("monitoring/metrics-reader-binding.yaml", "ClusterRoleBinding");
  ASSERT_TRUE(binding.IsMap());
  EXPECT_EQ(binding["roleRef"]["kind"].as<std::string>(), "ClusterRole");
  EXPECT_EQ(binding["roleRef"]["name"].as<std::string>(),
            Only("base/metrics-reader.yaml", "ClusterRole")["metadata"]["name"]
                .as<std::string>());
  ASSERT_EQ(binding["subjects"].size(), 1u);
  EXPECT_EQ(binding["subjects"][0]["kind"].as<std::string>(), "ServiceAccount");
  EXPECT_EQ(binding["subjects"][0]["name"].as<std::string>(), "prometheus-k8s");
  EXPECT_EQ(binding["subjects"][0]["namespace"].as<std::string>(),
            "monitoring");

  YAML::Node kustomization =
      YAML::LoadFile(Manifest("monitoring/kustomization.yaml"));
  std::set<std::string> resources;
  for (const YAML::Node& r : kustomization["resources"]) {
    resources.insert(r.as<std::string>());
  }
  EXPECT_EQ(resources, (std::set<std::string>{"servicemonitor.yaml",
                                              "metrics-reader-binding.yaml",
                                              "prometheusrule.yaml"}));
}

TEST(ManifestsTest, ExampleWorkloadAsksForMetricsScheduler) {
  YAML::Node d = Only("example/workload.yaml", "Deployment");
  EXPECT_EQ(d["spec"]["template"]["spec"]["schedulerName"].as<std::string>(),
            "metrics-scheduler");
}

}  // namespace
}  // namespace ms
