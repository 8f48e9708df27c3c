// `kubectl apply --dry-run=server` of everything under manifests/ against
// the local control plane's kube-apiserver: the objects are valid as the
// apiserver (v1.34) sees them, admission included. manifests/monitoring's
// prometheus-operator objects go against strict stand-ins of its CRDs.

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/manifests/manifest_checks.h"
#include "tests/testing/command.h"
#include "tests/testing/paths.h"
#include "tests/testing/testenv.h"
#include "yaml-cpp/yaml.h"

namespace ms {
namespace {

using ::ms::testing::Testenv;

class ManifestsDryRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env_.server().empty());
    // A dry run creates nothing, so the namespace must exist first, as it
    // does once `kubectl apply -k` has run for real.
    env_.ApplySchedulerRbac();
    const char* src = std::getenv("MS_SOURCE_DIR");
    ASSERT_NE(src, nullptr);
    manifests_ = absl::StrCat(src, "/manifests");
  }

  Testenv env_;
  std::string manifests_;
};

// The objects of the base every kustomization shares, as kubectl reports a
// server-side dry run of them.
constexpr const char* kBaseObjects[] = {
    "namespace/metrics-scheduler",
    "serviceaccount/metrics-scheduler",
    "clusterrole.rbac.authorization.k8s.io/metrics-scheduler",
    "clusterrolebinding.rbac.authorization.k8s.io/metrics-scheduler",
    "clusterrole.rbac.authorization.k8s.io/metrics-scheduler-metrics-reader",
    "role.rbac.authorization.k8s.io/metrics-scheduler-leader-election",
    "rolebinding.rbac.authorization.k8s.io/metrics-scheduler-leader-election",
    "secret/metrics-scheduler-metrics-token created (server dry run)",
    "service/metrics-scheduler created (server dry run)",
    "deployment.apps/metrics-scheduler created (server dry run)",
    "poddisruptionbudget.policy/metrics-scheduler created (server dry run)",
};

TEST_F(ManifestsDryRunTest, PrometheusKustomization) {
  std::string out =
      env_.Kubectl(absl::StrCat("apply --dry-run=server -k ", manifests_));
  for (const char* object : kBaseObjects) {
    EXPECT_NE(out.find(object), std::string::npos) << object << "\n" << out;
  }
  EXPECT_NE(out.find("configmap/metrics-scheduler-config-"), std::string::npos)
      << out;
}

TEST_F(ManifestsDryRunTest, SysdigOverlay) {
  std::string out = env_.Kubectl(absl::StrCat(
      "apply --dry-run=server -k ", manifests_, "/overlays/sysdig"));
  for (const char* object : kBaseObjects) {
    EXPECT_NE(out.find(object), std::string::npos) << object << "\n" << out;
  }
  // The overlay's configuration, not the base's: a different content hash.
  std::string base = env_.Kubectl(absl::StrCat("kustomize ", manifests_));
  std::string sysdig =
      env_.Kubectl(absl::StrCat("kustomize ", manifests_, "/overlays/sysdig"));
  EXPECT_NE(base.find("type: prometheus"), std::string::npos);
  EXPECT_EQ(base.find("type: sysdig"), std::string::npos);
  EXPECT_NE(sysdig.find("type: sysdig"), std::string::npos);
  EXPECT_EQ(sysdig.find("type: prometheus"), std::string::npos);
}

TEST_F(ManifestsDryRunTest, ExampleWorkload) {
  // A name of this run's own: the namespace of a previous run may still be
  // terminating (its deletion is the namespace controller's, asynchronous).
  const std::string ns = absl::StrCat("manifests-example-", getpid());
  env_.CreateNamespace(ns);
  std::string out = env_.Kubectl(absl::StrCat(
      "apply --dry-run=server -n ", ns, " -f ", manifests_,
      "/example/workload.yaml"));
  env_.DeleteNamespace(ns);
  EXPECT_EQ(out, "deployment.apps/web created (server dry run)\n");
}

