// The scheduler end to end: build/metrics-scheduler against the testenv's
// kube-apiserver (with kube-scheduler running beside it) and a real
// Prometheus, with nothing but the RBAC of manifests/rbac.yaml.
//
// Each test labels its own nodes `e2e-suite=<suite>` and gives its pods a
// matching nodeSelector, so nodes left by other tests never take its pods.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "model/kube_version.h"
#include "simdjson.h"
#include "tests/testing/kube_scheduler_process.h"
#include "tests/testing/loopback.h"
#include "tests/testing/metrics_api_server.h"
#include "tests/testing/prometheus.h"
#include "tests/testing/scheduler_process.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::PrometheusServer;
using ::ms::testing::RemoteSeries;
using ::ms::testing::SchedulerProcess;
using ::ms::testing::SchedulerProcesses;
using ::ms::testing::Testenv;
using ::ms::testing::WaitFor;

struct ConfigParams {
  std::string prometheus_url;
  std::string suite;
  double latency_weight = 10;
  double recent_placements = 0;
  double penalty = 10;
  std::string ttl = "1s";
  std::string max_staleness = "5s";
  // YAML lines after http_latency's: more of its keys (indented by 4) or
  // more metrics (items indented by 2).
  std::string metrics_tail;
  // Top-level YAML lines at the end (e.g. `extender: {...}`).
  std::string tail;
};

std::string ConfigYaml(const ConfigParams& p) {
  return absl::StrFormat(R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: prometheus, url: "%s", timeout: 1s}
cache: {ttl: %s, maxStaleness: %s, refreshTimeout: 1s}
metrics:
  - name: http_latency
    query: 'http_latency_seconds{suite="%s"}'
    weight: %g
    direction: lower
    missing: neutral
%s
builtins: {leastAllocated: 1, balancedAllocation: 1, recentPlacements: %g}
herd: {penaltyPerPlacement: %g, window: 60s}
fallback: {coldCacheDeadline: 500ms}
leaderElection: {leaseDuration: 10s, renewDeadline: 8s, retryPeriod: 1s}
%s)",
                         p.prometheus_url, p.ttl, p.max_staleness, p.suite,
                         p.latency_weight, p.metrics_tail, p.recent_placements,
                         p.penalty, p.tail);
}

class EndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env_.server().empty());
    env_.ApplySchedulerRbac();
    static int counter = 0;
    suite_ = absl::StrCat("e2e-", getpid(), "-", counter++);
    env_.CreateNamespace(suite_);
    absl::StatusOr<std::unique_ptr<PrometheusServer>> prom =
        PrometheusServer::Start();
    ASSERT_TRUE(prom.ok()) << prom.status();
    prom_ = std::move(*prom);
  }

  void TearDown() override {
    schedulers_.StopAll(HasFailure());
    env_.DeleteNamespace(suite_);
    for (const std::string& n : nodes_) env_.DeleteNode(n);
    for (const std::string& path : cluster_objects_) {
      env_.AdminOk("DELETE", path);
    }
  }

  // Storage for the suite: a WaitForFirstConsumer class without a
  // provisioner (local volumes), and a local PV of `size` on `node`
  // (`claim`, if not empty, pre-binds it). Both are deleted at the end.
  std::string LocalClass() {
    const std::string name = suite_ + "-local";
    env_.AdminOk("POST", "/apis/storage.k8s.io/v1/storageclasses",
                 absl::StrCat(R"({"apiVersion":"storage.k8s.io/v1",)",
                              R"("kind":"StorageClass","metadata":{"name":")",
                              name,
                              R"("},"provisioner":"kubernetes.io/no-provisioner",)",
                              R"("volumeBindingMode":"WaitForFirstConsumer"})"));
    cluster_objects_.push_back("/apis/storage.k8s.io/v1/storageclasses/" + name);
    return name;
  }
  void CreateLocalVolume(const std::string& name, const std::string& node,
                         const std::string& size,
                         const std::string& claim = "") {
    env_.AdminOk(
        "POST", "/api/v1/persistentvolumes",
        absl::StrCat(
            R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":)",
            R"({"name":")", name, R"("},"spec":{"capacity":{"storage":")",
            size, R"("},"accessModes":["ReadWriteOnce"],)",
            R"("storageClassName":")", suite_, R"(-local",)",
            claim.empty()
                ? ""
                : absl::StrCat(R"("claimRef":{"namespace":")", suite_,
                               R"(","name":")", claim, R"("},)"),
            R"("local":{"path":"/mnt/disks/)", name, R"("},)",
            R"("nodeAffinity":{"required":{"nodeSelectorTerms":[)",
            R"({"matchExpressions":[{"key":"kubernetes.io/hostname",)",
            R"("operator":"In","values":[")", node, R"("]}]}]}}}})"));
    cluster_objects_.push_back("/api/v1/persistentvolumes/" + name);
  }
  void CreateClaim(const std::string& name, const std::string& size,
                   const std::string& volume = "") {
    env_.AdminOk(
        "POST", "/api/v1/namespaces/" + suite_ + "/persistentvolumeclaims",
        absl::StrCat(
            R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":)",
            R"({"name":")", name, R"("},"spec":{"accessModes":["ReadWriteOnce"],)",
            R"("storageClassName":")", suite_, R"(-local",)",
            volume.empty() ? ""
                           : absl::StrCat(R"("volumeName":")", volume, R"(",)"),
            R"("resources":{"requests":{"storage":")", size, R"("}}}})"));
  }
  std::string Claim(const std::string& name) {
    return env_.AdminOk("GET", "/api/v1/namespaces/" + suite_ +
                                   "/persistentvolumeclaims/" + name);
  }
  // A pod of the suite whose volume "data" is the claim `claim`.
  void CreatePodWithClaim(const std::string& name, const std::string& claim) {
    std::string spec = PodSpecJson("{}");
    spec.insert(spec.size() - 1,
                absl::StrCat(R"(,"volumes":[{"name":"data",)",
                             R"("persistentVolumeClaim":{"claimName":")", claim,
                             R"("}}])"));
    env_.AdminOk("POST", "/api/v1/namespaces/" + suite_ + "/pods",
                 absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":)",
                              R"({"name":")", name, R"("},"spec":)", spec, "}"));
  }

  std::string Node(int i) { return absl::StrCat(suite_, "-n", i); }

  // The release the apiserver reports, as rules; none (a failure
  // recorded) when it cannot be read.
  std::optional<KubeVersion> ClusterRules() {
    kube::KubeClient admin(env_.AdminConfig());
    absl::StatusOr<std::string> release = admin.ServerVersion();
    if (!release.ok()) {
      ADD_FAILURE() << release.status();
      return std::nullopt;
    }
    absl::StatusOr<KubeVersion> rules = ParseKubeVersion(*release);
    if (!rules.ok()) {
      ADD_FAILURE() << rules.status();
      return std::nullopt;
    }
    return *rules;
  }

  // A node labelled with the suite and, as the kubelet labels it, its
  // hostname and (unless empty) its zone.
  void AddNode(const std::string& name, const std::string& cpu = "4",
               const std::string& zone = "") {
    env_.CreateNode(
        name, cpu, "16Gi",
        absl::StrCat(R"({"e2e-suite":")", suite_,
                     R"(","kubernetes.io/hostname":")", name, R"(")",
                     zone.empty() ? ""
                                  : absl::StrCat(
                                        R"(,"topology.kubernetes.io/zone":")",
                                        zone, R"(")"),
                     "}"));
    nodes_.push_back(name);
  }

  // The node's example.com/hourly-cost annotation.
  void SetCost(const std::string& node, const std::string& price) {
    env_.AdminOk("PATCH", "/api/v1/nodes/" + node,
                 absl::StrCat(R"({"metadata":{"annotations":{)",
                              R"("example.com/hourly-cost":")", price,
                              R"("}}})"),
                 "application/merge-patch+json");
  }

  void SetLatency(const std::map<std::string, double>& by_node) {
    std::vector<RemoteSeries> series;
    for (const auto& [node, value] : by_node) {
      series.push_back({"http_latency_seconds",
                        {{"node", node}, {"suite", suite_}},
                        value});
    }
    absl::Status s = prom_->Write(series);
    ASSERT_TRUE(s.ok()) << s;
  }

  SchedulerProcess* StartScheduler(const ConfigParams& params,
                                   const std::string& identity = "e2e",
                                   std::vector<std::string> extra = {}) {
    return schedulers_.Start(
        {.config_yaml = ConfigYaml(params),
         .kubeconfig = env_.dir() + "/scheduler.kubeconfig",
         .identity = identity,
         .extra_args = std::move(extra)});
  }

  // Starts a scheduler with a configuration of the test's own.
  SchedulerProcess* StartSchedulerWithConfig(
      const std::string& config_yaml, std::vector<std::string> extra = {}) {
    return schedulers_.Start(
        {.config_yaml = config_yaml,
         .kubeconfig = env_.dir() + "/scheduler.kubeconfig",
         .extra_args = std::move(extra)});
  }

  ConfigParams Params() {
    return {.prometheus_url = prom_->url(), .suite = suite_};
  }

  static constexpr char kRefreshes[] =
      "metrics_scheduler_metric_refreshes_total{metric=\"http_latency\","
      "result=\"success\"}";

  // Waits until the scheduler has refreshed its metrics twice more, so that
  // values written before the call are in its cache.
  // Pods the scheduler counted as bound (its own /metrics).
  static double Scheduled(SchedulerProcess* s) {
    return s->Metric(
        "metrics_scheduler_schedule_attempts_total{result=\"scheduled\","
        "profile=\"metrics-scheduler\"}");
  }

  void WaitForRefresh(SchedulerProcess* s) {
    double start = s->Metric(kRefreshes);
    ASSERT_TRUE(WaitFor([&] { return s->Metric(kRefreshes) >= start + 2; }))
        << s->Log();
  }

  // Waits for a fresh scheduler's first successful refresh (it may already
  // have happened: the cache fetches as soon as scheduling starts).
  void WaitForFirstRefresh(SchedulerProcess* s) {
    ASSERT_TRUE(WaitFor([&] { return s->Metric(kRefreshes) >= 1; }))
        << s->Log();
  }

  std::string PodJson(const std::string& name, const std::string& cpu = "100m",
                      const std::string& scheduler = "metrics-scheduler") {
    return absl::StrCat(
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
        R"(","labels":{"app":"e2e"}},"spec":{"schedulerName":")", scheduler,
        R"(","nodeSelector":{"e2e-suite":")", suite_,
        R"("},"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",)",
        R"("resources":{"requests":{"cpu":")", cpu,
        R"(","memory":"64Mi"}}}]}})");
  }

  void CreatePod(const std::string& name, const std::string& cpu = "100m",
                 const std::string& scheduler = "metrics-scheduler") {
    env_.AdminOk("POST", "/api/v1/namespaces/" + suite_ + "/pods",
                 PodJson(name, cpu, scheduler));
  }

  // The spec of a pod of the suite with `affinity` (a JSON object for
  // spec.affinity; "{}" for none) and `spread` (a JSON list for
  // spec.topologySpreadConstraints).
  std::string PodSpecJson(const std::string& affinity,
                          const std::string& cpu = "100m",
                          const std::string& spread = "[]") {
    return absl::StrCat(
        R"({"schedulerName":"metrics-scheduler","nodeSelector":{"e2e-suite":")",
        suite_, R"("},"affinity":)", affinity,
        R"(,"topologySpreadConstraints":)", spread,
        R"(,"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",)",
        R"("resources":{"requests":{"cpu":")", cpu,
        R"(","memory":"64Mi"}}}]})");
  }

  // A PriorityClass of the suite (deleted at the end); `never`: its pods
  // get preemptionPolicy Never.
  std::string PriorityClass(const std::string& name, int value,
                            bool never = false) {
    const std::string full = suite_ + "-" + name;
    env_.AdminOk(
        "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
        absl::StrCat(R"({"apiVersion":"scheduling.k8s.io/v1",)",
                     R"("kind":"PriorityClass","metadata":{"name":")", full,
                     R"("},"value":)", value,
                     never ? R"(,"preemptionPolicy":"Never")" : "", "}"));
    cluster_objects_.push_back("/apis/scheduling.k8s.io/v1/priorityclasses/" +
                               full);
    return full;
  }

  // A pod of `cpu` in PriorityClass `priority_class` ("" for none),
  // labelled `labels` with `affinity`.
  void CreatePrioritised(const std::string& name, const std::string& cpu,
                         const std::string& priority_class,
                         const std::string& labels = "{}",
                         const std::string& affinity = "{}") {
    std::string spec = PodSpecJson(affinity, cpu);
    if (!priority_class.empty()) {
      spec.insert(1, absl::StrCat(R"("priorityClassName":")", priority_class,
                                  R"(",)"));
    }
    env_.AdminOk("POST", "/api/v1/namespaces/" + suite_ + "/pods",
                 absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":)",
                              R"({"name":")", name, R"(","labels":)", labels,
                              R"(},"spec":)", spec, "}"));
  }

  std::string PodObject(const std::string& name) {
    return env_.AdminOk("GET",
                        "/api/v1/namespaces/" + suite_ + "/pods/" + name);
  }
  // Whether preemption is evicting the pod: being deleted, with the
  // DisruptionTarget condition.
  bool BeingPreempted(const std::string& name) {
    absl::StatusOr<HttpResponse> r = env_.Admin(
        "GET", "/api/v1/namespaces/" + suite_ + "/pods/" + name);
    return r.ok() && r->status == 200 &&
           absl::StrContains(r->body, "deletionTimestamp") &&
           absl::StrContains(r->body, "PreemptionByScheduler");
  }
  // What a kubelet does once a pod being deleted has stopped.
  void FinishDeletion(const std::string& name) {
    env_.AdminOk("DELETE", "/api/v1/namespaces/" + suite_ + "/pods/" + name,
                 R"({"gracePeriodSeconds":0})");
  }

  // spec.affinity that allows only `node` (required node affinity on its
  // name).
  static std::string PinnedTo(const std::string& node) {
    return absl::StrCat(
        R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)",
        R"({"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name",)",
        R"("operator":"In","values":[")", node, R"("]}]}]}}})");
  }

  // A pod labelled `labels` (a JSON object) with `affinity`.
  void CreatePodWith(const std::string& name, const std::string& labels,
                     const std::string& affinity,
                     const std::string& cpu = "100m") {
    env_.AdminOk("POST", "/api/v1/namespaces/" + suite_ + "/pods",
                 absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":)",
                              R"({"name":")", name, R"(","labels":)", labels,
                              R"(},"spec":)", PodSpecJson(affinity, cpu), "}"));
  }

  // Pod name -> node name ("" while pending), for the suite's namespace.
  std::map<std::string, std::string> Placements() {
    return env_.PodNodes(suite_);
  }

  bool AllBound(size_t want) {
    std::map<std::string, std::string> p = Placements();
    if (p.size() != want) return false;
    for (const auto& [pod, node] : p) {
      if (node.empty()) return false;
    }
    return true;
  }

  std::map<std::string, int> PodsPerNode() {
    std::map<std::string, int> out;
    for (const auto& [pod, node] : Placements()) {
      if (!node.empty()) out[node]++;
    }
    return out;
  }

  // Events about `pod`, as the raw JSON list.
  std::string Events(const std::string& pod) {
    return env_.AdminOk("GET", "/api/v1/namespaces/" + suite_ +
                                   "/events?fieldSelector=involvedObject.name%3D" +
                                   pod);
  }

  // Events about `pod` once they include `needle`: Events are written
  // asynchronously, after the binding. Fails the test after 30 s.
  std::string EventsWith(const std::string& pod, const std::string& needle) {
    std::string events;
    EXPECT_TRUE(WaitFor([&] {
      events = Events(pod);
      return events.find(needle) != std::string::npos;
    })) << pod << " has no event with " << needle << ": " << events;
    return events;
  }

  // What `metrics-scheduler --version` prints after the name: "0.1.0+...".
  static std::string BinaryVersion() {
    const char* bin_dir = std::getenv("MS_BINARY_DIR");
    if (bin_dir == nullptr) return "";
    FILE* out = popen(
        absl::StrCat(bin_dir, "/metrics-scheduler --version").c_str(), "r");
    if (out == nullptr) return "";
    char line[256] = {0};
    const bool read = std::fgets(line, sizeof line, out) != nullptr;
    pclose(out);
    if (!read) return "";
    absl::string_view v = absl::StripAsciiWhitespace(line);
    absl::ConsumePrefix(&v, "metrics-scheduler ");
    return std::string(v);
  }

  // Waits for a FailedScheduling Event on `pod`; returns the pod's Events.
  std::string AwaitFailedScheduling(const std::string& pod,
                                    SchedulerProcess* s) {
    std::string events;
    EXPECT_TRUE(WaitFor([&] {
      events = Events(pod);
      return events.find("FailedScheduling") != std::string::npos;
    })) << s->Log();
    return events;
  }

  static int Count(const std::string& text, const std::string& needle) {
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + 1)) {
      ++n;
    }
    return n;
  }

  Testenv env_;
  std::string suite_;
  std::unique_ptr<PrometheusServer> prom_;
  SchedulerProcesses schedulers_;
  std::vector<std::string> nodes_;
  std::vector<std::string> cluster_objects_;  // paths, deleted in TearDown
};

