#include "scoring/plugins/balanced_allocation.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "model/kube_version.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::kGi;
using ::ms::testing::MakeNode;

TEST(ResourceBalanceScoreTest, KubeSchedulerArithmetic) {
  struct Case {
    int64_t alloc_cpu, req_cpu, alloc_mem, req_mem;
    int64_t want;
  };
  for (const Case& c : std::vector<Case>{
           // fractions 3000/4000 = 0.75 and 5000/10000 = 0.5;
           // std = |0.75 - 0.5| / 2 = 0.125; (1 - 0.125) * 100 = 87.5 -> 87.
           {4000, 3000, 10000, 5000, 87},
           // Equal fractions: std 0, score 100.
           {4000, 2000, 10000, 5000, 100},
           // Fractions are capped at 1: 1 and 0.5 -> std 0.25 -> 75.
           {4000, 8000, 10000, 5000, 75},
           // One resource with allocatable 0: a single fraction, std 0.
           {0, 100, 10000, 9000, 100},
           // Neither: no fraction, std 0.
           {0, 100, 0, 9000, 100},
           // 0 and 1: std 0.5 -> 50.
           {4000, 0, 10000, 10000, 50},
       }) {
    EXPECT_EQ(
        ResourceBalanceScore(c.alloc_cpu, c.req_cpu, c.alloc_mem, c.req_mem),
        c.want);
  }
}

// Each case worked out by hand from kube-scheduler's balanced_allocation.go:
// with = balance(node + pod), without = balance(node);
// 1.34 and 1.35 score `with`, 1.36 on 50 + (50 + with - without) / 2 in
// integers.
TEST(BalancedAllocationScoreTest, BothRules) {
  struct Case {
    Resources alloc, node, pod;
    int64_t want134, want136;
  };
  for (const Case& c : std::vector<Case>{
           // with: 3000/4000 = 0.75 and 6Gi/8Gi = 0.75 -> 100.
           // without: 0.5 and 0.25 -> std 0.125 -> 87.5 -> 87.
           // 1.36: 50 + (50 + 100 - 87) / 2 = 50 + 63 / 2 = 50 + 31 = 81.
           {{.milli_cpu = 4000, .memory = 8 * kGi},
            {.milli_cpu = 2000, .memory = 2 * kGi},
            {.milli_cpu = 1000, .memory = 4 * kGi},
            100,
            81},
           // Empty node: with 0.25 and 0.5 -> std 0.125 -> 87; without 0
           // and 0 -> 100. 1.36: 50 + (50 + 87 - 100) / 2 = 50 + 18 = 68.
           {{.milli_cpu = 4000, .memory = 8 * kGi},
            {},
            {.milli_cpu = 1000, .memory = 4 * kGi},
            87,
            68},
           // The pod unbalances a balanced node: with 1 and 0.5 -> 75;
           // without 0.5 and 0.5 -> 100. 1.36: 50 + 25 / 2 = 62.
           {{.milli_cpu = 4000, .memory = 8 * kGi},
            {.milli_cpu = 2000, .memory = 4 * kGi},
            {.milli_cpu = 2000},
            75,
            62},
           // Both fractions capped at 1: without min(6000/4000, 1) = 1 and
           // 0.25 -> std 0.375 -> 62.5 -> 62; with 1 and 1 -> 100.
           // 1.36: 50 + (50 + 100 - 62) / 2 = 50 + 44 = 94.
           {{.milli_cpu = 4000, .memory = 8 * kGi},
            {.milli_cpu = 6000, .memory = 2 * kGi},
            {.memory = 6 * kGi},
            100,
            94},
           // From the worst balance to the best: without 1 and 0 -> 50,
           // with 1 and 1 -> 100. 1.36: 50 + (50 + 100 - 50) / 2 = 100.
           {{.milli_cpu = 4000, .memory = 8 * kGi},
            {.milli_cpu = 4000},
            {.memory = 8 * kGi},
            100,
            100},
           // From the best to the worst: 100 -> 50. 1.36: 50 + 0 / 2 = 50.
           {{.milli_cpu = 4000, .memory = 8 * kGi},
            {},
            {.milli_cpu = 4000},
            50,
            50},
           // cpu allocatable 0: one fraction, both balances 100.
           // 1.36: 50 + 50 / 2 = 75.
           {{.milli_cpu = 0, .memory = 8 * kGi},
            {.milli_cpu = 100, .memory = 1 * kGi},
            {.milli_cpu = 500, .memory = 2 * kGi},
            100,
            75},
       }) {
    for (int minor : {34, 35}) {
      EXPECT_EQ(BalancedAllocationScore(KubeVersion{.minor = minor}, c.alloc,
                                        c.node, c.pod),
                c.want134)
          << "1." << minor << " pod " << c.pod.milli_cpu << "/" << c.pod.memory
          << " node " << c.node.milli_cpu << "/" << c.node.memory;
    }
    for (int minor : {36, 37}) {
      EXPECT_EQ(BalancedAllocationScore(KubeVersion{.minor = minor}, c.alloc,
                                        c.node, c.pod),
                c.want136)
          << "1." << minor << " pod " << c.pod.milli_cpu << "/" << c.pod.memory
          << " node " << c.node.milli_cpu << "/" << c.node.memory;
    }
  }
}

// The row reads the node's actual requests, not the non-zero ones.
TEST(BalancedAllocationTermTest, ReadsActualRequests) {
  const NodeInfo node =
      MakeNode("n")
          .Capacity(4000, 8 * kGi)
          .Requested(2000, 2 * kGi)
          .NonZeroRequested(2100, 2 * kGi + 200 * 1024 * 1024);
  const Resources pod{.milli_cpu = 1000, .memory = 4 * kGi};
  // As the first case above: 100 and 81.
  TermResult old_rule =
      BalancedAllocationTerm(KubeVersion{.minor = 35}, node, pod, 1);
  EXPECT_EQ(old_rule.raw, 100);
  EXPECT_EQ(old_rule.score, 100);
  EXPECT_EQ(old_rule.weight, 1);
  TermResult new_rule =
      BalancedAllocationTerm(KubeVersion{.minor = 36}, node, pod, 1);
  EXPECT_EQ(new_rule.raw, 81);
  EXPECT_EQ(new_rule.score, 81);
  // A best-effort pod: the term does not count.
  EXPECT_EQ(
      BalancedAllocationTerm(KubeVersion{.minor = 36}, node, {}, 1).weight, 0);
}

TEST(BalancedAllocationScoresChangeTest, FromRelease) {
  EXPECT_FALSE(BalancedAllocationScoresChange(KubeVersion{.minor = 34}));
  EXPECT_FALSE(BalancedAllocationScoresChange(KubeVersion{.minor = 35}));
  EXPECT_TRUE(BalancedAllocationScoresChange(KubeVersion{.minor = 36}));
  EXPECT_TRUE(BalancedAllocationScoresChange(KubeVersion{.minor = 37}));
}

}  // namespace
}  // namespace ms
