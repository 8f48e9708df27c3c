// `metrics-scheduler explain` end to end: the real binary, with the
// scheduler identity's RBAC (manifests/rbac.yaml), against the testenv's
// kube-apiserver and a real Prometheus holding known per-node values.
//
// The cluster may hold nodes of other tests; the pods here select this
// suite's nodes by label, so the others are listed as filtered and the
// assertions read this suite's rows.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "model/kube_version.h"
#include "tests/testing/prometheus.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::PrometheusServer;
using ::ms::testing::RemoteSeries;
using ::ms::testing::Testenv;

struct Result {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs build/metrics-scheduler with `args` and waits for it.
Result RunScheduler(const std::string& args) {
  const char* bin = std::getenv("MS_BINARY_DIR");
  EXPECT_NE(bin, nullptr);
  std::string err_file = absl::StrCat(::testing::TempDir(), "/explain-", getpid(),
                                      ".err");
  std::string command = absl::StrCat(bin, "/metrics-scheduler ", args, " 2>",
                                     err_file);
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = ReadAll(err_file);
  return r;
}

// A table row split into its cells (columns are separated by two or more
// spaces; cells hold single spaces).
std::vector<std::string> Cells(absl::string_view line) {
  std::vector<std::string> cells;
  for (absl::string_view part : absl::StrSplit(line, "  ", absl::SkipEmpty())) {
    part = absl::StripAsciiWhitespace(part);
    if (!part.empty()) cells.emplace_back(part);
  }
  return cells;
}

class ExplainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env_.server().empty());
    env_.ApplySchedulerRbac();
    static int counter = 0;
    suite_ = absl::StrCat("explain-", getpid(), "-", counter++);
    env_.CreateNamespace(suite_);
    absl::StatusOr<std::unique_ptr<PrometheusServer>> prom =
        PrometheusServer::Start();
    ASSERT_TRUE(prom.ok()) << prom.status();
    prom_ = std::move(*prom);
    // n0..n2 fit; n3 has 50m of cpu, too little for the pod's 100m.
    for (int i = 0; i < 4; ++i) {
      std::string name = Node(i);
      env_.CreateNode(name, i == 3 ? "50m" : "4", "16Gi",
                      absl::StrCat(R"({"explain-suite":")", suite_, R"("})"));
      nodes_.push_back(name);
    }
    std::vector<RemoteSeries> series;
    const double latency[] = {0.250, 0.020, 0.120, 0.001};
    for (int i = 0; i < 4; ++i) {
      series.push_back(
          {"http_latency_seconds", {{"node", Node(i)}, {"suite", suite_}},
           latency[i]});
    }
    absl::Status s = prom_->Write(series);
    ASSERT_TRUE(s.ok()) << s;
    config_ = absl::StrCat(::testing::TempDir(), "/", suite_, ".yaml");
    std::ofstream(config_) << absl::StrFormat(
        R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: prometheus, url: "%s", timeout: 2s}
metrics:
  - name: http_latency
    query: 'http_latency_seconds{suite="%s"}'
    weight: 10
    direction: lower
