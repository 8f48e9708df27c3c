// MetricsServerSource and its decoder, over NodeMetricsList bodies written as
// metrics-server writes them (k8s.io/metrics' NodeMetrics). The
// list through a real apiserver's aggregation layer is in
// metrics_server_integration_test.cc.
#include "metrics/metrics_server_source.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/clock.h"
#include "common/http.h"
#include "config/config.h"
#include "kube/client.h"
#include "kube/cluster_config.h"
#include "metrics/cache.h"
#include "metrics/metrics_server_decode.h"
#include "tests/metrics/source_test_util.h"
#include "tests/testing/http_server.h"

namespace ms::metrics {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::ms::testing::HttpAnswer;
using ::ms::testing::RecordedRequest;
using ::ms::testing::TestHttpServer;

// 2026-11-25T10:00:00Z
constexpr int64_t kT0 = 1795600800000;

std::string Item(const std::string& node, const std::string& cpu,
                 const std::string& memory,
                 const std::string& timestamp = "2026-11-25T10:00:00Z") {
  return absl::StrCat(R"({"metadata":{"name":")", node,
                      R"(","creationTimestamp":"2026-11-25T10:00:05Z",)",
                      R"("labels":{"kubernetes.io/hostname":")", node,
                      R"("}},"timestamp":")", timestamp,
                      R"(","window":"20.031s","usage":{"cpu":")", cpu,
                      R"(","memory":")", memory, R"("}})");
}

std::string List(const std::vector<std::string>& items) {
  std::string out =
      R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1",)"
      R"("metadata":{"resourceVersion":""},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ",";
    out += items[i];
  }
  return out + "]}";
}

TEST(DecodeNodeMetricsListTest, ReadsUsageAndTimestamp) {
  absl::StatusOr<std::vector<NodeUsage>> items = DecodeNodeMetricsList(
      List({Item("a", "1500m", "2Gi"),
            Item("b", "123456789n", "1024Ki", "2026-11-25T10:00:01.5Z")}));
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[0], (NodeUsage{.name = "a",
                                    .time_ms = kT0,
                                    .cpu_cores = 1.5,
                                    .memory_bytes = 2.0 * (1 << 30)}));
  // Nanocores round up to a thousandth of a core.
  EXPECT_EQ((*items)[1], (NodeUsage{.name = "b",
                                    .time_ms = kT0 + 1500,
                                    .cpu_cores = 0.124,
                                    .memory_bytes = 1024.0 * 1024}));
}

TEST(DecodeNodeMetricsListTest, LeavesOutWhatCannotBeRead) {
  absl::StatusOr<std::vector<NodeUsage>> items = DecodeNodeMetricsList(List({
      Item("bad-cpu", "lots", "1Mi"),
      R"({"metadata":{"name":"no-time"},"usage":{"cpu":"1"}})",
      Item("bad-time", "1", "1Mi", "yesterday"),
      R"({"metadata":{},"timestamp":"2026-11-25T10:00:00Z","usage":{}})",
      R"({"metadata":{"name":"no-usage"},"timestamp":"2026-11-25T10:00:00Z"})",
      R"({"metadata":{"name":7},"timestamp":5,"usage":{"cpu":1}})",
  }));
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[0].name, "bad-cpu");
  EXPECT_FALSE((*items)[0].cpu_cores.has_value());
  EXPECT_EQ((*items)[0].memory_bytes, 1 << 20);
  EXPECT_EQ((*items)[1].name, "no-usage");
  EXPECT_FALSE((*items)[1].cpu_cores.has_value());
}

TEST(DecodeNodeMetricsListTest, EmptyAndNullItems) {
  for (const char* body :
       {R"({"kind":"NodeMetricsList","items":[]})",
        R"({"kind":"NodeMetricsList","items":null})",
        R"({"kind":"NodeMetricsList"})"}) {
    absl::StatusOr<std::vector<NodeUsage>> items = DecodeNodeMetricsList(body);
    ASSERT_TRUE(items.ok()) << body << ": " << items.status();
    EXPECT_THAT(*items, IsEmpty()) << body;
  }
}

