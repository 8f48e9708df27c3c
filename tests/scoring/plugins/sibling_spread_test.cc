#include "scoring/plugins/sibling_spread.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scoring/decide.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::kMi;
using ::ms::testing::kNow;
using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::testing::HasSubstr;
using ::testing::Not;

Pod Sibling(const std::string& name, const std::string& owner = "rs-a") {
  return MakePod(name).Req(500, 100 * kMi).Controller("apps/v1", "ReplicaSet",
                                                      owner, owner);
}

// siblingSpread alone, or beside leastAllocated.
ScoringConfig SpreadOnly(double least_allocated = 0) {
  ScoringConfig c;
  c.builtins[BuiltinTerm::kLeastAllocated] = least_allocated;
  c.builtins[BuiltinTerm::kBalancedAllocation] = 0;
  c.builtins[BuiltinTerm::kRecentPlacements] = 0;
  c.builtins[BuiltinTerm::kSiblingSpread] = 1;
  return c;
}

struct Fixture {
  std::vector<NodeInfo> nodes;
  Pod pod = Sibling("incoming");
  std::vector<SiblingUsages> siblings;
  ScoringConfig config;
  Workspace ws;

  Decision Run(ScoringConfig cfg) {
    config = std::move(cfg);
    DecideInput in{.pod = &pod,
                   .nodes = &nodes,
                   .siblings = siblings.empty() ? nullptr : &siblings,
                   .now_ms = kNow,
                   .seed = 1,
                   .explain = true};
    return Decide(in, config, ws);
  }
};

// The siblingSpread row of node i, or null.
const TermResult* Row(const Decision& d, size_t i) {
  for (const TermResult& t : d.explanation->nodes[i].terms) {
    if (t.name == "siblingSpread") return &t;
  }
  return nullptr;
}

TEST(SiblingSpreadTest, OffUnlessWeighted) {
  EXPECT_EQ(ScoringConfig().builtins[BuiltinTerm::kSiblingSpread], 0);
  Fixture f;
  f.nodes = {MakeNode("crowded").Placed(Sibling("a1")).Placed(Sibling("a2")),
             MakeNode("busy").Requested(3000, 0)};
  ScoringConfig cfg;
  cfg.builtins[BuiltinTerm::kRecentPlacements] = 0;
  Decision d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  // leastAllocated alone: 1000m requested beats 3000m.
  EXPECT_EQ(f.nodes[d.node_index].node.name, "crowded");
  EXPECT_EQ(Row(d, 0), nullptr);
}

// Worked example: 2 siblings on n1, 1 on n2 (beside a pod of another
// controller), none on n3. M = 2: n1 100 - 100 * 2 / 2 = 0, n2 100 - 50
// = 50, n3 100.
TEST(SiblingSpreadTest, FewerSiblingsScoreHigher) {
  Fixture f;
  f.nodes = {MakeNode("n1").Placed(Sibling("a1")).Placed(Sibling("a2")),
             MakeNode("n2").Placed(Sibling("a3")).Placed(Sibling("b1", "rs-b")),
             MakeNode("n3")};
  Decision d = f.Run(SpreadOnly());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "n3");
  const TermResult* n1 = Row(d, 0);
  const TermResult* n2 = Row(d, 1);
  const TermResult* n3 = Row(d, 2);
  ASSERT_NE(n1, nullptr);
  ASSERT_NE(n2, nullptr);
  ASSERT_NE(n3, nullptr);
  EXPECT_EQ(n1->raw, 2);
  EXPECT_EQ(n1->score, 0);
  EXPECT_EQ(n2->raw, 1);
  EXPECT_EQ(n2->score, 50);
  EXPECT_EQ(n3->raw, 0);
  EXPECT_EQ(n3->score, 100);
  EXPECT_THAT(SummarizeTerms(d.score, d.mode, d.terms),
              HasSubstr("siblingSpread 100.0 (w=1)"));
}

