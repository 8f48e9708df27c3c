#include "scoring/filter_bounds.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/scoring/scoped_cpu.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::MakeNode;
using ::ms::testing::ScopedCpu;
using ::ms::testing::MakePod;
using ::ms::testing::Term;

constexpr double kInf = std::numeric_limits<double>::infinity();


// The node side is matched once: scope 0 has no node side, so every node
// has its bit; scope 1 only the batch pool; scope 2 batch and spot.
TEST(MatchNodeBoundsTest, EachNodeHasTheBitsOfTheScopesThatSelectIt) {
  const std::vector<NodeInfo> nodes = {MakeNode("plain"),
                                       MakeNode("batch").Label("pool", "batch"),
                                       MakeNode("spot").Label("pool", "spot")};
  NodeBoundsColumn column = MatchNodeBounds(ScopedCpu(), nodes);
  EXPECT_EQ(column.num_nodes, 3u);
  EXPECT_EQ(column.every_node, 0b001u);
  EXPECT_EQ(column.scopes, (std::vector<uint64_t>{0b001, 0b111, 0b101}));
  EXPECT_TRUE(column.max.empty());  // no node has an annotation
  EXPECT_FALSE(column.uniform());
}

TEST(MatchNodeBoundsTest, ScopesWithoutANodeSideAreTheSameOnEveryNode) {
  MetricTerm cpu = Term("cpu");
  cpu.filter_scopes = {
      {.pods = PodClass{.min_priority = 1000}, .bounds = {.max = 0.7}}};
  NodeBoundsColumn column =
      MatchNodeBounds(cpu, {MakeNode("a"), MakeNode("b")});
  EXPECT_TRUE(column.uniform());
  EXPECT_EQ(column.every_node, 0b1u);
}

// A term without scopes or annotations has nothing per node: its default
// bounds hold, as before scopes existed.
TEST(MatchNodeBoundsTest, APlainFilterHasNoNodeSide) {
  MetricTerm cpu = Term("cpu");
  cpu.filter_max = 0.9;
  EXPECT_FALSE(cpu.has_scoped_filter());
  const std::vector<NodeInfo> nodes = {
      MakeNode("a").Annotation("max.filter.metrics-scheduler.io/cpu", "0.5")};
  NodeBounds bounds;
  MatchNodeBounds({cpu}, nodes, &bounds);
  ASSERT_EQ(bounds.size(), 1u);
  EXPECT_EQ(bounds[0].num_nodes, 0u);
  EXPECT_TRUE(NodeBoundsMatch({cpu}, bounds, 1));
  // Reading annotations makes it scoped; an unannotated cluster is still
  // uniform.
  cpu.filter_annotations = true;
  EXPECT_TRUE(cpu.has_scoped_filter());
  EXPECT_FALSE(NodeBoundsMatch({cpu}, bounds, 1));
  EXPECT_TRUE(MatchNodeBounds(cpu, {MakeNode("b")}).uniform());
  // Without a filter, annotations are not read.
  MetricTerm unfiltered = Term("cpu");
  unfiltered.filter_annotations = true;
  EXPECT_FALSE(unfiltered.has_scoped_filter());
}

