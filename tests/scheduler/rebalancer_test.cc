// The Rebalancer over a ClusterState, a metrics cache with a fake source
// and the apiserver in memory: which pods it moves off a node that stays
// hot, where, and what it leaves. The choices themselves are tested in
// tests/scoring/rebalance_test.cc; the real Eviction API, budgets and
// controllers in tests/scheduler/rebalance_e2e_test.cc.
#include "scheduler/cycle/rebalancer.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/cache.h"
#include "scheduler/cycle/scoring_profile.h"
#include "tests/metrics/fake_source.h"
#include "tests/testing/builders.h"
#include "tests/testing/memory_api.h"
#include "tests/testing/metrics_text.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::kNow;
using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::ms::testing::MemoryApi;
using ::ms::testing::SeriesValue;
using ::ms::testing::WaitFor;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kWarmupMs = 60'000;

// One profile scored by `cpu` alone (a busy fraction, estimated by
// requests), hot above 0.8 for two samples, brought to 0.7.
Config MakeConfig(RebalanceMode mode) {
  Config config;
  ProfileConfig& profile = config.profiles[0];
  for (size_t i = 0; i < kNumBuiltinTerms; ++i) {
    profile.builtins[static_cast<BuiltinTerm>(i)] = 0;
  }
  profile.metrics.push_back(
      {.name = "cpu",
       .query = "cpu",
       .estimate = {.basis = UnseenLoadEstimate::Basis::kCpuRequests,
                    .warmup_ms = kWarmupMs},
       .normalization = {
           .type = NormalizationType::kRange, .min = 0, .max = 1}});
  config.rebalance = {
      .mode = mode,
      .hot = {{.metric = "cpu", .high = 0.8, .samples = 2, .low = 0.7}}};
  return config;
}

// A Running pod of ReplicaSet `workload` on `node`, started an hour ago,
// requesting `milli_cpu` (of the nodes' 4000).
Pod Running(const std::string& name, const std::string& node, int64_t milli_cpu,
            const std::string& workload = "") {
  Pod pod = MakePod(name)
                .Req(milli_cpu, 0)
                .NodeName(node)
                .Controller("apps/v1", "ReplicaSet",
                            workload.empty() ? "rs-" + name : workload);
  pod.controller->uid = pod.controller->name;
  pod.phase = PodPhase::kRunning;
  pod.start_time_ms = kNow - 3'600'000;
  return pod;
}

class RebalancerTest : public ::testing::Test {
 protected:
  void Start(const Config& config) {
    config_ = config;
    scoring_ = MakeScoringConfig(config_, config_.profiles[0]);
    cache_ = std::make_unique<metrics::MetricsCache>(
        &source_, config_.profiles[0].metrics,
        metrics::CacheOptions{.clock = &clock_});
    recorder_ = std::make_unique<EventRecorder>(
        EventRecorderOptions{.components = {"metrics-scheduler"}}, api_,
        registry_);
    rebalancer_ = std::make_unique<Rebalancer>(
        config_.rebalance,
        std::vector<Rebalancer::Profile>{{"metrics-scheduler", &scoring_}},
        state_, *cache_, api_, *recorder_, *leadership_, clock_, registry_,
        absl::Seconds(1));
    for (const char* n : {"a", "b", "c"}) state_.UpsertNode(MakeNode(n));
    cache_->SetNodes(state_.NodeAddressList());
  }
  void Add(const Pod& pod) {
    api_.AddPod(pod);
    state_.UpsertAssignedPod(pod);
    rebalancer_->OnAssignedPod(pod);
  }
  // The nodes' cpu, sampled now; then a round.
  Rebalancer::Round Sample(double a, double b, double c) {
    for (const auto& [node, value] :
         {std::pair<const char*, double>{"a", a}, {"b", b}, {"c", c}}) {
      source_.Set("cpu", node, value, absl::ToUnixMillis(clock_.Now()));
    }
    cache_->RefreshAll();
    Rebalancer::Round round = rebalancer_->RunOnce();
    clock_.Advance(absl::Seconds(15));
    return round;
  }
  // The Events about pod `name`, or with kind "Node" about node `name`.
  std::vector<kube::PodEvent> EventsAbout(const std::string& name,
                                          const std::string& kind = "Pod") {
    std::vector<kube::PodEvent> out;
    for (const kube::PodEvent& e : api_.Events()) {
      if (e.kind == kind && e.pod_name == name) out.push_back(e);
    }
    return out;
  }
  std::vector<std::string> EventReasons(const std::string& pod) {
    std::vector<std::string> reasons;
    for (const kube::PodEvent& e : EventsAbout(pod))
      reasons.push_back(e.reason);
    return reasons;
  }
  // Two pods of a core on a; a at 0.95 for two samples sheds "mid" to b,
  // and mid's deletion is seen.
  void MoveMidOffA() {
    Add(Running("mid", "a", 1000));
    Add(Running("other", "a", 1000));
    Sample(0.95, 0.2, 0.3);
    ASSERT_THAT(Sample(0.95, 0.2, 0.3).moves,
                ElementsAre("default/mid a -> b"));
    state_.RemoveAssignedPod(Running("mid", "a", 1000));
    rebalancer_->OnAssignedPodDeleted(Running("mid", "a", 1000));
  }
  double Sample(const std::string& series) {
    return SeriesValue(registry_.Render(), series);
  }

