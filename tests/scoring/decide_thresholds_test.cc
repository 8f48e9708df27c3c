// Decide with thresholds scoped by pod class, node pool and node
// (scoring/filter_bounds.h): which nodes a metric's filter removes, and
// how the FailedScheduling message and explain word the bound that applied.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scoring/decide.h"
#include "scoring/extender.h"
#include "scoring/filter_bounds.h"
#include "tests/scoring/scoped_cpu.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::Column;
using ::ms::testing::kNow;
using ::ms::testing::MakeNode;
using ::ms::testing::ScopedCpu;
using ::ms::testing::MakePod;
using ::ms::testing::MetricsOnly;
using ::ms::testing::Term;

constexpr char kMaxCpu[] = "max.filter.metrics-scheduler.io/cpu";


struct Fixture {
  // cpu 0.75 on a plain node, 0.9 on the batch pool, 0.97 on the spot
  // pool, 0.6 on a batch node whose annotation bounds it at 0.5.
  std::vector<NodeInfo> nodes = {
      MakeNode("plain"),
      MakeNode("batch").Label("pool", "batch"),
      MakeNode("spot").Label("pool", "spot"),
      MakeNode("pinned").Label("pool", "batch").Annotation(kMaxCpu, "0.5"),
  };
  std::vector<MetricColumn> columns = {Column({0.75, 0.9, 0.97, 0.6})};
  ScoringConfig config = MetricsOnly({ScopedCpu()});
  // As the scheduler passes them (MetricViews); null: Decide matches them.
  bool pass_node_bounds = true;
  NodeBounds node_bounds;
  Workspace ws;

  Decision Run(const Pod& pod) {
    MatchNodeBounds(config.metrics, nodes, &node_bounds);
    DecideInput in{.pod = &pod,
                   .nodes = &nodes,
                   .metrics = &columns,
                   .node_bounds = pass_node_bounds ? &node_bounds : nullptr,
                   .now_ms = kNow,
                   .explain = true};
    return Decide(in, config, ws);
  }

  // Which nodes passed, by name.
  static std::vector<std::string> Feasible(const Decision& d) {
    std::vector<std::string> out;
    for (const NodeExplanation& n : d.explanation->nodes) {
      if (n.feasible) out.push_back(n.node);
    }
    return out;
  }
};

// The plain node at 0.75 is over a production pod's 0.7 but under a batch
// pod's default 0.85; whether the caller or Decide matched the node side.
TEST(DecideThresholdsTest, AProductionPodIsFilteredWhereABatchPodPasses) {
  for (bool pass : {true, false}) {
    Fixture f;
    f.pass_node_bounds = pass;
    f.nodes.push_back(MakeNode("cool"));
    f.columns = {Column({0.75, 0.9, 0.97, 0.6, 0.65})};
    const Decision production = f.Run(MakePod("web").Priority(1000));
    ASSERT_TRUE(production.ok());
    EXPECT_EQ(Fixture::Feasible(production), std::vector<std::string>{"cool"});
    EXPECT_EQ(production.explanation->nodes[0].filter_reason,
              "node(s) had cpu above 0.7 (filter.scopes[0])");

    const Decision batch = f.Run(MakePod("job").Label("tier", "batch"));
    ASSERT_TRUE(batch.ok());
    // plain 0.75 <= 0.85 (default), batch 0.9 <= 0.95 (scope 1), spot
    // 0.97 <= 0.98 (scope 2), pinned 0.6 > 0.5 (its annotation).
    EXPECT_EQ(Fixture::Feasible(batch),
              (std::vector<std::string>{"plain", "batch", "spot", "cool"}));
  }
}

