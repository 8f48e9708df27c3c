#include "kube/decode.h"

#include <map>
#include <random>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/image_names.h"
#include "model/node_features.h"
#include "tests/testing/paths.h"

namespace ms::kube {
namespace {

using ::ms::testing::ReadFileOrDie;
using ::ms::testing::TestDataPath;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// The hand-written reading of the apiserver's form agrees with absl's
// general RFC 3339 parser, which reads every other form.
TEST(ParseTimestampTest, AgreesWithAGeneralParser) {
  auto general = [](const std::string& text) {
    absl::Time t;
    std::string err;
    EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, text, &t, &err)) << text;
    return absl::ToUnixMillis(t);
  };
  std::vector<std::string> texts = {
      "1970-01-01T00:00:00Z",        "2000-02-29T23:59:59Z",
      "2024-12-31T12:00:00Z",        "2100-03-01T00:00:00Z",
      "1969-12-31T23:59:59.999Z",    "2026-11-21T22:10:00.123456Z",
      "2026-11-21T22:10:00.1Z",      "2026-11-21T22:10:00.123456789Z",
      "2026-11-21T22:10:00+02:00",   "2026-11-21t22:10:00z",
  };
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    int64_t seconds = std::uniform_int_distribution<int64_t>(
        -2208988800, 7258118400)(rng);  // 1900 to 2200
    texts.push_back(absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ",
                                     absl::FromUnixSeconds(seconds) +
                                         absl::Microseconds(i * 977 % 1000000),
                                     absl::UTCTimeZone()));
  }
  for (const std::string& text : texts) {
    absl::StatusOr<int64_t> ms = ParseTimestampMs(text);
    ASSERT_TRUE(ms.ok()) << text << ": " << ms.status();
    EXPECT_EQ(*ms, general(text)) << text;
  }
  for (const char* bad : {"", "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z",
                          "2026-11-21T24:00:00Z", "2026-11-21 22:10:00Z",
                          "2026-11-21T22:10:0xZ", "yesterday"}) {
    EXPECT_EQ(ParseTimestampMs(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

// tests/testdata/kube/pod_full.json was recorded from the testenv's
// kube-apiserver (`kubectl get pod -o json`) for the manifest
// tests/testdata/kube/pod_full.yaml.
TEST(DecodePodTest, RecordedPodWithEveryField) {
  absl::StatusOr<Pod> pod =
      DecodePod(ReadFileOrDie(TestDataPath("kube/pod_full.json")));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->name, "full");
  EXPECT_EQ(pod->namespace_, "decode");
  EXPECT_FALSE(pod->uid.empty());
  EXPECT_FALSE(pod->resource_version.empty());
  EXPECT_EQ(pod->labels.at("app"), "web");
  EXPECT_EQ(pod->scheduler_name, "metrics-scheduler");
  EXPECT_EQ(pod->node_name, "");
  EXPECT_FALSE(pod->deleting);
  EXPECT_EQ(pod->phase, PodPhase::kPending);
  EXPECT_EQ(pod->priority, 1000);
  EXPECT_GT(pod->creation_time_ms, 1700000000000);
  EXPECT_EQ(pod->node_selector.at("disk"), "ssd");

  ASSERT_TRUE(pod->required_node_affinity.has_value());
  ASSERT_EQ(pod->required_node_affinity->size(), 2u);
  const NodeSelectorTerm& t0 = (*pod->required_node_affinity)[0];
  ASSERT_EQ(t0.match_expressions.size(), 2u);
  EXPECT_EQ(t0.match_expressions[0].key, "zone");
  EXPECT_EQ(t0.match_expressions[0].op, SelectorOperator::kIn);
  EXPECT_EQ(t0.match_expressions[0].values,
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t0.match_expressions[1].op, SelectorOperator::kGt);
  const NodeSelectorTerm& t1 = (*pod->required_node_affinity)[1];
  ASSERT_EQ(t1.match_fields.size(), 1u);
  EXPECT_EQ(t1.match_fields[0].key, "metadata.name");
  EXPECT_EQ(t1.match_fields[0].values, (std::vector<std::string>{"node-1"}));

  // The apiserver adds the two default NoExecute tolerations after ours.
  ASSERT_GE(pod->tolerations.size(), 2u);
  EXPECT_EQ(pod->tolerations[0].key, "dedicated");
  EXPECT_EQ(pod->tolerations[0].op, TolerationOperator::kEqual);
  EXPECT_EQ(pod->tolerations[0].value, "web");
  EXPECT_EQ(pod->tolerations[0].effect, TaintEffect::kNoSchedule);
  EXPECT_EQ(pod->tolerations[1].op, TolerationOperator::kExists);
  EXPECT_FALSE(pod->tolerations[1].effect.has_value());

  ASSERT_EQ(pod->containers.size(), 2u);
  EXPECT_EQ(pod->containers[0].requests.milli_cpu, 250);
  EXPECT_EQ(pod->containers[0].requests.memory, 64LL * 1024 * 1024);
  EXPECT_EQ(pod->containers[0].requests.ephemeral_storage, 1000000000);
  EXPECT_EQ(pod->containers[0].requests.Scalar("example.com/gpu"), 1);
  ASSERT_EQ(pod->containers[0].ports.size(), 2u);
  EXPECT_EQ(pod->containers[0].ports[0].host_port, 8080);
  EXPECT_EQ(pod->containers[0].ports[1].host_port, 0);
  // Requests default to limits when only limits are given.
  EXPECT_EQ(pod->containers[1].requests.milli_cpu, 500);

  ASSERT_EQ(pod->init_containers.size(), 2u);
  EXPECT_FALSE(pod->init_containers[0].restart_always);
  EXPECT_TRUE(pod->init_containers[1].restart_always);

  // Pod (anti-)affinity; a term that names no namespace applies to the
  // pod's own.
  ASSERT_EQ(pod->pod_affinity.preferred.size(), 1u);
  EXPECT_TRUE(pod->pod_affinity.required.empty());
  const WeightedPodAffinityTerm& preferred = pod->pod_affinity.preferred[0];
  EXPECT_EQ(preferred.weight, 10);
  EXPECT_EQ(preferred.term.topology_key, "kubernetes.io/hostname");
  EXPECT_EQ(preferred.term.namespaces, (std::vector<std::string>{"decode"}));
  ASSERT_TRUE(preferred.term.label_selector.has_value());
  EXPECT_EQ(preferred.term.label_selector->match_labels,
            (Labels{{"app", "cache"}}));
  EXPECT_FALSE(preferred.term.namespace_selector.has_value());
  ASSERT_EQ(pod->pod_anti_affinity.required.size(), 1u);
  EXPECT_EQ(pod->pod_anti_affinity.required[0].label_selector->match_labels,
            (Labels{{"app", "web"}}));
  ASSERT_EQ(pod->topology_spread.size(), 1u);
  const TopologySpreadConstraint& spread = pod->topology_spread[0];
  EXPECT_EQ(spread.max_skew, 1);
  EXPECT_EQ(spread.topology_key, "zone");
  EXPECT_EQ(spread.when_unsatisfiable, UnsatisfiableAction::kDoNotSchedule);
  EXPECT_EQ(spread.label_selector->match_labels, (Labels{{"app", "web"}}));
  EXPECT_FALSE(spread.min_domains.has_value());
  EXPECT_FALSE(spread.node_affinity_policy.has_value());
  EXPECT_FALSE(pod->controller.has_value());
  EXPECT_EQ(pod->claims, (std::vector<PodClaim>{{.name = "data"}}));
  EXPECT_TRUE(pod->container_statuses.empty());  // pending: nothing reported
  EXPECT_FALSE(pod->resize_infeasible);
}

// tests/testdata/kube/pod_resize_*.json: pods whose status reports an
// in-place resize of `app` from cpu 1 to 2 (see the README there).
TEST(DecodePodTest, RecordedInPlaceResizeInfeasible) {
  absl::StatusOr<Pod> pod =
      DecodePod(ReadFileOrDie(TestDataPath("kube/pod_resize_infeasible.json")));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->containers.at(0).requests.milli_cpu, 2000);  // the spec
  EXPECT_TRUE(pod->resize_infeasible);
  Resources app{.milli_cpu = 1000, .memory = 1LL << 30};
  Resources sidecar{.milli_cpu = 100, .memory = 32LL << 20};
  // Both lists, in the order of the JSON (kubectl sorts the keys; the
  // apiserver sends init containers first): match them by name. `quiet`
  // reports no resources and is left out.
  const RequestNames both{.cpu = true, .memory = true};
  EXPECT_THAT(
      pod->container_statuses,
      UnorderedElementsAre(
          ContainerResourceStatus{"sidecar", sidecar, sidecar, both, both},
          ContainerResourceStatus{"app", app, app, both, both}));
  // A 1.34 kubelet reports no pod-level status resources.
  EXPECT_EQ(pod->resource_status, PodResourceStatus{});
}

TEST(DecodePodTest, RecordedInPlaceResizeInProgress) {
  absl::StatusOr<Pod> pod = DecodePod(
      ReadFileOrDie(TestDataPath("kube/pod_resize_in_progress.json")));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_FALSE(pod->resize_infeasible);
  ASSERT_EQ(pod->container_statuses.size(), 1u);
  const ContainerResourceStatus& app = pod->container_statuses[0];
  EXPECT_EQ(app.name, "app");
  ASSERT_TRUE(app.allocated.has_value());
  EXPECT_EQ(app.allocated->milli_cpu, 2000);
  ASSERT_TRUE(app.actual.has_value());
  EXPECT_EQ(app.actual->milli_cpu, 1000);
  EXPECT_EQ(app.actual->memory, 1LL << 30);
}

TEST(DecodePodTest, WhatPreemptionReads) {
  absl::StatusOr<Pod> pod = DecodePod(R"({
    "spec":{"priority":1000,"preemptionPolicy":"Never"},
    "status":{"startTime":"2026-01-02T03:04:05Z","conditions":[
      {"type":"DisruptionTarget","status":"True","reason":"PreemptionByScheduler",
       "message":"metrics-scheduler: preempting to accommodate a higher priority pod"},
      {"type":"DisruptionTarget","status":"True","reason":"EvictionByEvictionAPI"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->priority, 1000);
  EXPECT_TRUE(pod->never_preempts);
  EXPECT_EQ(pod->start_time_ms, 1767323045000);
  EXPECT_TRUE(pod->preempted);

  // The first DisruptionTarget condition decides; PreemptLowerPriority and
  // nulls are the defaults.
  pod = DecodePod(R"({
    "spec":{"preemptionPolicy":"PreemptLowerPriority"},
    "status":{"startTime":null,"conditions":[
      {"type":"DisruptionTarget","status":"True","reason":"DeletionByTaintManager"},
      {"type":"DisruptionTarget","status":"True","reason":"PreemptionByScheduler"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_FALSE(pod->never_preempts);
  EXPECT_EQ(pod->start_time_ms, 0);
  EXPECT_FALSE(pod->preempted);
}

// Of the annotations, only the estimates' are kept, by metric name.
TEST(DecodePodTest, KeepsTheEstimateAnnotations) {
  absl::StatusOr<Pod> pod = DecodePod(R"({"metadata":{"annotations":{
    "estimate.metrics-scheduler.io/cpu":"0.25",
    "estimate.metrics-scheduler.io/":"no metric",
    "example.com/other":"x"}}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->estimates,
            (std::map<std::string, std::string>{{"cpu", "0.25"}}));
  pod = DecodePod(R"({"metadata":{"annotations":null}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_TRUE(pod->estimates.empty());
}

// What rebalancing must know before it moves a pod: a mirror pod's
// annotation, and volumes whose data stays on the node.
TEST(DecodePodTest, MirrorPodsAndLocalStorage) {
  absl::StatusOr<Pod> pod = DecodePod(R"({"metadata":{"annotations":{
    "kubernetes.io/config.mirror":"4f2c"}},"spec":{"volumes":[
      {"name":"config","configMap":{"name":"c"}}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_TRUE(pod->mirror);
  EXPECT_FALSE(pod->local_storage);
  for (const char* volume : {R"({"name":"s","emptyDir":{}})",
                             R"({"name":"h","hostPath":{"path":"/var"}})"}) {
    pod = DecodePod(absl::StrCat(R"({"spec":{"volumes":[)", volume, "]}}"));
    ASSERT_TRUE(pod.ok()) << pod.status();
    EXPECT_TRUE(pod->local_storage) << volume;
    EXPECT_FALSE(pod->mirror);
  }
}

// What NodeDeclaredFeatures and ImageLocality read of a pod (1.36 on):
// restart rules, bind mount options (ephemeral containers' too), host
// network in a user namespace, image volumes.
TEST(DecodePodTest, WhatNodeFeaturesAndImageVolumesRead) {
  absl::StatusOr<Pod> pod = DecodePod(R"({"spec":{
    "containers":[{"name":"c","restartPolicyRules":[
      {"action":"Restart","exitCodes":{"operator":"In","values":[42]}}]}],
    "initContainers":[{"name":"i","restartPolicyRules":[
      {"action":"RestartAllContainers","exitCodes":{"operator":"In","values":[1]}}]}],
    "volumes":[{"name":"model","image":{"reference":"registry.example/model:v2"}},
               {"name":"blank","image":{}}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->required_features, kFeatureRestartAllContainers);
  EXPECT_THAT(pod->image_volumes, ElementsAre("registry.example/model:v2", ""));

  pod = DecodePod(R"({"spec":{"hostNetwork":true,"hostUsers":false,
    "ephemeralContainers":[{"name":"debug","volumeMounts":[
      {"name":"v","mountPath":"/v","bindMountOptions":["nosuid"]}]}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->required_features,
            kFeatureUserNamespacesHostNetwork | kFeatureVolumeBindMountOptions);

  // Host network alone, or a user namespace alone, needs nothing.
  for (const char* spec : {R"({"hostNetwork":true})", R"({"hostUsers":false})",
                           R"({"hostNetwork":true,"hostUsers":true})"}) {
    pod = DecodePod(absl::StrCat(R"({"spec":)", spec, "}"));
    ASSERT_TRUE(pod.ok()) << pod.status();
    EXPECT_EQ(pod->required_features, 0u) << spec;
  }
}

TEST(DecodeBudgetTest, WhatPreemptionReads) {
  absl::StatusOr<ObjectList<PodDisruptionBudget>> list =
      DecodeList<PodDisruptionBudget>(R"({
    "kind":"PodDisruptionBudgetList","apiVersion":"policy/v1",
    "metadata":{"resourceVersion":"7"},"items":[
      {"metadata":{"name":"db","namespace":"shop","uid":"u1","resourceVersion":"6"},
       "spec":{"maxUnavailable":0,"selector":{"matchLabels":{"app":"db"}}},
       "status":{"disruptionsAllowed":1,"disruptedPods":{"db-0":"2026-01-01T00:00:00Z"}}},
      {"metadata":{"name":"none","namespace":"shop"},"spec":{},"status":null}]})");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->items.size(), 2u);
  const PodDisruptionBudget& db = list->items[0];
  EXPECT_EQ(db.Key(), "shop/db");
  EXPECT_EQ(db.uid, "u1");
  ASSERT_TRUE(db.selector.has_value());
  EXPECT_EQ(db.selector->match_labels.at("app"), "db");
  EXPECT_EQ(db.disruptions_allowed, 1);
  EXPECT_THAT(db.disrupted_pods, ElementsAre("db-0"));
  // No selector selects nothing; no status allows nothing.
  EXPECT_FALSE(list->items[1].selector.has_value());
  EXPECT_EQ(list->items[1].disruptions_allowed, 0);
}

// Either half may be reported alone, and either keeps the status (up to
// 1.36 kube-scheduler reads it only with `resources`, from 1.37 also with
// allocatedResources alone); `b` has resources without requests, `d`
// nothing. Only the first PodResizePending condition counts, as in
// kube-scheduler (IsPodResizeInfeasible).
TEST(DecodePodTest, ContainerStatusHalvesAndResizeConditions) {
  absl::StatusOr<Pod> pod = DecodePod(R"({"status":{
    "conditions":[{"type":"PodResizePending","status":"True","reason":"Deferred"},
                  {"type":"PodResizePending","status":"True","reason":"Infeasible"}],
    "containerStatuses":[
      {"name":"a","allocatedResources":{"cpu":"1"}},
      {"name":"b","resources":{"limits":{"cpu":"1"}}},
      {"name":"c","resources":{"requests":{"memory":"1Ki"}}},
      {"name":"d","allocatedResources":null,"resources":null}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_FALSE(pod->resize_infeasible);
  EXPECT_THAT(
      pod->container_statuses,
      ElementsAre(
          ContainerResourceStatus{.name = "a",
                                  .allocated = Resources{.milli_cpu = 1000},
                                  .allocated_named = {.cpu = true}},
          ContainerResourceStatus{.name = "b",
                                  .resources_without_requests = true},
          ContainerResourceStatus{.name = "c",
                                  .actual = Resources{.memory = 1024},
                                  .actual_named = {.memory = true}}));
  // A status with a quantity the decoder refuses refuses the pod.
  EXPECT_EQ(DecodePod(R"({"status":{"containerStatuses":[)"
                      R"({"name":"a","allocatedResources":{"cpu":"1x"}}]}})")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// The pod-level status.allocatedResources and status.resources that
// kubelets report from 1.36 (all of each list is kept: 1.37 takes the
// first as the pod's allocated sum), and an init container's status with
// allocatedResources alone (1.37 reads regular init containers' too).
TEST(DecodePodTest, PodLevelStatusResources) {
  absl::StatusOr<Pod> pod = DecodePod(R"({"status":{
    "allocatedResources":{"cpu":"1100m","memory":"1Gi","hugepages-2Mi":"4Mi"},
    "resources":{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"memory":"2Gi"}},
    "initContainerStatuses":[{"name":"setup","allocatedResources":{"cpu":"500m"}}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  const RequestNames both{.cpu = true, .memory = true};
  Resources allocated{.milli_cpu = 1100, .memory = 1LL << 30};
  allocated.SetScalar("hugepages-2Mi", 4 << 20);
  EXPECT_EQ(pod->resource_status,
            (PodResourceStatus{
                .allocated = allocated,
                .actual = Resources{.milli_cpu = 1000, .memory = 1LL << 30},
                .allocated_named = both,
                .actual_named = both}));
  EXPECT_TRUE(pod->resource_status.reports_resources());
  EXPECT_THAT(pod->container_statuses,
              ElementsAre(ContainerResourceStatus{
                  .name = "setup",
                  .allocated = Resources{.milli_cpu = 500},
                  .allocated_named = {.cpu = true}}));

  // status.resources without requests is still reported; nulls are not.
  pod = DecodePod(R"({"status":{"allocatedResources":null,
    "resources":{"limits":{"cpu":"1"}}}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->resource_status,
            (PodResourceStatus{.resources_without_requests = true}));
  EXPECT_TRUE(pod->resource_status.reports_resources());
  pod = DecodePod(R"({"status":{"allocatedResources":null,"resources":null}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->resource_status, PodResourceStatus{});
  EXPECT_FALSE(pod->resource_status.reports_resources());
  // A quantity the decoder refuses refuses the pod.
  EXPECT_EQ(DecodePod(R"({"status":{"resources":{"requests":{"cpu":"x"}}}})")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DecodePodTest, OverheadAndDeletion) {
  absl::StatusOr<Pod> pod = DecodePod(R"({"metadata":{"name":"p",
    "namespace":"n","deletionTimestamp":"2024-01-01T00:00:00Z"},
    "spec":{"overhead":{"cpu":"250m","memory":"120Mi"},"containers":[]},
    "status":{"phase":"Succeeded"}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_TRUE(pod->deleting);
  EXPECT_EQ(pod->overhead.milli_cpu, 250);
  EXPECT_EQ(pod->overhead.memory, 120LL * 1024 * 1024);
  EXPECT_EQ(pod->phase, PodPhase::kSucceeded);
  EXPECT_EQ(pod->Key(), "n/p");
}

TEST(DecodePodTest, TopologySpreadAndController) {
  absl::StatusOr<Pod> pod = DecodePod(R"({"metadata":{"name":"p",
    "namespace":"n","ownerReferences":[
      {"apiVersion":"v1","kind":"ConfigMap","name":"c"},
      {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1",
       "controller":true}]},
    "spec":{"containers":[],"topologySpreadConstraints":[
      {"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway",
       "labelSelector":{"matchExpressions":[
         {"key":"app","operator":"In","values":["web"]}]},
       "minDomains":3,"nodeAffinityPolicy":"Ignore",
       "nodeTaintsPolicy":"Honor","matchLabelKeys":["rev"]},
      {"maxSkew":1,"topologyKey":"kubernetes.io/hostname",
       "whenUnsatisfiable":"DoNotSchedule"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_EQ(pod->topology_spread.size(), 2u);
  const TopologySpreadConstraint& soft = pod->topology_spread[0];
  EXPECT_EQ(soft.max_skew, 2);
  EXPECT_EQ(soft.when_unsatisfiable, UnsatisfiableAction::kScheduleAnyway);
  ASSERT_TRUE(soft.label_selector.has_value());
  EXPECT_EQ(soft.label_selector->match_expressions.size(), 1u);
  EXPECT_EQ(soft.min_domains, 3);
  EXPECT_EQ(soft.node_affinity_policy, NodeInclusionPolicy::kIgnore);
  EXPECT_EQ(soft.node_taints_policy, NodeInclusionPolicy::kHonor);
  EXPECT_EQ(soft.match_label_keys, (std::vector<std::string>{"rev"}));
  // No labelSelector: it selects nothing.
  EXPECT_FALSE(pod->topology_spread[1].label_selector.has_value());
  ASSERT_TRUE(pod->controller.has_value());
  EXPECT_EQ(*pod->controller, (ControllerRef{"apps/v1", "ReplicaSet", "web-1"}));
}

TEST(DecodePodTest, BadInputIsInvalidArgument) {
  for (const char* bad : {
           "", "{", "[]", R"({"metadata":{"name":3}})",
           R"({"spec":{"topologySpreadConstraints":[{"whenUnsatisfiable":"Maybe"}]}})",
           R"({"spec":{"topologySpreadConstraints":[{"nodeTaintsPolicy":"Sometimes"}]}})",
           R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"1x"}}}]}})",
           R"({"spec":{"tolerations":[{"operator":"Maybe"}]}})",
       }) {
    absl::StatusOr<Pod> pod = DecodePod(bad);
    EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(DecodePod(R"({"spec":{"containers":[{"resources":{"requests":)"
                      R"({"cpu":"1x"}}}]}})")
                .status()
                .message(),
            "decoding Pod: resource cpu: invalid quantity \"1x\": unknown "
            "suffix");
}

// tests/testdata/kube/node.json: a testenv Node after its status was set.
// What the default profile's scores and exact accounting read of a pod.
TEST(DecodePodTest, PreferencesGatesNominationAndExactRequests) {
  absl::StatusOr<Pod> pod = DecodePod(R"({
    "metadata":{"name":"p","namespace":"n"},
    "spec":{
      "schedulingGates":[{"name":"example.com/quota"}],
      "resourceClaims":[{"name":"gpu","resourceClaimName":"gpu-claim"}],
      "resources":{"requests":{"cpu":"2","hugepages-2Mi":"4Mi","example.com/x":"1"}},
      "affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
        {"weight":80,"preference":{"matchExpressions":[
          {"key":"lifecycle","operator":"In","values":["spot"]}]}},
        {"weight":20,"preference":{"matchFields":[
          {"key":"metadata.name","operator":"In","values":["n1"]}]}}]}},
      "containers":[
        {"name":"a","image":"nginx","resources":{"requests":{"cpu":"0"}}},
        {"name":"b","image":"redis:7","resources":{}}]},
    "status":{"phase":"Pending","nominatedNodeName":"n2"}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_TRUE(pod->scheduling_gated);
  EXPECT_TRUE(pod->has_resource_claims);
  EXPECT_EQ(pod->nominated_node_name, "n2");
  ASSERT_TRUE(pod->pod_requests.has_value());
  EXPECT_EQ(pod->pod_requests->milli_cpu, 2000);
  EXPECT_EQ(pod->pod_requests->Scalar("hugepages-2Mi"), 4 << 20);
  EXPECT_EQ(pod->pod_requests->Scalar("example.com/x"), 0);  // not pod-level
  EXPECT_TRUE(pod->pod_requests_named.cpu);
  EXPECT_FALSE(pod->pod_requests_named.memory);
  ASSERT_EQ(pod->preferred_node_affinity.size(), 2u);
  EXPECT_EQ(pod->preferred_node_affinity[0].weight, 80);
  EXPECT_EQ(pod->preferred_node_affinity[0].preference.match_expressions[0].key,
            "lifecycle");
  EXPECT_EQ(pod->preferred_node_affinity[1].preference.match_fields[0].values,
            std::vector<std::string>{"n1"});
  ASSERT_EQ(pod->containers.size(), 2u);
  EXPECT_EQ(pod->containers[0].image, "nginx");
  // An explicit "0" is named; an absent amount is not.
  EXPECT_EQ(pod->containers[0].named, (RequestNames{.cpu = true}));
  EXPECT_EQ(pod->containers[1].named, RequestNames{});

  absl::StatusOr<Pod> plain = DecodePod(
      R"({"spec":{"schedulingGates":[],"containers":[]},"status":{}})");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->scheduling_gated);
  EXPECT_FALSE(plain->pod_requests.has_value());
  EXPECT_EQ(plain->nominated_node_name, "");
}

// Limits, the containers' and the pod-level ones, for an estimate from
// limits; they change nothing the requests say.
TEST(DecodePodTest, LimitsOfContainersAndOfThePod) {
  absl::StatusOr<Pod> pod = DecodePod(R"({
    "metadata":{"name":"p","namespace":"n"},
    "spec":{
      "resources":{"limits":{"memory":"4Gi"}},
      "containers":[
        {"name":"a","resources":{"requests":{"cpu":"500m"},"limits":{"cpu":"2","memory":"1Gi"}}},
        {"name":"b","resources":{"limits":null}}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->containers[0].limits.milli_cpu, 2000);
  EXPECT_EQ(pod->containers[0].limits.memory, 1LL << 30);
  EXPECT_EQ(pod->containers[0].requests.milli_cpu, 500);
  EXPECT_EQ(pod->containers[1].limits, Resources());
  EXPECT_EQ(pod->pod_limits.memory, 4LL << 30);
  EXPECT_FALSE(pod->pod_requests.has_value());
  // b sets no CPU limit; the pod-level memory limit stands.
  EXPECT_EQ(PodLimits(*pod), (CpuMemoryLimits{.memory = 4LL << 30}));
}

TEST(DecodeNodeTest, ImagesAreInternedByEveryName) {
  absl::StatusOr<Node> node = DecodeNode(R"({"metadata":{"name":"n"},
    "status":{"images":[
      {"names":["docker.io/library/nginx:1.27","nginx:1.27"],"sizeBytes":1000},
      {"names":["redis:latest"],"sizeBytes":2000}]}})");
  ASSERT_TRUE(node.ok()) << node.status();
  const std::optional<uint32_t> nginx = FindImageName("nginx:1.27");
  const std::optional<uint32_t> redis = FindImageName("redis:latest");
  ASSERT_TRUE(nginx && redis);
  EXPECT_THAT(node->images,
              ElementsAre(*FindImageName("docker.io/library/nginx:1.27"),
                          *nginx, *redis));
  EXPECT_EQ(ImageSize(*nginx), 1000);
  EXPECT_EQ(ImageSize(*redis), 2000);
}

// The size may come before or after the names; a name keeps the size the
// first node reported, as kube-scheduler's image states do.
TEST(DecodeNodeTest, AnImageKeepsTheSizeFirstReported) {
  absl::StatusOr<Node> first = DecodeNode(R"({"metadata":{"name":"a"},
    "status":{"images":[{"sizeBytes":3000,"names":["decode-test/first:1"]},
                        {"names":["decode-test/second:1"],"sizeBytes":4000}]}})");
  absl::StatusOr<Node> later = DecodeNode(R"({"metadata":{"name":"b"},
    "status":{"images":[{"names":["decode-test/second:1","decode-test/third:1"],
                         "sizeBytes":9000}]}})");
  ASSERT_TRUE(first.ok() && later.ok());
  ASSERT_EQ(first->images.size(), 2u);
  ASSERT_EQ(later->images.size(), 2u);
  EXPECT_EQ(later->images[0], first->images[1]);
  EXPECT_EQ(ImageSize(first->images[0]), 3000);
  EXPECT_EQ(ImageSize(first->images[1]), 4000);
  EXPECT_EQ(ImageSize(later->images[1]), 9000);
}

// A node's images are taken from what the scheduler holds when the text of
// status.images is the one it was decoded from (a heartbeat): the names are
// not read again. Another text, or nothing held, reads them.
TEST(DecodeNodeTest, UnchangedImagesAreReusedByTheirDigest) {
  const std::string images =
      R"([{"names":["decode-test/reused:1"],"sizeBytes":100}])";
  auto node = [](const std::string& list) {
    return absl::StrCat(R"({"metadata":{"name":"n1"},"status":{"images":)",
                        list, "}}");
  };
  absl::StatusOr<Node> first = DecodeNode(node(images));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_NE(first->images_digest, 0u);

  std::vector<std::string> asked;
  DecodeContext<Node> held{.known_images = [&](std::string_view name,
                                               uint64_t digest,
                                               std::vector<uint32_t>& ids) {
    asked.emplace_back(name);
    if (digest != first->images_digest) return false;
    ids = {777};  // what the scheduler holds, whatever the text says
    return true;
  }};
  absl::StatusOr<ObjectList<Node>> same = DecodeList<Node>(
      absl::StrCat(R"({"metadata":{"resourceVersion":"1"},"items":[)",
                   node(images), "]}"),
      held);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_THAT(same->items[0].images, ElementsAre(777u));
  EXPECT_EQ(same->items[0].images_digest, first->images_digest);

  const std::string other =
      R"([{"names":["decode-test/reused:2"],"sizeBytes":100}])";
  absl::StatusOr<WatchEvent<Node>> changed = DecodeWatchEvent<Node>(
      absl::StrCat(R"({"type":"MODIFIED","object":)", node(other), "}"), held);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_NE(changed->object.images_digest, first->images_digest);
  EXPECT_THAT(changed->object.images,
              ElementsAre(*FindImageName("decode-test/reused:2")));
  EXPECT_THAT(asked, ElementsAre("n1", "n1"));

  absl::StatusOr<Node> none =
      DecodeNode(R"({"metadata":{"name":"n2"},"status":{}})");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->images_digest, 0u);
}

// status.declaredFeatures: the features a pod's spec may need; the others
// are dropped.
TEST(DecodeNodeTest, DeclaredFeatures) {
  absl::StatusOr<Node> node = DecodeNode(R"({"metadata":{"name":"n"},
    "status":{"declaredFeatures":["GuaranteedQoSPodCPUResize",
      "RestartAllContainersOnContainerExits","VolumeBindMountOptions"]}})");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->declared_features,
            kFeatureRestartAllContainers | kFeatureVolumeBindMountOptions);
}

// A Node keeps only the annotations asked for (those node-attribute
// metrics read), in a single object, a list and a watch event alike.
TEST(DecodeNodeTest, KeepsOnlyTheAnnotationsAskedFor) {
  const std::string json = R"({"metadata":{"name":"n","annotations":{
    "example.com/hourly-cost":"0.42","node.alpha.kubernetes.io/ttl":"0",
    "example.com/tier":"2"}}})";
  const std::vector<std::string> keep = {"example.com/hourly-cost",
                                         "example.com/absent"};
  absl::StatusOr<Node> none = DecodeNode(json);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->annotations.empty());
  absl::StatusOr<Node> node = DecodeNode(json, keep);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->annotations,
            (std::map<std::string, std::string>{
                {"example.com/hourly-cost", "0.42"}}));

  absl::StatusOr<ObjectList<Node>> list = DecodeList<Node>(
      absl::StrCat(R"({"kind":"NodeList","metadata":{},"items":[)", json, "]}"),
      {.annotations = keep});
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0].annotations, node->annotations);

  absl::StatusOr<WatchEvent<Node>> event = DecodeWatchEvent<Node>(
      absl::StrCat(R"({"type":"MODIFIED","object":)", json, "}"),
      {.annotations = keep});
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(event->object.annotations, node->annotations);

  absl::StatusOr<Node> null_annotations = DecodeNode(
      R"({"metadata":{"name":"n","annotations":null}})", keep);
  ASSERT_TRUE(null_annotations.ok()) << null_annotations.status();
  EXPECT_TRUE(null_annotations->annotations.empty());
}

