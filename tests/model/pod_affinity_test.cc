#include "model/pod_affinity.h"

#include "gtest/gtest.h"

namespace ms {
namespace {

LabelRequirement Requirement(LabelOperator op,
                             std::vector<std::string> values = {}) {
  return {.key = "team", .op = op, .values = std::move(values)};
}

PodAffinityTerm WithNamespaceSelector(std::optional<LabelSelector> selector) {
  return {.label_selector = LabelSelector{},
          .namespace_selector = std::move(selector),
          .topology_key = "kubernetes.io/hostname"};
}

// Before 1.37 a namespaceSelector that is not empty but selects a
// namespace without labels selects every namespace; one that needs a
// label, an empty one and none at all are left as they are.
TEST(PodAffinityTest, NamespaceSelectorsWidenAsBefore137) {
  const LabelSelector not_in{
      .match_expressions = {Requirement(LabelOperator::kNotIn, {"a"})}};
  const LabelSelector absent{
      .match_expressions = {Requirement(LabelOperator::kDoesNotExist)}};
  const LabelSelector in{
      .match_expressions = {Requirement(LabelOperator::kIn, {"a"})}};
  const LabelSelector labels{.match_labels = {{"team", "a"}}};
  PodAffinityRules rules{
      .required = {WithNamespaceSelector(not_in), WithNamespaceSelector(in),
                   WithNamespaceSelector(LabelSelector{}),
                   WithNamespaceSelector(std::nullopt)},
      .preferred = {{.weight = 5, .term = WithNamespaceSelector(absent)},
                    {.weight = 5, .term = WithNamespaceSelector(labels)}}};
  EXPECT_TRUE(WidenNamespaceSelectorsAsBefore137(&rules));
  EXPECT_EQ(rules.required[0].namespace_selector, LabelSelector{});
  EXPECT_EQ(rules.required[1].namespace_selector, in);
  EXPECT_EQ(rules.required[2].namespace_selector, LabelSelector{});
  EXPECT_EQ(rules.required[3].namespace_selector, std::nullopt);
  EXPECT_EQ(rules.preferred[0].term.namespace_selector, LabelSelector{});
  EXPECT_EQ(rules.preferred[1].term.namespace_selector, labels);
  // Once widened, nothing is left to widen.
  EXPECT_FALSE(WidenNamespaceSelectorsAsBefore137(&rules));
}

}  // namespace
}  // namespace ms
