// `kubectl apply --dry-run=server` of everything under manifests/ against
// the local control plane's kube-apiserver: the objects are valid as the
// apiserver (v1.34) sees them, admission included.

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/manifests/manifest_checks.h"
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
// the README shows it (tests/manifests/testdata/existing-secret): the
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