TEST(DecodeNodeTest, RecordedNode) {
  absl::StatusOr<Node> node =
      DecodeNode(ReadFileOrDie(TestDataPath("kube/node.json")));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->name, "decode-node");
  EXPECT_TRUE(node->ready);
  EXPECT_TRUE(node->unschedulable);
  EXPECT_EQ(node->labels.at("disk"), "ssd");
  ASSERT_EQ(node->taints.size(), 2u);
  EXPECT_EQ(node->taints[0],
            (Taint{"dedicated", "web", TaintEffect::kNoSchedule}));
  EXPECT_EQ(node->taints[1].effect, TaintEffect::kPreferNoSchedule);
  EXPECT_EQ(node->allocatable.milli_cpu, 4000);
  EXPECT_EQ(node->allocatable.memory, 16LL * 1024 * 1024 * 1024);
  EXPECT_EQ(node->allocatable.pods, 110);
  EXPECT_EQ(node->allocatable.Scalar("example.com/gpu"), 2);
  ASSERT_EQ(node->addresses.size(), 2u);
  EXPECT_EQ(node->addresses[0], (NodeAddress{"InternalIP", "10.0.0.7"}));
}

TEST(DecodeListTest, RecordedPodListPage) {
  absl::StatusOr<ObjectList<Pod>> list =
      DecodeList<Pod>(ReadFileOrDie(TestDataPath("kube/pod_list_page.json")));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->items.size(), 2u);
  EXPECT_FALSE(list->resource_version.empty());
  EXPECT_FALSE(list->continue_token.empty());  // recorded with limit=2
}