// manifests/components/existing-secret with a patch naming the Secret, as
// docs/deploying.md shows it (tests/manifests/testdata/existing-secret): the
// template is gone, the volume names the user's Secret, and the server
// accepts the rest.
TEST_F(ManifestsDryRunTest, ExistingSecretComponent) {
  const char* src = std::getenv("MS_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  const std::string overlay =
      absl::StrCat(src, "/tests/manifests/testdata/existing-secret");
  std::vector<YAML::Node> docs =
      YAML::LoadAll(env_.Kubectl(absl::StrCat("kustomize ", overlay)));
  EXPECT_TRUE(manifests::OfKind(docs, "Secret").empty());
  manifests::ExpectTokenIsAFile(manifests::Only(docs, "Deployment"),
                                "my-metrics-token");
  std::string out =
      env_.Kubectl(absl::StrCat("apply --dry-run=server -k ", overlay));
  for (const char* object : kBaseObjects) {
    if (absl::StartsWith(object, "secret/")) continue;
    EXPECT_NE(out.find(object), std::string::npos) << object << "\n" << out;
  }
  EXPECT_EQ(out.find("secret/"), std::string::npos) << out;
}

// manifests/components/serving-cert, as its comment shows it
// (tests/manifests/testdata/serving-cert): the Secret is mounted read-only
// and passed as the secure port's certificate and key, and the server
// accepts the result. The security checks still hold.
TEST_F(ManifestsDryRunTest, ServingCertComponent) {
  const std::string overlay = absl::StrCat(
      testing::SourceDir(), "/tests/manifests/testdata/serving-cert");
  std::vector<YAML::Node> docs =
      YAML::LoadAll(env_.Kubectl(absl::StrCat("kustomize ", overlay)));
  YAML::Node deployment = manifests::Only(docs, "Deployment");
  ASSERT_TRUE(deployment.IsMap());
  manifests::ExpectHardened(deployment);
  manifests::ExpectTokenIsAFile(deployment, "metrics-scheduler-metrics-token");
  manifests::ExpectMetricsOnSecurePortOnly(
      deployment, manifests::Only(docs, "Service"), 10259);
  const YAML::Node pod = deployment["spec"]["template"]["spec"];
  const YAML::Node container = pod["containers"][0];
  std::vector<std::string> args;
  for (const YAML::Node& a : container["args"]) {
    args.push_back(a.as<std::string>());
  }
  EXPECT_NE(std::find(args.begin(), args.end(),
                      "--tls-cert-file=/etc/metrics-scheduler-tls/tls.crt"),
            args.end());
  EXPECT_NE(std::find(args.begin(), args.end(),
                      "--tls-private-key-file=/etc/metrics-scheduler-tls/"
                      "tls.key"),
            args.end());
  int volumes = 0, mounts = 0;
  for (const YAML::Node& v : pod["volumes"]) {
    if (v["name"].as<std::string>() != "serving-cert") continue;
    ++volumes;
    EXPECT_EQ(v["secret"]["secretName"].as<std::string>(""),
              "metrics-scheduler-tls");
    EXPECT_EQ(v["secret"]["defaultMode"].as<int>(0), 0440);
  }
  for (const YAML::Node& m : container["volumeMounts"]) {
    if (m["name"].as<std::string>() != "serving-cert") continue;
    ++mounts;
    EXPECT_EQ(m["mountPath"].as<std::string>(""), "/etc/metrics-scheduler-tls");
    EXPECT_EQ(m["readOnly"].as<std::string>(""), "true");
  }
  EXPECT_EQ(volumes, 1);
  EXPECT_EQ(mounts, 1);
  std::string out =
      env_.Kubectl(absl::StrCat("apply --dry-run=server -k ", overlay));
  for (const char* object : kBaseObjects) {
    EXPECT_NE(out.find(object), std::string::npos) << object << "\n" << out;
  }
}

// manifests/monitoring/ against stand-ins of prometheus-operator's CRDs
// (testdata/monitoring-crds.yaml, strict: a misspelt field is refused),
// the Prometheus binding included.
TEST_F(ManifestsDryRunTest, MonitoringKustomization) {
  env_.Kubectl(absl::StrCat("apply -f ", testing::SourceDir(),
                            "/tests/manifests/testdata/monitoring-crds.yaml"));
  env_.Kubectl(
      "wait --for condition=established --timeout=60s "
      "crd/servicemonitors.monitoring.coreos.com "
      "crd/prometheusrules.monitoring.coreos.com");
  // Established, then served: wait until kubectl finds the kinds.
  const char* bin = std::getenv("TESTENV_BIN");
  ASSERT_NE(bin, nullptr);
  EXPECT_TRUE(testing::WaitFor([&] {
    return testing::RunCommandLine(
               absl::StrCat(bin, " kubectl --kubeconfig ", env_.dir(),
                            "/admin.kubeconfig -n metrics-scheduler get "
                            "servicemonitors,prometheusrules"))
               .exit_code == 0;
  }));
  const std::string out = env_.Kubectl(
      absl::StrCat("apply --dry-run=server -k ", manifests_, "/monitoring"));
  for (const char* object :
       {"servicemonitor.monitoring.coreos.com/metrics-scheduler created",
        "prometheusrule.monitoring.coreos.com/metrics-scheduler created",
        "clusterrolebinding.rbac.authorization.k8s.io/"
        "metrics-scheduler-metrics-reader created",
        "configmap/metrics-scheduler-dashboard created"}) {
    EXPECT_NE(out.find(object), std::string::npos) << object << "\n" << out;
  }
}

// The Deployment's priorityClassName is checked when its pods are created,
// not when the Deployment is: a pod made of its template, dry-run in the
// namespace metrics-scheduler, is admitted with system-cluster-critical's
// priority (the Priority admission plugin confines that class to no
// namespace; only a ResourceQuota admission configuration would).
TEST_F(ManifestsDryRunTest, CriticalPriorityIsAdmittedOutsideKubeSystem) {
  YAML::Node deployment = manifests::Only(
      YAML::LoadAll(env_.Kubectl(absl::StrCat("kustomize ", manifests_))),
      "Deployment");
  ASSERT_TRUE(deployment.IsMap());
  YAML::Node pod;
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  pod["metadata"]["name"] = "priority-check";
  pod["metadata"]["namespace"] = "metrics-scheduler";
  pod["spec"] = deployment["spec"]["template"]["spec"];
  const std::string file = absl::StrCat(::testing::TempDir(), "/priority-pod-",
                                        getpid(), ".yaml");
  {
    YAML::Emitter out;
    out << pod;
    std::ofstream(file) << out.c_str() << "\n";
  }
  YAML::Node admitted = YAML::Load(env_.Kubectl(
      absl::StrCat("create --dry-run=server -o yaml -f ", file)));
  std::remove(file.c_str());
  EXPECT_EQ(admitted["spec"]["priorityClassName"].as<std::string>(""),
            "system-cluster-critical");
  EXPECT_EQ(admitted["spec"]["priority"].as<int64_t>(0), 2000000000);
}

}  // namespace
}  // namespace ms
