#include "scheduler/cmd/probe.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ms {
namespace {

using ::testing::HasSubstr;

MetricConfig Metric(const std::string& name) {
  MetricConfig m;
  m.name = name;
  m.query = name;
  m.join.label = "instance";
  return m;
}

// cpu: 3 of 4 nodes, one series naming no node, n4 with a sample too old;
// latency: 1 of 4, n2..n4 without any value.
TEST(ProbeTest, EachMetricSaysItsCoverageAndWhatMissed) {
  std::vector<metrics::MetricStats> stats(2);
  stats[0] = {.name = "cpu",
              .nodes_known = 4,
              .nodes_with_data = 3,
              .nodes_missing = {"n4"},
              .series = 4,
              .unmatched = 1,
              .unmatched_examples = {R"(instance="10.9.9.9:9100")"}};
  stats[1] = {.name = "latency",
              .nodes_known = 4,
              .nodes_with_data = 1,
              .nodes_missing = {"n2", "n3", "n4"},
              .series = 1};
  MetricsSnapshot snapshot;
  snapshot.metrics.push_back(
      {.name = "cpu", .by_node = {{"n4", {.value = 0.5, .time_ms = 1000}}}});
  snapshot.metrics.push_back({.name = "latency"});

  ProbeReport r = FormatProbe({Metric("cpu"), Metric("latency")}, stats,
                              snapshot, "http://prom", 0.75);
  EXPECT_EQ(r.below, std::vector<std::string>{"latency"});
  EXPECT_THAT(r.text, HasSubstr("metrics from http://prom\n"));
  EXPECT_THAT(r.text, HasSubstr("cpu                  3/4 (75%)              4"
                                "              1      1        0\n"));
  EXPECT_THAT(r.text, HasSubstr("latency              1/4 (25%)              1"
                                "              0      0        3\n"));
  EXPECT_THAT(r.text,
              HasSubstr("cpu: series that match no node, e.g. "
                        "instance=\"10.9.9.9:9100\" (join: label instance)"));
  EXPECT_THAT(r.text, HasSubstr("cpu: stale on n4\n"));
  EXPECT_THAT(r.text, HasSubstr("latency: no value on n2, n3, n4\n"));
  EXPECT_THAT(r.text, HasSubstr("coverage below 75%: latency\n"));

  // At 0 nothing is below.
  EXPECT_TRUE(FormatProbe({Metric("cpu"), Metric("latency")}, stats, snapshot,
                          "http://prom", 0)
                  .below.empty());
}

// A metric without `join`: the join the fetch detected, or that none was.
TEST(ProbeTest, SaysTheJoinDetectedForAMetricWithoutOne) {
  MetricConfig cpu = Metric("cpu"), disk = Metric("disk");
  cpu.join = {.automatic = true, .label = "node"};
  disk.join = cpu.join;
  std::vector<metrics::MetricStats> stats(2);
  stats[0] = {.name = "cpu",
              .nodes_known = 2,
              .nodes_with_data = 2,
              .series = 2,
              .detected_join = "instance (address)"};
  stats[1] = {.name = "disk",
              .nodes_known = 2,
              .nodes_missing = {"n1", "n2"},
              .series = 1,
              .unmatched = 1,
              .unmatched_examples = {R"({pod="web-1"})"}};
  MetricsSnapshot snapshot;
  snapshot.metrics.push_back({.name = "cpu"});
  snapshot.metrics.push_back({.name = "disk"});

  ProbeReport r = FormatProbe({cpu, disk}, stats, snapshot, "http://prom", 0);
  EXPECT_THAT(r.text, HasSubstr("cpu: series name nodes by instance "
                                "(address); set join to fix it\n"));
  EXPECT_THAT(r.text,
              HasSubstr("disk: no series names a node by any candidate join "
                        "(tried node (name), instance (address), "
                        "kubernetes_node (name), nodename (name), hostname "
                        "(name), host (name)); set join to fix it\n"));
  EXPECT_THAT(r.text, HasSubstr("disk: series that match no node, e.g. "
                                "{pod=\"web-1\"} (join: none detected)\n"));
}

// A metric whose estimate learns from siblings: how many pods its per-pod
// query measured, or why it could not.
TEST(ProbeTest, SaysHowManyPodsTheSiblingsQueryMeasured) {
  MetricConfig cpu = Metric("cpu"), mem = Metric("mem");
  cpu.estimate.siblings_query = "usage";
  mem.estimate.siblings_query = "usage";
  std::vector<metrics::MetricStats> stats(2);
  stats[0] = {.name = "cpu",
              .nodes_known = 1,
              .nodes_with_data = 1,
              .pods_measured = 120};
  stats[1] = {.name = "mem",
              .nodes_known = 1,
              .nodes_with_data = 1,
              .last_pod_status = absl::UnavailableError("down")};
  MetricsSnapshot snapshot;
  snapshot.metrics.push_back({.name = "cpu"});
  snapshot.metrics.push_back({.name = "mem"});
  ProbeReport r = FormatProbe({cpu, mem}, stats, snapshot, "http://prom", 0);
  EXPECT_THAT(r.text, HasSubstr("cpu: estimate.siblings measured 120 pods\n"));
  EXPECT_THAT(r.text, HasSubstr("mem: estimate.siblings not fetched: "
                                "UNAVAILABLE: down\n"));
}

}  // namespace
}  // namespace ms