builtins: {leastAllocated: 1, balancedAllocation: 1, recentPlacements: 0}
)",
        prom_->url(), suite_);
    kubeconfig_ = env_.dir() + "/scheduler.kubeconfig";
  }

  void TearDown() override {
    env_.DeleteNamespace(suite_);
    for (const std::string& n : nodes_) env_.DeleteNode(n);
  }

  std::string Node(int i) const { return absl::StrCat(suite_, "-n", i); }

  // Node i's example.com/hourly-cost annotation.
  void SetCost(int i, const std::string& cost) {
    env_.AdminOk("PATCH", "/api/v1/nodes/" + Node(i),
                 absl::StrCat(R"({"metadata":{"annotations":{)",
                              R"("example.com/hourly-cost":")", cost,
                              R"("}}})"),
                 "application/merge-patch+json");
  }

  // A pod that no scheduler takes (its schedulerName is nobody's), so it
  // stays pending.
  std::string PodYaml() const {
    return absl::StrCat(R"(apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  schedulerName: nobody
  nodeSelector: {explain-suite: )",
                        suite_, R"(}
  containers:
    - name: c
      image: registry.k8s.io/pause:3.10
      resources:
        requests: {cpu: 100m, memory: 64Mi}
)");
  }

  int ClusterNodes() {
    kube::KubeClient admin(env_.AdminConfig());
    absl::StatusOr<kube::ObjectList<ms::Node>> nodes = admin.ListNodes({});
    EXPECT_TRUE(nodes.ok()) << nodes.status();
    return nodes.ok() ? static_cast<int>(nodes->items.size()) : -1;
  }

  // balancedAllocation of the pod on an empty node under the cluster's
  // release: 98 up to 1.35; from 1.36 the change it makes, 50 + (50 + 98 -
  // 100) / 2 = 74.
  std::string Balance() {
    kube::KubeClient admin(env_.AdminConfig());
    absl::StatusOr<std::string> release = admin.ServerVersion();
    EXPECT_TRUE(release.ok()) << release.status();
    absl::StatusOr<KubeVersion> v =
        ParseKubeVersion(release.ok() ? *release : "");
    return v.ok() && v->AtLeast(36) ? "74" : "98";
  }

  std::string Args(const std::string& target) const {
    return absl::StrCat("explain --config ", config_, " --kubeconfig ",
                        kubeconfig_, " --seed 1 ", target);
  }

  // Checks the output for the known cluster and metrics.
  void ExpectTable(const std::string& out, const std::string& pod_key) {
    std::vector<std::string> lines = absl::StrSplit(out, '\n');
    int n = ClusterNodes();
    ASSERT_GE(lines.size(), 5u) << out;
    EXPECT_EQ(lines[0], absl::StrCat("pod ", pod_key,
                                     " (requests cpu 100m, memory 64Mi), ", n,
                                     " node(s)"));
    EXPECT_EQ(lines[1], absl::StrCat("metrics from ", prom_->url(),
                                     ", nodes with data: http_latency 4/", n));
    EXPECT_EQ(lines[2], "");
    EXPECT_EQ(Cells(lines[3]),
              (std::vector<std::string>{"node", "total", "http_latency",
                                        "leastAllocated",
                                        "balancedAllocation",
                                        "recentPlacements"}));
    std::vector<std::vector<std::string>> rows;
    for (const std::string& line : lines) {
      if (absl::StartsWith(line, suite_)) rows.push_back(Cells(line));
    }
    // Latency over the feasible nodes n0..n2, lower is better, minmax:
    // n1 0.020 -> 100, n0 0.250 -> 0,
    // n2 0.120 -> (0.250 - 0.120) / (0.250 - 0.020) * 100 = 56.52.
    // leastAllocated (kube-scheduler, integer per resource): cpu
    // (4000 - 100) * 100 / 4000 = 97, memory (16384 - 64) * 100 / 16384 = 99,
    // mean 98. balancedAllocation: (1 - |0.025 - 0.0039| / 2) * 100 = 98.94
    // (one minus the fractions' standard deviation), truncated: 98; from
    // 1.36 the change from the empty node's 100: 74 (Balance()).
    // recentPlacements has weight 0: unused.
    // Totals (weights 10, 1, 1): n1 (1000 + 98 + 98) / 12 = 99.67,
    // n2 (565.2 + 98 + 98) / 12 = 63.43, n0 (0 + 98 + 98) / 12 = 16.33;
    // from 1.36 (1000 + 98 + 74) / 12 = 97.67, 61.43 and 14.33.
    const std::string b = Balance();
    const bool change = b == "74";
    const std::string balanced = absl::StrCat(b, " -> ", b, ".00 (w=1)");
    ASSERT_EQ(rows.size(), 4u) << out;
    EXPECT_EQ(rows[0],
              (std::vector<std::string>{
                  Node(1), change ? "97.67" : "99.67", "0.02 -> 100.00 (w=10)",
                  "98 -> 98.00 (w=1)", balanced, "0 (unused)"}))
        << out;
    EXPECT_EQ(rows[1],
              (std::vector<std::string>{
                  Node(2), change ? "61.43" : "63.43", "0.12 -> 56.52 (w=10)",
                  "98 -> 98.00 (w=1)", balanced, "0 (unused)"}))
        << out;
    EXPECT_EQ(rows[2],
              (std::vector<std::string>{
                  Node(0), change ? "14.33" : "16.33", "0.25 -> 0.00 (w=10)",
                  "98 -> 98.00 (w=1)", balanced, "0 (unused)"}))
        << out;
    EXPECT_EQ(rows[3], (std::vector<std::string>{
                           Node(3), "-", "filtered: Insufficient cpu"}))
        << out;
    EXPECT_EQ(lines[lines.size() - 2],
              absl::StrCat("best node: ", Node(1), " (mode: metrics)"));
    EXPECT_EQ(lines.back(), "");
  }

  Testenv env_;
  std::string suite_;
  std::unique_ptr<PrometheusServer> prom_;
  std::vector<std::string> nodes_;
  std::string config_;
  std::string kubeconfig_;
};

