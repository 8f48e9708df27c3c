#include "scoring/score.h"

#include <algorithm>
#include <cmath>

namespace ms {

double NormalizeValue(Direction direction, const NormalizationConfig& norm,
                      const ColumnStats& stats, double v) {
  const bool lower = direction == Direction::kLower;
  switch (norm.type) {
    case NormalizationType::kMinMax: {
      if (!(stats.max > stats.min)) return kMaxNodeScore;
      double k = kMaxNodeScore / (stats.max - stats.min);
      double s = lower ? (stats.max - v) * k : (v - stats.min) * k;
      return std::clamp(s, 0.0, kMaxNodeScore);
    }
    case NormalizationType::kRange: {
      double k = kMaxNodeScore / (norm.max - norm.min);
      double s = lower ? (norm.max - v) * k : (v - norm.min) * k;
      return std::clamp(s, 0.0, kMaxNodeScore);
    }
    case NormalizationType::kRatio: {
      double x = std::max(v, 0.0);
      if (lower) {
        double best = std::max(stats.min, 0.0);
        if (x == 0) return kMaxNodeScore;
        return std::clamp(kMaxNodeScore * best / x, 0.0, kMaxNodeScore);
      }
      double best = std::max(stats.max, 0.0);
      if (best == 0) return kMaxNodeScore;
      return std::clamp(x * (kMaxNodeScore / best), 0.0, kMaxNodeScore);
    }
  }
  return 0;
}

double MissingScore(MissingPolicy policy) {
  return policy == MissingPolicy::kNeutral ? kNeutralScore : 0.0;
}

namespace {

int64_t LeastRequested(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * 100 / capacity;
}

}  // namespace

int64_t LeastAllocatedScore(int64_t alloc_cpu, int64_t requested_cpu,
                            int64_t alloc_memory, int64_t requested_memory) {
  int64_t sum = 0, weights = 0;
  if (alloc_cpu != 0) {
    sum += LeastRequested(requested_cpu, alloc_cpu);
    ++weights;
  }
  if (alloc_memory != 0) {
    sum += LeastRequested(requested_memory, alloc_memory);
    ++weights;
  }
  return weights == 0 ? 0 : sum / weights;
}

int64_t BalancedAllocationScore(int64_t alloc_cpu, int64_t requested_cpu,
                                int64_t alloc_memory,
                                int64_t requested_memory) {
  double fractions[2];
  int n = 0;
  if (alloc_cpu != 0) {
    fractions[n++] = std::min(static_cast<double>(requested_cpu) /
                                  static_cast<double>(alloc_cpu),
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

double RecentPlacementsScore(int32_t placements, double penalty) {
  return std::max(0.0, kMaxNodeScore - penalty * placements);
}

}  // namespace ms