// One object the decoder refuses (an enum value a newer apiserver may
// send) costs that object, not the whole list.
TEST(DecodeListTest, ARefusedItemDoesNotFailTheList) {
  absl::StatusOr<ObjectList<Pod>> list = DecodeList<Pod>(R"({"kind":"PodList",
    "metadata":{"resourceVersion":"100","continue":"c1"},"items":[
    {"metadata":{"name":"a","namespace":"n","uid":"ua","resourceVersion":"1"},
     "spec":{"containers":[]}},
    {"metadata":{"name":"bad","namespace":"n","uid":"ub","resourceVersion":"2"},
     "spec":{"tolerations":[{"key":"k","operator":"Gt","value":"2"}],
             "containers":[]}},
    {"spec":{"containers":[{"resources":{"requests":{"cpu":"1x"}}}]},
     "metadata":{"name":"late","namespace":"n","uid":3,"resourceVersion":"3"}},
    {"metadata":{"name":"c","namespace":"n","uid":"uc","resourceVersion":"4"},
     "spec":{"containers":[]}}]})");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0].name, "a");
  EXPECT_EQ(list->items[1].name, "c");
  EXPECT_EQ(list->items[1].uid, "uc");
  EXPECT_EQ(list->resource_version, "100");
  EXPECT_EQ(list->continue_token, "c1");
  EXPECT_THAT(
      list->rejected,
      ElementsAre(
          RejectedObject{.resource = "pods",
                         .namespace_ = "n",
                         .name = "bad",
                         .uid = "ub",
                         .resource_version = "2",
                         .error = "unknown toleration operator \"Gt\""},
          // Metadata after the spec, and a uid that is not a string: what
          // can be read is.
          RejectedObject{.resource = "pods",
                         .namespace_ = "n",
                         .name = "late",
                         .resource_version = "3",
                         .error = "resource cpu: invalid quantity \"1x\": "
                                  "unknown suffix"}));
  EXPECT_EQ(list->rejected[0].Key(), "n/bad");

  absl::StatusOr<ObjectList<Node>> nodes = DecodeList<Node>(R"({"items":[
    {"metadata":{"name":"n1","uid":"u1","resourceVersion":"5"},
     "spec":{"taints":[{"key":"k","effect":"NoScheduleSoon"}]}},
    {"metadata":{"name":"n2"}}]})");
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->items.size(), 1u);
  EXPECT_EQ(nodes->items[0].name, "n2");
  ASSERT_EQ(nodes->rejected.size(), 1u);
  EXPECT_EQ(nodes->rejected[0].resource, "nodes");
  EXPECT_EQ(nodes->rejected[0].Key(), "n1");
  EXPECT_EQ(nodes->rejected[0].error, "unknown taint effect \"NoScheduleSoon\"");
}

