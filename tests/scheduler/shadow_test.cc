// Shadow over a ClusterState fed as the informers feed it: pods of the
// watched scheduler seen pending then bound are judged once, as if still
// pending, whichever informer charged them first.
#include "scheduler/cycle/shadow.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "tests/testing/builders.h"
#include "tests/testing/metrics_text.h"

namespace ms {
namespace {

using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::ms::testing::SeriesValue;

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
    state_.UpsertNode(MakeNode("fast").Label("latency", "1"));
    state_.UpsertNode(MakeNode("mid").Label("latency", "2"));
    state_.UpsertNode(MakeNode("slow").Label("latency", "3"));
  }

  // One sample of the registry's text, e.g. `..._total{agreed="true"}`.
  double Sample(const std::string& name) {
    return SeriesValue(registry_.Render(), name);
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
  ClusterState state_{clock_, KubeVersion{}, absl::Seconds(30)};
  ScoringConfig scoring_;
  Registry registry_;
  Shadow shadow_{"default-scheduler", state_, scoring_, nullptr, registry_};
};

TEST_F(ShadowTest, AgreementAndScoreGap) {
  // Labelled series exist from the start.
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"true\"}"), 0);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"false\"}"), 0);

  for (int i = 0; i < 4; ++i) {
    Pod p = MakePod(absl::StrCat("p", i))
                .Scheduler("default-scheduler")
                .Req(1000, 0);
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
  Pod before = MakePod("bound-before")
                   .Scheduler("default-scheduler")
                   .Req(1000, 0)
                   .NodeName("slow");
  shadow_.OnPod(before);  // first seen bound: placed before we watched
  Pod other = MakePod("other").Scheduler("someone-else").Req(1000, 0);
  shadow_.OnPod(other);
  Bind(other, "slow", false);
  Pod once = MakePod("once").Scheduler("default-scheduler").Req(1000, 0);
  shadow_.OnPod(once);
  Bind(once, "fast", false);
  Bind(once, "fast", false);  // an update of the bound pod
  Pod gone = MakePod("gone").Scheduler("default-scheduler").Req(1000, 0);
  shadow_.OnPod(gone);
  shadow_.OnPodDeleted(gone);
  Bind(gone, "fast", false);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"true\"}"), 1);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"false\"}"), 0);
}

// The assigned-pods informer charged the pod before the shadow saw it
// bound: its own charge is left out, or it would not fit where it is.
TEST_F(ShadowTest, APodIsJudgedWithoutItsOwnCharge) {
  Pod big = MakePod("big").Scheduler("default-scheduler").Req(1000, 0);
  big.containers[0].requests.milli_cpu = 3000;  // of 4000
  shadow_.OnPod(big);
  Bind(big, "fast", /*assigned_first=*/true);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"true\"}"), 1);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_infeasible_total"), 0);
  // And the charge is back: a second such pod does not fit there.
  Pod second = MakePod("second").Scheduler("default-scheduler").Req(1000, 0);
  second.containers[0].requests.milli_cpu = 3000;
  shadow_.OnPod(second);
  Bind(second, "mid", /*assigned_first=*/false);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"true\"}"), 2);
}

TEST_F(ShadowTest, ANodeOurFiltersRejectIsInfeasible) {
  scoring_.metrics[0].filter_max = 2.5;  // slow is out for us
  Pod p = MakePod("p").Scheduler("default-scheduler").Req(1000, 0);
  shadow_.OnPod(p);
  Bind(p, "slow", true);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_decisions_total{agreed=\"false\"}"), 1);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_infeasible_total"), 1);
  EXPECT_EQ(Sample("metrics_scheduler_shadow_score_gap_count"), 0);
}

}  // namespace
}  // namespace ms
