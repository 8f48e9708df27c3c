#include "bench/quality/cluster_objects.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace ms::quality {
namespace {

// Whether `json` parses.
bool Parses(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  return parser.parse(json).get(doc) == simdjson::SUCCESS;
}

TEST(ClusterObjectsTest, NamesAndAddresses) {
  EXPECT_EQ(PoolName("heterogeneous", "ours"), "heterogeneous-ours");
  EXPECT_EQ(NodeName("p", {.name = "fast-1"}), "p-fast-1");
  EXPECT_EQ(PodName("p", {.name = "p-0001"}), "p-p-0001");
  EXPECT_EQ(NodeAddress(0), "10.200.0.1");
  EXPECT_EQ(NodeAddress(251), "10.200.1.2");
}

TEST(ClusterObjectsTest, ObjectsSayTheirPoolAndSizes) {
  std::string node = NodeJson("p-a", "p");
  EXPECT_TRUE(Parses(node)) << node;
  EXPECT_TRUE(
      absl::StrContains(node, R"("quality.metrics-scheduler.io/pool":"p")"));
  std::string status =
      NodeStatusPatch({.cores = 8, .memory_gib = 32}, "p-a", "10.200.0.1");
  EXPECT_TRUE(Parses(status)) << status;
  EXPECT_TRUE(absl::StrContains(status, R"("cpu":"8000m","memory":"32768Mi")"));
  EXPECT_TRUE(absl::StrContains(status, R"("address":"10.200.0.1")"));
  std::string pod = PodJson("p-p-1", "p", "metrics-scheduler",
                            {.cpu_request = 0.5, .memory_request_gib = 0.25});
  EXPECT_TRUE(Parses(pod)) << pod;
  EXPECT_TRUE(absl::StrContains(pod, R"("schedulerName":"metrics-scheduler")"));
  EXPECT_TRUE(absl::StrContains(
      pod, R"("nodeSelector":{"quality.metrics-scheduler.io/pool":"p"})"));
  EXPECT_TRUE(absl::StrContains(pod, R"("cpu":"500m","memory":"256Mi")"));
}

}  // namespace
}  // namespace ms::quality
