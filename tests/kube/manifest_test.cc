#include "kube/manifest.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/testing/paths.h"

namespace ms::kube {
namespace {

TEST(YamlToJsonTest, ScalarsReadAsTheApiserverReadsThem) {
  struct Case {
    const char* yaml;
    const char* json;
  } cases[] = {
      {"a: 1", R"({"a":1})"},
      {"a: -2.5", R"({"a":-2.5})"},
      {"a: .5", R"({"a":0.5})"},
      {"a: '1'", R"({"a":"1"})"},
      {"a: \"true\"", R"({"a":"true"})"},
      {"a: true", R"({"a":true})"},
      {"a: False", R"({"a":false})"},
      {"a: ~", R"({"a":null})"},
      {"a:", R"({"a":null})"},
      {"a: 100m", R"({"a":"100m"})"},
      {"a: 1e3", R"({"a":1e3})"},
      {"a: [x, 2]", R"({"a":["x",2]})"},
      {"a: 'say \"hi\"'", R"({"a":"say \"hi\""})"},
      // Quantities stay strings, quoted or not.
      {"requests: {cpu: 1, memory: 64Mi}", R"({"requests":{"cpu":"1","memory":"64Mi"}})"},
      {"limits: {cpu: 0.5}", R"({"limits":{"cpu":"0.5"}})"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> json = YamlToJson(c.yaml);
    ASSERT_TRUE(json.ok()) << c.yaml << ": " << json.status();
    EXPECT_EQ(*json, c.json) << c.yaml;
  }
}

TEST(DecodePodManifestTest, FirstPodOfAMultiDocumentFile) {
  // A PriorityClass, then the pod.
  absl::StatusOr<Pod> pod = DecodePodManifest(
      ms::testing::ReadFileOrDie(ms::testing::TestDataPath("kube/pod_full.yaml")));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->name, "full");
  EXPECT_EQ(pod->namespace_, "decode");
  EXPECT_EQ(pod->scheduler_name, "metrics-scheduler");
  EXPECT_EQ(pod->node_selector,
            (std::map<std::string, std::string>{{"disk", "ssd"}}));
  ASSERT_EQ(pod->containers.size(), 2u);
  EXPECT_EQ(pod->containers[0].requests.milli_cpu, 250);
  EXPECT_EQ(pod->containers[0].requests.memory, 64 << 20);
  EXPECT_EQ(pod->containers[0].requests.ephemeral_storage, 1000000000);
  ASSERT_EQ(pod->containers[0].ports.size(), 2u);
  EXPECT_EQ(pod->containers[0].ports[0].host_port, 8080);
  ASSERT_EQ(pod->init_containers.size(), 2u);
  EXPECT_TRUE(pod->init_containers[1].restart_always);
  ASSERT_TRUE(pod->required_node_affinity.has_value());
  EXPECT_EQ(pod->required_node_affinity->size(), 2u);
  EXPECT_EQ(pod->tolerations.size(), 2u);
  EXPECT_EQ(pod->pod_anti_affinity.required.size(), 1u);
  EXPECT_EQ(pod->pod_affinity.preferred.size(), 1u);
  EXPECT_TRUE(pod->pod_affinity.required.empty());
  EXPECT_EQ(pod->topology_spread.size(), 1u);
  EXPECT_EQ(pod->claims, (std::vector<PodClaim>{{.name = "data"}}));
}

TEST(DecodePodManifestTest, WorkloadTemplateIsNamedAfterItsWorkload) {
  absl::StatusOr<Pod> pod = DecodePodManifest(R"(
apiVersion: v1
kind: Service
metadata: {name: web}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: web}}
    spec:
      schedulerName: metrics-scheduler
      containers:
        - name: c
          resources: {requests: {cpu: 1, memory: 1Gi}}
)");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->name, "web");
  EXPECT_EQ(pod->namespace_, "shop");
  EXPECT_EQ(pod->labels, (std::map<std::string, std::string>{{"app", "web"}}));
  ASSERT_EQ(pod->containers.size(), 1u);
  EXPECT_EQ(pod->containers[0].requests.milli_cpu, 1000);
  EXPECT_EQ(pod->containers[0].requests.memory, int64_t{1} << 30);

  absl::StatusOr<Pod> cron = DecodePodManifest(R"({"kind":"CronJob",
    "metadata":{"name":"nightly"},"spec":{"jobTemplate":{"spec":{"template":
    {"spec":{"containers":[{"name":"c"}]}}}}}})");
  ASSERT_TRUE(cron.ok()) << cron.status();
  EXPECT_EQ(cron->name, "nightly");
  EXPECT_EQ(cron->namespace_, "default");
}

TEST(DecodePodManifestTest, Errors) {
  absl::Status s = DecodePodManifest("kind: ConfigMap\nmetadata: {name: x}\n")
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "no Pod, and no workload")) << s;

  s = DecodePodManifest("kind: Pod\nspec: [\n").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "line 3, column 1: ")) << s;

  s = DecodePodManifest(
          "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
          "    - resources: {requests: {cpu: lots}}\n")
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "Pod p: ")) << s;
}

// A workload without a usable template is skipped, not a crash: yaml-cpp
// throws when a key is looked up under a missing or scalar node (found by
// tests/fuzz/manifest_fuzz).
TEST(DecodePodManifestTest, WorkloadWithoutTemplateIsSkipped) {
  absl::StatusOr<Pod> pod = DecodePodManifest(R"(kind: Deployment
metadata: {name: no-spec}
---
kind: CronJob
spec: {jobTemplate: 3}
---
kind: Pod
metadata: {name: p}
spec: {containers: []}
)");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->name, "p");
  // A workload whose metadata is not a mapping: an error, not a crash.
  pod = DecodePodManifest(
      "kind: Job\nmetadata: 7\nspec: {template: {spec: {containers: []}}}\n");
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument);
}

// Debian's yaml-cpp 0.7's LoadAll never returns on a document that starts
// with ',' (common/yaml.h; found by tests/fuzz/manifest_fuzz).
TEST(DecodePodManifestTest, CommaStartingADocumentIsAnError) {
  const std::string text = "kind: Pod\n--- !x ,\n";
  absl::Status s = DecodePodManifest(text).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()),
            "line 2, column 8: unexpected ','");
  EXPECT_EQ(YamlToJson(",").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ms::kube
