#include "bench/quality/policies.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ms::quality {
namespace {

NodeView Node(double mean, double stddev = 0, double recent = 0) {
  return {.cpu_allocatable = 10,
          .utilisation_mean = mean,
          .utilisation_stddev = stddev,
          .recent_cpu_requested = recent};
}

TEST(PoliciesTest, TargetLoadPackingPeaksAtItsTarget) {
  PodView pod{.cpu_request = 0};
  EXPECT_EQ(TargetLoadPackingScore(pod, Node(0)), 40);
  EXPECT_EQ(TargetLoadPackingScore(pod, Node(0.2)), 70);
  EXPECT_EQ(TargetLoadPackingScore(pod, Node(0.4)), 100);
  EXPECT_EQ(TargetLoadPackingScore(pod, Node(0.41)), 39);  // the step
  EXPECT_EQ(TargetLoadPackingScore(pod, Node(0.7)), 20);
  EXPECT_EQ(TargetLoadPackingScore(pod, Node(1.0)), 0);
  EXPECT_EQ(TargetLoadPackingScore(pod, Node(1.5)), 0);
  // The pod and the recently bound pods count at 1.5x their requests:
  // 1 core on 10 is 15 %, which with 25 % used makes the target.
  EXPECT_EQ(TargetLoadPackingScore({.cpu_request = 1}, Node(0.25)), 100);
  EXPECT_EQ(TargetLoadPackingScore({.cpu_request = 0.5}, Node(0.25, 0, 0.5)),
            100);
  // No value yet reads as idle.
  EXPECT_EQ(TargetLoadPackingScore(pod, Node(std::nan(""))), 40);
}

TEST(PoliciesTest, LoadVariationRiskBalancingAddsTheDeviationToTheMean) {
  EXPECT_EQ(LoadVariationRiskBalancingScore({.cpu_request = 0}, Node(0)), 100);
  EXPECT_EQ(LoadVariationRiskBalancingScore({.cpu_request = 1}, Node(0.3)),
            80);  // mu 0.4
  EXPECT_EQ(LoadVariationRiskBalancingScore({.cpu_request = 1}, Node(0.3, 0.2)),
            70);  // (0.4 + 0.2) / 2
  EXPECT_EQ(LoadVariationRiskBalancingScore({.cpu_request = 5}, Node(0.9, 2)),
            0);  // both clamped to 1
}

TEST(PoliciesTest, LoadAwareFiltersAbove65PercentEstimated) {
  // 50 % used + 0.85 x (1 recent + 1 incoming) core = 67 %: filtered.
  EXPECT_EQ(LoadAwareScore({.cpu_request = 1}, Node(0.5, 0, 1)), -1);
  // Without the recent pod: 58.5 %, scored on what is left.
  EXPECT_EQ(LoadAwareScore({.cpu_request = 1}, Node(0.5)), 41);
  EXPECT_EQ(LoadAwareScore({.cpu_request = 0}, Node(0)), 100);
}

TEST(PoliciesTest, TheClairvoyantWeighsWhatThePodDoesToItsNeighbours) {
  // Two nodes at the same utilisation: the one with fewer pods to slow
  // down wins; a faster node wins over a slower one.
  NodeView crowded{
      .cpu_allocatable = 8, .true_demand = 4, .true_capacity = 8, .pods = 8};
  NodeView sparse = crowded;
  sparse.pods = 2;
  NodeView fast = sparse;
  fast.true_capacity = 12;
  fast.true_demand = 6;
  PodView pod{.cpu_request = 0.5, .true_usage = 1};
  EXPECT_GT(ClairvoyantScore(pod, sparse), ClairvoyantScore(pod, crowded));
  EXPECT_GT(ClairvoyantScore(pod, fast), ClairvoyantScore(pod, sparse));
  EXPECT_EQ(Choose(Policy::kClairvoyant, pod, {crowded, sparse, fast}, 0), 2);
}

TEST(PoliciesTest, TheLearningPolicyIsTheClairvoyantsRule) {
  // It differs only in the usage the harness tells it (world.h,
  // UsageKnown and KnownLoad); told the same, it chooses the same.
  std::vector<NodeView> nodes = {
      {.cpu_allocatable = 8, .true_demand = 3, .true_capacity = 8, .pods = 1},
      {.cpu_allocatable = 4, .true_demand = 1, .true_capacity = 4, .pods = 1},
      {.cpu_allocatable = 8, .true_demand = 6, .true_capacity = 12,
       .pods = 3}};
  for (double usage : {0.2, 1.0, 3.0}) {
    const PodView pod{.cpu_request = 1, .true_usage = usage};
    EXPECT_EQ(Choose(Policy::kLearning, pod, nodes, 0),
              Choose(Policy::kClairvoyant, pod, nodes, 0));
  }
}

TEST(PoliciesTest, TiesArePickedByTheRandomValueAndFilteredNodesNever) {
  std::vector<NodeView> nodes = {Node(0.1), Node(0.9), Node(0.1)};
  EXPECT_EQ(Choose(Policy::kLoadAware, {.cpu_request = 1}, nodes, 0), 0);
  EXPECT_EQ(Choose(Policy::kLoadAware, {.cpu_request = 1}, nodes, 1), 2);
  EXPECT_EQ(Choose(Policy::kLoadAware, {.cpu_request = 1}, {Node(0.9)}, 0), -1);
  for (Policy p :
       {Policy::kTargetLoadPacking, Policy::kLoadVariationRiskBalancing,
        Policy::kLoadAware, Policy::kClairvoyant, Policy::kLearning}) {
    EXPECT_EQ(ParsePolicy(PolicyName(p)).value(), p);
  }
  EXPECT_FALSE(ParsePolicy("best").ok());
}

}  // namespace
}  // namespace ms::quality