  FakeClock clock_{absl::FromUnixMillis(kNow)};
  ClusterState state_{clock_, KubeVersion{}, absl::Seconds(30),
                      absl::Minutes(3)};
  metrics::FakeSource source_;
  MemoryApi api_;
  Registry registry_;
  std::unique_ptr<Leadership> leadership_ = std::make_unique<AlwaysLeader>();
  Config config_;
  ScoringConfig scoring_;
  std::unique_ptr<metrics::MetricsCache> cache_;
  std::unique_ptr<EventRecorder> recorder_;
  std::unique_ptr<Rebalancer> rebalancer_;
};

// a at 0.95 must shed 0.25: the 1-core pod (0.25 of 4 cores) is the
// smallest that is enough alone, and b, at 0.2, stays cool with it.
TEST_F(RebalancerTest, ExactlyThePodsNeededMoveWhereTheyStayCool) {
  Start(MakeConfig(RebalanceMode::kEvict));
  Add(Running("big", "a", 2000));
  Add(Running("mid", "a", 1000));
  Add(Running("small", "a", 400));
  EXPECT_THAT(Sample(0.95, 0.2, 0.5).moves, IsEmpty());  // one sample
  Rebalancer::Round round = Sample(0.95, 0.2, 0.5);
  ASSERT_EQ(round.hot.size(), 1u);
  EXPECT_EQ(round.hot[0].node, "a");
  EXPECT_THAT(round.moves, ElementsAre("default/mid a -> b"));
  EXPECT_THAT(api_.Evicted(), ElementsAre("default/mid"));
  ASSERT_TRUE(WaitFor([&] { return !EventReasons("mid").empty(); }));
  EXPECT_THAT(EventReasons("mid"), ElementsAre("Rebalanced"));
  ASSERT_TRUE(WaitFor([&] { return !EventsAbout("a", "Node").empty(); }));
  const kube::PodEvent node = EventsAbout("a", "Node")[0];
  EXPECT_EQ(node.reason, "Rebalancing");
  EXPECT_EQ(node.pod_namespace, "default");
  EXPECT_EQ(node.message,
            "cpu 0.95 above 0.8 for 2 samples: moving default/mid to b");
  EXPECT_EQ(
      Sample(
          R"(metrics_scheduler_rebalance_evictions_total{result="evicted"})"),
      1);
}

// Samples taken within a warm-up of the move still show the pod that
// left: they are read less what it took, so the node, brought under its
// threshold, is judged hot again only on later ones.
TEST_F(RebalancerTest, ANodeIsJudgedAgainOnlyOnSamplesAfterTheMove) {
  Start(MakeConfig(RebalanceMode::kEvict));
  ASSERT_NO_FATAL_FAILURE(MoveMidOffA());
  // Three samples over the next 45 s, still 0.95: nothing more moves.
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(Sample(0.95, 0.2, 0.3).moves, IsEmpty());
  }
  // From a warm-up after the move on, a node still that hot sheds again.
  EXPECT_THAT(Sample(0.95, 0.45, 0.2).moves, IsEmpty());
  EXPECT_THAT(Sample(0.95, 0.45, 0.2).moves,
              ElementsAre("default/other a -> c"));
}

// `settle` says how long a node's samples show the pods that left, when
// that is less than the estimate's warm-up (a query's rate window).
TEST_F(RebalancerTest, ASettleShorterThanTheWarmup) {
  Config config = MakeConfig(RebalanceMode::kEvict);
  config.rebalance.hot[0].settle = absl::Seconds(15);
  Start(config);
  ASSERT_NO_FATAL_FAILURE(MoveMidOffA());
  EXPECT_THAT(Sample(0.95, 0.45, 0.3).moves, IsEmpty());  // counts 1
  EXPECT_THAT(Sample(0.95, 0.45, 0.3).moves,
              ElementsAre("default/other a -> c"));
}