TEST_F(EndToEndTest, DeploymentFollowsTheFastestNode) {
  for (int i = 0; i < 3; ++i) AddNode(Node(i));
  SetLatency({{Node(0), 0.250}, {Node(1), 0.020}, {Node(2), 0.120}});
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  WaitForRefresh(s);

  std::string deployment = absl::StrCat(
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},)",
      R"("spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},)",
      R"("template":{"metadata":{"labels":{"app":"web"}},"spec":{)",
      R"("schedulerName":"metrics-scheduler","nodeSelector":{"e2e-suite":")",
      suite_,
      R"("},"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",)",
      R"("resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}}})");
  env_.AdminOk("POST", "/apis/apps/v1/namespaces/" + suite_ + "/deployments",
               deployment);
  ASSERT_TRUE(WaitFor([&] { return AllBound(3); }, absl::Seconds(60)))
      << s->Log();
  EXPECT_EQ(PodsPerNode(), (std::map<std::string, int>{{Node(1), 3}}));

  // Node 2 becomes the fastest: new pods follow.
  SetLatency({{Node(0), 0.250}, {Node(1), 0.300}, {Node(2), 0.010}});
  WaitForRefresh(s);
  env_.AdminOk("PATCH",
               "/apis/apps/v1/namespaces/" + suite_ + "/deployments/web/scale",
               R"({"spec":{"replicas":6}})",
               "application/merge-patch+json");
  ASSERT_TRUE(WaitFor([&] { return AllBound(6); }, absl::Seconds(60)))
      << s->Log();
  EXPECT_EQ(PodsPerNode(),
            (std::map<std::string, int>{{Node(1), 3}, {Node(2), 3}}));

  // The Scheduled event says where and why.
  std::string pod;
  for (const auto& [name, node] : Placements()) {
    if (node == Node(2)) pod = name;
  }
  std::string events = EventsWith(pod, "\"reason\":\"Scheduled\"");
  EXPECT_NE(events.find(absl::StrCat("Successfully assigned ", suite_, "/",
                                     pod, " to ", Node(2))),
            std::string::npos)
      << events;
  EXPECT_NE(events.find("(metrics)"), std::string::npos) << events;
  EXPECT_NE(events.find("http_latency"), std::string::npos) << events;
  EXPECT_NE(events.find("\"reportingComponent\":\"metrics-scheduler\""),
            std::string::npos)
      << events;

  // /metrics says what runs: the version --version prints.
  std::string version = BinaryVersion();
  ASSERT_FALSE(version.empty());
  EXPECT_EQ(s->Metric(absl::StrCat("metrics_scheduler_build_info{version=\"",
                                   version, "\"}")),
            1);
}

// /metrics by Prometheus' conventions, scraped from a scheduler that has
// bound pods and failed one: promtool has nothing to say, and the series
// that dashboards read are there, with plausible values.
TEST_F(EndToEndTest, MetricsPassPromtoolAfterScheduling) {
  for (int i = 0; i < 2; ++i) AddNode(Node(i));
  SetLatency({{Node(0), 0.1}, {Node(1), 0.2}});
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  WaitForRefresh(s);
  for (int i = 0; i < 3; ++i) CreatePod(absl::StrCat("lint-", i));
  CreatePod("too-big", "64");
  const std::string profile = "profile=\"metrics-scheduler\"";
  const std::string scheduled_seconds = absl::StrCat(
      "metrics_scheduler_scheduling_attempt_duration_seconds_count{result="
      "\"scheduled\",",
      profile, "}");
  const std::string unschedulable = absl::StrCat(
      "metrics_scheduler_schedule_attempts_total{result=\"unschedulable\",",
      profile, "}");
  const std::string parked = "metrics_scheduler_pending_pods{queue=\"unschedulable\"}";
  ASSERT_TRUE(WaitFor([&] {
    return Scheduled(s) == 3 && s->Metric(scheduled_seconds) == 3 &&
           s->Metric(unschedulable) >= 1 && s->Metric(parked) == 1;
  })) << s->Log();

  absl::StatusOr<std::string> text = s->Scrape();
  ASSERT_TRUE(text.ok()) << text.status();
  // promtool says nothing and exits 0 when every check passes; a lint
  // problem exits 3, a parse error 1, each with a line of explanation.
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/metrics-", suite_, ".txt");
  std::ofstream(path) << *text;
  FILE* promtool =
      popen(absl::StrCat("promtool check metrics < ", path, " 2>&1").c_str(),
            "r");
  ASSERT_NE(promtool, nullptr);
  std::string said;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, promtool)) > 0) {
    said.append(buffer, n);
  }
  const int status = pclose(promtool);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "promtool: " << said << "\n" << *text;
  EXPECT_EQ(said, "") << *text;
  // promtool lints only families with samples: every family has one (its
  // series exist from the start).
  std::vector<std::string> families;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (absl::ConsumePrefix(&line, "# TYPE ")) {
      families.emplace_back(line.substr(0, line.find(' ')));
    }
  }
  EXPECT_GT(families.size(), 30u);
  for (const std::string& family : families) {
    EXPECT_TRUE(absl::StrContains(*text, "\n" + family + " ") ||
                absl::StrContains(*text, "\n" + family + "{") ||
                absl::StrContains(*text, "\n" + family + "_bucket{"))
        << family << " has no sample";
  }

  // kube-scheduler's series, every label value from the start.
  for (const char* result : {"scheduled", "unschedulable", "error"}) {
    EXPECT_TRUE(absl::StrContains(
        *text, absl::StrCat("\nmetrics_scheduler_schedule_attempts_total{"
                            "result=\"",
                            result, "\",", profile, "} ")))
        << result;
  }
  for (const char* queue : {"active", "backoff", "unschedulable", "gated"}) {
    EXPECT_TRUE(absl::StrContains(
        *text, absl::StrCat("\nmetrics_scheduler_pending_pods{queue=\"", queue,
                            "\"} ")))
        << queue;
  }
  EXPECT_TRUE(absl::StrContains(
      *text,
      "\nmetrics_scheduler_pod_scheduling_sli_duration_seconds_count{"
      "attempts=\"15+\"} 0\n"));
  // Each bound pod, in the SLI histogram by its attempts (the first, here).
  EXPECT_EQ(s->Metric("metrics_scheduler_pod_scheduling_sli_duration_seconds_"
                      "count{attempts=\"1\"}"),
            3);
  // The backend's queries, by outcome.
  const std::string queries =
      "metrics_scheduler_backend_query_duration_seconds_count{metric=\""
      "http_latency\",outcome=\"";
  EXPECT_GE(s->Metric(queries + "success\"}"), 1);
  EXPECT_TRUE(absl::StrContains(*text, queries + "timeout\"} 0\n"));
  // Timestamps and process figures, near now.
  const double now = static_cast<double>(absl::ToUnixSeconds(absl::Now()));
  const double last_success = s->Metric(
      "metrics_scheduler_metric_last_success_timestamp_seconds{metric=\""
      "http_latency\"}");
  EXPECT_GT(last_success, now - 600);
  EXPECT_LT(last_success, now + 60);
  const double started = s->Metric("process_start_time_seconds");
  EXPECT_GT(started, now - 600);
  EXPECT_LT(started, now + 60);
  EXPECT_GT(s->Metric("process_resident_memory_bytes"), 1 << 20);
  EXPECT_GT(s->Metric("process_open_fds"), 3);
  EXPECT_GE(s->Metric("process_max_fds"), s->Metric("process_open_fds"));
  EXPECT_GT(s->Metric("process_cpu_seconds_total"), 0);
}

// With --logging-format=json, every line the scheduler writes is one JSON
// object with klog's keys, and the line of a decision (-v=1) names the pod
// and the node as fields.
TEST_F(EndToEndTest, JsonLogLinesNameThePodAndTheNode) {
  AddNode(Node(0));
  SetLatency({{Node(0), 0.1}});
  SchedulerProcess* s =
      StartScheduler(Params(), "e2e", {"--logging-format=json"});
  ASSERT_NE(s, nullptr);
  CreatePod("logged");
  ASSERT_TRUE(WaitFor([&] { return Scheduled(s) == 1; })) << s->Log();
  ASSERT_EQ(s->Stop(), 0);

  const std::string log = s->Log();
  std::vector<std::string> lines = absl::StrSplit(log, '\n', absl::SkipEmpty());
  ASSERT_GT(lines.size(), 3u) << log;
  simdjson::ondemand::parser parser;
  int decisions = 0;
  for (const std::string& line : lines) {
    simdjson::padded_string json(line);
    simdjson::ondemand::document doc;
    ASSERT_EQ(parser.iterate(json).get(doc), simdjson::SUCCESS) << line;
    simdjson::ondemand::object object;
    ASSERT_EQ(doc.get_object().get(object), simdjson::SUCCESS) << line;
    double ts = 0;
    std::string_view caller, msg;
    EXPECT_EQ(object["ts"].get(ts), simdjson::SUCCESS) << line;
    EXPECT_EQ(object["caller"].get(caller), simdjson::SUCCESS) << line;
    EXPECT_EQ(object["msg"].get(msg), simdjson::SUCCESS) << line;
    if (!msg.starts_with(suite_ + "/logged -> ")) continue;
    ++decisions;
    int64_t v = -1;
    std::string_view pod_name, pod_namespace, node;
    EXPECT_EQ(object["v"].get(v), simdjson::SUCCESS) << line;
    EXPECT_EQ(v, 1) << line;
    EXPECT_EQ(object["pod"]["name"].get(pod_name), simdjson::SUCCESS) << line;
    EXPECT_EQ(object["pod"]["namespace"].get(pod_namespace),
              simdjson::SUCCESS)
        << line;
    EXPECT_EQ(object["node"].get(node), simdjson::SUCCESS) << line;
    EXPECT_EQ(pod_name, "logged");
    EXPECT_EQ(pod_namespace, suite_);
    EXPECT_EQ(node, Node(0));
    EXPECT_TRUE(caller.starts_with("cycle/scheduler.cc:")) << line;
  }
  EXPECT_EQ(decisions, 1) << log;
}

TEST_F(EndToEndTest, BurstSpreadsWithoutOvercommit) {
  // 10 nodes of 1500m, equal metrics, 100 pods of 100m: room for 150.
  std::map<std::string, double> latency;
  for (int i = 0; i < 10; ++i) {
    AddNode(Node(i), "1500m");
    latency[Node(i)] = 0.05;
  }
  SetLatency(latency);
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  WaitForRefresh(s);
  for (int i = 0; i < 100; ++i) CreatePod(absl::StrCat("burst-", i));
  ASSERT_TRUE(WaitFor([&] { return AllBound(100); }, absl::Seconds(120)))
      << s->Log();
  std::map<std::string, int> per_node = PodsPerNode();
  EXPECT_EQ(per_node.size(), 10u);
  for (const auto& [node, count] : per_node) {
    EXPECT_LE(count, 20) << node << " has more than twice the mean";
    EXPECT_LE(count * 100, 1500) << node << " is over-committed";
  }
  // Counted once the binding's answer is back, which may be just after
  // the pod shows as bound.
  EXPECT_TRUE(WaitFor([&] { return Scheduled(s) == 100; }))
      << Scheduled(s);
}

