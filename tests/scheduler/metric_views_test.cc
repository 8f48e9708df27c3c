#include "scheduler/cycle/metric_views.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ms {
namespace {

// A node list as ClusterState keeps it, with the versions it bumps.
struct Nodes {
  std::vector<NodeInfo> nodes;
  std::vector<std::string> names;
  std::unordered_map<std::string, size_t> index;
  uint64_t version = 1;
  uint64_t attributes_version = 1;

  void Add(const std::string& name, const std::string& cost = "") {
    NodeInfo info;
    info.node.name = name;
    if (!cost.empty()) info.node.annotations["cost"] = cost;
    index[name] = nodes.size();
    nodes.push_back(info);
    names.push_back(name);
    ++version;
  }
  void RemoveLast() {
    index.erase(names.back());
    nodes.pop_back();
    names.pop_back();
    ++version;
  }
  NodeLayout Layout() const {
    return {.nodes = &nodes,
            .names = &names,
            .index = &index,
            .version = version,
            .attributes_version = attributes_version};
  }
};

std::shared_ptr<const MetricsSnapshot> Latency(
    const std::vector<std::pair<std::string, double>>& values,
    int64_t time_ms) {
  auto snapshot = std::make_shared<MetricsSnapshot>();
  MetricValues latency{.name = "latency"};
  for (const auto& [node, value] : values) {
    latency.by_node[node] = {.value = value, .time_ms = time_ms};
  }
  snapshot->metrics.push_back(latency);
  return snapshot;
}

class MetricViewsTest : public ::testing::Test {
 protected:
  MetricViewsTest() {
    by_latency_.metrics.push_back({.name = "latency"});
    by_latency_.herd_window_ms = 10000;
    nodes_.Add("a");
    nodes_.Add("b");
  }

  const MetricViews::View& Get(
      const std::shared_ptr<const MetricsSnapshot>& metrics) {
    return views_.Get(by_latency_, metrics, now_, nodes_.Layout());
  }

  absl::Time now_ = absl::FromUnixSeconds(1000);
  ScoringConfig by_latency_;
  Nodes nodes_;
  MetricViews views_{absl::Seconds(60)};
};

TEST_F(MetricViewsTest, ColumnsFollowTheNodeOrderAndTheLatestSnapshot) {
  const int64_t sampled = absl::ToUnixMillis(now_);
  const MetricViews::View& view = Get(Latency({{"b", 7}}, sampled));
  ASSERT_EQ(view.columns.size(), 1u);
  EXPECT_TRUE(std::isnan(view.columns[0].values[0]));  // a: no sample
  EXPECT_EQ(view.columns[0].values[1], 7);

  // A new snapshot is aligned again; so is a new node list.
  EXPECT_EQ(Get(Latency({{"a", 3}, {"b", 4}}, sampled)).columns[0].values,
            (std::vector<double>{3, 4}));
  nodes_.Add("c");
  auto snapshot = Latency({{"c", 5}}, sampled);
  EXPECT_EQ(Get(snapshot).columns[0].values.size(), 3u);
  EXPECT_EQ(Get(snapshot).columns[0].values[2], 5);
  EXPECT_EQ(Get(snapshot).recent, (std::vector<int32_t>{0, 0, 0}));
}

TEST_F(MetricViewsTest, NodeAttributeTermsAlignAgainWhenAttributesChange) {
  ScoringConfig by_cost;
  by_cost.metrics.push_back(
      {.name = "cost",
       .origin = {.kind = MetricOrigin::Kind::kNodeAnnotation, .key = "cost"}});
  Nodes nodes;
  nodes.Add("a", "2");
  EXPECT_EQ(
      views_.Get(by_cost, nullptr, now_, nodes.Layout()).columns[0].values[0],
      2);
  // The annotation changes in place: the node list keeps its layout, only
  // the attributes' version moves.
  nodes.nodes[0].node.annotations["cost"] = "5";
  EXPECT_EQ(
      views_.Get(by_cost, nullptr, now_, nodes.Layout()).columns[0].values[0],
      2);  // not told yet
  ++nodes.attributes_version;
  EXPECT_EQ(
      views_.Get(by_cost, nullptr, now_, nodes.Layout()).columns[0].values[0],
      5);
}

TEST_F(MetricViewsTest, APlacementCountsUntilItsNodeIsSampledOrTheWindowEnds) {
  auto before = Latency({{"a", 1}, {"b", 1}}, absl::ToUnixMillis(now_));
  Get(before);
  now_ += absl::Seconds(1);
  views_.Place(0, now_, nodes_.Layout());
  views_.Place(1, now_, nodes_.Layout());
  EXPECT_EQ(views_.Recent("a", by_latency_, nodes_.Layout()), 1);
  EXPECT_EQ(views_.Recent("b", by_latency_, nodes_.Layout()), 1);

  // b sampled after the placement: its metrics show the pod already.
  now_ += absl::Seconds(1);
  auto b_only = std::make_shared<MetricsSnapshot>(*before);
  b_only->metrics[0].by_node["b"].time_ms = absl::ToUnixMillis(now_);
  EXPECT_EQ(Get(b_only).recent, (std::vector<int32_t>{1, 0}));

  // Past the herd window, a's placement no longer counts either.
  now_ += absl::Seconds(9);
  EXPECT_EQ(Get(b_only).recent, (std::vector<int32_t>{0, 0}));
}

TEST_F(MetricViewsTest, PlacementsBeforeAViewExistedAreCountedWhenItIsAsked) {
  const int64_t sampled = absl::ToUnixMillis(now_);
  now_ += absl::Seconds(1);
  views_.Place(1, now_, nodes_.Layout());
  views_.Place(1, now_, nodes_.Layout());
  // No view yet: nothing to read.
  EXPECT_EQ(views_.Recent("b", by_latency_, nodes_.Layout()), 0);
  EXPECT_EQ(Get(Latency({{"a", 1}, {"b", 1}}, sampled)).recent,
            (std::vector<int32_t>{0, 2}));
}

TEST_F(MetricViewsTest, AViewOfAnOlderNodeListReadsAsNoCount) {
  auto snapshot = Latency({{"a", 1}, {"b", 1}}, absl::ToUnixMillis(now_));
  Get(snapshot);
  now_ += absl::Seconds(1);
  views_.Place(1, now_, nodes_.Layout());
  nodes_.RemoveLast();  // b goes: the view is of the list before
  EXPECT_EQ(views_.Recent("a", by_latency_, nodes_.Layout()), 0);
  EXPECT_EQ(views_.Recent("b", by_latency_, nodes_.Layout()), 0);
  // Aligned to the new list, b's placement has no node to count on.
  EXPECT_EQ(Get(snapshot).recent, (std::vector<int32_t>{0}));
  // b comes back: its placement, newer than its sample, counts again.
  nodes_.Add("b");
  EXPECT_EQ(Get(snapshot).recent, (std::vector<int32_t>{0, 1}));
}

}  // namespace
}  // namespace ms
