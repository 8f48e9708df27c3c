#include "model/threshold_scope.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(ThresholdScopeTest, APodSideSelectsByLabelsAndPriorityBothInclusive) {
  ThresholdScope scope{
      .pods =
          PodClass{.labels = LabelSelector{.match_labels = {{"tier", "web"}}},
                   .min_priority = 100,
                   .max_priority = 1000}};
  struct Case {
    const char* name;
    Labels labels;
    int32_t priority;
    bool want;
  };
  for (const Case& c : std::vector<Case>{
           {"inside", {{"tier", "web"}}, 500, true},
           {"at the low end", {{"tier", "web"}}, 100, true},
           {"at the high end", {{"tier", "web"}}, 1000, true},
           {"below", {{"tier", "web"}}, 99, false},
           {"above", {{"tier", "web"}}, 1001, false},
           {"other labels", {{"tier", "batch"}}, 500, false},
       }) {
    Pod pod;
    pod.labels = c.labels;
    pod.priority = c.priority;
    EXPECT_EQ(SelectsPod(scope, pod), c.want) << c.name;
  }
  // No pod side: every pod.
  EXPECT_TRUE(SelectsPod(ThresholdScope{}, Pod{}));
}

TEST(ThresholdScopeTest, ANodeSideSelectsByLabels) {
  ThresholdScope scope{.nodes = LabelSelector{.match_expressions = {{
                                                  .key = "pool",
                                                  .op = LabelOperator::kIn,
                                                  .values = {"batch", "spot"},
                                              }}}};
  Node spot;
  spot.labels = {{"pool", "spot"}};
  Node plain;
  EXPECT_TRUE(SelectsNode(scope, spot));
  EXPECT_FALSE(SelectsNode(scope, plain));
  // No node side: every node; an empty selector too, as in Kubernetes.
  EXPECT_TRUE(SelectsNode(ThresholdScope{}, plain));
  EXPECT_TRUE(SelectsNode(ThresholdScope{.nodes = LabelSelector{}}, plain));
}

// A node's bound annotation is a finite decimal; anything else is ignored
// (NaN), as is a missing one.
TEST(ThresholdScopeTest, AnAnnotationBoundIsAFiniteDecimal) {
  const std::string key = MaxFilterAnnotation("cpu");
  EXPECT_EQ(key, "max.filter.metrics-scheduler.io/cpu");
  EXPECT_EQ(MinFilterAnnotation("cpu"), "min.filter.metrics-scheduler.io/cpu");
  Node node;
  EXPECT_TRUE(std::isnan(FilterAnnotationBound(node, key)));
  for (const auto& [text, want] : std::vector<std::pair<std::string, double>>{
           {"0.95", 0.95}, {"-3", -3}, {"1e3", 1000}, {"+2.5", 2.5}}) {
    node.annotations[key] = text;
    EXPECT_EQ(FilterAnnotationBound(node, key), want) << text;
  }
  for (const char* bad :
       {"", " 0.9", "0.9 ", "high", "inf", "nan", "1e400", "0x10", "250m"}) {
    node.annotations[key] = bad;
    EXPECT_TRUE(std::isnan(FilterAnnotationBound(node, key))) << bad;
  }
}

}  // namespace
}  // namespace ms