TEST_F(ExplainTest, PendingPodInTheCluster) {
  std::string manifest = absl::StrCat(::testing::TempDir(), "/", suite_, "-pod.yaml");
  std::ofstream(manifest) << PodYaml();
  env_.Kubectl(absl::StrCat("apply -n ", suite_, " -f ", manifest));
  Result r = RunScheduler(Args(suite_ + "/web"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  ExpectTable(r.out, suite_ + "/web");
  // Nothing was bound.
  std::string pod = env_.AdminOk("GET", absl::StrCat("/api/v1/namespaces/",
                                                     suite_, "/pods/web"));
  EXPECT_EQ(pod.find("\"nodeName\""), std::string::npos) << pod;
}

TEST_F(ExplainTest, HypotheticalPodFromAManifest) {
  std::string manifest = absl::StrCat(::testing::TempDir(), "/", suite_, "-pod.yaml");
  std::ofstream(manifest) << PodYaml();
  Result r = RunScheduler(Args(manifest));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  ExpectTable(r.out, "default/web");
}

// A metric read from a Node annotation needs no backend and is explained
// as any other: its raw value, score and weight per node.
TEST_F(ExplainTest, NodeAnnotationMetricWithoutABackend) {
  const char* cost[] = {"3", "1", "2500m", "9"};
  for (int i = 0; i < 4; ++i) SetCost(i, cost[i]);
  std::ofstream(config_) << R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
metrics:
  - name: price
    source: {nodeAnnotation: example.com/hourly-cost}
    weight: 2
    direction: lower
builtins: {leastAllocated: 0, balancedAllocation: 0, recentPlacements: 0}
)";
  std::string manifest =
      absl::StrCat(::testing::TempDir(), "/", suite_, "-pod.yaml");
  std::ofstream(manifest) << PodYaml();
  Result r = RunScheduler(Args(manifest));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n');
  ASSERT_GE(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[1],
            "from the nodes: price (annotation example.com/hourly-cost)");
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : lines) {
    if (absl::StartsWith(line, suite_)) rows.push_back(Cells(line));
  }
  // Lower is better, minmax over n0..n2 (n3 lacks cpu): 1 -> 100,
  // 2.5 -> (3 - 2.5) / (3 - 1) * 100 = 25, 3 -> 0.
  ASSERT_EQ(rows.size(), 4u) << r.out;
  // The built-ins have weight 0: unused.
  const std::vector<std::string> unused = {
      "98 (unused)", absl::StrCat(Balance(), " (unused)"), "0 (unused)"};
  auto row = [&](const std::string& node, const std::string& total,
                 const std::string& price) {
    std::vector<std::string> cells = {node, total, price};
    cells.insert(cells.end(), unused.begin(), unused.end());
    return cells;
  };
  EXPECT_EQ(rows[0], row(Node(1), "100.00", "1 -> 100.00 (w=2)")) << r.out;
  EXPECT_EQ(rows[1], row(Node(2), "25.00", "2.5 -> 25.00 (w=2)")) << r.out;
  EXPECT_EQ(rows[2], row(Node(0), "0.00", "3 -> 0.00 (w=2)")) << r.out;
  EXPECT_EQ(lines[lines.size() - 2],
            absl::StrCat("best node: ", Node(1), " (mode: metrics)"));
}

