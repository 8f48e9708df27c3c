#include "scoring/plugins/default_normalize.h"

#include <algorithm>

#include "scoring/explain.h"

namespace ms {

void DefaultNormalizeScore(const int64_t* raw, const int64_t* feasible,
                           size_t n, bool reverse, double* out) {
  constexpr int64_t kMax = static_cast<int64_t>(kMaxNodeScore);
  int64_t hi = 0;
  for (size_t i = 0; i < n; ++i) {
    if (feasible[i] != 0) hi = std::max(hi, raw[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    if (feasible[i] == 0) continue;
    int64_t score = hi == 0 ? 0 : kMax * raw[i] / hi;
    if (reverse) score = kMax - score;
    out[i] = static_cast<double>(score);
  }
}

}  // namespace ms