// A list that is not JSON, or not a list, still fails as a whole.
TEST(DecodeListTest, AMalformedListFailsAsAWhole) {
  for (const char* bad : {
           R"({"items":[{"metadata":{"name":"a"}},{"metadata":{"name":)",
           R"({"items":[{"metadata":{"name":"a"}}, 3]})",
           R"({"items":{"metadata":{"name":"a"}}})",
           R"({"metadata":{"resourceVersion":7},"items":[]})",
       }) {
    absl::StatusOr<ObjectList<Pod>> list = DecodeList<Pod>(bad);
    EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

// The apiserver accepts quantities beyond int64 (`memory: 100Ei`, `cpu:
// 10E` in millicores) and the micro suffix (`cpu: 500u`): they decode.
TEST(DecodePodTest, ExtremeQuantitiesDecode) {
  absl::StatusOr<Pod> pod = DecodePod(R"({"metadata":{"name":"p"},
    "spec":{"containers":[
      {"name":"huge","resources":{"requests":{"memory":"100Ei","cpu":"10E"}}},
      {"name":"tiny","resources":{"requests":{"cpu":"500u","memory":"1n"}}},
      {"name":"four","resources":{"requests":{"memory":"4Ei"}}}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_EQ(pod->containers.size(), 3u);
  EXPECT_EQ(pod->containers[0].requests.memory, kMaxQuantity);
  EXPECT_EQ(pod->containers[0].requests.milli_cpu, kMaxQuantity);
  EXPECT_EQ(pod->containers[1].requests.milli_cpu, 1);  // 0.5m rounds up
  EXPECT_EQ(pod->containers[1].requests.memory, 1);
  // 4Ei = 2^62 fits in int64 but not under the cap.
  EXPECT_EQ(pod->containers[2].requests.memory, kMaxQuantity);
}

TEST(DecodeWatchTest, EventTypes) {
  absl::StatusOr<WatchEvent<Node>> added = DecodeWatchEvent<Node>(
      R"({"type":"ADDED","object":{"metadata":{"name":"n1","resourceVersion":"12"}}})");
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->type, WatchEventType::kAdded);
  EXPECT_EQ(added->object.name, "n1");
  EXPECT_EQ(added->resource_version, "12");

  absl::StatusOr<WatchEvent<Pod>> bookmark = DecodeWatchEvent<Pod>(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"99","annotations":{"k8s.io/initial-events-end":"true"}}}})");
  ASSERT_TRUE(bookmark.ok()) << bookmark.status();
  EXPECT_EQ(bookmark->type, WatchEventType::kBookmark);
  EXPECT_EQ(bookmark->resource_version, "99");

  absl::StatusOr<WatchEvent<Pod>> gone = DecodeWatchEvent<Pod>(
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (500)","reason":"Expired","code":410}})json");
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_EQ(gone->type, WatchEventType::kError);
  EXPECT_EQ(gone->error.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(gone->error.message(),
            "HTTP 410 Expired: too old resource version: 1 (500)");

  // Object before type: still decoded.
  absl::StatusOr<WatchEvent<Node>> reordered = DecodeWatchEvent<Node>(
      R"({"object":{"metadata":{"name":"n2"}},"type":"DELETED"})");
  ASSERT_TRUE(reordered.ok()) << reordered.status();
  EXPECT_EQ(reordered->type, WatchEventType::kDeleted);
  EXPECT_EQ(reordered->object.name, "n2");

  EXPECT_EQ(DecodeWatchEvent<Node>(R"({"type":"EXPLODED","object":{}})")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeWatchEvent<Node>(R"({"type":"ADDED"})").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A DELETED event's object is read for its identity only: the rest is
// skipped, not decoded, whatever it holds.
TEST(DecodeWatchTest, ADeletedObjectIsItsIdentity) {
  absl::StatusOr<WatchEvent<Pod>> deleted = DecodeWatchEvent<Pod>(
      R"({"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"p",)"
      R"("namespace":"n","uid":"u","resourceVersion":"12",)"
      R"("labels":{"app":"web"}},"spec":{"nodeName":"node-1",)"
      R"("schedulerName":"metrics-scheduler","containers":[{"name":"c",)"
      R"("image":"nginx","resources":{"requests":{"cpu":"1"}}}]},)"
      R"("status":{"phase":"Running"}}})");
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(deleted->type, WatchEventType::kDeleted);
  EXPECT_FALSE(deleted->rejected.has_value());
  EXPECT_EQ(deleted->resource_version, "12");
  Pod tombstone{.name = "p", .namespace_ = "n", .uid = "u",
                .resource_version = "12"};
  EXPECT_EQ(deleted->object, tombstone);
}

// The tombstone of a namespaced object keeps its namespace: the informer
// finds the object it removes by its "namespace/name" key.
TEST(DecodeWatchTest, ADeletedNamespacedObjectKeepsItsNamespace) {
  constexpr absl::string_view kDeleted =
      R"({"type":"DELETED","object":{"metadata":{"name":"x",)"
      R"("namespace":"n","uid":"u","resourceVersion":"3"}}})";
  absl::StatusOr<WatchEvent<PodDisruptionBudget>> budget =
      DecodeWatchEvent<PodDisruptionBudget>(kDeleted);
  ASSERT_TRUE(budget.ok()) << budget.status();
  EXPECT_EQ(budget->object.Key(), "n/x");
  absl::StatusOr<WatchEvent<PersistentVolumeClaim>> claim =
      DecodeWatchEvent<PersistentVolumeClaim>(kDeleted);
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(claim->object.Key(), "n/x");
  absl::StatusOr<WatchEvent<Workload>> workload =
      DecodeWatchEvent<Workload>(kDeleted, WorkloadKind::kReplicaSet);
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_EQ(workload->object.namespace_, "n");
  EXPECT_EQ(workload->object.name, "x");
}

// A refused object in an ADDED or MODIFIED event is reported with its
// identity; in a DELETED event it is a tombstone, all a delete needs.
TEST(DecodeWatchTest, ARefusedObjectIsReportedNotFatal) {
  absl::StatusOr<WatchEvent<Pod>> modified = DecodeWatchEvent<Pod>(
      R"({"type":"MODIFIED","object":{"metadata":{"name":"p","namespace":"n",)"
      R"("uid":"u","resourceVersion":"7"},"spec":{"tolerations":[)"
      R"({"operator":"Gt","key":"k","value":"1"}]}}})");
  ASSERT_TRUE(modified.ok()) << modified.status();
  EXPECT_EQ(modified->type, WatchEventType::kModified);
  ASSERT_TRUE(modified->rejected.has_value());
  EXPECT_EQ(*modified->rejected,
            (RejectedObject{.resource = "pods",
                            .namespace_ = "n",
                            .name = "p",
                            .uid = "u",
                            .resource_version = "7",
                            .error = "unknown toleration operator \"Gt\""}));
  EXPECT_EQ(modified->resource_version, "7");
  EXPECT_EQ(modified->object.Key(), "n/p");
  EXPECT_TRUE(modified->object.tolerations.empty());

  // Object first, type after.
  absl::StatusOr<WatchEvent<Node>> added = DecodeWatchEvent<Node>(
      R"({"object":{"metadata":{"name":"n1","resourceVersion":"8"},)"
      R"("spec":{"taints":[{"key":"k","effect":"Soon"}]}},"type":"ADDED"})");
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->type, WatchEventType::kAdded);
  ASSERT_TRUE(added->rejected.has_value());
  EXPECT_EQ(added->rejected->Key(), "n1");
  EXPECT_EQ(added->rejected->resource, "nodes");
  EXPECT_EQ(added->resource_version, "8");

  absl::StatusOr<WatchEvent<Node>> deleted = DecodeWatchEvent<Node>(
      R"({"type":"DELETED","object":{"metadata":{"name":"n1","uid":"u1",)"
      R"("resourceVersion":"9"},"spec":{"taints":[{"effect":"Soon"}]}}})");
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(deleted->type, WatchEventType::kDeleted);
  EXPECT_FALSE(deleted->rejected.has_value());
  EXPECT_EQ(deleted->object.name, "n1");
  EXPECT_EQ(deleted->object.uid, "u1");
  EXPECT_EQ(deleted->resource_version, "9");
  EXPECT_TRUE(deleted->object.taints.empty());

  // A line that is not JSON is still an error of the stream.
  EXPECT_EQ(DecodeWatchEvent<Pod>(
                R"({"type":"ADDED","object":{"metadata":{"name":"p"},"spec":{)")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DecodeErrorStatusTest, MapsEachHttpStatus) {
  struct Case {
    long http;  // NOLINT(runtime/int)
    const char* reason;
    absl::StatusCode code;
  };
  for (const Case& c : {
           Case{400, "BadRequest", absl::StatusCode::kInvalidArgument},
           Case{401, "Unauthorized", absl::StatusCode::kUnauthenticated},
           Case{403, "Forbidden", absl::StatusCode::kPermissionDenied},
           Case{404, "NotFound", absl::StatusCode::kNotFound},
           Case{409, "AlreadyExists", absl::StatusCode::kAlreadyExists},
           Case{409, "Conflict", absl::StatusCode::kAborted},
           Case{410, "Expired", absl::StatusCode::kOutOfRange},
           Case{422, "Invalid", absl::StatusCode::kInvalidArgument},
           Case{429, "TooManyRequests", absl::StatusCode::kResourceExhausted},
           Case{500, "InternalError", absl::StatusCode::kUnavailable},
           Case{503, "ServiceUnavailable", absl::StatusCode::kUnavailable},
           Case{504, "Timeout", absl::StatusCode::kDeadlineExceeded},
       }) {
    std::string body = std::string(R"({"kind":"Status","reason":")") +
                       c.reason + R"(","message":"m","code":)" +
                       std::to_string(c.http) + "}";
    absl::Status s = DecodeErrorStatus(c.http, body);
    EXPECT_EQ(s.code(), c.code) << c.http << " " << c.reason;
    EXPECT_EQ(s.message(),
              "HTTP " + std::to_string(c.http) + " " + c.reason + ": m");
  }
  // A body that is not a Status keeps its text.
  absl::Status s = DecodeErrorStatus(502, "bad gateway");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "HTTP 502: bad gateway");
}

// Storage objects as the apiserver serves them (fields trimmed to those
// read, plus some that are skipped).
TEST(DecodeStorageTest, ClaimVolumeClassAndCsiNode) {
  absl::StatusOr<ObjectList<PersistentVolumeClaim>> claims =
      DecodeList<PersistentVolumeClaim>(R"({
    "kind":"PersistentVolumeClaimList","metadata":{"resourceVersion":"77"},
    "items":[{"metadata":{"name":"data","namespace":"app","uid":"u1",
      "resourceVersion":"70","finalizers":["kubernetes.io/pvc-protection"],
      "annotations":{"pv.kubernetes.io/bind-completed":"yes",
        "volume.kubernetes.io/selected-node":"n1",
        "volume.beta.kubernetes.io/storage-class":"beta"},
      "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"web",
        "uid":"pod-uid","controller":true}]},
     "spec":{"accessModes":["ReadWriteOnce","ReadWriteOncePod"],
      "selector":{"matchLabels":{"tier":"fast"}},
      "resources":{"requests":{"storage":"5Gi"}},"volumeName":"pv-1",
      "storageClassName":"ignored-for-the-annotation","volumeMode":"Block",
      "volumeAttributesClassName":"gold"},
     "status":{"phase":"Bound","capacity":{"storage":"10Gi"}}},
     {"metadata":{"name":"bare","namespace":"app","uid":"u2"},"spec":{}}]})");
  ASSERT_TRUE(claims.ok()) << claims.status();
  ASSERT_EQ(claims->items.size(), 2u);
  const PersistentVolumeClaim& c = claims->items[0];
  EXPECT_EQ(c.Key(), "app/data");
  EXPECT_EQ(c.resource_version, "70");
  EXPECT_EQ(c.storage_class, "beta");
  EXPECT_TRUE(c.fully_bound());
  EXPECT_EQ(c.selected_node, "n1");
  EXPECT_EQ(c.access_modes, kReadWriteOnce | kReadWriteOncePod);
  EXPECT_EQ(c.selector->match_labels, (Labels{{"tier", "fast"}}));
  EXPECT_EQ(c.storage_request, int64_t{5} << 30);
  EXPECT_EQ(c.volume_mode, VolumeMode::kBlock);
  EXPECT_EQ(c.volume_attributes_class, "gold");
  EXPECT_EQ(c.phase, ClaimPhase::kBound);
  EXPECT_EQ(c.controller_uid, "pod-uid");
  const PersistentVolumeClaim& bare = claims->items[1];
  EXPECT_EQ(bare.storage_class, "");
  EXPECT_FALSE(bare.fully_bound());
  EXPECT_EQ(bare.phase, ClaimPhase::kPending);

  absl::StatusOr<ObjectList<PersistentVolume>> volumes =
      DecodeList<PersistentVolume>(R"({
    "metadata":{"resourceVersion":"78"},
    "items":[{"metadata":{"name":"pv-1","uid":"v1","resourceVersion":"71",
      "labels":{"topology.kubernetes.io/zone":"z1"}},
     "spec":{"capacity":{"storage":"10Gi"},"accessModes":["ReadWriteMany"],
      "claimRef":{"kind":"PersistentVolumeClaim","namespace":"app",
        "name":"data","uid":"u1"},
      "storageClassName":"local","csi":{"driver":"csi.example.com",
        "volumeHandle":"h-1","fsType":"ext4"},
      "nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":
        [{"key":"kubernetes.io/hostname","operator":"In","values":["n1"]}]}]}}},
     "status":{"phase":"Bound"}}]})");
  ASSERT_TRUE(volumes.ok()) << volumes.status();
  ASSERT_EQ(volumes->items.size(), 1u);
  const PersistentVolume& v = volumes->items[0];
  EXPECT_EQ(v.name, "pv-1");
  EXPECT_EQ(v.capacity, int64_t{10} << 30);
  EXPECT_EQ(v.access_modes, kReadWriteMany);
  EXPECT_EQ(v.claim_ref, (ClaimRef{"app", "data", "u1"}));
  EXPECT_EQ(v.storage_class, "local");
  EXPECT_EQ(v.csi_driver, "csi.example.com");
  EXPECT_EQ(v.csi_handle, "h-1");
  ASSERT_TRUE(v.node_affinity.has_value());
  EXPECT_EQ((*v.node_affinity)[0].match_expressions[0].values,
            (std::vector<std::string>{"n1"}));
  EXPECT_EQ(v.phase, VolumePhase::kBound);
  EXPECT_EQ(v.labels.at("topology.kubernetes.io/zone"), "z1");

  absl::StatusOr<ObjectList<StorageClass>> classes =
      DecodeList<StorageClass>(R"({
    "metadata":{"resourceVersion":"79"},
    "items":[{"metadata":{"name":"zonal"},"provisioner":"csi.example.com",
      "volumeBindingMode":"WaitForFirstConsumer","reclaimPolicy":"Delete",
      "allowedTopologies":[{"matchLabelExpressions":[
        {"key":"topology.kubernetes.io/zone","values":["z1","z2"]}]}]}]})");
  ASSERT_TRUE(classes.ok()) << classes.status();
  const StorageClass& sc = classes->items[0];
  EXPECT_EQ(sc.binding_mode, BindingMode::kWaitForFirstConsumer);
  EXPECT_EQ(sc.provisioner, "csi.example.com");
  ASSERT_EQ(sc.allowed_topologies.size(), 1u);
  EXPECT_EQ(sc.allowed_topologies[0][0].second,
            (std::vector<std::string>{"z1", "z2"}));

  absl::StatusOr<ObjectList<CsiNode>> csi = DecodeList<CsiNode>(R"({
    "metadata":{"resourceVersion":"80"},
    "items":[{"metadata":{"name":"n1"},"spec":{"drivers":[
      {"name":"csi.example.com","nodeID":"n1","allocatable":{"count":39}},
      {"name":"unlimited.example.com","nodeID":"n1"}]}}]})");
  ASSERT_TRUE(csi.ok()) << csi.status();
  EXPECT_EQ(csi->items[0].attach_limits,
            (std::map<std::string, int64_t>{{"csi.example.com", 39}}));
  EXPECT_EQ(
      csi->items[0].drivers,
      (std::set<std::string>{"csi.example.com", "unlimited.example.com"}));
}

