#include "scoring/plugins/resource_balance.h"

#include <algorithm>
#include <cmath>

namespace ms {

int64_t ResourceBalanceScore(int64_t alloc_cpu, int64_t requested_cpu,
                             int64_t alloc_memory, int64_t requested_memory) {
  double fractions[2];
  int n = 0;
  if (alloc_cpu != 0) {
    fractions[n++] = std::min(
        static_cast<double>(requested_cpu) / static_cast<double>(alloc_cpu),
        1.0);
  }
  if (alloc_memory != 0) {
    fractions[n++] = std::min(static_cast<double>(requested_memory) /
                                  static_cast<double>(alloc_memory),
                              1.0);
  }
  double std_dev = n == 2 ? std::abs((fractions[0] - fractions[1]) / 2) : 0;
  return static_cast<int64_t>((1 - std_dev) * 100);
}

}  // namespace ms