TEST(DecodeNodeMetricsListTest, RefusesWhatIsNotANodeMetricsList) {
  for (const char* body :
       {"", "{", "[]", R"({"items":[]})",
        R"({"kind":"PodMetricsList","items":[]})",
        R"({"kind":"Status","status":"Failure","message":"x"})"}) {
    absl::StatusOr<std::vector<NodeUsage>> items = DecodeNodeMetricsList(body);
    EXPECT_EQ(items.status().code(), absl::StatusCode::kInvalidArgument)
        << body;
  }
}

// An ApiGet answering a fixed body (or status), counting its calls.
class FakeApi {
 public:
  void Answer(absl::StatusOr<std::string> answer) {
    absl::MutexLock lock(&mu_);
    answer_ = std::move(answer);
  }
  int calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  // The limit the last list was given.
  size_t max_response_bytes() const {
    absl::MutexLock lock(&mu_);
    return max_response_bytes_;
  }
  std::vector<std::string> paths() const {
    absl::MutexLock lock(&mu_);
    return paths_;
  }
  MetricsServerSource::ApiGet Get() {
    return [this](const std::string& path, absl::Duration,
                  size_t max_response_bytes) {
      absl::MutexLock lock(&mu_);
      ++calls_;
      paths_.push_back(path);
      max_response_bytes_ = max_response_bytes;
      return answer_;
    };
  }

 private:
  mutable absl::Mutex mu_;
  absl::StatusOr<std::string> answer_ ABSL_GUARDED_BY(mu_) = std::string();
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> paths_ ABSL_GUARDED_BY(mu_);
  size_t max_response_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

MetricConfig Metric(const std::string& query) {
  MetricConfig m;
  m.name = "node_" + query;
  m.query = query;
  return m;
}

NodeSet Nodes() {
  return NodeSet({{.name = "a", .allocatable_cpu = 4,
                   .allocatable_memory = 8.0 * (1 << 30)},
                  {.name = "b", .allocatable_cpu = 2,
                   .allocatable_memory = 4.0 * (1 << 30)},
                  {.name = "no-allocatable"}});
}

TEST(MetricsServerSourceTest, OneListAnswersEveryMetric) {
  FakeApi api;
  api.Answer(List({Item("a", "1", "2Gi"), Item("b", "1500m", "3Gi"),
                   Item("no-allocatable", "1", "1Gi"),
                   Item("gone", "1", "1Gi")}));
  MetricsServerSource source({}, api.Get());
  const MetricConfig cpu = Metric("cpu"), memory = Metric("memory"),
                     cpu_u = Metric("cpuUtilization"),
                     memory_u = Metric("memoryUtilization");
  const MetricConfig* metrics[] = {&cpu, &memory, &cpu_u, &memory_u};
  std::vector<absl::StatusOr<FetchResult>> answers(4);
  int calls = 0;
  source.FetchAll(metrics, Nodes(), absl::Seconds(1),
                  [&](size_t i, absl::StatusOr<FetchResult> answer) {
                    ++calls;
                    answers[i] = std::move(answer);
                  });
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(api.calls(), 1);
  EXPECT_THAT(api.paths(), ElementsAre("/apis/metrics.k8s.io/v1beta1/nodes"));
  for (const auto& a : answers) ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(ValuesOf(*answers[0]),
              ElementsAre(Pair("a", 1), Pair("b", 1.5),
                          Pair("no-allocatable", 1)));
  EXPECT_THAT(ValuesOf(*answers[1]),
              ElementsAre(Pair("a", 2.0 * (1 << 30)), Pair("b", 3.0 * (1 << 30)),
                          Pair("no-allocatable", 1.0 * (1 << 30))));
  // Usage over allocatable; a node with none has no utilisation.
  EXPECT_THAT(ValuesOf(*answers[2]),
              ElementsAre(Pair("a", 0.25), Pair("b", 0.75)));
  EXPECT_THAT(ValuesOf(*answers[3]),
              ElementsAre(Pair("a", 0.25), Pair("b", 0.75)));
  EXPECT_EQ(answers[0]->by_node.at("a").time_ms, kT0);
  EXPECT_EQ(answers[2]->series, 4);
  EXPECT_EQ(answers[2]->unmatched, 1);
  EXPECT_THAT(answers[2]->unmatched_examples, ElementsAre("gone"));
}

TEST(MetricsServerSourceTest, FetchListsOnce) {
  FakeApi api;
  api.Answer(List({Item("a", "2", "1Gi")}));
  MetricsServerSource source({}, api.Get());
  absl::StatusOr<FetchResult> r =
      source.Fetch(Metric("cpuUtilization"), Nodes(), absl::Seconds(1));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("a", 0.5)));
  EXPECT_EQ(api.calls(), 1);
  // backend.maxResponseBytes' default, as for the other backends.
  EXPECT_EQ(api.max_response_bytes(), size_t{64} << 20);
}

