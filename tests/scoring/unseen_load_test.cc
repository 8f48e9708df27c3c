#include "scoring/unseen_load.h"

#include "gtest/gtest.h"

namespace ms {
namespace {

using Basis = UnseenLoadEstimate::Basis;

MetricTerm Term(Basis basis, double factor) {
  return {.name = "cpu", .estimate = {.basis = basis, .factor = factor}};
}

TEST(UnseenLoadTest, RequestsOverAllocatableTimesTheFactor) {
  Node node;
  node.allocatable = {.milli_cpu = 4000, .memory = 8 << 20};
  PodInfo pod{.requests = {.milli_cpu = 500, .memory = 1 << 20}};
  EXPECT_EQ(UnseenLoad(Term(Basis::kCpuRequests, 100), pod, node), 12.5);
  EXPECT_EQ(UnseenLoad(Term(Basis::kMemoryRequests, 1), pod, node), 0.125);
  EXPECT_EQ(UnseenLoad(Term(Basis::kPerPod, 0.02), pod, node), 0.02);
  EXPECT_EQ(UnseenLoad(Term(Basis::kNone, 1), pod, node), 0);
  // A node that says no allocatable: nothing to divide by.
  EXPECT_EQ(UnseenLoad(Term(Basis::kCpuRequests, 1), pod, Node()), 0);
}

TEST(UnseenLoadTest, ThePodsAnnotationOverridesTheBasis) {
  Node node;
  node.allocatable.milli_cpu = 4000;
  PodInfo pod{.requests = {.milli_cpu = 500},
              .estimates = {{"cpu", "0.6"}, {"memory", "2"}}};
  EXPECT_EQ(UnseenLoad(Term(Basis::kCpuRequests, 1), pod, node), 0.6);
  // Not a number: the basis.
  pod.estimates["cpu"] = "a lot";
  EXPECT_EQ(UnseenLoad(Term(Basis::kCpuRequests, 1), pod, node), 0.125);
  // A term with no estimate takes none, annotated or not.
  pod.estimates["cpu"] = "0.6";
  EXPECT_EQ(UnseenLoad(Term(Basis::kNone, 1), pod, node), 0);
}

TEST(UnseenLoadTest, ASampleShowsAPodOnceAWarmupAfterItsStart) {
  UnseenLoadEstimate e{.basis = Basis::kPerPod, .warmup_ms = 30000};
  EXPECT_FALSE(SampleShows(e, 1029999, 1000000));
  EXPECT_TRUE(SampleShows(e, 1030000, 1000000));
}

}  // namespace
}  // namespace ms