TEST_F(RebalancerTest, ADryRunSaysWhatItWouldMoveAndEvictsNothing) {
  Start(MakeConfig(RebalanceMode::kDryRun));
  Add(Running("mid", "a", 1000));
  Sample(0.95, 0.2, 0.5);
  EXPECT_THAT(Sample(0.95, 0.2, 0.5).moves, ElementsAre("default/mid a -> b"));
  EXPECT_THAT(api_.Evicted(), IsEmpty());
  ASSERT_TRUE(WaitFor([&] { return !EventReasons("mid").empty(); }));
  const kube::PodEvent event = EventsAbout("mid").back();
  EXPECT_EQ(event.reason, "WouldRebalance");
  EXPECT_EQ(event.type, "Normal");
  EXPECT_EQ(event.message,
            "Would move off node a (cpu 0.95 above 0.8 for 2 samples) to "
            "node b (cpu 0.45 with it): it takes 0.25, requests (dry run)");
  EXPECT_EQ(
      Sample(
          R"(metrics_scheduler_rebalance_evictions_total{result="dry-run"})"),
      1);
  ASSERT_TRUE(WaitFor([&] { return !EventsAbout("a", "Node").empty(); }));
  EXPECT_EQ(EventsAbout("a", "Node")[0].reason, "WouldRebalance");
  EXPECT_EQ(EventsAbout("a", "Node")[0].message,
            "cpu 0.95 above 0.8 for 2 samples: would move default/mid to b "
            "(dry run)");
}

TEST_F(RebalancerTest, ADisruptionBudgetsRefusalLeavesThePod) {
  Start(MakeConfig(RebalanceMode::kEvict));
  api_.on_evict = [](const Pod&) {
    return absl::ResourceExhaustedError(
        "Cannot evict pod as it would violate the pod's disruption budget.");
  };
  Add(Running("mid", "a", 1000));
  Sample(0.95, 0.2, 0.5);
  Sample(0.95, 0.2, 0.5);
  EXPECT_THAT(api_.Evicted(), IsEmpty());
  ASSERT_TRUE(WaitFor([&] { return !EventReasons("mid").empty(); }));
  EXPECT_THAT(EventReasons("mid"), ElementsAre("RebalanceBlocked"));
  EXPECT_EQ(
      Sample(
          R"(metrics_scheduler_rebalance_evictions_total{result="disruption-budget"})"),
      1);
}

// b and c would be above 0.7 with the pod: nothing is better, so nothing
// moves; nor off a fleet that is hot everywhere.
TEST_F(RebalancerTest, NothingMovesWhenNoNodeIsBetter) {
  Start(MakeConfig(RebalanceMode::kEvict));
  Add(Running("mid", "a", 1000));
  Sample(0.95, 0.5, 0.6);
  EXPECT_THAT(Sample(0.95, 0.5, 0.6).moves, IsEmpty());
  EXPECT_EQ(
      Sample(
          R"(metrics_scheduler_rebalance_left_total{reason="would-be-hot"})"),
      1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(Sample(0.9, 0.9, 0.9).moves, IsEmpty());
  }
  EXPECT_THAT(api_.Evicted(), IsEmpty());
}

// A pod whose replacement the decision puts back on the hot node (the only
// node its selector allows) is left: no evict-return cycle.
TEST_F(RebalancerTest, APodThatWouldComeBackIsLeft) {
  Start(MakeConfig(RebalanceMode::kEvict));
  state_.UpsertNode(MakeNode("a").Label("pool", "only-a"));
  Pod pinned = Running("pinned", "a", 1000);
  pinned.required_node_affinity = std::vector<NodeSelectorTerm>{
      {.match_expressions = {{"pool", SelectorOperator::kIn, {"only-a"}}}}};
  Add(pinned);
  Sample(0.95, 0.2, 0.2);
  EXPECT_THAT(Sample(0.95, 0.2, 0.2).moves, IsEmpty());
  EXPECT_EQ(
      Sample(R"(metrics_scheduler_rebalance_left_total{reason="returns"})"), 1);
}