// backend.maxResponseBytes bounds the list as it bounds a Prometheus
// answer: one larger, its size announced (Content-Length) or not, is
// refused as it arrives, naming the limit and the setting that raises it,
// and the metric falls back; an apiserver's 429 stays Unavailable.
TEST(MetricsServerSourceTest, AListOverMaxResponseBytesIsRefused) {
  absl::StatusOr<Config> config = LoadConfigString(
      "apiVersion: metrics-scheduler/v1alpha1\n"
      "kind: MetricsSchedulerConfiguration\n"
      "backend: {type: metricsServer, maxResponseBytes: 1Mi}\n"
      "metrics:\n  - {name: node_cpu, query: cpu}\n",
      "file.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->backend.max_response_bytes, 1 << 20);
  absl::StatusOr<std::unique_ptr<TestHttpServer>> server =
      TestHttpServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  kube::KubeClient client(kube::PlainUrl((*server)->url()).value());
  MetricsServerSource source(
      config->backend, [&client](const std::string& path,
                                 absl::Duration timeout, size_t max_bytes) {
        return client.Get(path, timeout, max_bytes);
      });
  // 16,384 nodes of about 100 bytes each: 1.6 MiB.
  std::vector<std::string> items;
  for (int i = 0; i < 16384; ++i) {
    items.push_back(Item(absl::StrCat("node-", i), "1", "1Gi"));
  }
  const std::string big = List(items);
  ASSERT_GT(big.size(), size_t{1} << 20);
  for (bool unframed : {false, true}) {
    SCOPED_TRACE(unframed ? "unframed" : "with Content-Length");
    (*server)->SetHandler([&big, unframed](const RecordedRequest&) {
      return HttpAnswer{.body = big, .unframed = unframed};
    });
    absl::StatusOr<FetchResult> r =
        source.Fetch(QueryMetrics(*config)[0], Nodes(), absl::Seconds(30));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted)
        << r.status();
    EXPECT_THAT(r.status().message(),
                HasSubstr("larger than 1048576 bytes, the most "
                          "backend.maxResponseBytes allows"));
    EXPECT_THAT(r.status().message(), HasSubstr("metric node_cpu"));
  }
  // Within the limit: read as before.
  (*server)->SetAnswer(200, List({Item("a", "1", "2Gi")}));
  absl::StatusOr<FetchResult> r =
      source.Fetch(QueryMetrics(*config)[0], Nodes(), absl::Seconds(30));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("a", 1)));
  // A 429 is the apiserver's ResourceExhausted, not the limit's.
  (*server)->SetAnswer(429, R"({"kind":"Status","code":429,"message":"slow down"})");
  r = source.Fetch(QueryMetrics(*config)[0], Nodes(), absl::Seconds(30));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
}

