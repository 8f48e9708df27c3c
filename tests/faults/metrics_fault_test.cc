// Faults of the metrics backend: Prometheus slower than the timeout, and a
// backend answering garbage, truncated JSON, a huge answer or HTTP 500.
// In each, the scheduler keeps running, decides in fallback mode without
// waiting past its deadline, binds every pod exactly once on a node that
// fits (FaultTest::ExpectEveryPodBoundOnce), and returns to metrics mode
// once the backend answers properly again.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/faults/fault_fixture.h"
#include "tests/testing/http_server.h"
#include "tests/testing/prometheus.h"
#include "tests/testing/tcp_proxy.h"

namespace ms::testing {
namespace {

constexpr char kFallbackDecisions[] =
    "metrics_scheduler_decisions_total{mode=\"fallback\","
    "profile=\"metrics-scheduler\"}";
constexpr char kMetricsDecisions[] =
    "metrics_scheduler_decisions_total{mode=\"metrics\","
    "profile=\"metrics-scheduler\"}";
constexpr char kRefreshSuccesses[] =
    "metrics_scheduler_metric_refreshes_total{metric=\"http_latency\","
    "result=\"success\"}";
constexpr char kNodesWithData[] =
    "metrics_scheduler_metric_nodes_with_data{metric=\"http_latency\"}";
constexpr char kRefreshFailures[] =
    "metrics_scheduler_metric_refreshes_total{metric=\"http_latency\","
    "result=\"failure\"}";

class MetricsFaultTest : public FaultTest {
 protected:
  // A Prometheus answer giving every suite node a value, sampled now.
  std::string GoodAnswer(int nodes) const {
    std::string result;
    double now = static_cast<double>(absl::ToUnixMillis(absl::Now())) / 1000;
    for (int i = 0; i < nodes; ++i) {
      absl::StrAppend(&result, i ? "," : "",
                      absl::StrFormat(R"({"metric":{"node":"%s"},"value":[%.3f,"%g"]})",
                                      Node(i), now, 0.01 * (i + 1)));
    }
    return absl::StrCat(
        R"({"status":"success","data":{"resultType":"vector","result":[)",
        result, "]}}");
  }

  // Waits until the scheduler has a fresh value for each of `nodes` nodes.
  void WaitForData(SchedulerProcess* s, int nodes) {
    ASSERT_TRUE(WaitFor([&] { return s->Metric(kNodesWithData) == nodes; }))
        << "no metric data";
  }

