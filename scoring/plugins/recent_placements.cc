#include "scoring/plugins/recent_placements.h"

namespace ms {

TermResult RecentPlacementsTerm(int32_t placements, double penalty,
                                double weight) {
  TermResult r{.name = kTermRecentPlacements};
  r.raw = placements;
  r.score = RecentPlacementsScore(placements, penalty);
  if (weight > 0) {
    r.weight = weight;
  } else {
    r.state = TermState::kUnused;
  }
  return r;
}

}  // namespace ms