// What may not move stays, counted by reason; a uniform fleet against its
// mean is never hot.
TEST_F(RebalancerTest, WhatMayNotMoveStays) {
  Config config = MakeConfig(RebalanceMode::kEvict);
  Start(config);
  Pod daemon = Running("agent", "a", 1000);
  daemon.controller->kind = "DaemonSet";
  Add(daemon);
  Pod young = Running("young", "a", 1000);
  young.start_time_ms = kNow - 60'000;
  Add(young);
  Add(Running("other", "a", 1000));
  Pod others = Running("theirs", "a", 1000);
  others.scheduler_name = "default-scheduler";
  Add(others);
  api_.on_evict = [](const Pod& p) {
    return p.name == "other" ? absl::OkStatus()
                             : absl::InternalError("must not be evicted");
  };
  Sample(0.95, 0.2, 0.3);
  EXPECT_THAT(Sample(0.95, 0.2, 0.3).moves,
              ElementsAre("default/other a -> b"));
  EXPECT_EQ(
      Sample(R"(metrics_scheduler_rebalance_left_total{reason="daemonset"})"),
      1);
  EXPECT_EQ(
      Sample(R"(metrics_scheduler_rebalance_left_total{reason="too-young"})"),
      1);
}

TEST_F(RebalancerTest, AFleetUniformAgainstItsMeanIsNeverHot) {
  Config config = MakeConfig(RebalanceMode::kEvict);
  config.rebalance.hot[0].high.reset();
  config.rebalance.hot[0].above_mean = 0.2;
  Start(config);
  Add(Running("mid", "a", 1000));
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(Sample(0.95, 0.9, 0.92).hot, IsEmpty());
  }
  // One node well above the others is.
  Sample(0.95, 0.3, 0.35);
  EXPECT_THAT(Sample(0.95, 0.3, 0.35).moves, ElementsAre("default/mid a -> b"));
}

TEST_F(RebalancerTest, TheLimitsOfAnIntervalHold) {
  Config config = MakeConfig(RebalanceMode::kEvict);
  config.rebalance.limits.total = 1;
  Start(config);
  Add(Running("a1", "a", 1000));
  Add(Running("b1", "b", 1000));
  Sample(0.95, 0.9, 0.1);
  Rebalancer::Round round = Sample(0.95, 0.9, 0.1);
  EXPECT_EQ(round.hot.size(), 2u);
  EXPECT_THAT(round.moves, ElementsAre("default/a1 a -> c"));
  EXPECT_EQ(
      Sample(R"(metrics_scheduler_rebalance_left_total{reason="limited"})"), 1);
}

// A node the interval's limits let shed too little stays hot on its
// lagging samples less what left, and sheds more at the next round, within
// the warm-up after the first move.
TEST_F(RebalancerTest, ANodeThatShedTooLittleShedsMoreAtTheNextRound) {
  Config config = MakeConfig(RebalanceMode::kEvict);
  config.rebalance.limits.per_node = 1;
  Start(config);
  for (const char* name : {"a1", "a2", "a3"}) Add(Running(name, "a", 500));
  Sample(1.0, 0.1, 0.1);
  // 1.0 must come to 0.7: three pods of 0.125, one allowed per round.
  Rebalancer::Round first = Sample(1.0, 0.1, 0.1);
  ASSERT_EQ(first.moves.size(), 1u);
  Rebalancer::Round second = Sample(1.0, 0.1, 0.1);
  ASSERT_EQ(second.hot.size(), 1u);
  EXPECT_DOUBLE_EQ(second.hot[0].value, 0.875);
  EXPECT_DOUBLE_EQ(second.hot[0].moved_off, 0.125);
  EXPECT_EQ(second.moves.size(), 1u);
  EXPECT_THAT(api_.Evicted(), ::testing::SizeIs(2));
  // At 0.75, less the two, it is under the threshold: no third move.
  EXPECT_THAT(Sample(1.0, 0.1, 0.1).hot, IsEmpty());
  EXPECT_THAT(api_.Evicted(), ::testing::SizeIs(2));
}

// Not the leader: no round, no Event, no eviction.
class NotLeading final : public Leadership {
 public:
  bool IsLeader() const override { return false; }
  bool AwaitWriteWindow(absl::Duration) override { return false; }
  absl::Duration WriteMargin() const override { return absl::Seconds(1); }
};

TEST_F(RebalancerTest, AStandbyMovesNothing) {
  leadership_ = std::make_unique<NotLeading>();
  Start(MakeConfig(RebalanceMode::kEvict));
  Add(Running("mid", "a", 1000));
  for (int i = 0; i < 3; ++i)
    EXPECT_THAT(Sample(0.95, 0.2, 0.2).hot, IsEmpty());
  EXPECT_THAT(api_.Evicted(), IsEmpty());
  EXPECT_THAT(api_.Events(), IsEmpty());
}

}  // namespace
}  // namespace ms
