#include "scoring/plugins/balanced_allocation.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(BalancedAllocationScoreTest, KubeSchedulerArithmetic) {
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
           // 0 and 1: std 0.5 -> 50.
           {4000, 0, 10000, 10000, 50},
       }) {
    EXPECT_EQ(BalancedAllocationScore(c.alloc_cpu, c.req_cpu, c.alloc_mem,
                                      c.req_mem),
              c.want);
  }
}

}  // namespace
}  // namespace ms
