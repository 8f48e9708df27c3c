#include "scheduler/telemetry/cache_metrics.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/cache.h"
#include "scheduler/telemetry/self_metrics.h"
#include "tests/metrics/fake_source.h"

namespace ms {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

MetricConfig Metric(const std::string& name) {
  MetricConfig m;
  m.name = name;
  m.query = name;
  m.ttl = absl::Seconds(15);
  m.max_staleness = absl::Seconds(60);
  m.join.label = "node";
  return m;
}

TEST(FetchOutcomeTest, ByWhatTheOperatorDoesNext) {
  const std::vector<std::pair<absl::Status, std::string>> cases = {
      {absl::OkStatus(), "success"},
      {absl::DeadlineExceededError("slow"), "timeout"},
      {absl::UnavailableError("down"), "unavailable"},
      {absl::InvalidArgumentError("bad query"), "invalid"},
      {absl::PermissionDeniedError("403"), "denied"},
      {absl::UnauthenticatedError("401"), "denied"},
      {absl::FailedPreconditionError("404"), "error"},
      {absl::InternalError("bug"), "error"},
  };
  for (const auto& [status, outcome] : cases) {
    EXPECT_EQ(FetchOutcome(status), outcome) << status;
  }
}

TEST(BackendQueryMetricsTest, EveryMetricAndOutcomeFromTheStart) {
  Registry registry;
  BackendQueryMetrics queries(registry, {Metric("cpu"), Metric("latency")});
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("# TYPE metrics_scheduler_backend_query_"
                              "duration_seconds histogram\n"));
  for (const char* metric : {"cpu", "latency"}) {
    for (const char* outcome : {"success", "timeout", "unavailable", "invalid",
                                "denied", "error"}) {
      EXPECT_THAT(text,
                  HasSubstr(absl::StrCat(
                      "\nmetrics_scheduler_backend_query_duration_seconds_"
                      "count{metric=\"",
                      metric, "\",outcome=\"", outcome, "\"} 0\n")))
          << metric << " " << outcome;
    }
  }
}

// The cache calls on_fetch once per fetch; its duration (by the cache's
// clock, which the source moves on by 30 ms) lands in the histogram under
// the fetch's outcome.
class CacheMetricsTest : public ::testing::Test {
 protected:
  CacheMetricsTest() {
    source_.SetHook([this](const MetricConfig&) {
      clock_.Advance(absl::Milliseconds(30));
    });
  }

  FakeClock clock_;
  metrics::FakeSource source_;
  Registry registry_;
  BackendQueryMetrics queries_{registry_, {Metric("cpu")}};
  metrics::MetricsCache cache_{
      &source_,
      {Metric("cpu")},
      {.clock = &clock_,
       .on_fetch = [this](const MetricConfig& metric, absl::Duration d,
                          const absl::Status& s) {
         queries_.Observe(metric, d, s);
       }}};
};

TEST_F(CacheMetricsTest, FetchesAreObservedByOutcome) {
  cache_.SetNodes({{"n1", {}}});
  source_.Set("cpu", "n1", 0.5, absl::ToUnixMillis(clock_.Now()));
  cache_.RefreshAll();
  source_.SetError("cpu", absl::UnavailableError("down"));
  cache_.RefreshAll();
  cache_.RefreshAll();
  const std::string text = registry_.Render();
  const std::string name = "metrics_scheduler_backend_query_duration_seconds";
  EXPECT_THAT(text, HasSubstr(name + "_bucket{metric=\"cpu\",outcome=\""
                                     "success\",le=\"0.025\"} 0\n"));
  EXPECT_THAT(text, HasSubstr(name + "_bucket{metric=\"cpu\",outcome=\""
                                     "success\",le=\"0.05\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(name + "_sum{metric=\"cpu\",outcome=\""
                                     "unavailable\"} 0.06\n"));
  EXPECT_THAT(text, HasSubstr(name + "_count{metric=\"cpu\",outcome=\""
                                     "unavailable\"} 2\n"));
  EXPECT_THAT(text, HasSubstr(name + "_count{metric=\"cpu\",outcome=\""
                                     "timeout\"} 0\n"));
}

// The last success is a timestamp, absent until there is one; the
// refresh counts exist at zero from the start.
TEST_F(CacheMetricsTest, LastSuccessIsATimestampAbsentUntilTheFirst) {
  AddCacheMetrics(registry_, cache_);
  const std::string last =
      "metrics_scheduler_metric_last_success_timestamp_seconds{metric=\"cpu\"}";
  std::string text = registry_.Render();
  EXPECT_THAT(text, Not(HasSubstr(last)));
  EXPECT_THAT(text, HasSubstr("metrics_scheduler_metric_refreshes_total{"
                              "metric=\"cpu\",result=\"success\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("metrics_scheduler_metric_refreshes_total{"
                              "metric=\"cpu\",result=\"failure\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE metrics_scheduler_metric_last_success_"
                              "timestamp_seconds gauge\n"));

  cache_.SetNodes({{"n1", {}}, {"n2", {}}});
  source_.Set("cpu", "n1", 0.5, absl::ToUnixMillis(clock_.Now()));
  cache_.RefreshAll();  // ends at 1700000000 s + 30 ms
  text = registry_.Render();
  EXPECT_THAT(text, HasSubstr(last + " 1700000000.03\n"));
  EXPECT_THAT(text, HasSubstr("metrics_scheduler_metric_nodes_with_data{"
                              "metric=\"cpu\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("metrics_scheduler_metric_nodes_missing{"
                              "metric=\"cpu\"} 1\n"));

  // A failure keeps the last success's time.
  source_.SetError("cpu", absl::UnavailableError("down"));
  cache_.RefreshAll();
  text = registry_.Render();
  EXPECT_THAT(text, HasSubstr(last + " 1700000000.03\n"));
  EXPECT_THAT(text, HasSubstr("metrics_scheduler_metric_refreshes_total{"
                              "metric=\"cpu\",result=\"failure\"} 1\n"));
}

}  // namespace
}  // namespace ms