TEST(DecodeStorageTest, CsiStorageCapacity) {
  absl::StatusOr<ObjectList<CsiStorageCapacity>> list =
      DecodeList<CsiStorageCapacity>(R"({
    "kind":"CSIStorageCapacityList","metadata":{"resourceVersion":"95"},
    "items":[{"metadata":{"name":"z1","namespace":"kube-system","uid":"k1",
       "resourceVersion":"3"},
      "storageClassName":"fast",
      "nodeTopology":{"matchLabels":{"topology.kubernetes.io/zone":"z1"}},
      "capacity":"10Gi","maximumVolumeSize":"2Gi"},
     {"metadata":{"name":"bare","namespace":"kube-system"},
      "storageClassName":"fast"},
     {"metadata":{"name":"bad","namespace":"kube-system"},
      "storageClassName":"fast","capacity":"lots"}]})");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->items.size(), 2u);
  const CsiStorageCapacity& c = list->items[0];
  EXPECT_EQ(c.Key(), "kube-system/z1");
  EXPECT_EQ(c.storage_class, "fast");
  EXPECT_TRUE(
      Selects(c.node_topology, Labels{{"topology.kubernetes.io/zone", "z1"}}));
  EXPECT_EQ(c.capacity, 10 * int64_t{1} << 30);
  EXPECT_EQ(c.VolumeLimit(), 2 * int64_t{1} << 30);
  // No topology: no node has access; no sizes: no volume fits.
  EXPECT_EQ(list->items[1].node_topology, std::nullopt);
  EXPECT_EQ(list->items[1].VolumeLimit(), std::nullopt);
  ASSERT_EQ(list->rejected.size(), 1u);
  EXPECT_EQ(list->rejected[0].Key(), "kube-system/bad");
  EXPECT_TRUE(absl::StrContains(list->rejected[0].error, "capacity"))
      << list->rejected[0].error;
}

