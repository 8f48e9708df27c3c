// TermScores: how a built-in score plugin hands its normalised scores to
// Decide (scoring/score_plugin.h), dense or as the few nodes that differ
// from a common score.
#ifndef METRICS_SCHEDULER_SCORING_TERM_SCORES_H_
#define METRICS_SCHEDULER_SCORING_TERM_SCORES_H_

#include <cstddef>
#include <cstdint>

namespace ms {

// A term's normalised scores, in [0, 100], by node: dense[i] when `dense`
// is set; else `base` on every node but nodes[e] (ascending), which scores
// values[e]. Only the feasible nodes' scores are read.
struct TermScores {
  const double* dense = nullptr;
  double base = 0;
  const uint32_t* nodes = nullptr;
  const double* values = nullptr;
  size_t count = 0;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_TERM_SCORES_H_