TEST_F(EndToEndTest, HerdPenaltySpreadsABurstAwayFromTheBestNode) {
  // Node 0 looks much better than the others. Without herd avoidance a
  // burst all lands there (the next test); with it, it spreads.
  std::map<std::string, double> latency = {{Node(0), 0.010}};
  for (int i = 0; i < 4; ++i) AddNode(Node(i));
  for (int i = 1; i < 4; ++i) latency[Node(i)] = 0.100;
  SetLatency(latency);
  ConfigParams params = Params();
  // Weights: latency 2, leastAllocated 1, balancedAllocation 1,
  // recentPlacements 4 (sum 8); penalty 10 points per placement. Node 0's
  // latency term is 100, the others' 0 (minmax), so node 0 leads by
  // 2 * 100 = 200 weighted points, and each pod placed since the last
  // sample costs its node 4 * 10 = 40: node 0 wins while it holds fewer
  // than 5 pods more than the others. 20 pods: k + 3j = 20 with k ~ j + 4
  // gives node 0 about 8 and each other node about 4 (the small
  // leastAllocated differences, 100m of 4 cpu per pod, favour the emptier
  // nodes by a fraction of a point).
  params.latency_weight = 2;
  params.recent_placements = 4;
  params.penalty = 10;
  // A sample newer than a placement resets its count: refresh rarely, so
  // the whole burst sees one sample.
  params.ttl = "60s";
  params.max_staleness = "120s";
  SchedulerProcess* s = StartScheduler(params);
  ASSERT_NE(s, nullptr);
  WaitForFirstRefresh(s);
  for (int i = 0; i < 20; ++i) CreatePod(absl::StrCat("herd-", i));
  ASSERT_TRUE(WaitFor([&] { return AllBound(20); }, absl::Seconds(60)))
      << s->Log();
  std::map<std::string, int> per_node = PodsPerNode();
  EXPECT_GE(per_node[Node(0)], 7);
  EXPECT_LE(per_node[Node(0)], 9);
  for (int i = 1; i < 4; ++i) {
    EXPECT_GE(per_node[Node(i)], 3) << Node(i);
    EXPECT_LE(per_node[Node(i)], 5) << Node(i);
  }
}

TEST_F(EndToEndTest, WithoutHerdPenaltyABurstLandsOnTheBestNode) {
  // The control for the test above: same metrics, penalty off.
  std::map<std::string, double> latency = {{Node(0), 0.010}};
  for (int i = 0; i < 4; ++i) AddNode(Node(i));
  for (int i = 1; i < 4; ++i) latency[Node(i)] = 0.100;
  SetLatency(latency);
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  WaitForRefresh(s);
  for (int i = 0; i < 20; ++i) CreatePod(absl::StrCat("herd-", i));
  ASSERT_TRUE(WaitFor([&] { return AllBound(20); }, absl::Seconds(60)))
      << s->Log();
  EXPECT_EQ(PodsPerNode(), (std::map<std::string, int>{{Node(0), 20}}));
}

TEST_F(EndToEndTest, PrometheusDownFallsBackAndRecovers) {
  for (int i = 0; i < 3; ++i) AddNode(Node(i));
  SetLatency({{Node(0), 0.2}, {Node(1), 0.01}, {Node(2), 0.2}});
  ConfigParams params = Params();
  params.max_staleness = "2s";
  SchedulerProcess* s = StartScheduler(params);
  ASSERT_NE(s, nullptr);
  WaitForRefresh(s);

  ASSERT_TRUE(prom_->Stop().ok());
  // Once the last good values are older than maxStaleness, decisions are
  // made in fallback mode, and pods are still bound.
  const std::string fallback =
      "metrics_scheduler_decisions_total{mode=\"fallback\","
      "profile=\"metrics-scheduler\"}";
  int i = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::string name = absl::StrCat("down-", i++);
        CreatePod(name);
        if (!WaitFor([&] { return !Placements()[name].empty(); },
                     absl::Seconds(10))) {
          return false;
        }
        return s->Metric(fallback) >= 1;
      },
      absl::Seconds(60)))
      << s->Log();
  std::string last = absl::StrCat("down-", i - 1);
  std::string events = EventsWith(last, "\"reason\":\"Scheduled\"");
  EXPECT_NE(events.find("(fallback)"), std::string::npos) << events;
  EXPECT_NE(events.find("[fallback: "), std::string::npos) << events;

  // Prometheus back with fresh values: metrics mode resumes.
  ASSERT_TRUE(prom_->Restart().ok());
  SetLatency({{Node(0), 0.2}, {Node(1), 0.01}, {Node(2), 0.2}});
  WaitForRefresh(s);
  double metrics_before = s->Metric(
      "metrics_scheduler_decisions_total{mode=\"metrics\","
      "profile=\"metrics-scheduler\"}");
  CreatePod("back");
  ASSERT_TRUE(WaitFor([&] { return !Placements()["back"].empty(); }));
  EXPECT_EQ(s->Metric("metrics_scheduler_decisions_total{mode=\"metrics\","
                      "profile=\"metrics-scheduler\"}"),
            metrics_before + 1);
  EXPECT_NE(EventsWith("back", "\"reason\":\"Scheduled\"").find("(metrics)"),
            std::string::npos);
}

TEST_F(EndToEndTest, UnschedulablePodIsReportedThenBoundWhenANodeFits) {
  AddNode(Node(0), "2");
  SetLatency({{Node(0), 0.1}});
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  CreatePod("big", "3");
  std::string events = AwaitFailedScheduling("big", s);
  EXPECT_NE(events.find("nodes are available: "), std::string::npos) << events;
  EXPECT_NE(events.find("Insufficient cpu"), std::string::npos) << events;
  // The condition is patched after the event is recorded.
  std::string pod;
  EXPECT_TRUE(WaitFor([&] {
    pod = env_.AdminOk("GET", "/api/v1/namespaces/" + suite_ + "/pods/big");
    return pod.find(R"("type":"PodScheduled","status":"False")") !=
               std::string::npos &&
           pod.find(R"("reason":"Unschedulable")") != std::string::npos;
  })) << pod;
  EXPECT_EQ(Placements()["big"], "");

  AddNode(Node(1), "4");
  ASSERT_TRUE(WaitFor([&] { return Placements()["big"] == Node(1); },
                      absl::Seconds(30)))
      << s->Log();
}

// A metric read from a Node annotation ranks the nodes; its filter keeps
// the nodes above the bound out; a pod waiting on that filter is placed as
// soon as a node's annotation passes it.
TEST_F(EndToEndTest, APriceAnnotationRanksAndFiltersNodes) {
  const std::map<std::string, std::string> cost = {
      {Node(0), "9"}, {Node(1), "1"}, {Node(2), "8"}, {Node(3), "4"}};
  for (const auto& [node, price] : cost) {
    AddNode(node, "4");
    SetCost(node, price);
  }
  // Latency is the same everywhere: it cannot tell the nodes apart.
  SetLatency({{Node(0), 0.1}, {Node(1), 0.1}, {Node(2), 0.1}, {Node(3), 0.1}});
  ConfigParams params = Params();
  params.metrics_tail = R"(  - name: price
    source: {nodeAnnotation: example.com/hourly-cost}
    weight: 20
    direction: lower
    filter: {max: 5})";
  SchedulerProcess* s = StartScheduler(params);
  ASSERT_NE(s, nullptr);
  // Past a cold cache's deadline a decision is in fallback mode, where no
  // metric filters.
  WaitForFirstRefresh(s);

  CreatePod("cheapest", "3");
  ASSERT_TRUE(WaitFor([&] { return Placements()["cheapest"] == Node(1); }))
      << s->Log();
  EXPECT_NE(EventsWith("cheapest", "Scheduled").find("price 100.0"),
            std::string::npos)
      << Events("cheapest");
  CreatePod("next", "3");
  ASSERT_TRUE(WaitFor([&] { return Placements()["next"] == Node(3); }))
      << s->Log();

  CreatePod("waits", "3");
  std::string events = AwaitFailedScheduling("waits", s);
  EXPECT_NE(events.find("0/4 nodes are available: 2 Insufficient cpu, 2 "
                        "node(s) had price above 5."),
            std::string::npos)
      << events;
  EXPECT_EQ(Placements()["waits"], "");

  SetCost(Node(2), "1500m");  // a quantity, within the bound now
  ASSERT_TRUE(WaitFor([&] { return Placements()["waits"] == Node(2); },
                      absl::Seconds(30)))
      << s->Log();
}

// A threshold on a Prometheus metric keeps pods off a slow node; a pod
// that only the slow node could take waits, and is placed once new values
// show the node back under the bound.
TEST_F(EndToEndTest, ALatencyThresholdKeepsPodsOffASlowNode) {
  AddNode(Node(0), "4");
  AddNode(Node(1), "4");
  SetLatency({{Node(0), 0.9}, {Node(1), 0.1}});
  ConfigParams params = Params();
  params.metrics_tail = "    filter: {max: 0.5}";
  SchedulerProcess* s = StartScheduler(params);
  ASSERT_NE(s, nullptr);
  WaitForFirstRefresh(s);

  CreatePod("fast", "3");
  ASSERT_TRUE(WaitFor([&] { return Placements()["fast"] == Node(1); }))
      << s->Log();
  CreatePod("waits", "3");
  std::string events = AwaitFailedScheduling("waits", s);
  EXPECT_NE(events.find("0/2 nodes are available: 1 Insufficient cpu, 1 "
                        "node(s) had http_latency above 0.5."),
            std::string::npos)
      << events;

  SetLatency({{Node(0), 0.2}, {Node(1), 0.1}});
  ASSERT_TRUE(WaitFor([&] { return Placements()["waits"] == Node(0); },
                      absl::Seconds(30)))
      << s->Log();
}

// The nodes' CPU utilisation as node_cpu_busy{suite, node}, a fraction.
// (A member of the fixture would do; these tests are its only users.)
void SetCpu(PrometheusServer& prom, const std::string& suite,
            const std::map<std::string, double>& by_node) {
  std::vector<RemoteSeries> series;
  for (const auto& [node, value] : by_node) {
    series.push_back(
        {"node_cpu_busy", {{"node", node}, {"suite", suite}}, value});
  }
  absl::Status s = prom.Write(series);
  ASSERT_TRUE(s.ok()) << s;
}

// The `cpu` metric over node_cpu_busy (SetCpu), ranked by range 0..1 at
// weight 100, with `estimate` (a YAML flow mapping), as a metrics_tail.
std::string CpuMetricYaml(const std::string& suite,
                          const std::string& estimate) {
  return absl::StrCat("  - name: cpu\n    query: 'node_cpu_busy{suite=\"",
                      suite,
                      "\"}'\n    weight: 100\n"
                      "    normalization: {type: range, min: 0, max: 1}\n"
                      "    estimate: ",
                      estimate);
}

// Pods the metrics have not seen yet: CPU utilisation is sampled every
// second but shows a pod only a minute after it starts (the warm-up), so
// through the whole burst every node looks as it did. Each pod requests
// 200m of 4 cores and is charged 0.05 until then. Five pods bound by
// nobody (spec.nodeName) a moment before count as well. Utilisation
// 0.2 + 5 x 0.05 on n0, 0.3 on n1, 0.4 on n2, and 25 pods adding 1.25:
// the burst fills the nodes level at 0.8, 7, 10 and 8 pods; without
// estimates all 25 would go to n0 (the control:
// WithoutHerdPenaltyABurstLandsOnTheBestNode).
TEST_F(EndToEndTest, EstimatesSpreadABurstTheMetricsHaveNotSeen) {
  for (int i = 0; i < 3; ++i) AddNode(Node(i));
  SetLatency({{Node(0), 0.05}, {Node(1), 0.05}, {Node(2), 0.05}});
  SetCpu(*prom_, suite_, {{Node(0), 0.2}, {Node(1), 0.3}, {Node(2), 0.4}});
  for (int i = 0; i < 5; ++i) {
    std::string pod = PodJson(absl::StrCat("direct-", i), "200m", "none");
    pod.insert(pod.find(R"("containers")"),
               absl::StrCat(R"("nodeName":")", Node(0), R"(",)"));
    env_.AdminOk("POST", "/api/v1/namespaces/" + suite_ + "/pods", pod);
  }
  ConfigParams params = Params();
  params.metrics_tail =
      CpuMetricYaml(suite_, "{from: cpuRequests, factor: 1, warmup: 1m}");
  SchedulerProcess* s = StartScheduler(params);
  ASSERT_NE(s, nullptr);
  // The five pods were listed before scheduling started: started, as far
  // as the scheduler knows, when it first saw them bound.
  WaitForFirstRefresh(s);
  // One pod's estimate annotation is no number: it is estimated as
  // configured, and its Events say so.
  std::string odd = PodJson("burst-odd", "200m");
  odd.insert(odd.find(R"(,"labels")"),
             R"(,"annotations":{"estimate.metrics-scheduler.io/cpu":"lots"})");
  env_.AdminOk("POST", "/api/v1/namespaces/" + suite_ + "/pods", odd);
  for (int i = 0; i < 24; ++i) CreatePod(absl::StrCat("burst-", i), "200m");
  ASSERT_TRUE(WaitFor([&] { return AllBound(30); }, absl::Seconds(60)))
      << s->Log();
  ASSERT_TRUE(WaitFor([&] {
    return Events("burst-odd").find(
               R"(annotation estimate.metrics-scheduler.io/cpu: \"lots\" is )"
               R"(not a decimal; cpu is estimated as configured)") !=
           std::string::npos;
  })) << Events("burst-odd");
  EXPECT_NE(Events("burst-odd").find(R"("reason":"InvalidEstimate")"),
            std::string::npos);
  std::map<std::string, int> per_node = PodsPerNode();
  // +-1: ties between levels break by the built-in terms and at random.
  EXPECT_NEAR(per_node[Node(0)] - 5, 7, 1) << s->Log();
  EXPECT_NEAR(per_node[Node(1)], 10, 1);
  EXPECT_NEAR(per_node[Node(2)], 8, 1);
}

