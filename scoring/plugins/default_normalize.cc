#include "scoring/plugins/default_normalize.h"

#include <algorithm>

#include "scoring/explanation.h"

namespace ms {

void DefaultNormalizeScore(const int64_t* raw, const int64_t* feasible,
                           size_t n, bool reverse, double* out) {
  constexpr int64_t kMax = static_cast<int64_t>(kMaxNodeScore);
  int64_t hi = 0;
  for (size_t i = 0; i < n; ++i) {
    if (feasible[i] != 0) hi = std::max(hi, raw[i]);
  }
  // Most raw scores are 0 (no preferred term matches, no taint): those
  // need no division.
  const double zero = reverse ? kMaxNodeScore : 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (feasible[i] == 0) continue;
    if (raw[i] == 0) {
      out[i] = zero;
      continue;
    }
    const int64_t score = kMax * raw[i] / hi;
    out[i] = static_cast<double>(reverse ? kMax - score : score);
  }
}

}  // namespace ms
