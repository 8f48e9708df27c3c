// The vocabulary of a scoring policy, shared by the configuration (config/,
// which reads it from YAML) and the scorer (scoring/, which applies it):
// how a metric's values become scores, and the built-in terms with their
// names and default weights.
//
// The built-in terms are one table, kBuiltinTerms, in the order Decide adds
// and explains them. A new built-in term is a row here and its plugin's
// row in scoring/score_plugins.cc (the compiler checks that the two tables
// agree); config/ and explain read the name and the default weight from
// here.
#ifndef METRICS_SCHEDULER_MODEL_POLICY_H_
#define METRICS_SCHEDULER_MODEL_POLICY_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace ms {

// Which value of a metric is better.
enum class Direction { kLower, kHigher };

enum class NormalizationType {
  // 100 for the best node among the feasible ones, 0 for the worst, linear
  // between; all equal: 100 for all.
  kMinMax,
  // Linear over the fixed range [min, max], clamped to [0, 100].
  kRange,
  // best / value (lower is better) or value / best (higher is better),
  // times 100, over values clamped at 0.
  kRatio,
  // 100 at `target`, falling linearly on both sides over the fixed range
  // [min, max], as Trimaran's TargetLoadPacking: with u and t the value and
  // the target on [min, max] -> [0, 100], (100 - t) * u / t + t up to the
  // target (t at min and below), t * (100 - u) / (100 - t) above it (0 at
  // max and beyond): just past the target the score drops from 100 to t.
  // The direction does not apply.
  kTarget,
};

struct NormalizationConfig {
  NormalizationType type = NormalizationType::kMinMax;
  double min = 0;     // kRange and kTarget only; finite, < max (< target)
  double max = 0;     // kRange and kTarget only; finite, > min (> target)
  double target = 0;  // kTarget only; finite, min < target < max
};

// What a node whose value is missing, NaN/Inf or stale gets.
enum class MissingPolicy {
  kNeutral,  // a score of 50
  kWorst,    // a score of 0
  kExclude,  // the node is filtered out
  kSkip,     // the term is left out for that node; weights renormalised
};

// The built-in terms, in kBuiltinTerms' order.
enum class BuiltinTerm : uint8_t {
  kLeastAllocated,
  kBalancedAllocation,
  kRecentPlacements,
  kPodTopologySpread,
  kInterPodAffinity,
  kNodeAffinity,
  kTaintToleration,
  kImageLocality,
  kVolumeBinding,
  kSiblingSpread,
};

struct BuiltinTermSpec {
  BuiltinTerm term;
  // The key under `builtins:` in the configuration and the term's name in
  // explain and events; no metric may take it.
  const char* name;
  double default_weight;
};

inline constexpr BuiltinTermSpec kBuiltinTerms[] = {
    // kube-scheduler's NodeResourcesFit (LeastAllocated strategy) and
    // NodeResourcesBalancedAllocation.
    {BuiltinTerm::kLeastAllocated, "leastAllocated", 1},
    {BuiltinTerm::kBalancedAllocation, "balancedAllocation", 1},
    // Ours: herd avoidance (scoring/plugins/recent_placements.h).
    {BuiltinTerm::kRecentPlacements, "recentPlacements", 1},
    // kube-scheduler's, at its default weights.
    {BuiltinTerm::kPodTopologySpread, "podTopologySpread", 2},
    {BuiltinTerm::kInterPodAffinity, "interPodAffinity", 2},
    {BuiltinTerm::kNodeAffinity, "nodeAffinity", 2},
    {BuiltinTerm::kTaintToleration, "taintToleration", 3},
    {BuiltinTerm::kImageLocality, "imageLocality", 1},
    // kube-scheduler's VolumeBinding score (Kubernetes 1.37 on).
    {BuiltinTerm::kVolumeBinding, "volumeBinding", 1},
    // Ours, off unless weighted: a controller's pods spread while their
    // usage is not measured (scoring/plugins/sibling_spread.h).
    {BuiltinTerm::kSiblingSpread, "siblingSpread", 0},
};

inline constexpr size_t kNumBuiltinTerms = std::size(kBuiltinTerms);

constexpr bool BuiltinTermsInOrder() {
  for (size_t i = 0; i < kNumBuiltinTerms; ++i) {
    if (static_cast<size_t>(kBuiltinTerms[i].term) != i) return false;
  }
  return true;
}
static_assert(BuiltinTermsInOrder(), "kBuiltinTerms[i].term must be i");

constexpr const BuiltinTermSpec& BuiltinTermOf(BuiltinTerm term) {
  return kBuiltinTerms[static_cast<size_t>(term)];
}

constexpr const char* BuiltinTermName(BuiltinTerm term) {
  return BuiltinTermOf(term).name;
}

// A weight per built-in term, each at its default until set; 0 turns a term
// off. As configured: finite, >= 0.
class BuiltinWeights {
 public:
  constexpr BuiltinWeights() {
    for (size_t i = 0; i < kNumBuiltinTerms; ++i) {
      weights_[i] = kBuiltinTerms[i].default_weight;
    }
  }

  double& operator[](BuiltinTerm term) {
    return weights_[static_cast<size_t>(term)];
  }
  double operator[](BuiltinTerm term) const {
    return weights_[static_cast<size_t>(term)];
  }

  friend bool operator==(const BuiltinWeights&,
                         const BuiltinWeights&) = default;

 private:
  std::array<double, kNumBuiltinTerms> weights_{};
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_POLICY_H_