  // Creates the pod and waits until it is bound; returns how long that took.
  absl::Duration TimeToBind(const std::string& name) {
    absl::Time start = absl::Now();
    EXPECT_TRUE(CreatePod(name));
    EXPECT_TRUE(WaitFor([&] { return !Placements()[name].empty(); },
                        absl::Seconds(30)))
        << name << " not bound";
    return absl::Now() - start;
  }
};

TEST_F(MetricsFaultTest, PrometheusSlowerThanTheTimeoutFallsBackInTime) {
  constexpr int kNodes = 4;
  AddNodes(kNodes, "4");
  absl::StatusOr<std::unique_ptr<PrometheusServer>> prom =
      PrometheusServer::Start();
  ASSERT_TRUE(prom.ok()) << prom.status();
  std::vector<RemoteSeries> series;
  for (int i = 0; i < kNodes; ++i) {
    series.push_back(
        {"http_latency_seconds", {{"node", Node(i)}, {"suite", suite_}}, 0.1});
  }
  ASSERT_TRUE((*prom)->Write(series).ok());
  absl::StatusOr<std::unique_ptr<TcpProxy>> proxy =
      TcpProxy::Start((*prom)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  // Every answer takes 6 s; the scheduler waits 3 s for one, and at most
  // 500 ms for a cold cache before deciding without metrics.
  (*proxy)->SetDelay(absl::Seconds(6));
  FaultConfig config;
  config.backend_url = absl::StrCat("http://127.0.0.1:", (*proxy)->port());
  config.backend_timeout = "3s";
  config.refresh_timeout = "3s";
  config.cold_cache_deadline = "500ms";
  SchedulerProcess* s = StartScheduler(config);
  ASSERT_NE(s, nullptr);
  WaitForLeader(s);

  // Cold cache, the first fetch hanging: the first pod is placed after the
  // 500 ms deadline, well before the 3 s backend timeout.
  absl::Duration first = TimeToBind("first");
  EXPECT_LT(first, absl::Milliseconds(2500))
      << "the decision waited for the slow backend";

  // Warm-up never succeeds: a burst is placed in fallback mode.
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(CreatePod(absl::StrCat("slow-", i)));
  ASSERT_TRUE(WaitForAllBound(21));
  EXPECT_TRUE(WaitFor([&] { return s->Metric(kRefreshFailures) >= 1; }));
  EXPECT_EQ(s->Metric(kRefreshSuccesses), 0);
  EXPECT_EQ(s->Metric(kFallbackDecisions), 21);

  // Prometheus fast again: metrics mode resumes.
  (*proxy)->SetDelay(absl::ZeroDuration());
  ASSERT_TRUE((*prom)->Write(series).ok());
  WaitForData(s, kNodes);
  TimeToBind("after");
  EXPECT_EQ(s->Metric(kMetricsDecisions), 1);

  BindingReport report = ExpectEveryPodBoundOnce(22);
  EXPECT_EQ(report.fallback_events, 21);
  EXPECT_EQ(report.metrics_events, 1);
  EXPECT_TRUE(s->Ready());
}

struct BadAnswer {
  std::string name;
  int status;
  // The body, given the suite's first node name.
  std::function<std::string(const std::string& node)> body;
};

void PrintTo(const BadAnswer& answer, std::ostream* os) { *os << answer.name; }

std::string HugeUnmatchedAnswer() {
  // About 50 MB: a vector of a million series naming nodes that do not
  // exist here (a query that matches a whole fleet but none of ours).
  std::string out = R"({"status":"success","data":{"resultType":"vector","result":[)";
  out.reserve(52 << 20);
  for (int i = 0; out.size() < (50u << 20); ++i) {
    absl::StrAppend(&out, i ? "," : "",
                    absl::StrFormat(R"({"metric":{"node":"elsewhere-%07d"},"value":[1700000000,"0.5"]})",
                                    i));
  }
  return out + "]}}";
}

class BadBackendTest : public MetricsFaultTest,
                       public ::testing::WithParamInterface<BadAnswer> {};

TEST_P(BadBackendTest, FallsBackAndRecovers) {
  constexpr int kNodes = 4;
  constexpr int kPods = 20;
  AddNodes(kNodes, "4");
  absl::StatusOr<std::unique_ptr<TestHttpServer>> server =
      TestHttpServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto body = std::make_shared<const std::string>(GetParam().body(Node(0)));
  const int status = GetParam().status;
  (*server)->SetHandler([body, status](const RecordedRequest&) {
    return HttpAnswer{status, *body};
  });
  FaultConfig config;
  config.backend_url = (*server)->url();
  SchedulerProcess* s = StartScheduler(config);
  ASSERT_NE(s, nullptr);
  WaitForLeader(s);
  // The bad answer has been fetched (and dealt with) before the burst.
  ASSERT_TRUE(WaitFor([&] {
    return s->Metric(kRefreshFailures) + s->Metric(kRefreshSuccesses) >= 1;
  })) << "no fetch";

  for (int i = 0; i < kPods; ++i) {
    ASSERT_TRUE(CreatePod(absl::StrCat("bad-", i)));
  }
  ASSERT_TRUE(WaitForAllBound(kPods, absl::Seconds(60)));
  EXPECT_EQ(s->Metric(kFallbackDecisions), kPods);
  int fetches = (*server)->request_count();
  // Still alive, still asking.
  ASSERT_TRUE(WaitFor([&] { return (*server)->request_count() > fetches; }));
  EXPECT_TRUE(s->Ready());

  // The backend answers properly again: metrics mode resumes.
  (*server)->SetHandler([this](const RecordedRequest&) {
    return HttpAnswer{200, GoodAnswer(kNodes)};
  });
  WaitForData(s, kNodes);
  ASSERT_TRUE(CreatePod("good"));
  ASSERT_TRUE(WaitForAllBound(kPods + 1));
  EXPECT_EQ(s->Metric(kMetricsDecisions), 1);

  BindingReport report = ExpectEveryPodBoundOnce(kPods + 1);
  EXPECT_EQ(report.fallback_events, kPods);
  EXPECT_EQ(report.metrics_events, 1);
}

INSTANTIATE_TEST_SUITE_P(
    Answers, BadBackendTest,
    ::testing::Values(
        BadAnswer{"Garbage", 200,
                  [](const std::string&) {
                    return std::string("<html>\x01\x02 not JSON \xff\xfe</html>");
                  }},
        BadAnswer{"TruncatedJson", 200,
                  [](const std::string& node) {
                    return absl::StrCat(
                        R"({"status":"success","data":{"resultType":"vector",)"
                        R"("result":[{"metric":{"node":")",
                        node, R"("},"value":[1700000000.5,"0.0)");
                  }},
        BadAnswer{"Huge", 200,
                  [](const std::string&) { return HugeUnmatchedAnswer(); }},
        BadAnswer{"Http500", 500,
                  [](const std::string&) {
                    return std::string(
                        R"({"status":"error","errorType":"internal","error":"boom"})");
                  }}),
    [](const ::testing::TestParamInfo<BadAnswer>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace ms::testing