// A controller's pods that use far more than they request: the web pods
// request 200m and measurably use 1.5 cores (a per-pod usage series
// from Prometheus). Each new web pod is charged what its siblings use,
// 1.5 / 4 = 0.375, not its 0.05 of requests: six of them fill the nodes
// (0.2, 0.3, 0.4) two each (0.575, 0.675, 0.775, then 0.95, 1.05, 1.15).
// From requests they would crowd n0 (the control: the same burst with the
// per-pod series under another name gives n0 four or more).
TEST_F(EndToEndTest, APodIsEstimatedFromItsSiblingsMeasuredUsage) {
  for (int i = 0; i < 3; ++i) AddNode(Node(i));
  SetLatency({{Node(0), 0.05}, {Node(1), 0.05}, {Node(2), 0.05}});
  SetCpu(*prom_, suite_, {{Node(0), 0.2}, {Node(1), 0.3}, {Node(2), 0.4}});
  // The owner: a ConfigMap, which no controller manages pods for.
  std::string owner = env_.AdminOk(
      "POST", "/api/v1/namespaces/" + suite_ + "/configmaps",
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web"}})");
  const size_t at = owner.find(R"("uid":")");
  ASSERT_NE(at, std::string::npos) << owner;
  const std::string uid = owner.substr(at + 7, 36);
  auto web_pod = [&](const std::string& name, const std::string& scheduler,
                     const std::string& node) {
    std::string pod = PodJson(name, "200m", scheduler);
    pod.insert(pod.find(R"(,"labels")"),
               absl::StrCat(R"(,"ownerReferences":[{"apiVersion":"v1",)",
                            R"("kind":"ConfigMap","name":"web","uid":")", uid,
                            R"(","controller":true}])"));
    if (!node.empty()) {
      pod.insert(pod.find(R"("containers")"),
                 absl::StrCat(R"("nodeName":")", node, R"(",)"));
    }
    env_.AdminOk("POST", "/api/v1/namespaces/" + suite_ + "/pods", pod);
  };
  // Three siblings running for an hour on n2, each measured at 1.5 cores.
  std::vector<RemoteSeries> usage;
  const std::string an_hour_ago = absl::FormatTime(
      "%Y-%m-%dT%H:%M:%SZ", absl::Now() - absl::Hours(1), absl::UTCTimeZone());
  for (int i = 0; i < 3; ++i) {
    const std::string name = absl::StrCat("web-old-", i);
    web_pod(name, "none", Node(2));
    env_.AdminOk("PATCH",
                 "/api/v1/namespaces/" + suite_ + "/pods/" + name + "/status",
                 absl::StrCat(R"({"status":{"phase":"Running","startTime":")",
                              an_hour_ago, R"("}})"),
                 "application/merge-patch+json");
    usage.push_back(
        {"pod_cpu_usage", {{"namespace", suite_}, {"pod", name}}, 1.5});
  }
  ASSERT_TRUE(prom_->Write(usage).ok());
  ConfigParams params = Params();
  params.metrics_tail = CpuMetricYaml(
      suite_,
      absl::StrCat("{from: cpuRequests, warmup: 1m, siblings: {query: 'sum by "
                   "(namespace, pod) (pod_cpu_usage{namespace=\"",
                   suite_, "\"})'}}"));
  SchedulerProcess* s = StartScheduler(params);
  ASSERT_NE(s, nullptr);
  WaitForFirstRefresh(s);
  for (int i = 0; i < 6; ++i) {
    web_pod(absl::StrCat("web-new-", i), "metrics-scheduler", "");
  }
  ASSERT_TRUE(WaitFor([&] { return AllBound(9); }, absl::Seconds(60)))
      << s->Log();
  EXPECT_EQ(PodsPerNode(), (std::map<std::string, int>{
                               {Node(0), 2}, {Node(1), 2}, {Node(2), 3 + 2}}))
      << s->Log();
}

// A scoped threshold: production pods keep off a node above 0.7 CPU,
// batch pods may use it up to 0.9. n0 answers faster, so each pod goes
// there when its bound allows.
TEST_F(EndToEndTest, AScopedThresholdKeepsProductionPodsOffANodeBatchMayUse) {
  AddNode(Node(0));
  AddNode(Node(1));
  SetLatency({{Node(0), 0.01}, {Node(1), 0.1}});
  SetCpu(*prom_, suite_, {{Node(0), 0.75}, {Node(1), 0.3}});
  ConfigParams params = Params();
  params.metrics_tail = absl::StrCat(R"(  - name: cpu
    query: 'node_cpu_busy{suite=")",
                                     suite_, R"("}'
    weight: 1
    filter:
      max: 0.9
      scopes: [{pods: {matchLabels: {tier: production}}, max: 0.7}])");
  SchedulerProcess* s = StartScheduler(params);
  ASSERT_NE(s, nullptr);
  WaitForFirstRefresh(s);
  CreatePodWith("batch", R"({"tier":"batch"})", "{}");
  CreatePodWith("production", R"({"tier":"production"})", "{}");
  ASSERT_TRUE(WaitFor([&] { return AllBound(2); })) << s->Log();
  EXPECT_EQ(Placements(), (std::map<std::string, std::string>{
                              {"batch", Node(0)}, {"production", Node(1)}}));
}

// Profiles: one process serves two scheduler names, each with its own
// metrics, weights, thresholds and herd. metrics-scheduler ranks by
// latency alone; cost-first ranks by a price annotation and keeps nodes
// above a latency bound out. The latency query both use is fetched once
// per refresh, and Events and attempt metrics name the pod's profile.
TEST_F(EndToEndTest, TwoProfilesPlaceTheirPodsEachByItsOwnPolicy) {
  // n0 fast and dear, n1 slow and cheapest, n2 between.
  const std::vector<std::pair<double, std::string>> nodes = {
      {0.1, "9"}, {0.9, "1"}, {0.5, "5"}};
  std::map<std::string, double> latency;
  for (size_t i = 0; i < nodes.size(); ++i) {
    AddNode(Node(i), "4");
    SetCost(Node(i), nodes[i].second);
    latency[Node(i)] = nodes[i].first;
  }
  SetLatency(latency);
  const std::string query =
      absl::StrFormat("'http_latency_seconds{suite=\"%s\"}'", suite_);
  SchedulerProcess* s = StartSchedulerWithConfig(absl::StrFormat(
      R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: prometheus, url: "%s", timeout: 1s}
cache: {ttl: 1s, maxStaleness: 5s, refreshTimeout: 1s}
fallback: {coldCacheDeadline: 500ms}
leaderElection: {leaseDuration: 10s, renewDeadline: 8s, retryPeriod: 1s}
profiles:
  - schedulerName: metrics-scheduler
    metrics:
      - name: http_latency
        query: %s
        weight: 10
  - schedulerName: cost-first
    metrics:
      - name: http_latency
        query: %s
        weight: 1
        filter: {max: 0.8}
      - name: price
        source: {nodeAnnotation: example.com/hourly-cost}
        weight: 20
    builtins: {leastAllocated: 0, balancedAllocation: 0}
    herd: {penaltyPerPlacement: 0, window: 10s}
)",
      prom_->url(), query, query));
  ASSERT_NE(s, nullptr);
  WaitForFirstRefresh(s);

  CreatePod("fast", "100m", "metrics-scheduler");
  CreatePod("cheap", "100m", "cost-first");
  ASSERT_TRUE(WaitFor([&] {
    std::map<std::string, std::string> p = Placements();
    return p["fast"] == Node(0) && p["cheap"] == Node(2);
  })) << s->Log();
  EXPECT_NE(EventsWith("cheap", "Scheduled")
                .find(R"("reportingComponent":"cost-first")"),
            std::string::npos);
  EXPECT_NE(EventsWith("fast", "Scheduled")
                .find(R"("reportingComponent":"metrics-scheduler")"),
            std::string::npos);

  // Only n1 allowed: metrics-scheduler has no threshold and places its
  // pod; cost-first's keeps its pod waiting, and says why as itself.
  auto pinned = [&](const std::string& name, const std::string& scheduler) {
    std::string spec = absl::StrReplaceAll(
        PodSpecJson(PinnedTo(Node(1))),
        {{R"("schedulerName":"metrics-scheduler")",
          absl::StrCat(R"("schedulerName":")", scheduler, R"(")")}});
    env_.AdminOk(
        "POST", "/api/v1/namespaces/" + suite_ + "/pods",
        absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":)",
                     R"({"name":")", name, R"("},"spec":)", spec, "}"));
  };
  pinned("pinned-latency", "metrics-scheduler");
  pinned("pinned-cost", "cost-first");
  ASSERT_TRUE(WaitFor([&] {
    return Placements()["pinned-latency"] == Node(1);
  })) << s->Log();
  std::string events = AwaitFailedScheduling("pinned-cost", s);
  EXPECT_NE(events.find("1 node(s) had http_latency above 0.8"),
            std::string::npos)
      << events;
  EXPECT_NE(events.find(R"("reportingComponent":"cost-first")"),
            std::string::npos)
      << events;
  EXPECT_EQ(Placements()["pinned-cost"], "");

  EXPECT_EQ(s->Metric("metrics_scheduler_schedule_attempts_total{result="
                      "\"scheduled\",profile=\"metrics-scheduler\"}"),
            2);
  EXPECT_EQ(s->Metric("metrics_scheduler_schedule_attempts_total{result="
                      "\"scheduled\",profile=\"cost-first\"}"),
            1);
  EXPECT_GE(s->Metric("metrics_scheduler_schedule_attempts_total{result="
                      "\"unschedulable\",profile=\"cost-first\"}"),
            1);
  EXPECT_EQ(s->Metric("metrics_scheduler_decisions_total{mode=\"metrics\","
                      "profile=\"cost-first\"}"),
            1);

  // One fetch per refresh for both profiles: Prometheus answers as many
  // queries as the refreshes the scheduler counts. Fetched once per
  // profile, it would answer twice as many.
  auto refreshes = [&] {
    return s->Metric(
               "metrics_scheduler_metric_refreshes_total{metric="
               "\"http_latency\",result=\"success\"}") +
           s->Metric(
               "metrics_scheduler_metric_refreshes_total{metric="
               "\"http_latency\",result=\"failure\"}");
  };
  ASSERT_TRUE(WaitFor([&] { return refreshes() >= 4; })) << s->Log();
  const double before = refreshes();
  absl::StatusOr<double> answered = prom_->RequestsServed("/api/v1/query");
  const double after = refreshes();
  ASSERT_TRUE(answered.ok()) << answered.status();
  // (Each side counts a request when done with it: either may be one
  // ahead.)
  EXPECT_GE(*answered, before - 1);
  EXPECT_LE(*answered, after + 1);
}

// backend.type metricsServer: node usage from the resource metrics API,
// read through the apiserver's aggregation layer (a stand-in metrics-server
// behind the real apiserver), ranks the nodes by CPU utilisation and keeps
// a node above the threshold out until its usage drops.
TEST_F(EndToEndTest, MetricsServerUtilisationRanksAndFiltersNodes) {
  for (int i = 0; i < 3; ++i) AddNode(Node(i), "4");
  const std::string dir = absl::StrCat(::testing::TempDir(), "/", suite_);
  std::filesystem::create_directories(dir);
  absl::StatusOr<std::unique_ptr<testing::MetricsApiServer>> started =
      testing::MetricsApiServer::Start(env_, suite_, dir);
  ASSERT_TRUE(started.ok()) << started.status();
  testing::MetricsApiServer& metrics = **started;
  metrics.SetUsage(Node(0), "3", "8Gi");      // 0.75 of 4 cores
  metrics.SetUsage(Node(1), "1", "8Gi");      // 0.25
  metrics.SetUsage(Node(2), "3900m", "8Gi");  // 0.975: above the bound
  SchedulerProcess* s = StartSchedulerWithConfig(R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: metricsServer, timeout: 2s}
cache: {ttl: 1s, maxStaleness: 10s, refreshTimeout: 2s}
metrics:
  - name: cpu_utilization
    query: cpuUtilization
    weight: 10
    direction: lower
    filter: {max: 0.9}
builtins: {leastAllocated: 0, balancedAllocation: 0, recentPlacements: 0}
fallback: {coldCacheDeadline: 500ms}
leaderElection: {leaseDuration: 10s, renewDeadline: 8s, retryPeriod: 1s}
)");
  ASSERT_NE(s, nullptr);
  const std::string refreshes =
      "metrics_scheduler_metric_refreshes_total{metric=\"cpu_utilization\","
      "result=\"success\"}";
  ASSERT_TRUE(WaitFor([&] { return s->Metric(refreshes) >= 1; })) << s->Log();

  CreatePod("idlest", "100m");
  ASSERT_TRUE(WaitFor([&] { return Placements()["idlest"] == Node(1); }))
      << s->Log();
  EXPECT_NE(EventsWith("idlest", "Scheduled").find("cpu_utilization"),
            std::string::npos)
      << Events("idlest");

  // Node 1 gets busy too: only node 0 is under the bound.
  metrics.SetUsage(Node(1), "3800m", "8Gi");
  double seen = s->Metric(refreshes);
  ASSERT_TRUE(WaitFor([&] { return s->Metric(refreshes) >= seen + 2; }))
      << s->Log();
  CreatePod("under-the-bound", "100m");
  ASSERT_TRUE(WaitFor([&] { return Placements()["under-the-bound"] == Node(0); }))
      << s->Log();

  // Only node 2 has room for 3.95 cores (by requests), and it is above the
  // bound.
  CreatePod("waits", "3950m");
  std::string events = AwaitFailedScheduling("waits", s);
  EXPECT_NE(events.find("0/3 nodes are available: 1 node(s) had "
                        "cpu_utilization above 0.9, 2 Insufficient cpu."),
            std::string::npos)
      << events;
  metrics.SetUsage(Node(2), "400m", "8Gi");
  ASSERT_TRUE(WaitFor([&] { return Placements()["waits"] == Node(2); },
                      absl::Seconds(30)))
      << s->Log();
  EXPECT_GT(metrics.node_lists(), 0);
  std::filesystem::remove_all(dir);
}