// The batch pool's looser 0.95 holds for any pod there; the spot pool has
// it only for batch pods.
TEST(DecideThresholdsTest, ANodePoolHasItsLooserBound) {
  Fixture f;
  const Decision plain = f.Run(MakePod("p"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(Fixture::Feasible(plain),
            (std::vector<std::string>{"plain", "batch"}));
  // The default bound says nothing of where it came from.
  EXPECT_EQ(plain.explanation->nodes[2].filter_reason,
            "node(s) had cpu above 0.85");
}

// The pinned node's annotation (0.5) wins over the pool's scope (0.95),
// the production scope (0.7) and the default, whatever the pod.
TEST(DecideThresholdsTest, ANodeAnnotationOverridesScopesAndDefault) {
  for (const Pod& pod :
       {MakePod("p").Build(), MakePod("web").Priority(1000).Build(),
        MakePod("job").Label("tier", "batch").Build()}) {
    Fixture f;
    const Decision d = f.Run(pod);
    EXPECT_EQ(d.explanation->nodes[3].filter_reason,
              "node(s) had cpu above 0.5 (annotation "
              "max.filter.metrics-scheduler.io/cpu)")
        << pod.name;
  }
  // An annotation that is not a decimal is ignored: the pool's 0.95.
  Fixture f;
  f.nodes[3].node.annotations[kMaxCpu] = "half";
  EXPECT_TRUE(f.Run(MakePod("p")).explanation->nodes[3].feasible);
}

// Reasons are counted by their words, the bound included, as
// kube-scheduler counts them: nodes filtered at 0.7 and at 0.5 count apart.
TEST(DecideThresholdsTest, TheSummaryCountsEachBoundApart) {
  Fixture f;
  const Decision d = f.Run(MakePod("web").Priority(1000));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.filter_summary,
            "0/4 nodes are available: 1 node(s) had cpu above 0.5, 3 node(s) "
            "had cpu above 0.7.");
}

// A scope's bounds replace both defaults: a scope with only a max leaves
// no min; a scope's min is worded "below".
TEST(DecideThresholdsTest, AScopeReplacesBothBounds) {
  Fixture f;
  f.config.metrics[0].filter_min = 0.8;  // the plain node's 0.75 is below
  f.config.metrics[0].filter_scopes.push_back(
      {.pods = PodClass{.max_priority = -1}, .bounds = {.min = 0.76}});
  const Decision plain = f.Run(MakePod("p"));
  EXPECT_EQ(plain.explanation->nodes[0].filter_reason,
            "node(s) had cpu below 0.8");
  // Production: scope 0 (max 0.7, no min) replaces the default min.
  f.columns = {Column({0.65, 0.9, 0.97, 0.6})};
  EXPECT_TRUE(
      f.Run(MakePod("web").Priority(1000)).explanation->nodes[0].feasible);
  // A low-priority pod: scope 3, whose min 0.76 is above 0.65.
  const Decision low = f.Run(MakePod("low").Priority(-5));
  EXPECT_EQ(low.explanation->nodes[0].filter_reason,
            "node(s) had cpu below 0.76 (filter.scopes[3])");
}

// Without scopes or annotations, a filter is the one bound it always was,
// and reading annotations where no node has one changes nothing.
TEST(DecideThresholdsTest, NoScopeIsTodaysFilter) {
  for (bool annotations : {false, true}) {
    Fixture f;
    f.nodes[3].node.annotations.clear();
    MetricTerm cpu = Term("cpu");
    cpu.filter_max = 0.85;
    cpu.filter_annotations = annotations;
    f.config = MetricsOnly({cpu});
    for (const Pod& pod :
         {MakePod("p").Build(), MakePod("web").Priority(1000).Build()}) {
      const Decision d = f.Run(pod);
      EXPECT_EQ(Fixture::Feasible(d),
                (std::vector<std::string>{"plain", "pinned"}));
      EXPECT_EQ(d.explanation->nodes[1].filter_reason,
                "node(s) had cpu above 0.85");
    }
  }
}

// The extender applies the same bounds for the pod it is asked about.
TEST(DecideThresholdsTest, TheExtenderAppliesThePodsBounds) {
  Fixture f;
  NodeBounds bounds;
  MatchNodeBounds(f.config.metrics, f.nodes, &bounds);
  const Pod production = MakePod("web").Priority(1000);
  const MetricVerdict v =
      JudgeByMetrics(f.config, f.columns, 4, kNow, &production, &bounds);
  EXPECT_EQ(v.failures,
            (std::vector<std::string>{
                "node(s) had cpu above 0.7", "node(s) had cpu above 0.7",
                "node(s) had cpu above 0.7", "node(s) had cpu above 0.5"}));
  const Pod batch = MakePod("job").Label("tier", "batch");
  EXPECT_EQ(
      JudgeByMetrics(f.config, f.columns, 4, kNow, &batch, &bounds).failures,
      (std::vector<std::string>{"", "", "", "node(s) had cpu above 0.5"}));
}

}  // namespace
}  // namespace ms
