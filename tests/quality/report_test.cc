#include "bench/quality/report.h"

#include <cmath>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace ms::quality {
namespace {

TraceResult TwoPolicies() {
  TraceResult t{.trace = "heterogeneous"};
  PolicyResult kube{.policy = "kube-scheduler"};
  kube.runs = {{.mean_latency_s = 0.3, .hot_node_seconds = 100},
               {.mean_latency_s = 0.1, .hot_node_seconds = 300},
               {.mean_latency_s = 0.2, .hot_node_seconds = 200}};
  PolicyResult clairvoyant{.policy = "clairvoyant"};
  clairvoyant.runs = {{.mean_latency_s = 0.05},
                      {.mean_latency_s = 0.05},
                      {.mean_latency_s = 0.05}};
  clairvoyant.series = {.sample_every_s = 5, .by_node = {{0.1, 0.5, 0.9}}};
  clairvoyant.latency_samples = {{0.05, 10}, {0.1, 1}};
  t.policies = {kube, clairvoyant};
  return t;
}

TEST(ReportTest, MediansAndRatios) {
  Figures m = Median(TwoPolicies().policies[0].runs);
  EXPECT_EQ(m.mean_latency_s, 0.2);
  EXPECT_EQ(m.hot_node_seconds, 200);
  EXPECT_EQ(Median({{.pending = 1}, {.pending = 4}}).pending, 1);  // lower
  EXPECT_EQ(Ratio(2, 4), 0.5);
  EXPECT_EQ(Ratio(0, 0), 1);
  EXPECT_TRUE(std::isnan(Ratio(1, 0)));
}

TEST(ReportTest, TheTableSaysEachPolicyAgainstTheLimitAndKubeScheduler) {
  std::string table = RenderTable({TwoPolicies()});
  EXPECT_TRUE(
      absl::StrContains(table, "trace heterogeneous (medians of 3 runs"))
      << table;
  // kube-scheduler: 200 ms, 4x clairvoyant's 50 ms, 1x itself.
  EXPECT_TRUE(absl::StrContains(table, "4.00x")) << table;
  EXPECT_TRUE(absl::StrContains(table, "0.25x")) << table;  // clairvoyant
}

TEST(ReportTest, TheJsonParsesAndTheHtmlDrawsEveryPart) {
  std::string json = RenderJson({TwoPolicies()}, R"("runs":3)");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  double mean = 0;
  ASSERT_EQ(
      doc["traces"].at(0)["policies"].at(0)["median"]["mean_latency_s"].get(
          mean),
      simdjson::SUCCESS);
  EXPECT_EQ(mean, 0.2);
  std::string html = RenderHtml({TwoPolicies()}, "a <title>", "targets <1>");
  EXPECT_TRUE(absl::StrContains(html, "a &lt;title&gt;"));
  EXPECT_TRUE(absl::StrContains(html, "<pre>targets &lt;1&gt;</pre>"));
  EXPECT_TRUE(absl::StrContains(html, "<polyline"));
  EXPECT_TRUE(absl::StrContains(html, "4.00x"));  // the bars
}

}  // namespace
}  // namespace ms::quality