// Extender mode: a stock kube-scheduler (the testenv's, with a profile of
// its own) calls metrics-scheduler as its extender. Pods follow the latency
// metric; a node above the threshold is filtered with the same reason; when
// every node is above it the pod waits, and once the extender is down
// (ignorable) kube-scheduler places it alone.
TEST_F(EndToEndTest, KubeSchedulerWithMetricsSchedulerAsItsExtender) {
  for (int i = 0; i < 3; ++i) AddNode(Node(i), "4");
  SetLatency({{Node(0), 0.1}, {Node(1), 0.9}, {Node(2), 0.5}});
  const int port = testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  ConfigParams params = Params();
  params.metrics_tail = "    filter: {max: 0.8}";
  params.tail = absl::StrCat("extender: {listenAddress: \"127.0.0.1:", port,
                             "\"}\n");
  SchedulerProcess* s = StartScheduler(params);
  ASSERT_NE(s, nullptr);
  WaitForFirstRefresh(s);

  const std::string profile = suite_ + "-kube";
  absl::StatusOr<std::unique_ptr<testing::KubeSchedulerProcess>> kube =
      testing::KubeSchedulerProcess::Start(
          env_, absl::StrCat("profiles: [{schedulerName: ", profile, "}]\n",
                             "extenders:\n",
                             "  - urlPrefix: \"http://127.0.0.1:", port,
                             "\"\n",
                             "    filterVerb: filter\n",
                             "    prioritizeVerb: prioritize\n",
                             "    weight: 5\n",
                             "    nodeCacheCapable: true\n",
                             "    ignorable: true\n",
                             "    httpTimeout: 2s\n"));
  ASSERT_TRUE(kube.ok()) << kube.status();
  auto kube_log = [&] { return (*kube)->Log(); };

  CreatePod("fastest", "100m", profile);
  ASSERT_TRUE(WaitFor([&] { return Placements()["fastest"] == Node(0); },
                      absl::Seconds(60)))
      << kube_log() << s->Log();
  EXPECT_GE(s->Metric("metrics_scheduler_extender_requests_total{verb="
                      "\"prioritize\",result=\"metrics\"}"),
            1);

  // Node 0 slows down: node 1 is still above the bound, node 2 is best.
  SetLatency({{Node(0), 0.95}, {Node(1), 0.9}, {Node(2), 0.5}});
  WaitForRefresh(s);
  CreatePod("only-node-2", "100m", profile);
  ASSERT_TRUE(WaitFor([&] { return Placements()["only-node-2"] == Node(2); },
                      absl::Seconds(60)))
      << kube_log() << s->Log();

  // Every node above the bound: kube-scheduler reports the extender's
  // reason, worded as metrics-scheduler's own FailedScheduling.
  SetLatency({{Node(0), 0.95}, {Node(1), 0.9}, {Node(2), 0.85}});
  WaitForRefresh(s);
  CreatePod("waits", "100m", profile);
  std::string events;
  ASSERT_TRUE(WaitFor(
      [&] {
        events = Events("waits");
        return events.find("3 node(s) had http_latency above 0.8") !=
               std::string::npos;
      },
      absl::Seconds(60)))
      << events << kube_log();
  EXPECT_EQ(Placements()["waits"], "");

  // The extender goes down: ignorable, so kube-scheduler places the pod
  // alone at its next attempt (a new node is a cluster event that retries
  // it).
  s->Kill();
  AddNode(Node(3), "4");
  ASSERT_TRUE(WaitFor([&] { return !Placements()["waits"].empty(); },
                      absl::Seconds(60)))
      << kube_log();
  EXPECT_TRUE((*kube)->Running());
}

// Shadow mode beside a kube-scheduler: every pod it places is judged once
// against where metrics-scheduler would have put it (here: the node of
// lowest latency, the only term), and nothing is written.
TEST_F(EndToEndTest, ShadowModeJudgesAnotherSchedulersPods) {
  for (int i = 0; i < 3; ++i) AddNode(Node(i), "4");
  SetLatency({{Node(0), 0.1}, {Node(1), 0.9}, {Node(2), 0.5}});
  const std::string profile = suite_ + "-kube";
  SchedulerProcess* s = StartSchedulerWithConfig(
      absl::StrFormat(R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: prometheus, url: "%s", timeout: 1s}
cache: {ttl: 1s, maxStaleness: 30s, refreshTimeout: 1s}
metrics:
  - name: http_latency
    query: 'http_latency_seconds{suite="%s"}'
    direction: lower
builtins: {leastAllocated: 0, balancedAllocation: 0, recentPlacements: 0}
)",
                      prom_->url(), suite_),
      {"--shadow", "--shadow-of=" + profile});
  ASSERT_NE(s, nullptr);
  WaitForFirstRefresh(s);
  ASSERT_TRUE(WaitFor([&] { return s->Ready(); })) << s->Log();
  absl::StatusOr<std::unique_ptr<testing::KubeSchedulerProcess>> kube =
      testing::KubeSchedulerProcess::Start(
          env_, absl::StrCat("profiles: [{schedulerName: ", profile, "}]\n"));
  ASSERT_TRUE(kube.ok()) << kube.status();

  constexpr int kPods = 6;
  for (int i = 0; i < kPods; ++i) {
    CreatePod(absl::StrCat("p", i), "100m", profile);
  }
  ASSERT_TRUE(WaitFor([&] { return AllBound(kPods); }, absl::Seconds(60)))
      << (*kube)->Log();
  const std::string agreed =
      "metrics_scheduler_shadow_decisions_total{agreed=\"true\"}";
  const std::string disagreed =
      "metrics_scheduler_shadow_decisions_total{agreed=\"false\"}";
  ASSERT_TRUE(WaitFor([&] {
    return s->Metric(agreed) + s->Metric(disagreed) == kPods;
  })) << s->Log();
  std::map<std::string, int> per_node = PodsPerNode();
  EXPECT_EQ(s->Metric(agreed), per_node[Node(0)]) << s->Log();
  EXPECT_EQ(s->Metric(disagreed), per_node[Node(1)] + per_node[Node(2)]);
  // Latency 0.1 / 0.9 / 0.5, min-max, lower is better: 100 / 0 / 50.
  EXPECT_NEAR(s->Metric("metrics_scheduler_shadow_score_gap_sum"),
              100.0 * per_node[Node(1)] + 50.0 * per_node[Node(2)], 1e-6);
  EXPECT_EQ(s->Metric("metrics_scheduler_shadow_infeasible_total"), 0);
  // Nothing written: no binding, no Event from metrics-scheduler.
  EXPECT_EQ(s->Metric("metrics_scheduler_binding_outcomes_total{outcome="
                      "\"bound\"}"),
            0);
  EXPECT_EQ(Events("p0").find("metrics-scheduler"), std::string::npos)
      << Events("p0");
}

TEST_F(EndToEndTest, DefaultSchedulerPodsAreNeverTouched) {
  for (int i = 0; i < 2; ++i) AddNode(Node(i));
  SetLatency({{Node(0), 0.1}, {Node(1), 0.1}});
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  for (int i = 0; i < 5; ++i) {
    CreatePod(absl::StrCat("default-", i), "100m", "default-scheduler");
  }
  CreatePod("ours");
  ASSERT_TRUE(WaitFor([&] { return AllBound(6); }, absl::Seconds(60)))
      << s->Log();
  for (int i = 0; i < 5; ++i) {
    std::string events =
        EventsWith(absl::StrCat("default-", i), "\"reason\":\"Scheduled\"");
    EXPECT_NE(events.find("default-scheduler"), std::string::npos) << events;
    EXPECT_EQ(events.find("metrics-scheduler"), std::string::npos) << events;
  }
  EXPECT_NE(EventsWith("ours", "\"reason\":\"Scheduled\"")
                .find("metrics-scheduler"),
            std::string::npos);
  // Counted once the binding's answer is back, which may be just after
  // the pod shows as bound.
  EXPECT_TRUE(WaitFor([&] { return Scheduled(s) == 1; }))
      << Scheduled(s);
}

TEST_F(EndToEndTest, OnlyTheLeaderBindsAndAStandbyTakesOver) {
  for (int i = 0; i < 3; ++i) AddNode(Node(i));
  SetLatency({{Node(0), 0.1}, {Node(1), 0.1}, {Node(2), 0.1}});
  SchedulerProcess* a = StartScheduler(Params(), "replica-a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] {
    return a->Metric("metrics_scheduler_leader") == 1;
  })) << a->Log();
  SchedulerProcess* b = StartScheduler(Params(), "replica-b");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(WaitFor([&] { return b->Ready(); }));
  EXPECT_EQ(b->Metric("metrics_scheduler_leader"), 0);

  for (int i = 0; i < 10; ++i) CreatePod(absl::StrCat("first-", i));
  ASSERT_TRUE(WaitFor([&] { return AllBound(10); }, absl::Seconds(60)));
  // Counted once the binding's answer is back, which may be just after
  // the pod shows as bound.
  EXPECT_TRUE(WaitFor([&] { return Scheduled(a) == 10; }))
      << Scheduled(a);
  EXPECT_EQ(Scheduled(b), 0);

  // Events are written asynchronously, after binding: let a's reach the
  // apiserver before it dies (a crash loses the ones still queued).
  ASSERT_TRUE(WaitFor([&] {
    for (int i = 0; i < 10; ++i) {
      if (Count(Events(absl::StrCat("first-", i)), "\"reason\":\"Scheduled\"") !=
          1) {
        return false;
      }
    }
    return true;
  }));

  // The leader dies without releasing its lease; the standby takes over
  // after the lease duration (10 s) and binds what comes next.
  a->Kill();
  for (int i = 0; i < 10; ++i) CreatePod(absl::StrCat("second-", i));
  ASSERT_TRUE(WaitFor([&] { return AllBound(20); }, absl::Seconds(60)))
      << b->Log();
  EXPECT_EQ(b->Metric("metrics_scheduler_leader"), 1);
  // Counted once the binding's answer is back, which may be just after
  // the pod shows as bound.
  EXPECT_TRUE(WaitFor([&] { return Scheduled(b) == 10; }))
      << Scheduled(b);
  // Every pod bound exactly once: one Scheduled event each, from the
  // replica that led at the time.
  for (int i = 0; i < 10; ++i) {
    std::string first = Events(absl::StrCat("first-", i));
    EXPECT_EQ(Count(first, "\"reason\":\"Scheduled\""), 1) << first;
    EXPECT_NE(first.find("replica-a"), std::string::npos);
    std::string second =
        EventsWith(absl::StrCat("second-", i), "\"reason\":\"Scheduled\"");
    EXPECT_EQ(Count(second, "\"reason\":\"Scheduled\""), 1) << second;
    EXPECT_NE(second.find("replica-b"), std::string::npos);
  }
}

TEST_F(EndToEndTest, SigtermReleasesTheLeaseAndExitsZero) {
  AddNode(Node(0));
  SetLatency({{Node(0), 0.1}});
  SchedulerProcess* a = StartScheduler(Params(), "replica-a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] {
    return a->Metric("metrics_scheduler_leader") == 1;
  })) << a->Log();
  EXPECT_EQ(a->Stop(), 0) << a->Log();
  kube::KubeClient admin(env_.AdminConfig());
  absl::StatusOr<kube::Lease> lease =
      admin.GetLease("metrics-scheduler", "metrics-scheduler");
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_EQ(lease->holder_identity, "");
}

// The rules of the cluster's release, from its /version, unless
// --kube-version names one.
TEST_F(EndToEndTest, FollowsTheRulesOfTheClustersRelease) {
  kube::KubeClient admin(env_.AdminConfig());
  absl::StatusOr<std::string> release = admin.ServerVersion();
  ASSERT_TRUE(release.ok()) << release.status();
  absl::StatusOr<KubeVersion> rules = ParseKubeVersion(*release);
  ASSERT_TRUE(rules.ok()) << rules.status();
  SchedulerProcess* asked = StartScheduler(Params(), "asked");
  ASSERT_NE(asked, nullptr);
  EXPECT_TRUE(absl::StrContains(
      asked->Log(), absl::StrCat("the cluster runs Kubernetes ", *release,
                                 ": following kube-scheduler ",
                                 rules->ToString(), "'s rules")))
      << asked->Log();
  EXPECT_EQ(
      asked->Metric(absl::StrCat("metrics_scheduler_kube_rules_info{release=\"",
                                 rules->ToString(), "\"}")),
      1);
  SchedulerProcess* told = StartScheduler(
      Params(), "told", {"--kube-version=1.35", "--leader-elect=false"});
  ASSERT_NE(told, nullptr);
  EXPECT_TRUE(absl::StrContains(
      told->Log(), "following kube-scheduler 1.35's rules (--kube-version)"))
      << told->Log();
  EXPECT_EQ(told->Metric("metrics_scheduler_kube_rules_info{release=\"1.35\"}"),
            1);
}

// Pod (anti-)affinity, as kube-scheduler places such pods.
constexpr char kHostAntiAffinityWeb[] =
    R"({"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
    R"([{"labelSelector":{"matchLabels":{"app":"web"}},)"
    R"("topologyKey":"kubernetes.io/hostname"}]}})";

