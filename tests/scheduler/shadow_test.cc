// Shadow over a ClusterState fed as the informers feed it: pods of the
// watched scheduler seen pending then bound are judged once, as if still
// pending, whichever informer charged them first.
#include "scheduler/cycle/shadow.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "gtest/gtest.h"

namespace ms {
namespace {

Node MakeNode(const std::string& name, const std::string& latency) {
  Node n;
  n.name = name;
  n.ready = true;
  n.allocatable.milli_cpu = 4000;
  n.allocatable.memory = int64_t{16} << 30;
  n.allocatable.pods = 110;
  n.labels["latency"] = latency;
  return n;
}

Pod MakePod(const std::string& name, const std::string& scheduler,
            const std::string& node = "") {
  Pod p;
  p.namespace_ = "ns";
  p.name = name;
  p.uid = "uid-" + name;
  p.scheduler_name = scheduler;
  p.node_name = node;
  Container c;
  c.requests.milli_cpu = 1000;
  p.containers.push_back(c);
  return p;
}

class ShadowTest : public ::testing::Test {
 protected:
  ShadowTest() {
    // Only the latency label scores: the lowest wins.
    scoring_.builtins[BuiltinTerm::kLeastAllocated] = 0;
    scoring_.builtins[BuiltinTerm::kBalancedAllocation] = 0;
    scoring_.builtins[BuiltinTerm::kRecentPlacements] = 0;
    scoring_.metrics.push_back(
        {.name = "latency",
         .origin = {MetricOrigin::Kind::kNodeLabel, "latency"}});
    state_.UpsertNode(MakeNode("fast", "1"));
    state_.UpsertNode(MakeNode("mid", "2"));
    state_.UpsertNode(MakeNode("slow", "3"));
  }

  // One sample of the registry's text, e.g. `..._total{agreed="true"}`.
  double Sample(const std::string& name) {
    const std::string text = registry_.Render();
    size_t at = text.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + name.size() + 2));
  }

  // What the informers do when the watched scheduler binds `pod` to
  // `node`: the assigned-pods informer first or the shadow's first.
  void Bind(Pod pod, const std::string& node, bool assigned_first) {
    pod.node_name = node;
    if (assigned_first) state_.UpsertAssignedPod(pod);
    shadow_.OnPod(pod);
    if (!assigned_first) state_.UpsertAssignedPod(pod);
  }

  FakeClock clock_;
  ClusterState state_{clock_, absl::Seconds(30)};
  ScoringConfig scoring_;
  Registry registry_;
  Shadow shadow_{"default-scheduler", state_, scoring_, nullptr, registry_};
};

TEST_F(ShadowTest, AgreementAndScoreGap) {
  // Labelled series exist from the start.
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"true\"}"), 0);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"false\"}"), 0);

  for (int i = 0; i < 4; ++i) {
    Pod p = MakePod(absl::StrCat("p", i), "default-scheduler");
    shadow_.OnPod(p);
    // fast, mid, fast, slow; the informer order must not matter.
    const char* node[] = {"fast", "mid", "fast", "slow"};
    Bind(p, node[i], /*assigned_first=*/i % 2 == 1);
  }
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"true\"}"), 2);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"false\"}"), 2);
  // Min-max over 1..3, lower is better: fast 100, mid 50, slow 0.
  EXPECT_EQ(Sample("metrics_scheduler_shadow_score_gap_sum"), 0 + 50 + 0 + 100);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_score_gap_count"), 4);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_infeasible_total"), 0);
}

TEST_F(ShadowTest, OnlyPodsSeenPendingOfTheWatchedSchedulerAreJudgedOnce) {
  Pod before = MakePod("bound-before", "default-scheduler", "slow");
  shadow_.OnPod(before);  // first seen bound: placed before we watched
  Pod other = MakePod("other", "someone-else");
  shadow_.OnPod(other);
  Bind(other, "slow", false);
  Pod once = MakePod("once", "default-scheduler");
  shadow_.OnPod(once);
  Bind(once, "fast", false);
  Bind(once, "fast", false);  // an update of the bound pod
  Pod gone = MakePod("gone", "default-scheduler");
  shadow_.OnPod(gone);
  shadow_.OnPodDeleted(gone);
  Bind(gone, "fast", false);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"true\"}"), 1);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"false\"}"), 0);
}

// The assigned-pods informer charged the pod before the shadow saw it
// bound: its own charge is left out, or it would not fit where it is.
TEST_F(ShadowTest, APodIsJudgedWithoutItsOwnCharge) {
  Pod big = MakePod("big", "default-scheduler");
  big.containers[0].requests.milli_cpu = 3000;  // of 4000
  shadow_.OnPod(big);
  Bind(big, "fast", /*assigned_first=*/true);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"true\"}"), 1);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_infeasible_total"), 0);
  // And the charge is back: a second such pod does not fit there.
  Pod second = MakePod("second", "default-scheduler");
  second.containers[0].requests.milli_cpu = 3000;
  shadow_.OnPod(second);
  Bind(second, "mid", /*assigned_first=*/false);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"true\"}"), 2);
}

TEST_F(ShadowTest, ANodeOurFiltersRejectIsInfeasible) {
  scoring_.metrics[0].filter_max = 2.5;  // slow is out for us
  Pod p = MakePod("p", "default-scheduler");
  shadow_.OnPod(p);
  Bind(p, "slow", true);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"false\"}"), 1);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_infeasible_total"), 1);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_score_gap_count"), 0);
}

}  // namespace
}  // namespace ms
