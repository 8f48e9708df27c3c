#include "bench/quality/exporter.h"

#include <cmath>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ms::quality {
namespace {

TEST(ExporterTest, CountersGrowAsTheStateSays) {
  NodeState s{.cpu_busy = 0.5,
              .request_rate = 100,
              .mean_latency_s = 0.1,
              .io_units = 2,
              .io_latency_s = 0.01,
              .error_ratio = 0.02};
  NodeCounters c;
  Accumulate(s, 8, 2, c);
  Accumulate(s, 8, 1, c);
  EXPECT_DOUBLE_EQ(c.seconds, 3);
  EXPECT_DOUBLE_EQ(c.cpu_busy_seconds, 0.5 * 8 * 3);
  EXPECT_DOUBLE_EQ(c.requests, 300);
  EXPECT_DOUBLE_EQ(c.request_seconds, 30);
  EXPECT_DOUBLE_EQ(c.errors, 6);
  EXPECT_DOUBLE_EQ(c.disk_ops, 2 * kDiskOpsPerIoUnit * 3);
  EXPECT_DOUBLE_EQ(c.disk_seconds, c.disk_ops * 0.01);
  // The 0.1 s bucket holds 1 - 1/e of the requests; buckets never shrink.
  EXPECT_DOUBLE_EQ(c.buckets[4], 300 * (1 - std::exp(-1.0)));
  for (size_t i = 1; i < c.buckets.size(); ++i) {
    EXPECT_LE(c.buckets[i - 1], c.buckets[i]);
  }
  EXPECT_LE(c.buckets.back(), c.requests);
}

TEST(ExporterTest, TheTextNamesEachNodeAsItsQueriesJoinIt) {
  ExportedNode n{.name = "fast-1", .address = "10.1.0.1", .cores = 8};
  n.counters.requests = 10;
  n.counters.errors = 1;
  n.counters.disk_ops = 4;
  n.counters.seconds = 10;
  n.counters.cpu_busy_seconds = 20;  // a quarter of 8 cores' 80 s
  std::string text = RenderExposition({n}, {});
  for (
      const char* line :
      {"node_cpu_cores{node=\"fast-1\"} 8\n",
       "http_request_duration_seconds_bucket{node=\"fast-1\",le=\"0.005\"} 0\n",
       "http_request_duration_seconds_bucket{node=\"fast-1\",le=\"+Inf\"} 10\n",
       "http_request_duration_seconds_count{node=\"fast-1\"} 10\n",
       "http_requests_total{node=\"fast-1\",code=\"200\"} 9\n",
       "http_requests_total{node=\"fast-1\",code=\"500\"} 1\n",
       "node_disk_reads_completed_total{instance=\"10.1.0.1:9100\"} 2\n",
       "node_disk_writes_completed_total{instance=\"10.1.0.1:9100\"} 2\n",
       // As node-exporter: per core, so 1 - avg(rate(idle)) is the share
       // of the node busy.
       "node_cpu_seconds_total{instance=\"10.1.0.1:9100\",cpu=\"0\",mode="
       "\"idle\"} 7.5\n",
       "node_cpu_seconds_total{instance=\"10.1.0.1:9100\",cpu=\"7\",mode="
       "\"user\"} 2.5\n",
       "# TYPE http_request_duration_seconds histogram\n"}) {
    EXPECT_TRUE(absl::StrContains(text, line)) << line << "\nin\n" << text;
  }
}

TEST(ExporterTest, EachRunningPodHasCAdvisorsCpuCounter) {
  std::string text = RenderExposition({}, {{.pod_namespace = "quality",
                                            .name = "far-ours-p-0001",
                                            .cpu_seconds = 12.5}});
  for (const char* line :
       {"# TYPE container_cpu_usage_seconds_total counter\n",
        "container_cpu_usage_seconds_total{namespace=\"quality\",pod=\"far-"
        "ours-p-0001\",container=\"app\"} 12.5\n"}) {
    EXPECT_TRUE(absl::StrContains(text, line)) << line << "\nin\n" << text;
  }
  EXPECT_FALSE(absl::StrContains(RenderExposition({}, {}),
                                 "container_cpu_usage_seconds_total{"));
}

}  // namespace
}  // namespace ms::quality