TEST(DecodeDeviceClassTest, ExtendedResourceName) {
  absl::StatusOr<ObjectList<DeviceClass>> classes = DecodeList<DeviceClass>(R"({
    "kind":"DeviceClassList","metadata":{"resourceVersion":"90"},
    "items":[{"metadata":{"name":"gpu","uid":"c1","resourceVersion":"7"},
      "spec":{"selectors":[{"cel":{"expression":"true"}}],
        "extendedResourceName":"example.com/gpu"}},
     {"metadata":{"name":"plain"},"spec":{}},
     {"metadata":{"name":"bad"},"spec":{"extendedResourceName":3}}]})");
  ASSERT_TRUE(classes.ok()) << classes.status();
  ASSERT_EQ(classes->items.size(), 2u);
  EXPECT_EQ(classes->items[0],
            (DeviceClass{.name = "gpu",
                         .uid = "c1",
                         .resource_version = "7",
                         .extended_resource_name = "example.com/gpu"}));
  EXPECT_EQ(classes->items[1].extended_resource_name, "");
  ASSERT_EQ(classes->rejected.size(), 1u);
  EXPECT_EQ(classes->rejected[0].Key(), "bad");
}

TEST(DecodeStorageTest, CsiDriver) {
  absl::StatusOr<ObjectList<CsiDriver>> drivers = DecodeList<CsiDriver>(R"({
    "metadata":{"resourceVersion":"81"},
    "items":[{"metadata":{"name":"csi.example.com","uid":"d1",
       "resourceVersion":"9"},
      "spec":{"attachRequired":true,"preventPodSchedulingIfMissing":true}},
     {"metadata":{"name":"other.example.com"},
      "spec":{"preventPodSchedulingIfMissing":null}},
     {"metadata":{"name":"off.example.com"},
      "spec":{"preventPodSchedulingIfMissing":false}}]})");
  ASSERT_TRUE(drivers.ok()) << drivers.status();
  ASSERT_EQ(drivers->items.size(), 3u);
  EXPECT_EQ(drivers->items[0],
            (CsiDriver{.name = "csi.example.com",
                       .uid = "d1",
                       .resource_version = "9",
                       .prevent_scheduling_if_missing = true}));
  EXPECT_FALSE(drivers->items[1].prevent_scheduling_if_missing);
  EXPECT_FALSE(drivers->items[2].prevent_scheduling_if_missing);
  // A field of the wrong type refuses that object alone.
  absl::StatusOr<ObjectList<CsiDriver>> bad = DecodeList<CsiDriver>(R"({
    "metadata":{"resourceVersion":"82"},
    "items":[{"metadata":{"name":"bad"},
      "spec":{"preventPodSchedulingIfMissing":"yes"}},
     {"metadata":{"name":"good"},"spec":{}}]})");
  ASSERT_TRUE(bad.ok()) << bad.status();
  ASSERT_EQ(bad->items.size(), 1u);
  EXPECT_EQ(bad->items[0].name, "good");
  ASSERT_EQ(bad->rejected.size(), 1u);
  EXPECT_EQ(bad->rejected[0].Key(), "bad");
}

