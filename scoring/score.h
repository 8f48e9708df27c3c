// The arithmetic of one term for one node: normalisation of metric values
// and kube-scheduler's built-in scores. Reference implementations, exact and
// scalar; Decide (decide.h) runs equivalent loops over whole columns, and
// the tests hold the two to the same results. Pure functions.
#ifndef METRICS_SCHEDULER_SCORING_SCORE_H_
#define METRICS_SCHEDULER_SCORING_SCORE_H_

#include <cstdint>

#include "config/config.h"

namespace ms {

inline constexpr double kMaxNodeScore = 100;
inline constexpr double kNeutralScore = 50;

// What normalisation needs to know of the usable values of one metric over
// the feasible nodes.
struct ColumnStats {
  int usable = 0;   // nodes with a finite, fresh value
  double min = 0;   // over the usable values
  double max = 0;
};

// The score in [0, 100] of a usable value `v`:
//   minmax, lower:  (max - v) * 100 / (max - min); all equal: 100
//   minmax, higher: (v - min) * 100 / (max - min); all equal: 100
//   range [lo, hi], lower: (hi - v) * 100 / (hi - lo), clamped to [0, 100]
//   range [lo, hi], higher: (v - lo) * 100 / (hi - lo), clamped
//   ratio, lower:  100 * best / v with best = max(min, 0), v clamped at 0;
//                  a value of 0 scores 100
//   ratio, higher: 100 * v / best with best = max, v clamped at 0; when
//                  best is 0 every node scores 100
double NormalizeValue(Direction direction, const NormalizationConfig& norm,
                      const ColumnStats& stats, double v);

// The score a node with no usable value gets under `policy`: 50 (neutral),
// 0 (worst); kExclude and kSkip have none (the caller filters or skips).
double MissingScore(MissingPolicy policy);

// kube-scheduler's NodeResourcesFit LeastAllocated score with its default
// resources (cpu and memory, weight 1 each), in integers:
//   per resource: (allocatable - requested) * 100 / allocatable, 0 when
//   requested > allocatable; a resource with allocatable 0 is left out;
//   score = sum / number of resources counted (0 when none).
// `requested` is the node's non-zero requests plus the pod's.
int64_t LeastAllocatedScore(int64_t alloc_cpu, int64_t requested_cpu,
                            int64_t alloc_memory, int64_t requested_memory);

// kube-scheduler 1.34's NodeResourcesBalancedAllocation score for cpu and
// memory: fraction_r = min(requested_r / allocatable_r, 1) (resources with
// allocatable 0 left out), std = |f_cpu - f_mem| / 2 with two resources,
// score = int64((1 - std) * 100). Like kube-scheduler, `requested` is the
// node's actual requests plus the pod's (not the non-zero ones), and the
// term is skipped for a pod that requests neither cpu nor memory.
int64_t BalancedAllocationScore(int64_t alloc_cpu, int64_t requested_cpu,
                                int64_t alloc_memory,
                                int64_t requested_memory);

// Herd avoidance: max(0, 100 - penalty * placements).
double RecentPlacementsScore(int32_t placements, double penalty);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_SCORE_H_