// With profiles, a pod is explained with its own profile's policy, named
// in the output; a pod of another scheduler with the first profile's.
TEST_F(ExplainTest, APodIsExplainedWithItsProfile) {
  // Of the nodes that fit (n3 lacks cpu), n2 is the cheapest and n1 the
  // fastest.
  const char* cost[] = {"3", "9", "2500m", "1"};
  for (int i = 0; i < 4; ++i) SetCost(i, cost[i]);
  std::ofstream(config_) << absl::StrFormat(
      R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: prometheus, url: "%s", timeout: 2s}
profiles:
  - schedulerName: latency-first
    metrics:
      - name: http_latency
        query: 'http_latency_seconds{suite="%s"}'
  - schedulerName: cost-first
    metrics:
      - name: price
        source: {nodeAnnotation: example.com/hourly-cost}
)",
      prom_->url(), suite_);
  auto explain = [&](const std::string& scheduler) {
    std::string manifest =
        absl::StrCat(::testing::TempDir(), "/", suite_, "-pod.yaml");
    std::ofstream(manifest) << absl::StrReplaceAll(
        PodYaml(), {{"schedulerName: nobody",
                     absl::StrCat("schedulerName: ", scheduler)}});
    Result r = RunScheduler(Args(manifest));
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    return std::vector<std::string>(absl::StrSplit(r.out, '\n'));
  };

  std::vector<std::string> lines = explain("cost-first");
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[1], "profile cost-first");
  EXPECT_EQ(lines[2],
            "from the nodes: price (annotation example.com/hourly-cost)");
  EXPECT_EQ(lines[lines.size() - 2],
            absl::StrCat("best node: ", Node(2), " (mode: metrics)"));

  lines = explain("latency-first");
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[1], "profile latency-first");
  EXPECT_TRUE(absl::StartsWith(lines[2], "metrics from ")) << lines[2];
  EXPECT_EQ(lines[lines.size() - 2],
            absl::StrCat("best node: ", Node(1), " (mode: metrics)"));

  lines = explain("nobody");
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[1],
            "profile latency-first (the pod's schedulerName nobody is not "
            "one of this configuration's)");
  EXPECT_EQ(lines[lines.size() - 2],
            absl::StrCat("best node: ", Node(1), " (mode: metrics)"));
}