// Beside leastAllocated at the same weight, one sibling outweighs a node
// twice as requested: n1 holds a sibling (500m of 4000m), n2 another
// controller's 1500m.
TEST(SiblingSpreadTest, OutweighsRequestsWhileUnmeasured) {
  Fixture f;
  f.nodes = {MakeNode("n1").Placed(Sibling("a1")),
             MakeNode("n2").Placed(
                 MakePod("b1").Req(1500, 100 * kMi).Controller(
                     "apps/v1", "ReplicaSet", "rs-b", "rs-b"))};
  Decision d = f.Run(SpreadOnly(/*least_allocated=*/1));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "n2");
}

// A controller a term with estimate.siblings measures is estimated from
// what its pods use: the term no longer counts for its pods. A term
// without estimate.siblings measures nothing.
TEST(SiblingSpreadTest, StopsOnceTheControllerIsMeasured) {
  Fixture f;
  f.nodes = {MakeNode("n1").Placed(Sibling("a1")),
             MakeNode("n2").Requested(3000, 0)};
  ScoringConfig cfg = SpreadOnly(/*least_allocated=*/1);
  cfg.metrics.resize(2);
  cfg.metrics[0].name = "plain";
  cfg.metrics[1].name = "cpu";
  cfg.metrics[1].estimate.siblings_query = "per-pod usage";
  f.siblings = {SiblingUsages{{"rs-a", {.mean = 1, .pods = 1}}},
                SiblingUsages{}};
  EXPECT_FALSE(SiblingsMeasured(cfg, &f.siblings, "rs-a"));
  Decision d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "n2");

  f.siblings[1]["rs-a"] = {.mean = 0.5, .pods = 1};
  EXPECT_TRUE(SiblingsMeasured(cfg, &f.siblings, "rs-a"));
  EXPECT_FALSE(SiblingsMeasured(cfg, &f.siblings, "rs-b"));
  EXPECT_FALSE(SiblingsMeasured(cfg, nullptr, "rs-a"));
  d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "n1");
  EXPECT_EQ(Row(d, 0), nullptr);
  EXPECT_THAT(SummarizeTerms(d.score, d.mode, d.terms),
              Not(HasSubstr("siblingSpread")));
}

// Left out: pods being deleted, the pod itself (a what-if about a placed
// pod), and pods of no controller, for which the term never counts.
TEST(SiblingSpreadTest, WhoCountsAsASibling) {
  Fixture f;
  Pod deleting = Sibling("a1");
  deleting.deleting = true;
  f.nodes = {MakeNode("n1").Placed(deleting).Placed(f.pod),
             MakeNode("n2").Placed(Sibling("a2"))};
  Decision d = f.Run(SpreadOnly());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "n1");
  ASSERT_NE(Row(d, 0), nullptr);
  EXPECT_EQ(Row(d, 0)->raw, 0);
  EXPECT_EQ(Row(d, 1)->raw, 1);

  f.pod = MakePod("orphan").Req(500, 100 * kMi);
  d = f.Run(SpreadOnly());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(Row(d, 0), nullptr);
  EXPECT_EQ(Row(d, 1), nullptr);
}

// No feasible node holds a sibling: every node would score alike, so the
// term does not count (no row, no weight).
TEST(SiblingSpreadTest, NoSiblingPlacedNoTerm) {
  Fixture f;
  f.nodes = {MakeNode("n1").Placed(Sibling("b1", "rs-b")), MakeNode("n2")};
  Decision d = f.Run(SpreadOnly());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(Row(d, 0), nullptr);
  // Nor does a sibling on a node the pod cannot go to.
  f.nodes = {MakeNode("full").Capacity(400, 8 * ::ms::testing::kGi)
                 .Placed(Sibling("a1")),
             MakeNode("n2")};
  d = f.Run(SpreadOnly());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "n2");
  EXPECT_EQ(Row(d, 1), nullptr);
}

}  // namespace
}  // namespace ms
