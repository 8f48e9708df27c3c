#include "scheduler/cycle/metric_views.h"

#include <cmath>
#include <map>
#include <vector>

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
            .attributes_version = attributes_version,
            .find_pod = [this](const std::string& key) -> const PodInfo* {
              auto it = pods.find(key);
              return it != pods.end() ? &it->second : nullptr;
            }};
  }
  // The assigned pods, by namespace/name.
  std::map<std::string, PodInfo> pods;
};

std::shared_ptr<const MetricsSnapshot> Sample(
    const std::string& metric,
    const std::vector<std::pair<std::string, double>>& values,
    int64_t time_ms) {
  auto snapshot = std::make_shared<MetricsSnapshot>();
  MetricValues latency{.name = metric};
  for (const auto& [node, value] : values) {
    latency.by_node[node] = {.value = value, .time_ms = time_ms};
  }
  snapshot->metrics.push_back(latency);
  return snapshot;
}

std::shared_ptr<const MetricsSnapshot> Latency(
    const std::vector<std::pair<std::string, double>>& values,
    int64_t time_ms) {
  return Sample("latency", values, time_ms);
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
  // Places pod `name` (1 CPU requested) on node `node` now.
  void Place(size_t node, const std::string& name = "p") {
    views_.Place(node, now_, nodes_.Layout(), "ns/" + name, OneCpu());
  }
  static std::shared_ptr<const PodInfo> OneCpu() {
    return std::make_shared<const PodInfo>(
        PodInfo{.requests = {.milli_cpu = 1000}});
  }

  absl::Time now_ = absl::FromUnixSeconds(1000);
  ScoringConfig by_latency_;
  Nodes nodes_;
  MetricViews views_{absl::Seconds(60), absl::Minutes(3)};
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

// The node side of a scoped filter (which scopes' node selectors select
// each node, each node's bound annotations) follows label and annotation
// changes through the attributes' version, and the node list through its
// version; a new snapshot alone matches nothing again.
TEST_F(MetricViewsTest, ScopedFiltersMatchNodesAgainWhenAttributesChange) {
  ScoringConfig scoped = by_latency_;
  MetricTerm& latency = scoped.metrics[0];
  latency.filter_max = 1;
  latency.filter_scopes = {
      {.nodes = LabelSelector{.match_labels = {{"pool", "batch"}}},
       .bounds = {.max = 2}}};
  latency.filter_annotations = true;
  const auto snapshot = Latency({{"a", 1}}, absl::ToUnixMillis(now_));
  auto node_bounds = [&]() -> const NodeBoundsColumn& {
    return views_.Get(scoped, snapshot, now_, nodes_.Layout()).node_bounds[0];
  };
  EXPECT_EQ(node_bounds().scopes, (std::vector<uint64_t>{0, 0}));

  // b joins the batch pool: not seen until the attributes' version moves.
  nodes_.nodes[1].node.labels["pool"] = "batch";
  EXPECT_EQ(node_bounds().scopes, (std::vector<uint64_t>{0, 0}));
  ++nodes_.attributes_version;
  EXPECT_EQ(node_bounds().scopes, (std::vector<uint64_t>{0, 1}));

  // a is given a bound of its own.
  nodes_.nodes[0].node.annotations["max.filter.metrics-scheduler.io/latency"] =
      "0.5";
  ++nodes_.attributes_version;
  ASSERT_EQ(node_bounds().max.size(), 2u);
  EXPECT_EQ(node_bounds().max[0], 0.5);
  EXPECT_TRUE(std::isnan(node_bounds().max[1]));

  // A node added is matched with the list; a new snapshot keeps the match.
  nodes_.Add("c");
  EXPECT_EQ(node_bounds().num_nodes, 3u);
  const auto later = Latency({{"c", 1}}, absl::ToUnixMillis(now_));
  nodes_.nodes[2].node.labels["pool"] = "batch";  // unannounced
  EXPECT_EQ(
      views_.Get(scoped, later, now_, nodes_.Layout()).node_bounds[0].scopes,
      (std::vector<uint64_t>{0, 1, 0}));

  // A policy without a scoped filter keeps no node side.
  EXPECT_TRUE(Get(snapshot).node_bounds.empty());
}

TEST_F(MetricViewsTest, APlacementCountsUntilItsNodeIsSampledOrTheWindowEnds) {
  auto before = Latency({{"a", 1}, {"b", 1}}, absl::ToUnixMillis(now_));
  Get(before);
  now_ += absl::Seconds(1);
  Place(0);
  Place(1);
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
  Place(1);
  Place(1);
  // No view yet: nothing to read.
  EXPECT_EQ(views_.Recent("b", by_latency_, nodes_.Layout()), 0);
  EXPECT_EQ(Get(Latency({{"a", 1}, {"b", 1}}, sampled)).recent,
            (std::vector<int32_t>{0, 2}));
}

TEST_F(MetricViewsTest, AViewOfAnOlderNodeListReadsAsNoCount) {
  auto snapshot = Latency({{"a", 1}, {"b", 1}}, absl::ToUnixMillis(now_));
  Get(snapshot);
  now_ += absl::Seconds(1);
  Place(1);
  nodes_.RemoveLast();  // b goes: the view is of the list before
  EXPECT_EQ(views_.Recent("a", by_latency_, nodes_.Layout()), 0);
  EXPECT_EQ(views_.Recent("b", by_latency_, nodes_.Layout()), 0);
  // Aligned to the new list, b's placement has no node to count on.
  EXPECT_EQ(Get(snapshot).recent, (std::vector<int32_t>{0}));
  // b comes back: its placement, newer than its sample, counts again.
  nodes_.Add("b");
  EXPECT_EQ(Get(snapshot).recent, (std::vector<int32_t>{0, 1}));
}

// CPU utilisation (a fraction) estimated from CPU requests: a pod started
// on a 4-core node adds its request / 4 until a sample taken 30 s after
// its start.
class EstimateTest : public MetricViewsTest {
 protected:
  EstimateTest() {
    by_cpu_.metrics.push_back(
        {.name = "cpu",
         .estimate = {.basis = UnseenLoadEstimate::Basis::kCpuRequests,
                      .factor = 1,
                      .warmup_ms = 30000}});
    for (NodeInfo& n : nodes_.nodes) n.node.allocatable.milli_cpu = 4000;
  }
  std::shared_ptr<const MetricsSnapshot> Cpu(double a, double b,
                                             absl::Time sampled) {
    return Sample("cpu", {{"a", a}, {"b", b}}, absl::ToUnixMillis(sampled));
  }
  // `cpu` sampled at `sampled`, with per-pod samples `by_pod` of its
  // siblings query.
  std::shared_ptr<const MetricsSnapshot> CpuWithPods(double a, double b,
                                                     absl::Time sampled,
                                                     PodSamples by_pod) {
    auto out = std::make_shared<MetricsSnapshot>(*Cpu(a, b, sampled));
    out->metrics[0].by_pod =
        std::make_shared<const PodSamples>(std::move(by_pod));
    return out;
  }
  const MetricViews::View& GetCpu(
      const std::shared_ptr<const MetricsSnapshot>& metrics) {
    return views_.Get(by_cpu_, metrics, now_, nodes_.Layout());
  }
  // Adds a latency term grown by queueing with cpu, whose value on a node
  // fully busy is `full`.
  void GrowLatencyWithCpu(double full) {
    by_cpu_.metrics.push_back(
        {.name = "latency",
         .estimate = {.basis = UnseenLoadEstimate::Basis::kQueueing,
                      .utilisation = "cpu",
                      .full = full}});
  }
  // `cpu` and a latency of 10 ms on both nodes, sampled at `sampled`.
  std::shared_ptr<const MetricsSnapshot> CpuAndLatency(double a, double b,
                                                       absl::Time sampled) {
    auto out = std::make_shared<MetricsSnapshot>(*Cpu(a, b, sampled));
    out->metrics.push_back(
        Latency({{"a", 0.01}, {"b", 0.01}}, absl::ToUnixMillis(sampled))
            ->metrics[0]);
    return out;
  }

  ScoringConfig by_cpu_;
};

TEST_F(EstimateTest, APodAddsItsEstimateUntilASampleAWarmupLaterShowsIt) {
  const absl::Time t0 = now_;
  GetCpu(Cpu(0.5, 0.5, t0));
  now_ += absl::Seconds(1);
  Place(0, "ours");  // at t0 + 1 s
  // Bound by another scheduler at t0 + 1 s, seen now.
  views_.Started("b", now_, nodes_.Layout(), "ns/theirs",
                 absl::ToUnixMillis(now_), OneCpu());
  // Both are in the view at once, columns and table alike, and say what
  // they added.
  const MetricViews::View& view = GetCpu(Cpu(0.5, 0.5, t0));
  EXPECT_EQ(view.columns[0].values, (std::vector<double>{0.75, 0.75}));
  EXPECT_EQ(view.unseen[0], (std::vector<double>{0.25, 0.25}));
  const auto& prepared = view.metric_table.column(0).values;
  EXPECT_EQ(std::vector<double>(prepared.begin(), prepared.end()),
            (std::vector<double>{0.75, 0.75}));
  EXPECT_EQ(view.metric_table.column(0).max, 0.75);

  // A sample 20 s after the starts is still within the warm-up: it does
  // not show them.
  now_ = t0 + absl::Seconds(21);
  EXPECT_EQ(GetCpu(Cpu(0.6, 0.5, now_)).columns[0].values,
            (std::vector<double>{0.85, 0.75}));
  // A sample 30 s after them shows them: nothing is added.
  now_ = t0 + absl::Seconds(31);
  EXPECT_EQ(GetCpu(Cpu(0.8, 0.7, now_)).unseen[0],
            (std::vector<double>{0, 0}));
}

TEST_F(EstimateTest, AStoppedPodOrAnOldStartAddsNothing) {
  const absl::Time t0 = now_;
  auto snapshot = Cpu(0.5, 0.5, t0);
  GetCpu(snapshot);
  now_ += absl::Seconds(1);
  Place(0, "gone");
  EXPECT_EQ(GetCpu(snapshot).columns[0].values[0], 0.75);
  views_.Stopped("ns/gone");
  EXPECT_EQ(GetCpu(snapshot).columns[0].values[0], 0.5);
  // Started long before (status.startTime an hour ago): every fresh sample
  // shows it.
  views_.Started("b", now_, nodes_.Layout(), "ns/old",
                 absl::ToUnixMillis(now_ - absl::Hours(1)), OneCpu());
  EXPECT_EQ(GetCpu(snapshot).columns[0].values[1], 0.5);
  // A pod placed again under the same name counts once, where it is now.
  Place(0, "again");
  Place(1, "again");
  EXPECT_EQ(GetCpu(snapshot).columns[0].values,
            (std::vector<double>{0.5, 0.75}));
}

TEST_F(EstimateTest, AViewAskedLaterCountsTheStartsItMissed) {
  auto snapshot = Cpu(0.5, 0.5, now_);
  now_ += absl::Seconds(1);
  Place(1, "one");
  Place(1, "two");
  EXPECT_EQ(GetCpu(snapshot).columns[0].values,
            (std::vector<double>{0.5, 1.0}));
  // A node with no sample has nothing to add to.
  auto b_only = Sample("cpu", {{"b", 0.5}}, absl::ToUnixMillis(now_));
  Place(0, "three");
  const MetricViews::View& view = GetCpu(b_only);
  EXPECT_TRUE(std::isnan(view.columns[0].values[0]));
  EXPECT_EQ(view.unseen[0][0], 0);
}

// Latency grows with the CPU its sample has not seen: on a, sampled at 10 ms
// with the CPU at 0.5, a 1-core pod (0.25 of the node) unseen doubles it.
TEST_F(EstimateTest, AQueueingTermGrowsWithItsUtilisationsUnseenLoad) {
  GrowLatencyWithCpu(1);
  auto snapshot = CpuAndLatency(0.5, 0.5, now_);
  GetCpu(snapshot);
  now_ += absl::Seconds(1);
  Place(0, "one");  // at once, in the view asked before
  const MetricViews::View& view = GetCpu(snapshot);
  EXPECT_EQ(view.columns[0].values, (std::vector<double>{0.75, 0.5}));
  EXPECT_DOUBLE_EQ(view.columns[1].values[0], 0.02);
  EXPECT_DOUBLE_EQ(view.unseen[1][0], 0.01);
  EXPECT_DOUBLE_EQ(view.metric_table.column(1).values[0], 0.02);
  EXPECT_EQ(view.columns[1].values[1], 0.01);
  // A second pod on a: 0.5 of 0.5 left, held at 0.95: 0.5 / 0.05 = 10x.
  Place(0, "two");
  EXPECT_NEAR(GetCpu(snapshot).columns[1].values[0], 0.1, 1e-12);
  // Aligned afresh (a pod stopped), the same from the start.
  views_.Stopped("ns/two");
  EXPECT_DOUBLE_EQ(GetCpu(snapshot).columns[1].values[0], 0.02);
  // A CPU sample that shows the pods: latency as sampled.
  now_ += absl::Seconds(40);
  EXPECT_EQ(GetCpu(CpuAndLatency(0.75, 0.5, now_)).columns[1].values,
            (std::vector<double>{0.01, 0.01}));
}

// An unloaded latency reads its sample x (1 - cpu as sampled), before any
// estimate: 10 ms at 0.5 reads 5 ms; at 0.95, held to 0.9, 1 ms. A pod
// placed since raises cpu, not the latency.
TEST_F(EstimateTest, AnUnloadedTermReadsItsSampleTimesOneLessItsUtilisation) {
  by_cpu_.metrics.push_back(
      {.name = "latency", .unloaded = {.utilisation = "cpu", .full = 1}});
  auto snapshot = CpuAndLatency(0.5, 0.95, now_);
  const MetricViews::View& view = GetCpu(snapshot);
  EXPECT_DOUBLE_EQ(view.columns[1].values[0], 0.005);
  EXPECT_NEAR(view.columns[1].values[1], 0.001, 1e-15);
  EXPECT_DOUBLE_EQ(view.metric_table.column(1).values[0], 0.005);
  now_ += absl::Seconds(1);
  Place(0, "one");
  const MetricViews::View& after = GetCpu(snapshot);
  EXPECT_EQ(after.columns[0].values[0], 0.75);
  EXPECT_DOUBLE_EQ(after.columns[1].values[0], 0.005);
  EXPECT_TRUE(after.unseen[1].empty());
}

// Without a utilisation sample no older than cpu's maxStaleness (2 min)
// before the latency's own, the unloaded latency has no value there.
TEST_F(EstimateTest, AnUnloadedTermWithoutAFreshUtilisationHasNoValue) {
  by_cpu_.metrics.push_back(
      {.name = "latency", .unloaded = {.utilisation = "cpu", .full = 1}});
  const int64_t t = absl::ToUnixMillis(now_);
  auto snapshot = std::make_shared<MetricsSnapshot>(
      *Sample("cpu", {{"a", 0.5}}, t - 121000));
  snapshot->metrics.push_back(
      Latency({{"a", 0.01}, {"b", 0.01}}, t)->metrics[0]);
  const MetricViews::View& view = GetCpu(snapshot);
  EXPECT_TRUE(std::isnan(view.columns[1].values[0]));  // cpu too old
  EXPECT_TRUE(std::isnan(view.columns[1].values[1]));  // no cpu at all
}

// perPodShare: each pod adds a share of its node's value as sampled, not of
// the value with the pods before it: on a, sampled at 10 ms, two pods at
// 0.2 add 2 x 0.2 x 10 = 4 ms; on b, sampled at 30 ms, one adds 6 ms.
TEST_F(EstimateTest, APerPodShareAddsAShareOfTheSampledValue) {
  ScoringConfig by_latency;
  by_latency.metrics.push_back(
      {.name = "latency",
       .estimate = {.basis = UnseenLoadEstimate::Basis::kPerPodShare,
                    .factor = 0.2,
                    .warmup_ms = 30000}});
  auto snapshot =
      Latency({{"a", 0.01}, {"b", 0.03}}, absl::ToUnixMillis(now_));
  views_.Get(by_latency, snapshot, now_, nodes_.Layout());
  now_ += absl::Seconds(1);
  Place(0, "one");  // at once, in the view asked before
  Place(0, "two");
  Place(1, "three");
  const MetricViews::View& view =
      views_.Get(by_latency, snapshot, now_, nodes_.Layout());
  EXPECT_DOUBLE_EQ(view.columns[0].values[0], 0.014);
  EXPECT_DOUBLE_EQ(view.columns[0].values[1], 0.036);
  EXPECT_DOUBLE_EQ(view.metric_table.column(0).values[0], 0.014);
  EXPECT_DOUBLE_EQ(view.unseen[0][1], 0.006);
  // Aligned afresh (a pod stopped), the same from the start.
  views_.Stopped("ns/two");
  EXPECT_DOUBLE_EQ(
      views_.Get(by_latency, snapshot, now_, nodes_.Layout()).columns[0]
          .values[0],
      0.012);
}

// Fade linear: a sample 15 s into the 30 s warm-up has seen half the pod.
TEST_F(EstimateTest, ALinearFadeChargesWhatTheSampleHasNotCovered) {
  by_cpu_.metrics[0].estimate.fade = UnseenLoadEstimate::Fade::kLinear;
  const absl::Time t0 = now_;
  GetCpu(Cpu(0.5, 0.5, t0));
  now_ += absl::Seconds(1);
  Place(0, "one");  // at t0 + 1 s
  EXPECT_EQ(GetCpu(Cpu(0.5, 0.5, t0)).unseen[0],
            (std::vector<double>{0.25, 0}));
  now_ = t0 + absl::Seconds(16);
  EXPECT_EQ(GetCpu(Cpu(0.6, 0.5, now_)).unseen[0],
            (std::vector<double>{0.125, 0}));
  now_ = t0 + absl::Seconds(31);
  EXPECT_EQ(GetCpu(Cpu(0.75, 0.5, now_)).unseen[0],
            (std::vector<double>{0, 0}));
}

// Fade measured: a pod's own sample of the siblings query says what of it
// the node's sample shows already: 0.4 of its 1 core leaves 0.15 of the
// 0.25, and a pod that shows more than its estimate adds nothing.
TEST_F(EstimateTest, AMeasuredFadeChargesTheEstimateLessThePodsOwnSample) {
  by_cpu_.metrics[0].estimate.fade = UnseenLoadEstimate::Fade::kMeasured;
  by_cpu_.metrics[0].estimate.siblings_query = "usage";
  const absl::Time t0 = now_;
  auto snapshot = CpuWithPods(0.5, 0.5, t0,
                              {{"ns/one", {0.4, absl::ToUnixMillis(t0)}},
                               {"ns/two", {1.2, absl::ToUnixMillis(t0)}}});
  GetCpu(snapshot);
  now_ += absl::Seconds(1);
  Place(0, "one");
  Place(1, "two");
  Place(1, "three");  // no sample of its own: all of it
  EXPECT_EQ(GetCpu(snapshot).unseen[0], (std::vector<double>{0.15, 0.25}));
  // A sample a warm-up later shows them all.
  now_ = t0 + absl::Seconds(31);
  EXPECT_EQ(GetCpu(Cpu(0.6, 0.9, now_)).unseen[0], (std::vector<double>{0, 0}));
}

// CPU in percent: `full: 100` reads 50 (+25 unseen) as 0.5 (+0.25).
TEST_F(EstimateTest, AQueueingTermReadsAPercentageByItsFull) {
  by_cpu_.metrics[0].estimate.factor = 100;
  GrowLatencyWithCpu(100);
  auto snapshot = CpuAndLatency(50, 50, now_);
  GetCpu(snapshot);
  now_ += absl::Seconds(1);
  Place(0, "one");
  const MetricViews::View& view = GetCpu(snapshot);
  EXPECT_EQ(view.columns[0].values, (std::vector<double>{75, 50}));
  EXPECT_DOUBLE_EQ(view.columns[1].values[0], 0.02);
}

// A web ReplicaSet's pods request 1 core and use 2: its next pod is
// estimated from what they use, any other pod from its requests.
TEST_F(EstimateTest, APodWithMeasuredSiblingsIsEstimatedFromTheirUsage) {
  by_cpu_.metrics[0].estimate.siblings_query = "usage";
  by_cpu_.metrics[0].max_staleness_ms = 120000;
  const int64_t long_ago = absl::ToUnixMillis(now_ - absl::Hours(1));
  for (const char* name : {"ns/web-1", "ns/web-2"}) {
    nodes_.pods[name] = {.requests = {.milli_cpu = 1000},
                         .start_time_ms = long_ago,
                         .owner_uid = "rs-web"};
  }
  auto snapshot = CpuWithPods(0.5, 0.5, now_,
                              {{"ns/web-1", {2, absl::ToUnixMillis(now_)}},
                               {"ns/web-2", {2, absl::ToUnixMillis(now_)}}});
  GetCpu(snapshot);
  now_ += absl::Seconds(1);
  views_.Place(0, now_, nodes_.Layout(), "ns/web-3",
               std::make_shared<const PodInfo>(PodInfo{
                   .requests = {.milli_cpu = 1000}, .owner_uid = "rs-web"}));
  Place(1, "other");  // 1 core requested, no controller
  EXPECT_EQ(GetCpu(snapshot).unseen[0], (std::vector<double>{0.5, 0.25}));

  // Without the per-pod answer, requests again.
  auto without = std::make_shared<MetricsSnapshot>(*snapshot);
  without->metrics[0].by_pod = nullptr;
  EXPECT_EQ(GetCpu(without).unseen[0], (std::vector<double>{0.25, 0.25}));
}

}  // namespace
}  // namespace ms