TEST(BoundsAtTest, FirstMatchingScopeThenAnnotationsWin) {
  const MetricTerm cpu = ScopedCpu();
  const std::vector<NodeInfo> nodes = {
      MakeNode("plain"),
      MakeNode("batch").Label("pool", "batch"),
      MakeNode("spot").Label("pool", "spot"),
      MakeNode("pinned")
          .Label("pool", "batch")
          .Annotation("max.filter.metrics-scheduler.io/cpu", "0.5"),
      MakeNode("floor").Annotation("min.filter.metrics-scheduler.io/cpu",
                                   "0.05"),
      MakeNode("garbled").Annotation("max.filter.metrics-scheduler.io/cpu",
                                     "lots"),
  };
  const NodeBoundsColumn column = MatchNodeBounds(cpu, nodes);
  const Pod production = MakePod("prod").Priority(1000);
  const Pod batch = MakePod("batch").Label("tier", "batch");
  const Pod plain = MakePod("plain");
  // Scope 1 has no pod side: every pod has its bit.
  EXPECT_EQ(PodScopes(cpu, production), 0b011u);
  EXPECT_EQ(PodScopes(cpu, batch), 0b110u);
  EXPECT_EQ(PodScopes(cpu, plain), 0b010u);

  using Source = BoundOrigin::Source;
  struct Case {
    const char* name;
    const Pod* pod;
    size_t node;
    FilterBounds want;
    BoundOrigin max_origin;
  };
  for (const Case& c : std::vector<Case>{
           // Scope 0 comes first for production pods, even on the pool.
           {"production, plain",
            &production,
            0,
            {0.7, -kInf},
            {Source::kScope, 0}},
           {"production, batch pool",
            &production,
            1,
            {0.7, -kInf},
            {Source::kScope, 0}},
           // No scope selects a plain pod on a plain node: the default.
           {"plain, plain", &plain, 0, {0.85, -kInf}, {}},
           {"plain, batch pool", &plain, 1, {0.95, -kInf}, {Source::kScope, 1}},
           {"plain, spot pool", &plain, 2, {0.85, -kInf}, {}},
           // Scope 1 selects the batch pool before scope 2 does.
           {"batch, batch pool", &batch, 1, {0.95, -kInf}, {Source::kScope, 1}},
           {"batch, spot pool", &batch, 2, {0.98, -kInf}, {Source::kScope, 2}},
           // The annotation wins over scope 0 and scope 1 alike.
           {"production, pinned",
            &production,
            3,
            {0.5, -kInf},
            {Source::kNodeAnnotation}},
           {"batch, pinned",
            &batch,
            3,
            {0.5, -kInf},
            {Source::kNodeAnnotation}},
           // A min annotation leaves the max to the scope.
           {"production, floor",
            &production,
            4,
            {0.7, 0.05},
            {Source::kScope, 0}},
           // A value that is not a decimal is ignored.
           {"plain, garbled", &plain, 5, {0.85, -kInf}, {}},
       }) {
    const AppliedBounds b =
        BoundsAt(cpu, PodScopes(cpu, *c.pod), column, c.node);
    EXPECT_EQ(b.bounds, c.want) << c.name;
    EXPECT_EQ(b.max_origin, c.max_origin) << c.name;
  }
  EXPECT_EQ(BoundsAt(cpu, PodScopes(cpu, production), column, 4).min_origin,
            BoundOrigin{Source::kNodeAnnotation});
}

TEST(BoundsAtTest, OriginsAreWordedForExplain) {
  const MetricTerm cpu = ScopedCpu();
  using Source = BoundOrigin::Source;
  EXPECT_EQ(BoundOriginText(cpu, true, {}), "");
  EXPECT_EQ(BoundOriginText(cpu, true, {Source::kScope, 2}),
            "filter.scopes[2]");
  EXPECT_EQ(BoundOriginText(cpu, true, {Source::kNodeAnnotation}),
            "annotation max.filter.metrics-scheduler.io/cpu");
  EXPECT_EQ(BoundOriginText(cpu, false, {Source::kNodeAnnotation}),
            "annotation min.filter.metrics-scheduler.io/cpu");
}

// The extender's nodes are a subset, in its order; a node not known has
// only the scopes without a node side, and no annotation.
TEST(PickNodesTest, PicksRowsInOrder) {
  const std::vector<NodeInfo> nodes = {
      MakeNode("plain"),
      MakeNode("batch")
          .Label("pool", "batch")
          .Annotation("max.filter.metrics-scheduler.io/cpu", "0.5")};
  const NodeBoundsColumn column = MatchNodeBounds(ScopedCpu(), nodes);
  const NodeBoundsColumn picked = PickNodes(column, {1, -1, 0});
  EXPECT_EQ(picked.num_nodes, 3u);
  EXPECT_EQ(picked.scopes, (std::vector<uint64_t>{0b111, 0b001, 0b001}));
  ASSERT_EQ(picked.max.size(), 3u);
  EXPECT_EQ(picked.max[0], 0.5);
  EXPECT_TRUE(std::isnan(picked.max[1]));
  EXPECT_TRUE(std::isnan(picked.max[2]));
}

}  // namespace
}  // namespace ms
