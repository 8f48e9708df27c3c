#include "scoring/plugins/node_affinity.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;

NodeSelectorTerm Expr(const std::string& key, SelectorOperator op,
                      std::vector<std::string> values) {
  NodeSelectorTerm t;
  t.match_expressions.push_back({key, op, std::move(values)});
  return t;
}

NodeSelectorTerm Field(SelectorOperator op, std::vector<std::string> values,
                       const std::string& key = "metadata.name") {
  NodeSelectorTerm t;
  t.match_fields.push_back({key, op, std::move(values)});
  return t;
}

TEST(MatchesNodeAffinityTest, Operators) {
  using S = SelectorOperator;
  Node node = MakeNode("n1").Label("zone", "a").Label("cores", "16").Build().node;
  struct Case {
    std::string name;
    std::vector<NodeSelectorTerm> terms;
    bool want;
  };
  for (const Case& c : std::vector<Case>{
           {"In match", {Expr("zone", S::kIn, {"a", "b"})}, true},
           {"In miss", {Expr("zone", S::kIn, {"b"})}, false},
           {"In absent label", {Expr("rack", S::kIn, {"a"})}, false},
           {"NotIn match", {Expr("zone", S::kNotIn, {"b"})}, true},
           {"NotIn absent label", {Expr("rack", S::kNotIn, {"b"})}, true},
           {"NotIn miss", {Expr("zone", S::kNotIn, {"a"})}, false},
           {"Exists", {Expr("zone", S::kExists, {})}, true},
           {"Exists absent", {Expr("rack", S::kExists, {})}, false},
           {"DoesNotExist", {Expr("rack", S::kDoesNotExist, {})}, true},
           {"DoesNotExist present", {Expr("zone", S::kDoesNotExist, {})}, false},
           {"Gt", {Expr("cores", S::kGt, {"8"})}, true},
           {"Gt equal", {Expr("cores", S::kGt, {"16"})}, false},
           {"Lt", {Expr("cores", S::kLt, {"32"})}, true},
           {"Gt not a number", {Expr("zone", S::kGt, {"1"})}, false},
           {"Gt invalid value", {Expr("cores", S::kGt, {"x"})}, false},
           {"Gt two values", {Expr("cores", S::kGt, {"1", "2"})}, false},
           {"In without values is invalid", {Expr("zone", S::kNotIn, {})}, false},
           {"Exists with values is invalid", {Expr("zone", S::kExists, {"a"})}, false},
           {"matchFields In", {Field(S::kIn, {"n1"})}, true},
           {"matchFields In other", {Field(S::kIn, {"n2"})}, false},
           {"matchFields NotIn", {Field(S::kNotIn, {"n2"})}, true},
           {"matchFields other key", {Field(S::kIn, {"n1"}, "metadata.uid")}, false},
           {"matchFields two values", {Field(S::kIn, {"n1", "n2"})}, false},
           {"terms are ORed", {Expr("zone", S::kIn, {"b"}), Field(S::kIn, {"n1"})}, true},
           {"empty term matches nothing", {NodeSelectorTerm{}}, false},
           {"no terms match nothing", {}, false},
       }) {
    Pod pod = MakePod().Affinity(c.terms);
    EXPECT_EQ(MatchesNodeAffinity(pod, node), c.want) << c.name;
  }
  // Requirements within a term are ANDed.
  NodeSelectorTerm both = Expr("zone", S::kIn, {"a"});
  both.match_expressions.push_back({"cores", S::kLt, {"8"}});
  EXPECT_FALSE(MatchesNodeAffinity(MakePod().Affinity({both}), node));
  // nodeSelector: every pair must match.
  EXPECT_TRUE(MatchesNodeAffinity(MakePod().NodeSelector("zone", "a"), node));
  EXPECT_FALSE(MatchesNodeAffinity(
      MakePod().NodeSelector("zone", "a").NodeSelector("disk", "ssd"), node));
}

// Preferred terms: the weights of those that match, the pod's and the
// configured addedAffinity's; empty and zero-weight terms never count.
TEST(NodeAffinityScoreTest, SumsTheWeightsOfMatchingTerms) {
  using S = SelectorOperator;
  Pod pod = MakePod();
  pod.preferred_node_affinity = {
      {.weight = 80, .preference = Expr("lifecycle", S::kIn, {"spot"})},
      {.weight = 20, .preference = Field(S::kIn, {"n1"})},
      {.weight = 5, .preference = {}},  // matches nothing
      {.weight = 0, .preference = Expr("lifecycle", S::kExists, {})},
  };
  const std::vector<PreferredNodeTerm> none;
  NodeInfo spot = MakeNode("n1").Label("lifecycle", "spot");
  NodeInfo other = MakeNode("n2").Label("lifecycle", "on-demand");
  EXPECT_EQ(NodeAffinityScore(pod, none, spot.node), 100);
  EXPECT_EQ(NodeAffinityScore(pod, none, other.node), 0);
  const std::vector<PreferredNodeTerm> added = {
      {.weight = 7, .preference = Expr("lifecycle", S::kIn, {"on-demand"})}};
  EXPECT_EQ(NodeAffinityScore(pod, added, other.node), 7);
  EXPECT_TRUE(ScoresNodeAffinity(pod, none));
  EXPECT_FALSE(ScoresNodeAffinity(MakePod(), none));
  EXPECT_TRUE(ScoresNodeAffinity(MakePod(), added));
}

TEST(MatchesNodeSelectorTermsTest, TermsAreOred) {
  using S = SelectorOperator;
  NodeInfo node = MakeNode("n1").Label("zone", "a");
  EXPECT_TRUE(MatchesNodeSelectorTerms(
      {Expr("zone", S::kIn, {"b"}), Expr("zone", S::kIn, {"a"})}, node.node));
  EXPECT_FALSE(MatchesNodeSelectorTerms({Expr("zone", S::kIn, {"b"})},
                                        node.node));
}

}  // namespace
}  // namespace ms
