// What manifests/ promises a cluster operator, checked in the YAML itself:
// the Deployment's hardening, probes and resources, the metrics token
// mounted as a file and never passed through the environment, and
// configurations that the scheduler accepts.

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace ms {
namespace {

std::string Manifest(const std::string& relative) {
  const char* src = std::getenv("MS_SOURCE_DIR");
  EXPECT_NE(src, nullptr) << "MS_SOURCE_DIR is not set";
  return std::string(src == nullptr ? "." : src) + "/manifests/" + relative;
}

// Every document of a multi-document YAML file.
std::vector<YAML::Node> LoadAll(const std::string& relative) {
  return YAML::LoadAllFromFile(Manifest(relative));
}

YAML::Node Only(const std::string& relative, const std::string& kind) {
  YAML::Node found;
  int count = 0;
  for (const YAML::Node& doc : LoadAll(relative)) {
    if (doc["kind"].as<std::string>() == kind) {
      found = doc;
      ++count;
    }
  }
  EXPECT_EQ(count, 1) << relative << ": " << kind;
  return found;
}

class DeploymentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    deployment_ = Only("base/deployment.yaml", "Deployment");
    ASSERT_TRUE(deployment_.IsMap());
    pod_ = deployment_["spec"]["template"]["spec"];
    ASSERT_EQ(pod_["containers"].size(), 1u);
    container_ = pod_["containers"][0];
  }

  YAML::Node deployment_, pod_, container_;
};

TEST_F(DeploymentTest, TwoReplicasWithLeaderElection) {
  EXPECT_EQ(deployment_["metadata"]["namespace"].as<std::string>(),
            "metrics-scheduler");
  EXPECT_EQ(deployment_["spec"]["replicas"].as<int>(), 2);
  EXPECT_EQ(pod_["serviceAccountName"].as<std::string>(), "metrics-scheduler");
  // The scheduler itself is placed by the default scheduler.
  EXPECT_FALSE(pod_["schedulerName"]);
  std::set<std::string> args;
  for (const YAML::Node& a : container_["args"]) {
    args.insert(a.as<std::string>());
  }
  EXPECT_EQ(args, (std::set<std::string>{
                      "--config=/etc/metrics-scheduler/config.yaml",
                      "--leader-elect=true", "--identity=$(POD_NAME)",
                      "-v=1"}));
}

TEST_F(DeploymentTest, RunsHardened) {
  EXPECT_TRUE(pod_["securityContext"]["runAsNonRoot"].as<bool>());
  EXPECT_EQ(pod_["securityContext"]["runAsUser"].as<int>(), 65532);
  EXPECT_EQ(pod_["securityContext"]["seccompProfile"]["type"].as<std::string>(),
            "RuntimeDefault");
  YAML::Node sc = container_["securityContext"];
  ASSERT_TRUE(sc.IsMap());
  EXPECT_TRUE(sc["runAsNonRoot"].as<bool>());
  EXPECT_TRUE(sc["readOnlyRootFilesystem"].as<bool>());
  EXPECT_FALSE(sc["allowPrivilegeEscalation"].as<bool>());
  EXPECT_FALSE(sc["privileged"].as<bool>());
  ASSERT_EQ(sc["capabilities"]["drop"].size(), 1u);
  EXPECT_EQ(sc["capabilities"]["drop"][0].as<std::string>(), "ALL");
  EXPECT_FALSE(sc["capabilities"]["add"]);
}

TEST_F(DeploymentTest, ProbesAndResources) {
  EXPECT_EQ(container_["livenessProbe"]["httpGet"]["path"].as<std::string>(),
            "/livez");
  EXPECT_EQ(container_["readinessProbe"]["httpGet"]["path"].as<std::string>(),
            "/readyz");
  EXPECT_EQ(container_["livenessProbe"]["httpGet"]["port"].as<std::string>(),
            "http");
  EXPECT_EQ(container_["readinessProbe"]["httpGet"]["port"].as<std::string>(),
            "http");
  ASSERT_EQ(container_["ports"].size(), 1u);
  EXPECT_EQ(container_["ports"][0]["name"].as<std::string>(), "http");
  // The port of http.listenAddress in config.yaml.
  EXPECT_EQ(container_["ports"][0]["containerPort"].as<int>(), 10260);
  YAML::Node r = container_["resources"];
  EXPECT_EQ(r["requests"]["cpu"].as<std::string>(), "100m");
  EXPECT_EQ(r["requests"]["memory"].as<std::string>(), "64Mi");
  EXPECT_EQ(r["limits"]["cpu"].as<std::string>(), "1");
  EXPECT_EQ(r["limits"]["memory"].as<std::string>(), "256Mi");
}