TEST_F(EndToEndTest, RequiredAntiAffinityPutsOneReplicaPerNode) {
  for (int i = 0; i < 3; ++i) AddNode(Node(i));
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  // A Deployment of four, one per node required: the fourth cannot go.
  env_.AdminOk(
      "POST", "/apis/apps/v1/namespaces/" + suite_ + "/deployments",
      absl::StrCat(
          R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":)",
          R"({"name":"web"},"spec":{"replicas":4,"selector":{"matchLabels":)",
          R"({"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},)",
          R"("spec":)", PodSpecJson(kHostAntiAffinityWeb), "}}}"));
  std::string pending;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::map<std::string, std::string> p = Placements();
        int bound = 0;
        for (const auto& [pod, node] : p) {
          if (node.empty()) {
            pending = pod;
          } else {
            ++bound;
          }
        }
        return p.size() == 4 && bound == 3;
      },
      absl::Seconds(60)))
      << s->Log();
  std::map<std::string, int> per_node = PodsPerNode();
  EXPECT_EQ(per_node.size(), 3u);
  for (const auto& [node, count] : per_node) EXPECT_EQ(count, 1) << node;
  EventsWith(pending, "3 node(s) didn't match pod anti-affinity rules");
}

TEST_F(EndToEndTest, APlacedPodsAntiAffinityKeepsTheIncomingPodAway) {
  for (int i = 0; i < 2; ++i) AddNode(Node(i));
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  // db forbids app=web beside it; created on n0 directly (spec.nodeName).
  env_.AdminOk(
      "POST", "/api/v1/namespaces/" + suite_ + "/pods",
      absl::StrCat(
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"db",)",
          R"("labels":{"app":"db"}},"spec":{"nodeName":")", Node(0),
          R"(","affinity":)", kHostAntiAffinityWeb,
          R"(,"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10"}]}})"));
  // Everything else makes n0 the better node: it is emptier.
  for (int i = 0; i < 3; ++i) {
    CreatePodWith(absl::StrCat("filler-", i), R"({"app":"filler"})",
                  PinnedTo(Node(1)),
                  "500m");
  }
  ASSERT_TRUE(WaitFor([&] { return AllBound(4); }, absl::Seconds(60)))
      << s->Log();
  for (int i = 0; i < 3; ++i) {
    CreatePodWith(absl::StrCat("web-", i), R"({"app":"web"})", "{}");
  }
  ASSERT_TRUE(WaitFor([&] { return AllBound(7); }, absl::Seconds(60)))
      << s->Log();
  std::map<std::string, std::string> p = Placements();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(p[absl::StrCat("web-", i)], Node(1));
  }
}

TEST_F(EndToEndTest, PreferredAntiAffinitySpreadsWhatLeastAllocatedPacks) {
  // One big node and three small: by requests alone every replica would
  // go to the big one (the least allocated after each placement).
  AddNode(Node(0), "64");
  for (int i = 1; i < 4; ++i) AddNode(Node(i), "4");
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  const std::string soft =
      R"({"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":)"
      R"([{"weight":100,"podAffinityTerm":{"labelSelector":{"matchLabels":)"
      R"({"app":"web"}},"topologyKey":"kubernetes.io/hostname"}}]}})";
  // One at a time, so each decision sees the ones before it.
  for (int i = 0; i < 4; ++i) {
    CreatePodWith(absl::StrCat("web-", i), R"({"app":"web"})", soft);
    ASSERT_TRUE(WaitFor([&] { return AllBound(i + 1); }, absl::Seconds(60)))
        << s->Log();
  }
  EXPECT_EQ(PodsPerNode().size(), 4u);
  // Without the term, the same pods pack onto the big node.
  for (int i = 0; i < 3; ++i) {
    CreatePodWith(absl::StrCat("plain-", i), R"({"app":"plain"})", "{}");
    ASSERT_TRUE(WaitFor([&] { return AllBound(5 + i); }, absl::Seconds(60)))
        << s->Log();
    EXPECT_EQ(Placements()[absl::StrCat("plain-", i)], Node(0));
  }
}

// Topology spread, as kube-scheduler places such pods.
TEST_F(EndToEndTest, HardZoneSpreadBalancesWhatLeastAllocatedPacks) {
  // Zone a has a big node, zones b and c a small one each: by requests
  // alone every replica would go to the big node.
  AddNode(Node(0), "64", "a");
  AddNode(Node(1), "4", "b");
  AddNode(Node(2), "4", "c");
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  const std::string spread =
      R"([{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone",)"
      R"("whenUnsatisfiable":"DoNotSchedule",)"
      R"("labelSelector":{"matchLabels":{"app":"web"}}}])";
  env_.AdminOk(
      "POST", "/apis/apps/v1/namespaces/" + suite_ + "/deployments",
      absl::StrCat(
          R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":)",
          R"({"name":"web"},"spec":{"replicas":6,"selector":{"matchLabels":)",
          R"({"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},)",
          R"("spec":)", PodSpecJson("{}", "100m", spread), "}}}"));
  ASSERT_TRUE(WaitFor([&] { return AllBound(6); }, absl::Seconds(60)))
      << s->Log();
  EXPECT_EQ(PodsPerNode(), (std::map<std::string, int>{
                               {Node(0), 2}, {Node(1), 2}, {Node(2), 2}}));
  // A fourth zone whose one node has no room: its 0 pods are now the
  // minimum, so every other zone is full at maxSkew 1, and the next
  // replica waits, naming both reasons.
  const double nodes = s->Metric("metrics_scheduler_nodes");
  AddNode(Node(3), "50m", "d");
  ASSERT_TRUE(WaitFor(
      [&] { return s->Metric("metrics_scheduler_nodes") >= nodes + 1; }));
  env_.AdminOk("PATCH", "/apis/apps/v1/namespaces/" + suite_ +
                            "/deployments/web",
               R"({"spec":{"replicas":7}})", "application/merge-patch+json");
  std::string pending;
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& [pod, node] : Placements()) {
      if (node.empty()) pending = pod;
    }
    return !pending.empty();
  }));
  const std::string events = EventsWith(
      pending, "3 node(s) didn't match pod topology spread constraints");
  EXPECT_NE(events.find("1 Insufficient cpu"), std::string::npos) << events;
}

TEST_F(EndToEndTest, DeploymentReplicasGetTheDefaultSpread) {
  // One big node and three small, no constraint on the pods: kube-scheduler's
  // default constraints (hostname skew 3, zone skew 5, ScheduleAnyway)
  // still spread a ReplicaSet's pods, where requests alone would pack them.
  AddNode(Node(0), "64");
  for (int i = 1; i < 4; ++i) AddNode(Node(i), "4");
  const std::string deployments =
      "/apis/apps/v1/namespaces/" + suite_ + "/deployments";
  env_.AdminOk(
      "POST", deployments,
      absl::StrCat(
          R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":)",
          R"({"name":"web"},"spec":{"replicas":0,"selector":{"matchLabels":)",
          R"({"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},)",
          R"("spec":)", PodSpecJson("{}"), "}}}"));
  // The scheduler starts once the ReplicaSet exists, so its first list
  // holds it.
  ASSERT_TRUE(WaitFor([&] {
    return env_
               .AdminOk("GET", "/apis/apps/v1/namespaces/" + suite_ +
                                   "/replicasets")
               .find("\"web-") != std::string::npos;
  }));
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  // One replica at a time, so each decision sees the ones before it.
  for (int i = 1; i <= 4; ++i) {
    env_.AdminOk("PATCH", deployments + "/web",
                 absl::StrCat(R"({"spec":{"replicas":)", i, "}}"),
                 "application/merge-patch+json");
    ASSERT_TRUE(WaitFor([&] { return AllBound(i); }, absl::Seconds(60)))
        << s->Log();
  }
  EXPECT_EQ(PodsPerNode().size(), 4u) << s->Log();
  // Pods no workload selects get no default spread: they pack.
  for (int i = 0; i < 3; ++i) {
    CreatePodWith(absl::StrCat("plain-", i), R"({"app":"plain"})", "{}");
    ASSERT_TRUE(WaitFor([&] { return AllBound(5 + i); }, absl::Seconds(60)))
        << s->Log();
    EXPECT_EQ(Placements()[absl::StrCat("plain-", i)], Node(0));
  }
}

// Node preferences, as kube-scheduler's default profile weighs them.
TEST_F(EndToEndTest, PreferredNodeAffinityFillsSpotNodesFirst) {
  // Two spot and two on-demand nodes; the on-demand ones are bigger, so
  // by requests alone most pods would go there.
  for (int i = 0; i < 4; ++i) {
    const bool spot = i < 2;
    AddNode(Node(i), spot ? "4" : "16");
    env_.AdminOk("PATCH", "/api/v1/nodes/" + Node(i),
                 absl::StrCat(R"({"metadata":{"labels":{"lifecycle":")",
                              spot ? "spot" : "on-demand", R"("}}})"),
                 "application/merge-patch+json");
  }
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  const std::string prefer_spot =
      R"({"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":)"
      R"([{"weight":100,"preference":{"matchExpressions":[{"key":"lifecycle",)"
      R"("operator":"In","values":["spot"]}]}}]}})";
  // The node label patch must be seen before the pods are: the first pod
  // goes only once the scheduler is up, and nodes come before pods.
  for (int i = 0; i < 8; ++i) {
    CreatePodWith(absl::StrCat("web-", i), R"({"app":"web"})", prefer_spot);
  }
  ASSERT_TRUE(WaitFor([&] { return AllBound(8); }, absl::Seconds(60)))
      << s->Log();
  std::map<std::string, int> per_node = PodsPerNode();
  EXPECT_EQ(per_node[Node(0)] + per_node[Node(1)], 8) << s->Log();
  EventsWith("web-0", "nodeAffinity 100.0 (w=2)");
}

TEST_F(EndToEndTest, PreferNoScheduleNodeIsAvoidedWhileAnotherFits) {
  // n0 is empty but about to be scaled down; n1 is half full.
  AddNode(Node(0));
  AddNode(Node(1));
  env_.AdminOk("PATCH", "/api/v1/nodes/" + Node(0),
               R"({"spec":{"taints":[{"key":"autoscaler/scale-down",)"
               R"("effect":"PreferNoSchedule"}]}})",
               "application/merge-patch+json");
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  CreatePodWith("half", R"({"app":"filler"})",
                PinnedTo(Node(1)),
                "2");
  ASSERT_TRUE(WaitFor([&] { return AllBound(1); }, absl::Seconds(60)))
      << s->Log();
  CreatePodWith("web", R"({"app":"web"})", "{}", "1");
  ASSERT_TRUE(WaitFor([&] { return AllBound(2); }, absl::Seconds(60)))
      << s->Log();
  EXPECT_EQ(Placements()["web"], Node(1));
  // When the other node is full, the tainted one still takes pods.
  CreatePodWith("big", R"({"app":"web"})", "{}", "3");
  ASSERT_TRUE(WaitFor([&] { return AllBound(3); }, absl::Seconds(60)))
      << s->Log();
  EXPECT_EQ(Placements()["big"], Node(0));
}

// A pod-level request is what the node is charged, not the containers' sum.
TEST_F(EndToEndTest, PodLevelRequestsAreCharged) {
  AddNode(Node(0), "4");
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  env_.AdminOk(
      "POST", "/api/v1/namespaces/" + suite_ + "/pods",
      absl::StrCat(
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"level"},)",
          R"("spec":{"schedulerName":"metrics-scheduler","nodeSelector":)",
          R"({"e2e-suite":")", suite_,
          R"("},"resources":{"requests":{"cpu":"3","memory":"1Gi"}},)",
          R"("containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",)",
          R"("resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}})"));
  ASSERT_TRUE(WaitFor([&] { return AllBound(1); }, absl::Seconds(60)))
      << s->Log();
  // 3 of the 4 CPUs are taken: a 2-CPU pod does not fit.
  CreatePod("two", "2");
  EventsWith("two", "0/1 nodes are available: 1 Insufficient cpu");
  EXPECT_EQ(Placements()["two"], "");
}

// spec.schedulingGates: left alone, no event, until the gates are removed.
TEST_F(EndToEndTest, GatedPodWaitsForItsGatesThenIsPlaced) {
  AddNode(Node(0));
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  const std::string pods = "/api/v1/namespaces/" + suite_ + "/pods";
  std::string gated = PodJson("gated");
  gated.insert(gated.find(R"("containers")"),
               R"("schedulingGates":[{"name":"example.com/quota"}],)");
  env_.AdminOk("POST", pods, gated);
  // A pod created after it is bound: the scheduler has seen the gated pod
  // by then (one watch, in order) and left it.
  CreatePod("after");
  ASSERT_TRUE(WaitFor([&] { return Placements()["after"] == Node(0); },
                      absl::Seconds(60)))
      << s->Log();
  EXPECT_EQ(Placements()["gated"], "");
  const std::string gated_queue = "metrics_scheduler_pending_pods{queue=\"gated\"}";
  EXPECT_EQ(s->Metric(gated_queue), 1);
  const std::string pod = env_.AdminOk("GET", pods + "/gated");
  EXPECT_NE(pod.find("SchedulingGated"), std::string::npos) << pod;
  EXPECT_EQ(Events("gated").find("FailedScheduling"), std::string::npos);
  env_.AdminOk("PATCH", pods + "/gated", R"({"spec":{"schedulingGates":null}})",
               "application/merge-patch+json");
  ASSERT_TRUE(WaitFor([&] { return Placements()["gated"] == Node(0); },
                      absl::Seconds(60)))
      << s->Log();
  EXPECT_EQ(s->Metric(gated_queue), 0);
}

// A claim bound to a local PV: the pod goes to the PV's node, although
// leastAllocated prefers the bigger nodes.
TEST_F(EndToEndTest, ClaimBoundToALocalVolumeGoesToThatVolumesNode) {
  AddNode(Node(0), "16");
  AddNode(Node(1), "2");
  AddNode(Node(2), "16");
  LocalClass();
  CreateLocalVolume(suite_ + "-pv", Node(1), "1Gi", "data");
  CreateClaim("data", "1Gi", suite_ + "-pv");
  // The PV controller binds the pre-bound pair.
  ASSERT_TRUE(WaitFor([&] {
    return absl::StrContains(Claim("data"), R"("phase":"Bound")");
  }, absl::Seconds(60))) << Claim("data");
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  CreatePodWithClaim("web", "data");
  ASSERT_TRUE(WaitFor([&] { return Placements()["web"] == Node(1); },
                      absl::Seconds(60)))
      << s->Log();
}