TEST(MetricsServerSourceTest, ErrorsFollowTheSourceContract) {
  struct Case {
    absl::Status from_apiserver;
    absl::StatusCode want;
    const char* says;
  };
  const Case cases[] = {
      {absl::NotFoundError("the server could not find the requested resource"),
       absl::StatusCode::kFailedPrecondition, "is metrics-server installed?"},
      {absl::UnavailableError("service unavailable"),
       absl::StatusCode::kUnavailable, "service unavailable"},
      {absl::ResourceExhaustedError("too many requests"),
       absl::StatusCode::kUnavailable, "too many requests"},
      {absl::DeadlineExceededError("timed out"),
       absl::StatusCode::kDeadlineExceeded, "timed out"},
      {absl::PermissionDeniedError("forbidden"),
       absl::StatusCode::kPermissionDenied, "nodes.metrics.k8s.io"},
      {absl::UnauthenticatedError("Unauthorized"),
       absl::StatusCode::kPermissionDenied, "Unauthorized"},
  };
  for (const Case& c : cases) {
    FakeApi api;
    api.Answer(c.from_apiserver);
    MetricsServerSource source({}, api.Get());
    absl::StatusOr<FetchResult> r =
        source.Fetch(Metric("cpu"), Nodes(), absl::Seconds(1));
    EXPECT_EQ(r.status().code(), c.want) << c.from_apiserver;
    EXPECT_THAT(r.status().message(), HasSubstr(c.says));
    EXPECT_THAT(r.status().message(), HasSubstr("metric node_cpu"));
  }
  FakeApi api;
  api.Answer(std::string(R"({"kind":"Status","status":"Failure"})"));
  MetricsServerSource source({}, api.Get());
  EXPECT_EQ(source.Fetch(Metric("cpu"), Nodes(), absl::Seconds(1))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MetricsServerSourceTest, TheBackendTimeoutBoundsTheList) {
  absl::Duration seen;
  MetricsServerSource source(
      {.timeout = absl::Milliseconds(300)},
      [&](const std::string&, absl::Duration timeout,
          size_t) -> absl::StatusOr<std::string> {
        seen = timeout;
        return List({});
      });
  ASSERT_TRUE(source.Fetch(Metric("cpu"), Nodes(), absl::Seconds(5)).ok());
  EXPECT_EQ(seen, absl::Milliseconds(300));
  ASSERT_TRUE(
      source.Fetch(Metric("cpu"), Nodes(), absl::Milliseconds(100)).ok());
  EXPECT_EQ(seen, absl::Milliseconds(100));
}

// The cache's refresh pass asks for every due metric at once: one list.
TEST(MetricsServerSourceTest, TheCacheListsOncePerRefreshPass) {
  FakeApi api;
  api.Answer(List({Item("a", "1", "2Gi")}));
  MetricsServerSource source({}, api.Get());
  FakeClock clock;
  clock.Set(absl::FromUnixMillis(kT0));
  MetricsCache cache(&source, {Metric("cpuUtilization"),
                               Metric("memoryUtilization"), Metric("cpu")},
                     {.clock = &clock});
  cache.SetNodes(Nodes().nodes());
  cache.RefreshAll();
  EXPECT_EQ(api.calls(), 1);
  cache.RefreshAll();
  EXPECT_EQ(api.calls(), 2);
  std::shared_ptr<const MetricsSnapshot> snap = cache.Snapshot();
  ASSERT_EQ(snap->metrics.size(), 3u);
  EXPECT_EQ(snap->metrics[0].by_node.at("a").value, 0.25);
  EXPECT_EQ(snap->metrics[1].by_node.at("a").value, 0.25);
  EXPECT_EQ(snap->metrics[2].by_node.at("a").value, 1);
}

}  // namespace
}  // namespace ms::metrics