// `probe`: per metric, the nodes with data out of the cluster's, the
// series naming no node, and the exit code by --min-coverage.
TEST_F(ExplainTest, ProbeSaysEachMetricsCoverage) {
  absl::Status s =
      prom_->Write({{"http_latency_seconds",
                     {{"node", suite_ + "-ghost"}, {"suite", suite_}},
                     0.5}});
  ASSERT_TRUE(s.ok()) << s;
  const std::string config =
      absl::StrCat(::testing::TempDir(), "/", suite_, "-probe.yaml");
  std::ofstream(config) << absl::StrFormat(
      R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: prometheus, url: "%s", timeout: 2s}
metrics:
  - name: every
    query: 'http_latency_seconds{suite="%s"}'
  - name: half
    query: 'http_latency_seconds{suite="%s", node=~".*-n[01]"}'
)",
      prom_->url(), suite_, suite_);
  const std::string args =
      absl::StrCat("probe --config ", config, " --kubeconfig ", kubeconfig_);
  const int n = ClusterNodes();
  Result r = RunScheduler(args + " --min-coverage 0");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::vector<std::string> every, half;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    if (absl::StartsWith(line, "every ")) every = Cells(line);
    if (absl::StartsWith(line, "half ")) half = Cells(line);
  }
  // metric, nodes with data (share), series, match no node, stale, no value
  ASSERT_EQ(every.size(), 6u) << r.out;
  EXPECT_TRUE(absl::StartsWith(every[1], absl::StrCat("4/", n, " "))) << r.out;
  EXPECT_EQ(every[2], "5");  // the four nodes and the ghost
  EXPECT_EQ(every[3], "1");
  ASSERT_EQ(half.size(), 6u) << r.out;
  EXPECT_TRUE(absl::StartsWith(half[1], absl::StrCat("2/", n, " "))) << r.out;
  EXPECT_EQ(half[5], std::to_string(n - 2));
  EXPECT_THAT(r.out, ::testing::HasSubstr(absl::StrCat(
                         "every: series that match no node, e.g. ")));
  EXPECT_THAT(r.out, ::testing::HasSubstr(suite_ + "-ghost"));

  // No node list has every node in `half`: below 100 %.
  r = RunScheduler(args + " --min-coverage 1");
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("coverage below 100%: "));
  EXPECT_THAT(r.out, ::testing::HasSubstr("half"));

  // Without a configuration there is nothing to probe.
  r = RunScheduler("probe --kubeconfig " + kubeconfig_);
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
}

TEST_F(ExplainTest, BackendDownExitsOne) {
  ASSERT_TRUE(prom_->Stop().ok());
  std::string manifest = absl::StrCat(::testing::TempDir(), "/", suite_, "-pod.yaml");
  std::ofstream(manifest) << PodYaml();
  Result r = RunScheduler(Args(manifest));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(absl::StrContains(
      r.err, absl::StrCat("UNAVAILABLE: metrics backend ", prom_->url(),
                          ": no metric could be fetched: http_latency: ")))
      << r.err;
}

TEST_F(ExplainTest, MissingPodExitsOne) {
  Result r = RunScheduler(Args(suite_ + "/absent"));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(absl::StartsWith(r.err, "metrics-scheduler explain: NOT_FOUND: "))
      << r.err;
}

TEST_F(ExplainTest, ApiserverUnreachableExitsOne) {
  Result r = RunScheduler(
      absl::StrCat("explain --config ", config_,
                   " --master http://127.0.0.1:1 --seed 1 ", suite_, "/web"));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_EQ(r.out, "");
}