// An unbound WaitForFirstConsumer claim: the scheduler picks the node of a
// matching PV, binds the PV to the claim (the PV controller completes it),
// then the pod; a second claim finds no PV left and its pod is told why.
TEST_F(EndToEndTest, WaitForFirstConsumerClaimGetsAMatchingVolume) {
  AddNode(Node(0), "16");
  AddNode(Node(1), "16");
  AddNode(Node(2), "2");
  LocalClass();
  CreateLocalVolume(suite_ + "-small", Node(0), "1Gi");  // too small
  CreateLocalVolume(suite_ + "-fit", Node(2), "10Gi");
  CreateClaim("data", "5Gi");
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  CreatePodWithClaim("web", "data");
  ASSERT_TRUE(WaitFor([&] { return Placements()["web"] == Node(2); },
                      absl::Seconds(60)))
      << s->Log();
  // The PV controller writes the claim's volumeName, then its phase.
  std::string claim;
  EXPECT_TRUE(WaitFor([&] {
    claim = Claim("data");
    return absl::StrContains(claim, R"("phase":"Bound")");
  })) << claim;
  EXPECT_TRUE(absl::StrContains(
      claim, absl::StrCat(R"("volumeName":")", suite_, R"(-fit")")))
      << claim;

  CreateClaim("more", "5Gi");
  CreatePodWithClaim("second", "more");
  EventsWith("second",
             "0/3 nodes are available: 3 node(s) didn't find available "
             "persistent volumes to bind.");
  EXPECT_EQ(Placements()["second"], "");
}

// A claim to be provisioned by a CSI driver goes where the driver can
// serve it: from 1.37 (VolumeLimitScaling) a CSIDriver may keep its pods
// off nodes whose CSINode does not list it, and a driver that reports its
// capacity needs a CSIStorageCapacity with room that selects the node.
// Each time the pod is told why, and once a node qualifies the claim is
// to be provisioned there.
TEST_F(EndToEndTest, ACsiDriversNodesAndCapacityDecideWhereAClaimGoes) {
  const std::optional<KubeVersion> rules = ClusterRules();
  ASSERT_TRUE(rules.has_value());
  for (int i = 0; i < 3; ++i) AddNode(Node(i));
  const std::string driver = suite_ + ".csi.example.com";
  env_.AdminOk("POST", "/apis/storage.k8s.io/v1/csidrivers",
               absl::StrCat(R"({"apiVersion":"storage.k8s.io/v1",)",
                            R"("kind":"CSIDriver","metadata":{"name":")",
                            driver, R"("},"spec":{"attachRequired":true,)",
                            R"("storageCapacity":true,)",
                            R"("preventPodSchedulingIfMissing":true}})"));
  cluster_objects_.push_back("/apis/storage.k8s.io/v1/csidrivers/" + driver);
  const std::string storage_class = suite_ + "-csi";
  env_.AdminOk(
      "POST", "/apis/storage.k8s.io/v1/storageclasses",
      absl::StrCat(R"({"apiVersion":"storage.k8s.io/v1",)",
                   R"("kind":"StorageClass","metadata":{"name":")",
                   storage_class, R"("},"provisioner":")", driver,
                   R"(","volumeBindingMode":"WaitForFirstConsumer"})"));
  cluster_objects_.push_back("/apis/storage.k8s.io/v1/storageclasses/" +
                             storage_class);
  env_.AdminOk(
      "POST", "/api/v1/namespaces/" + suite_ + "/persistentvolumeclaims",
      absl::StrCat(
          R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":)",
          R"({"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],)",
          R"("storageClassName":")", storage_class,
          R"(","resources":{"requests":{"storage":"1Gi"}}}})"));
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  CreatePodWithClaim("web", "data");
  if (rules->AtLeast(37)) {
    EventsWith("web", absl::StrCat("0/3 nodes are available: 3 ", driver,
                                   " CSI driver is not installed on the "
                                   "node."));
    for (int i = 0; i < 3; ++i) {
      env_.AdminOk(
          "POST", "/apis/storage.k8s.io/v1/csinodes",
          absl::StrCat(R"({"apiVersion":"storage.k8s.io/v1","kind":"CSINode",)",
                       R"("metadata":{"name":")", Node(i),
                       R"("},"spec":{"drivers":[{"name":")", driver,
                       R"(","nodeID":")", Node(i), R"("}]}})"));
      cluster_objects_.push_back("/apis/storage.k8s.io/v1/csinodes/" + Node(i));
    }
  }
  EventsWith("web",
             "0/3 nodes are available: 3 node(s) did not have enough free "
             "storage.");
  EXPECT_EQ(Placements()["web"], "");
  // The driver reports room on node 1 only.
  env_.AdminOk(
      "POST",
      "/apis/storage.k8s.io/v1/namespaces/" + suite_ + "/csistoragecapacities",
      absl::StrCat(R"({"apiVersion":"storage.k8s.io/v1",)",
                   R"("kind":"CSIStorageCapacity","metadata":{"name":"room"},)",
                   R"("storageClassName":")", storage_class,
                   R"(","nodeTopology":{"matchLabels":)",
                   R"({"kubernetes.io/hostname":")", Node(1), R"("}},)",
                   R"("capacity":"10Gi"})"));
  // The claim is handed to the provisioner with the node chosen (nothing
  // provisions it here, so the pod stays unbound).
  std::string claim;
  EXPECT_TRUE(WaitFor(
      [&] {
        claim = Claim("data");
        return absl::StrContains(claim, "volume.kubernetes.io/selected-node");
      },
      absl::Seconds(60)))
      << claim << "\n"
      << s->Log();
  EXPECT_TRUE(absl::StrContains(
      claim,
      absl::StrCat(R"("volume.kubernetes.io/selected-node":")", Node(1), "\"")))
      << claim;
}

// From 1.36 (DRAExtendedResource) an extended resource a DeviceClass
// provides goes only where a device plugin advertises it: on other nodes
// only dynamic resource allocation could meet it, so the pod is told
// which DeviceClass, and is placed once a node advertises the resource.
// Before 1.36 the class changes nothing: "Insufficient" as for any other.
TEST_F(EndToEndTest, ADeviceClassResourceGoesWhereADevicePluginAdvertisesIt) {
  const std::optional<KubeVersion> rules = ClusterRules();
  ASSERT_TRUE(rules.has_value());
  for (int i = 0; i < 3; ++i) AddNode(Node(i));
  const std::string device_class = suite_ + "-gpu";
  const std::string resource = "example.com/" + device_class;
  env_.AdminOk("POST", "/apis/resource.k8s.io/v1/deviceclasses",
               absl::StrCat(R"({"apiVersion":"resource.k8s.io/v1",)",
                            R"("kind":"DeviceClass","metadata":{"name":")",
                            device_class, R"("},"spec":{)",
                            R"("extendedResourceName":")", resource, R"("}})"));
  cluster_objects_.push_back("/apis/resource.k8s.io/v1/deviceclasses/" +
                             device_class);
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  std::string spec = PodSpecJson("{}");
  const std::string requests = R"("requests":{"cpu":"100m","memory":"64Mi"})";
  spec.replace(
      spec.find(requests), requests.size(),
      absl::StrCat(R"("requests":{"cpu":"100m","memory":"64Mi",")", resource,
                   R"(":"1"},"limits":{")", resource, R"(":"1"})"));
  env_.AdminOk("POST", "/api/v1/namespaces/" + suite_ + "/pods",
               absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":)",
                            R"({"name":"gpu"},"spec":)", spec, "}"));
  EventsWith(
      "gpu",
      rules->AtLeast(36)
          ? absl::StrCat("0/3 nodes are available: 3 node(s) could "
                         "provide ",
                         resource, " only through DeviceClass ", device_class,
                         " (dynamic resource allocation is not "
                         "supported by this scheduler yet).")
          : absl::StrCat("0/3 nodes are available: 3 Insufficient ", resource,
                         "."));
  EXPECT_EQ(Placements()["gpu"], "");
  // A device plugin on node 2 advertises two.
  const std::string two = absl::StrCat(R"({")", resource, R"(":"2"})");
  env_.AdminOk("PATCH", "/api/v1/nodes/" + Node(2) + "/status",
               absl::StrCat(R"({"status":{"capacity":)", two,
                            R"(,"allocatable":)", two, "}}"),
               "application/strategic-merge-patch+json");
  EXPECT_TRUE(WaitFor([&] { return Placements()["gpu"] == Node(2); },
                      absl::Seconds(60)))
      << s->Log();
}

// A pod of another scheduler nominated to a node (as a preemption leaves
// it): its room there is not taken, until the nomination is cleared.
TEST_F(EndToEndTest, ANominatedPodsRoomIsKept) {
  AddNode(Node(0), "8");
  AddNode(Node(1), "4");
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  const std::string pods = "/api/v1/namespaces/" + suite_ + "/pods";
  CreatePod("waiting", "7", "other-scheduler");
  env_.AdminOk("PATCH", pods + "/waiting/status",
               absl::StrCat(R"({"status":{"nominatedNodeName":")", Node(0),
                            R"("}})"),
               "application/merge-patch+json");
  ASSERT_TRUE(WaitFor([&] {
    return s->Metric("metrics_scheduler_nominated_pods") == 1;
  })) << s->Log();
  // The emptier node 0 has 1 CPU left once the waiting pod is counted.
  CreatePod("first", "2");
  ASSERT_TRUE(WaitFor([&] { return Placements()["first"] == Node(1); },
                      absl::Seconds(60)))
      << s->Log();

  env_.AdminOk("PATCH", pods + "/waiting/status",
               R"({"status":{"nominatedNodeName":null}})",
               "application/merge-patch+json");
  ASSERT_TRUE(WaitFor([&] {
    return s->Metric("metrics_scheduler_nominated_pods") == 0;
  })) << s->Log();
  CreatePod("second", "2");
  ASSERT_TRUE(WaitFor([&] { return Placements()["second"] == Node(0); },
                      absl::Seconds(60)))
      << s->Log();
}

