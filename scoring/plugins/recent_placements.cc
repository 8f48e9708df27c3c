#include "scoring/plugins/recent_placements.h"

namespace ms {

TermResult RecentPlacementsTerm(int32_t placements, double penalty,
                                double weight) {
  return BuiltinTermRow(kTermRecentPlacements, placements,
                        RecentPlacementsScore(placements, penalty), weight);
}

}  // namespace ms