TEST(DecodeStorageTest, PodClaimsIncludeGenericEphemeralVolumes) {
  absl::StatusOr<Pod> pod = DecodePod(R"({"metadata":{"name":"web",
    "namespace":"app"},"spec":{"volumes":[
      {"name":"scratch","ephemeral":{"volumeClaimTemplate":{"spec":{}}}},
      {"name":"config","configMap":{"name":"c"}},
      {"name":"data","persistentVolumeClaim":{"claimName":"data"}},
      {"name":"pd","gcePersistentDisk":{"pdName":"disk-1","readOnly":true}},
      {"name":"ceph","rbd":{"monitors":["m1"],"image":"img","pool":"rbd",
        "user":"admin"}}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->claims, (std::vector<PodClaim>{{"web-scratch", true},
                                                {"data", false}}));
  EXPECT_EQ(pod->inline_disks,
            (std::vector<InlineDisk>{
                {.kind = InlineDisk::Kind::kGcePersistentDisk,
                 .id = "disk-1",
                 .read_only = true},
                {.kind = InlineDisk::Kind::kRbd,
                 .id = "img",
                 .pool = "rbd",
                 .monitors = {"m1"}}}));
}

TEST(DecodeStorageTest, AnUnknownAccessModeRefusesThatObjectOnly) {
  absl::StatusOr<ObjectList<PersistentVolumeClaim>> claims =
      DecodeList<PersistentVolumeClaim>(
          R"({"metadata":{},"items":[
        {"metadata":{"name":"odd","namespace":"a"},
         "spec":{"accessModes":["ReadWriteSometimes"]}},
        {"metadata":{"name":"fine","namespace":"a"},"spec":{}}]})");
  ASSERT_TRUE(claims.ok()) << claims.status();
  ASSERT_EQ(claims->items.size(), 1u);
  EXPECT_EQ(claims->items[0].name, "fine");
  ASSERT_EQ(claims->rejected.size(), 1u);
  EXPECT_EQ(claims->rejected[0].Key(), "a/odd");
  EXPECT_EQ(claims->rejected[0].error,
            "unknown access mode \"ReadWriteSometimes\"");
}

}  // namespace
}  // namespace ms::kube