TEST_F(ExplainTest, BadUsageExitsTwo) {
  EXPECT_EQ(RunScheduler("explain").exit_code, 2);
  EXPECT_EQ(RunScheduler(Args("a/b/c")).exit_code, 2);
  Result r = RunScheduler(Args("no-such-file.yaml"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "metrics-scheduler explain: no-such-file.yaml: no such file\n");
  EXPECT_EQ(RunScheduler(absl::StrCat("explain --config /nonexistent.yaml ",
                                      suite_, "/web"))
                .exit_code,
            2);
  // --rebalance takes no pod, and needs rebalance.hot.
  EXPECT_EQ(RunScheduler(Args("--rebalance a/b")).exit_code, 2);
  r = RunScheduler(Args("--rebalance"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "metrics-scheduler explain --rebalance: rebalance.hot of --config "
            "is empty: nothing says when a node is hot\n");
}

// What a rebalancing round would move now: n0 is at 0.95, above 0.8; its
// ReplicaSet-like pod of one core (0.25) would go to n1 (0.2, the lowest
// that fits), its pod without a controller stays. Nothing is evicted.
TEST_F(ExplainTest, RebalanceSaysWhatWouldMoveWhereAndWhatStays) {
  std::vector<RemoteSeries> cpu;
  const double busy[] = {0.95, 0.2, 0.6, 0.1};
  for (int i = 0; i < 4; ++i) {
    cpu.push_back(
        {"node_cpu_busy", {{"node", Node(i)}, {"suite", suite_}}, busy[i]});
  }
  ASSERT_TRUE(prom_->Write(cpu).ok());
  std::ofstream(config_) << absl::StrFormat(
      R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: prometheus, url: "%s", timeout: 2s}
metrics:
  - name: cpu
    query: 'node_cpu_busy{suite="%s"}'
    normalization: {type: range, min: 0, max: 1}
    estimate: {from: cpuRequests}
  - name: busy
    query: 'node_cpu_busy{suite="%s"}'
    normalization: {type: range, min: 0, max: 1}
    estimate: {from: cpuRequests}
rebalance:
  mode: dryRun
  hot:
    - {metric: cpu, high: 0.8, samples: 3, low: 0.7}
    - {metric: busy, high: 0.85, samples: 3, low: 0.7}
  pods: {minAge: 0s}
)",
      prom_->url(), suite_, suite_);
  const std::string owner = env_.AdminOk(
      "POST", "/api/v1/namespaces/" + suite_ + "/configmaps",
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web"}})");
  const size_t at = owner.find(R"("uid":")");
  ASSERT_NE(at, std::string::npos) << owner;
  const std::string uid = owner.substr(at + 7, 36);
  const std::string an_hour_ago = absl::FormatTime(
      "%Y-%m-%dT%H:%M:%SZ", absl::Now() - absl::Hours(1), absl::UTCTimeZone());
  for (const char* name : {"web-1", "lone"}) {
    const bool owned = std::string(name) == "web-1";
    env_.AdminOk(
        "POST", "/api/v1/namespaces/" + suite_ + "/pods",
        absl::StrCat(
            R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
            R"(")",
            owned ? absl::StrCat(R"(,"ownerReferences":[{"apiVersion":"v1",)",
                                 R"("kind":"ConfigMap","name":"web","uid":")",
                                 uid, R"(","controller":true}])")
                  : "",
            R"(},"spec":{"schedulerName":"metrics-scheduler","nodeName":")",
            Node(0), R"(","nodeSelector":{"explain-suite":")", suite_,
            R"("},"containers":[{"name":"c","image":"registry.k8s.io/)",
            R"(pause:3.10","resources":{"requests":{"cpu":"1"}}}]}})"));
    env_.AdminOk(
        "PATCH",
        absl::StrCat("/api/v1/namespaces/", suite_, "/pods/", name, "/status"),
        absl::StrCat(R"({"status":{"phase":"Running","startTime":")",
                     an_hour_ago, R"("}})"),
        "application/merge-patch+json");
  }
  Result r = RunScheduler(Args("--rebalance"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  for (const std::string& line : {
           absl::StrCat("  ", Node(0), " 0.95 above 0.8:"),
           absl::StrCat("    would move ", suite_, "/web-1 to ", Node(1),
                        " (cpu 0.45 with it): it takes 0.25, requests"),
           absl::StrCat("    leaves ", suite_, "/lone: no-controller"),
           absl::StrCat("    ", Node(0), " would be at 0.7"),
           // Hot on both, planned once, under the metric it is most above.
           absl::StrCat("  ", Node(0), " 0.95 above 0.85: planned under cpu"),
       }) {
    EXPECT_NE(r.out.find(line + "\n"), std::string::npos) << line << "\n"
                                                          << r.out;
  }
  EXPECT_NE(r.out.find("cpu: hot above 0.8 for 3 samples, brought to 0.7"),
            std::string::npos)
      << r.out;
  // Under each metric, n0 is hot and the 3 others are not.
  const std::string not_hot = "  3 other node(s) not hot\n";
  const size_t first = r.out.find(not_hot);
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_NE(r.out.find(not_hot, first + 1), std::string::npos) << r.out;
  // Both pods are still there, on n0.
  for (const char* name : {"web-1", "lone"}) {
    const std::string pod = env_.AdminOk(
        "GET", absl::StrCat("/api/v1/namespaces/", suite_, "/pods/", name));
    EXPECT_EQ(pod.find("deletionTimestamp"), std::string::npos) << pod;
  }
}

}  // namespace
}  // namespace ms
