#include "scheduler/telemetry/attempt_metrics.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/telemetry/self_metrics.h"

namespace ms {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(AttemptMetricsTest, AttemptsLabelIsCappedAtFifteen) {
  const std::vector<std::pair<int, std::string>> cases = {
      {1, "1"}, {2, "2"}, {14, "14"}, {15, "15+"}, {40, "15+"}};
  for (const auto& [attempts, label] : cases) {
    EXPECT_EQ(AttemptMetrics::AttemptsLabel(attempts), label) << attempts;
  }
}

// Every child, at zero, before anything happened.
TEST(AttemptMetricsTest, EverySeriesExistsFromTheStart) {
  Registry registry;
  AttemptMetrics metrics(registry, {"my-scheduler"});
  const std::string text = registry.Render();
  for (const char* result : {"scheduled", "unschedulable", "error"}) {
    const std::string labels =
        absl::StrCat("{result=\"", result, "\",profile=\"my-scheduler\"");
    EXPECT_THAT(text, HasSubstr(absl::StrCat(
                          "\nmetrics_scheduler_schedule_attempts_total",
                          labels, "} 0\n")));
    EXPECT_THAT(text,
                HasSubstr(absl::StrCat(
                    "\nmetrics_scheduler_scheduling_attempt_duration_seconds_"
                    "count",
                    labels, "} 0\n")));
  }
  for (int a = 1; a <= 15; ++a) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat(
                          "\nmetrics_scheduler_pod_scheduling_sli_duration_"
                          "seconds_count{attempts=\"",
                          AttemptMetrics::AttemptsLabel(a), "\"} 0\n")));
  }
  // kube-scheduler's buckets: 1 ms doubling to 16.384 s; 10 ms doubling
  // 20 times, to 5242.88 s.
  EXPECT_THAT(text, HasSubstr("_bucket{result=\"error\",profile=\"my-"
                              "scheduler\",le=\"16.384\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("_bucket{attempts=\"1\",le=\"5242.88\"} 0\n"));
}

TEST(AttemptMetricsTest, RecordsAttemptsAndBoundPods) {
  Registry registry;
  AttemptMetrics metrics(registry, {"p", "q"});
  metrics.Attempted("p", AttemptMetrics::Result::kError,
                    absl::Now() - absl::Seconds(2));
  metrics.Attempted("p", AttemptMetrics::Result::kScheduled, absl::Now());
  metrics.Attempted("q", AttemptMetrics::Result::kScheduled, absl::Now());
  // A pod of no profile (none reaches the loop) counts as the first's.
  metrics.Attempted("other", AttemptMetrics::Result::kScheduled, absl::Now());
  metrics.Bound(1, absl::Milliseconds(30));  // le 0.04: 10, 20, 40 ms...
  metrics.Bound(17, absl::Seconds(3));
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("metrics_scheduler_schedule_attempts_total{"
                              "result=\"error\",profile=\"p\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("metrics_scheduler_schedule_attempts_total{"
                              "result=\"scheduled\",profile=\"p\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("metrics_scheduler_schedule_attempts_total{"
                              "result=\"scheduled\",profile=\"q\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("metrics_scheduler_schedule_attempts_total{"
                              "result=\"error\",profile=\"q\"} 0\n"));
  EXPECT_THAT(text, Not(HasSubstr("profile=\"other\"")));
  EXPECT_THAT(text, HasSubstr("metrics_scheduler_schedule_attempts_total{"
                              "result=\"unschedulable\",profile=\"p\"} 0\n"));
  // The error attempt began 2 s ago: not in the 1.024 s bucket.
  EXPECT_THAT(text, HasSubstr("_duration_seconds_bucket{result=\"error\","
                              "profile=\"p\",le=\"1.024\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("_duration_seconds_count{result=\"error\","
                              "profile=\"p\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("sli_duration_seconds_bucket{attempts=\"1\","
                              "le=\"0.02\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("sli_duration_seconds_bucket{attempts=\"1\","
                              "le=\"0.04\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("sli_duration_seconds_sum{attempts=\"15+\"} "
                              "3\n"));
  EXPECT_THAT(text, Not(HasSubstr("attempts=\"17\"")));
}

}  // namespace
}  // namespace ms
