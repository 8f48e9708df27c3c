// kube-scheduler's helper.DefaultNormalizeScore, which NodeAffinity,
// TaintToleration and others normalise their scores with.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_DEFAULT_NORMALIZE_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_DEFAULT_NORMALIZE_H_

#include <cstddef>
#include <cstdint>

namespace ms {

// Over the feasible nodes (feasible[i] != 0): out[i] = 100 * raw[i] / max
// (integer division; max = the highest raw score, raw >= 0), or 100 minus
// that when `reverse`. When max is 0 every node gets 0, or 100 when
// `reverse`. Infeasible nodes' out is left alone.
void DefaultNormalizeScore(const int64_t* raw, const int64_t* feasible,
                           size_t n, bool reverse, double* out);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_DEFAULT_NORMALIZE_H_
