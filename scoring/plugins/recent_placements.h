// recentPlacements (ours): herd avoidance. Metrics lag the pods placed since
// they were sampled, so a node that has just taken pods scores lower until
// its next sample shows their load:
//   score = max(0, 100 - herd.penaltyPerPlacement * placements),
// where `placements` counts this scheduler's bindings to the node since the
// node's metrics were last sampled (the caller keeps the counts).
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_RECENT_PLACEMENTS_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_RECENT_PLACEMENTS_H_

#include <cstdint>
#include <memory>

#include "scoring/explanation.h"
#include "scoring/score_plugin.h"

namespace ms {

// Score. Inline, as a select, so that the vectorised kernel uses it as is.
inline double RecentPlacementsScore(double placements, double penalty) {
  const double s = kMaxNodeScore - penalty * placements;
  return 0.0 < s ? s : 0.0;  // std::max(0.0, s)
}

// The explanation row: raw = the placements. A weight <= 0 leaves the term
// unused.
TermResult RecentPlacementsTerm(int32_t placements, double penalty,
                                double weight);

// The recentPlacements term (scored by the kernels; Scores() is null).
std::unique_ptr<ScorePlugin> MakeRecentPlacementsPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_RECENT_PLACEMENTS_H_
