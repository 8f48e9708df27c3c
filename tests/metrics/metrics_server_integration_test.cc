// MetricsServerSource through the real kube-apiserver's aggregation layer,
// as the scheduler's own identity (granted exactly manifests/rbac.yaml): the
// apiserver proxies metrics.k8s.io/v1beta1 to a loopback server speaking the
// resource metrics API (tests/testing/metrics_api_server.h).
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "metrics/metrics_server_source.h"
#include "tests/metrics/source_test_util.h"
#include "tests/testing/metrics_api_server.h"
#include "tests/testing/testenv.h"

namespace ms::metrics {
namespace {

using ::ms::testing::MetricsApiServer;
using ::ms::testing::Testenv;
using ::ms::testing::WaitFor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr double kGi = 1024.0 * 1024 * 1024;

MetricConfig Metric(const std::string& query) {
  MetricConfig m;
  m.name = "node_" + query;
  m.query = query;
  return m;
}

class MetricsServerIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env_.server().empty());
    env_.ApplySchedulerRbac();
    static int counter = 0;
    suite_ = absl::StrCat("metrics-api-", getpid(), "-", counter++);
    env_.CreateNamespace(suite_);
    dir_ = absl::StrCat(::testing::TempDir(), "/", suite_);
    std::filesystem::create_directories(dir_);
    absl::StatusOr<std::unique_ptr<MetricsApiServer>> server =
        MetricsApiServer::Start(env_, suite_, dir_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  void TearDown() override {
    server_.reset();
    env_.DeleteNamespace(suite_);
    std::filesystem::remove_all(dir_);
  }

  // A source listing through the apiserver as the scheduler.
  MetricsServerSource Source() {
    return MetricsServerSource(
        {}, [this](const std::string& path, absl::Duration timeout,
                   size_t max_response_bytes) {
          return client_.Get(path, timeout, max_response_bytes);
        });
  }

  Testenv env_;
  kube::KubeClient client_{env_.SchedulerConfig()};
  std::string suite_;
  std::string dir_;
  std::unique_ptr<MetricsApiServer> server_;
  const NodeSet nodes_{{{.name = "a", .allocatable_cpu = 4,
                         .allocatable_memory = 8 * kGi},
                        {.name = "b", .allocatable_cpu = 2,
                         .allocatable_memory = 4 * kGi}}};
};

TEST_F(MetricsServerIntegrationTest, OneListThroughTheApiserverScoresEveryMetric) {
  server_->SetUsage("a", "1", "2Gi");
  server_->SetUsage("b", "1500m", "3Gi");
  server_->SetUsage("not-a-node", "1", "1Gi");
  MetricsServerSource source = Source();
  const MetricConfig cpu = Metric("cpuUtilization"),
                     memory = Metric("memoryUtilization"),
                     cores = Metric("cpu");
  const MetricConfig* metrics[] = {&cpu, &memory, &cores};
  std::vector<absl::StatusOr<FetchResult>> answers(3);
  source.FetchAll(metrics, nodes_, absl::Seconds(10),
                  [&](size_t i, absl::StatusOr<FetchResult> answer) {
                    answers[i] = std::move(answer);
                  });
  EXPECT_EQ(server_->node_lists(), 1);
  for (const auto& a : answers) ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(ValuesOf(*answers[0]), ElementsAre(Pair("a", 0.25), Pair("b", 0.75)));
  EXPECT_THAT(ValuesOf(*answers[1]), ElementsAre(Pair("a", 0.25), Pair("b", 0.75)));
  EXPECT_THAT(ValuesOf(*answers[2]), ElementsAre(Pair("a", 1), Pair("b", 1.5)));
  EXPECT_EQ(answers[0]->unmatched, 1);
  // Samples carry metrics-server's timestamp: seconds ago at most.
  const int64_t age_ms =
      absl::ToUnixMillis(absl::Now()) - answers[0]->by_node.at("a").time_ms;
  EXPECT_GE(age_ms, 0);
  EXPECT_LT(age_ms, 60000);
}

TEST_F(MetricsServerIntegrationTest, AFailingMetricsServerIsUnavailable) {
  server_->SetUsage("a", "1", "2Gi");
  server_->FailWith(500);
  MetricsServerSource source = Source();
  absl::StatusOr<FetchResult> r =
      source.Fetch(Metric("cpu"), nodes_, absl::Seconds(10));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("failing on purpose"));
  EXPECT_GE(server_->node_lists(), 1);  // the list reached the server

  server_->FailWith(0);
  r = source.Fetch(Metric("cpu"), nodes_, absl::Seconds(10));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("a", 1)));
}

TEST_F(MetricsServerIntegrationTest, WithoutMetricsServerTheErrorSaysSo) {
  server_.reset();  // the APIService is deleted
  MetricsServerSource source = Source();
  absl::Status last;
  // The aggregator drops the route once its informer sees the deletion.
  ASSERT_TRUE(WaitFor([&] {
    last = source.Fetch(Metric("cpu"), nodes_, absl::Seconds(10)).status();
    return last.code() == absl::StatusCode::kFailedPrecondition;
  })) << last;
  EXPECT_THAT(last.message(), HasSubstr("is metrics-server installed?"));
}

}  // namespace
}  // namespace ms::metrics