// Preemption: nodes full of priority-0 pods; a priority-1000 pod needing 2
// CPUs evicts exactly one of them, is nominated, and binds once the victim
// is gone.
TEST_F(EndToEndTest, AHighPriorityPodPreemptsTheFewestPodsAndBinds) {
  AddNode(Node(0));
  AddNode(Node(1));
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  const std::string high = PriorityClass("high", 1000);
  for (int i = 0; i < 4; ++i) CreatePod(absl::StrCat("low-", i), "2");
  ASSERT_TRUE(WaitFor([&] { return AllBound(4); }, absl::Seconds(60)))
      << s->Log();
  CreatePrioritised("high", "2", high);

  std::string victim;
  ASSERT_TRUE(WaitFor([&] {
    for (int i = 0; i < 4 && victim.empty(); ++i) {
      const std::string name = absl::StrCat("low-", i);
      if (BeingPreempted(name)) victim = name;
    }
    return !victim.empty();
  }, absl::Seconds(60))) << s->Log();
  const std::string node = Placements()[victim];
  ASSERT_TRUE(WaitFor([&] {
    return absl::StrContains(PodObject("high"),
                             absl::StrCat(R"("nominatedNodeName":")", node));
  })) << s->Log();
  EventsWith(victim, "Preempted by pod");
  // Its room is not free until the victim is gone.
  EXPECT_EQ(Placements()["high"], "");
  FinishDeletion(victim);
  ASSERT_TRUE(WaitFor([&] { return Placements()["high"] == node; },
                      absl::Seconds(60)))
      << s->Log();
  // Exactly the one victim.
  for (int i = 0; i < 4; ++i) {
    const std::string name = absl::StrCat("low-", i);
    if (name == victim) continue;
    EXPECT_FALSE(BeingPreempted(name)) << name;
  }
  EXPECT_EQ(Placements().size(), 4u);
}

// A PodDisruptionBudget allowing no disruption steers the preemption to
// the other node, though its victims are of higher priority.
TEST_F(EndToEndTest, ADisruptionBudgetSteersPreemptionToTheOtherNode) {
  AddNode(Node(0));
  AddNode(Node(1));
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  const std::string mid = PriorityClass("mid", 500);
  const std::string high = PriorityClass("high", 1000);
  env_.AdminOk(
      "POST", "/apis/policy/v1/namespaces/" + suite_ + "/poddisruptionbudgets",
      R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",)"
      R"("metadata":{"name":"guarded"},"spec":{"maxUnavailable":0,)"
      R"("selector":{"matchLabels":{"app":"guarded"}}}})");
  // Node 0: priority-0 pods, the cheaper victims, but guarded.
  for (int i = 0; i < 2; ++i) {
    CreatePrioritised(absl::StrCat("guarded-", i), "2", "",
                      R"({"app":"guarded"})", PinnedTo(Node(0)));
    CreatePrioritised(absl::StrCat("mid-", i), "2", mid, "{}",
                      PinnedTo(Node(1)));
  }
  ASSERT_TRUE(WaitFor([&] { return AllBound(4); }, absl::Seconds(60)))
      << s->Log();
  CreatePrioritised("high", "2", high);
  ASSERT_TRUE(WaitFor([&] {
    return BeingPreempted("mid-0") || BeingPreempted("mid-1");
  }, absl::Seconds(60))) << s->Log();
  EXPECT_FALSE(BeingPreempted("guarded-0"));
  EXPECT_FALSE(BeingPreempted("guarded-1"));
  FinishDeletion(BeingPreempted("mid-0") ? "mid-0" : "mid-1");
  ASSERT_TRUE(WaitFor([&] { return Placements()["high"] == Node(1); },
                      absl::Seconds(60)))
      << s->Log();
}

// preemptionPolicy Never waits; a pod only a taint keeps out evicts
// nothing. Both are told why.
TEST_F(EndToEndTest, NoPreemptionForNeverOrForATaint) {
  AddNode(Node(0));
  SchedulerProcess* s = StartScheduler(Params());
  ASSERT_NE(s, nullptr);
  const std::string never = PriorityClass("never", 1000, /*never=*/true);
  const std::string high = PriorityClass("high", 1000);
  CreatePod("low-0", "2");
  CreatePod("low-1", "2");
  ASSERT_TRUE(WaitFor([&] { return AllBound(2); }, absl::Seconds(60)))
      << s->Log();
  CreatePrioritised("patient", "2", never);
  EventsWith("patient",
             "preemption: not eligible due to preemptionPolicy=Never.");

  env_.AdminOk("PATCH", "/api/v1/nodes/" + Node(0),
               R"({"spec":{"taints":[{"key":"dedicated","value":"x",)"
               R"("effect":"NoSchedule"}]}})",
               "application/merge-patch+json");
  // The waiting pod is retried on the node's change: once it is told of the
  // taint, the scheduler knows it.
  EventsWith("patient", "untolerated taint");
  CreatePrioritised("tainted-out", "2", high);
  EventsWith("tainted-out",
             "preemption: 0/1 nodes are available: 1 Preemption is not "
             "helpful for scheduling.");
  EXPECT_FALSE(BeingPreempted("low-0"));
  EXPECT_FALSE(BeingPreempted("low-1"));
  EXPECT_EQ(Placements()["patient"], "");
}

// Rebalancing (docs/rebalance.md) on the real control plane: the
// controller-manager recreates a ReplicaSet's evicted pods, the Eviction
// API holds PodDisruptionBudgets, and metrics-scheduler places the
// replacements.
class RebalanceEndToEndTest : public EndToEndTest {
 protected:
  // Three nodes, cpu (the `cpu` metric) 0.1, 0.5 and 0.6, latency alike;
  // a scheduler rebalancing in `mode` every second: hot above 0.8 for two
  // samples, brought to 0.7; then the ReplicaSet web, two pods of one core
  // (0.25 of a node), which go to n0; they have run for an hour.
  // The `cpu` metric (10 s warm-up) and rebalancing in `mode` every
  // second: hot above 0.8 for two samples, brought to 0.7; `more`: more
  // lines of the rebalance section.
  ConfigParams RebalanceParams(const std::string& mode,
                               const std::string& more = "") {
    ConfigParams params = Params();
    params.metrics_tail =
        CpuMetricYaml(suite_, "{from: cpuRequests, factor: 1, warmup: 10s}");
    params.tail =
        absl::StrCat("rebalance:\n  mode: ", mode,
                     "\n  interval: 1s\n"
                     "  hot: [{metric: cpu, high: 0.8, samples: 2, low: 0.7}]\n"
                     "  pods: {minAge: 0s}\n",
                     more);
    return params;
  }
  SchedulerProcess* Setup(const std::string& mode,
                          const std::string& more_rebalance = "",
                          const std::string& identity = "e2e") {
    for (int i = 0; i < 3; ++i) AddNode(Node(i));
    SetLatency({{Node(0), 0.05}, {Node(1), 0.05}, {Node(2), 0.05}});
    SetCpu(*prom_, suite_, {{Node(0), 0.1}, {Node(1), 0.5}, {Node(2), 0.6}});
    env_.Kubectl(absl::StrCat("apply -f ", std::getenv("MS_SOURCE_DIR"),
                              "/manifests/components/rebalance/rbac.yaml"));
    for (const char* kind : {"clusterroles", "clusterrolebindings"}) {
      cluster_objects_.push_back(
          absl::StrCat("/apis/rbac.authorization.k8s.io/v1/", kind,
                       "/metrics-scheduler-rebalance"));
    }
    SchedulerProcess* s =
        StartScheduler(RebalanceParams(mode, more_rebalance), identity);
    if (s == nullptr) return nullptr;
    WaitForFirstRefresh(s);
    env_.AdminOk(
        "POST", "/apis/apps/v1/namespaces/" + suite_ + "/replicasets",
        absl::StrCat(
            R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":)",
            R"({"name":"web"},"spec":{"replicas":2,"selector":{"matchLabels":)",
            R"({"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},)",
            R"("spec":)", PodSpecJson("{}", "1"), "}}}"));
    EXPECT_TRUE(WaitFor([&] { return AllBound(2); }, absl::Seconds(60)))
        << s->Log();
    EXPECT_EQ(PodsPerNode(), (std::map<std::string, int>{{Node(0), 2}}))
        << s->Log();
    const std::string an_hour_ago =
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now() - absl::Hours(1),
                         absl::UTCTimeZone());
    for (const auto& [name, node] : Placements()) {
      env_.AdminOk("PATCH",
                   "/api/v1/namespaces/" + suite_ + "/pods/" + name + "/status",
                   absl::StrCat(R"({"status":{"phase":"Running","startTime":")",
                                an_hour_ago, R"("}})"),
                   "application/merge-patch+json");
    }
    return s;
  }

  // The suite's pods: name -> node, with " (leaving)" once being deleted.
  std::map<std::string, std::string> Pods() {
    kube::KubeClient admin(env_.AdminConfig());
    absl::StatusOr<kube::ObjectList<Pod>> pods =
        admin.ListPods({.field_selector = "metadata.namespace=" + suite_});
    std::map<std::string, std::string> out;
    if (!pods.ok()) return out;
    for (const Pod& p : pods->items) {
      out[p.name] = p.node_name + (p.deleting ? " (leaving)" : "");
    }
    return out;
  }
  int Count(const std::string& node) {
    int n = 0;
    for (const auto& [name, where] : Pods()) n += where == node;
    return n;
  }
  // Waits for `rounds` more rebalancing rounds.
  void WaitForRounds(SchedulerProcess* s, int rounds) {
    const char* kRounds = "metrics_scheduler_rebalance_rounds_total";
    const double start = s->Metric(kRounds);
    ASSERT_TRUE(WaitFor([&] { return s->Metric(kRounds) >= start + rounds; }))
        << s->Log();
  }
  static constexpr char kEvicted[] =
      "metrics_scheduler_rebalance_evictions_total{result=\"evicted\"}";
};

// n0 turns hot (0.95): it must shed 0.25, one pod of the two. The
// replacement the controller-manager makes goes to n1 (0.2, 0.45 with it),
// and with n0's samples showing the pod gone (0.7) nothing more moves.
TEST_F(RebalanceEndToEndTest,
       ExactlyThePodsNeededMoveAndTheirReplacementsLandElsewhere) {
  SchedulerProcess* s = Setup("evict");
  ASSERT_NE(s, nullptr);
  SetCpu(*prom_, suite_, {{Node(0), 0.95}, {Node(1), 0.2}, {Node(2), 0.6}});
  ASSERT_TRUE(WaitFor([&] { return Count(Node(0) + " (leaving)") == 1; },
                      absl::Seconds(60)))
      << s->Log();
  // What the samples show once the pod has left; until a warm-up (10 s)
  // after the eviction they are read less the pod (0.95 - 0.25).
  SetCpu(*prom_, suite_, {{Node(0), 0.7}, {Node(1), 0.45}, {Node(2), 0.6}});
  ASSERT_TRUE(WaitFor([&] { return Count(Node(1)) == 1; }, absl::Seconds(60)))
      << s->Log();
  EXPECT_EQ(Count(Node(0)), 1);
  std::string evicted;
  for (const auto& [name, where] : Pods()) {
    if (where == Node(0) + " (leaving)") evicted = name;
  }
  EXPECT_NE(EventsWith(evicted, R"("reason":"Rebalanced")")
                .find(absl::StrCat("to node ", Node(1))),
            std::string::npos);
  // The node says it too.
  std::string node_events;
  EXPECT_TRUE(WaitFor([&] {
    node_events =
        env_.AdminOk("GET",
                     "/api/v1/namespaces/default/events?fieldSelector="
                     "involvedObject.name%3D" +
                         Node(0));
    return node_events.find(absl::StrCat(": moving ", suite_, "/", evicted,
                                         " to ", Node(1))) != std::string::npos;
  })) << node_events;
  // Past the warm-up, n0 at 0.7 is not hot: nothing more moves.
  WaitForRounds(s, 14);
  EXPECT_EQ(s->Metric(kEvicted), 1) << s->Log();
  EXPECT_EQ(Count(Node(0)), 1);
  EXPECT_EQ(Pods().size(), 3u);
}

// A budget that allows no disruption: the eviction is refused, the pod
// stays and says why.
TEST_F(RebalanceEndToEndTest, ADisruptionBudgetOfZeroBlocksIt) {
  SchedulerProcess* s = Setup("evict");
  ASSERT_NE(s, nullptr);
  env_.AdminOk("POST",
               "/apis/policy/v1/namespaces/" + suite_ + "/poddisruptionbudgets",
               R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",)"
               R"("metadata":{"name":"web"},"spec":{"maxUnavailable":0,)"
               R"("selector":{"matchLabels":{"app":"web"}}}})");
  SetCpu(*prom_, suite_, {{Node(0), 0.95}, {Node(1), 0.2}, {Node(2), 0.6}});
  ASSERT_TRUE(WaitFor([&] {
    return s->Metric(
               "metrics_scheduler_rebalance_evictions_total{result="
               "\"disruption-budget\"}") >= 1;
  })) << s->Log();
  WaitForRounds(s, 3);
  EXPECT_EQ(Count(Node(0)), 2) << s->Log();
  EXPECT_EQ(Pods().size(), 2u);
  EXPECT_EQ(s->Metric(kEvicted), 0);
  bool told = false;
  for (const auto& [name, where] : Pods()) {
    told = told || Events(name).find(R"("reason":"RebalanceBlocked")") !=
                       std::string::npos;
  }
  EXPECT_TRUE(told);
}

// Once a workload has lost a pod it keeps the rest for its cool-down, and
// one eviction per interval in all: n0 stays hot, yet only one pod leaves.
TEST_F(RebalanceEndToEndTest, TheLimitsHold) {
  SchedulerProcess* s =
      Setup("evict", "  limits: {total: 1, perWorkload: 1, coolDown: 10m}\n");
  ASSERT_NE(s, nullptr);
  SetCpu(*prom_, suite_, {{Node(0), 1.2}, {Node(1), 0.1}, {Node(2), 0.2}});
  ASSERT_TRUE(WaitFor([&] { return s->Metric(kEvicted) == 1; })) << s->Log();
  // Past the node's warm-up (10 s) it is still hot and would shed again.
  WaitForRounds(s, 14);
  EXPECT_EQ(s->Metric(kEvicted), 1) << s->Log();
  EXPECT_GE(
      s->Metric("metrics_scheduler_rebalance_left_total{reason=\"limited\"}"),
      1);
}

// Nothing is evicted where no node would stay under 0.7 with the pod, nor
// from a fleet hot everywhere.
TEST_F(RebalanceEndToEndTest, NothingMovesWhenNoNodeIsBetterOrAllAreHot) {
  SchedulerProcess* s = Setup("evict");
  ASSERT_NE(s, nullptr);
  SetCpu(*prom_, suite_, {{Node(0), 0.95}, {Node(1), 0.6}, {Node(2), 0.6}});
  ASSERT_TRUE(WaitFor([&] {
    return s->Metric(
               "metrics_scheduler_rebalance_left_total{reason="
               "\"would-be-hot\"}") >= 2;
  })) << s->Log();
  SetCpu(*prom_, suite_, {{Node(0), 0.95}, {Node(1), 0.95}, {Node(2), 0.95}});
  WaitForRounds(s, 4);
  EXPECT_EQ(s->Metric(kEvicted), 0) << s->Log();
  EXPECT_EQ(Count(Node(0)), 2);
  EXPECT_EQ(Pods().size(), 2u);
}

// With two replicas, only the leader rebalances: one pod leaves, and the
// standby runs no round.
TEST_F(RebalanceEndToEndTest, AStandbyEvictsNothing) {
  SchedulerProcess* a = Setup("evict", "", "replica-a");
  ASSERT_NE(a, nullptr);
  SchedulerProcess* b = StartScheduler(RebalanceParams("evict"), "replica-b");
  ASSERT_NE(b, nullptr);
  SetCpu(*prom_, suite_, {{Node(0), 0.95}, {Node(1), 0.2}, {Node(2), 0.6}});
  ASSERT_TRUE(WaitFor([&] { return Count(Node(0) + " (leaving)") == 1; },
                      absl::Seconds(60)))
      << a->Log() << b->Log();
  SetCpu(*prom_, suite_, {{Node(0), 0.7}, {Node(1), 0.45}, {Node(2), 0.6}});
  WaitForRounds(a, 3);
  EXPECT_EQ(a->Metric(kEvicted), 1);
  EXPECT_EQ(b->Metric(kEvicted), 0);
  EXPECT_EQ(b->Metric("metrics_scheduler_rebalance_rounds_total"), 0);
}

// A dry run says what it would move, in an Event, and moves nothing.
TEST_F(RebalanceEndToEndTest, ADryRunEvictsNothing) {
  SchedulerProcess* s = Setup("dryRun");
  ASSERT_NE(s, nullptr);
  SetCpu(*prom_, suite_, {{Node(0), 0.95}, {Node(1), 0.2}, {Node(2), 0.6}});
  ASSERT_TRUE(WaitFor([&] {
    return s->Metric(
               "metrics_scheduler_rebalance_evictions_total{result="
               "\"dry-run\"}") >= 1;
  })) << s->Log();
  WaitForRounds(s, 3);
  EXPECT_EQ(Count(Node(0)), 2);
  EXPECT_EQ(Pods().size(), 2u);
  bool said = false;
  for (const auto& [name, where] : Pods()) {
    said = said || Events(name).find(R"("reason":"WouldRebalance")") !=
                       std::string::npos;
  }
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace ms
