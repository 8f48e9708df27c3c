#include "scoring/plugins/node_resources_fit.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(LeastAllocatedScoreTest, KubeSchedulerArithmetic) {
  struct Case {
    int64_t alloc_cpu, req_cpu, alloc_mem, req_mem;
    int64_t want;
  };
  for (const Case& c : std::vector<Case>{
           // cpu (4000 - 3000) * 100 / 4000 = 25; mem (10000 - 5000) * 100 /
           // 10000 = 50; (25 + 50) / 2 = 37 (integer division).
           {4000, 3000, 10000, 5000, 37},
           // Empty node: 100 and 100.
           {4000, 0, 10000, 0, 100},
           // Requested > allocatable scores 0 for that resource:
           // (0 + (10000 - 1) * 100 / 10000 = 99) / 2 = 49.
           {4000, 5000, 10000, 1, 49},
           // A resource with allocatable 0 is left out: only memory counts.
           // (8000 - 2000) * 100 / 8000 = 75.
           {0, 100, 8000, 2000, 75},
           // No resource at all: 0.
           {0, 0, 0, 0, 0},
           // Exact integer boundary: (3 - 1) * 100 / 3 = 66.67 -> 66.
           {3, 1, 3, 1, 66},
       }) {
    EXPECT_EQ(LeastAllocatedScore(c.alloc_cpu, c.req_cpu, c.alloc_mem,
                                  c.req_mem),
              c.want)
        << c.alloc_cpu << " " << c.req_cpu << " " << c.alloc_mem << " "
        << c.req_mem;
  }
}

}  // namespace
}  // namespace ms