TEST_F(DeploymentTest, TokenIsAFileNeverAnEnvironmentVariable) {
  // The Secret is a volume...
  std::string volume;
  for (const YAML::Node& v : pod_["volumes"]) {
    if (v["secret"]) {
      EXPECT_EQ(v["secret"]["secretName"].as<std::string>(),
                "metrics-scheduler-metrics-token");
      volume = v["name"].as<std::string>();
    }
  }
  ASSERT_EQ(volume, "metrics-token");
  // ...mounted read-only where the configurations' tokenFile points...
  int mounts = 0;
  for (const YAML::Node& m : container_["volumeMounts"]) {
    if (m["name"].as<std::string>() != volume) continue;
    ++mounts;
    EXPECT_EQ(m["mountPath"].as<std::string>(),
              "/var/run/secrets/metrics-scheduler");
    EXPECT_TRUE(m["readOnly"].as<bool>());
  }
  EXPECT_EQ(mounts, 1);
  // ...and no Secret reaches the environment.
  EXPECT_FALSE(container_["envFrom"]);
  for (const YAML::Node& e : container_["env"]) {
    EXPECT_FALSE(e["valueFrom"]["secretKeyRef"]) << e["name"].as<std::string>();
  }
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

TEST(ManifestsTest, ConfigurationsAreValid) {
  absl::StatusOr<Config> prometheus = LoadConfigFile(Manifest("config.yaml"));
  ASSERT_TRUE(prometheus.ok()) << prometheus.status();
  EXPECT_EQ(prometheus->backend.type, BackendType::kPrometheus);
  absl::StatusOr<Config> sysdig =
      LoadConfigFile(Manifest("overlays/sysdig/config.yaml"));
  ASSERT_TRUE(sysdig.ok()) << sysdig.status();
  EXPECT_EQ(sysdig->backend.type, BackendType::kSysdig);
  for (const Config* c : {&*prometheus, &*sysdig}) {
    std::vector<std::string> names;
    for (const MetricConfig& m : c->metrics) names.push_back(m.name);
    EXPECT_EQ(names, (std::vector<std::string>{"http_latency", "io_latency",
                                               "error_rate"}));
    // The Lease rbac.yaml grants, and the port the Deployment exposes.
    EXPECT_EQ(c->leader_election.lease_namespace, "metrics-scheduler");
    EXPECT_EQ(c->leader_election.lease_name, "metrics-scheduler");
    EXPECT_EQ(c->http.listen_address, ":10260");
  }
}

TEST(ManifestsTest, LeaseRoleNamesTheConfiguredLease) {
  YAML::Node role = Only("rbac.yaml", "Role");
  std::set<std::string> names;
  for (const YAML::Node& rule : role["rules"]) {
    for (const YAML::Node& n : rule["resourceNames"]) {
      names.insert(n.as<std::string>());
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"metrics-scheduler"}));
}

// Least privilege, exactly: every verb the scheduler calls and no other
// (kube/client.h lists the calls). A verb removed by mistake fails the e2e
// tests, which run as the scheduler's identity with these rules only.
TEST(ManifestsTest, ClusterRoleGrantsExactlyTheCallsMade) {
  YAML::Node role = Only("rbac.yaml", "ClusterRole");
  std::set<std::string> grants;
  for (const YAML::Node& rule : role["rules"]) {
    for (const YAML::Node& group : rule["apiGroups"]) {
      for (const YAML::Node& resource : rule["resources"]) {
        for (const YAML::Node& verb : rule["verbs"]) {
          grants.insert(absl::StrCat(group.as<std::string>(), "/",
                                     resource.as<std::string>(), ":",
                                     verb.as<std::string>()));
        }
      }
    }
  }
  EXPECT_EQ(grants, (std::set<std::string>{
                        "/pods:get", "/pods:list", "/pods:watch",
                        "/pods:delete", "policy/poddisruptionbudgets:list",
                        "policy/poddisruptionbudgets:watch",
                        "/pods/binding:create", "/pods/status:patch",
                        "/nodes:list", "/nodes:watch", "/namespaces:list",
                        "/namespaces:watch", "/services:list",
                        "/services:watch", "/replicationcontrollers:list",
                        "/replicationcontrollers:watch",
                        "apps/replicasets:list", "apps/replicasets:watch",
                        "apps/statefulsets:list", "apps/statefulsets:watch",
                        "/persistentvolumeclaims:list",
                        "/persistentvolumeclaims:watch",
                        "/persistentvolumeclaims:patch",
                        "/persistentvolumes:list", "/persistentvolumes:watch",
                        "/persistentvolumes:patch",
                        "storage.k8s.io/storageclasses:list",
                        "storage.k8s.io/storageclasses:watch",
                        "storage.k8s.io/csinodes:list",
                        "storage.k8s.io/csinodes:watch",
                        "metrics.k8s.io/nodes:list", "/events:create"}));
}

TEST(ManifestsTest, ExampleWorkloadAsksForMetricsScheduler) {
  YAML::Node d = Only("example/workload.yaml", "Deployment");
  EXPECT_EQ(d["spec"]["template"]["spec"]["schedulerName"].as<std::string>(),
            "metrics-scheduler");
}

}  // namespace
}  // namespace ms
