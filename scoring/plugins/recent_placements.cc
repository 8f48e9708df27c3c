#include "scoring/plugins/recent_placements.h"

namespace ms {

TermResult RecentPlacementsTerm(int32_t placements, double penalty,
                                double weight) {
  return BuiltinTermRow(BuiltinTermName(BuiltinTerm::kRecentPlacements),
                        placements, RecentPlacementsScore(placements, penalty),
                        weight);
}

namespace {

class RecentPlacementsPlugin final : public ScorePlugin {
 public:
  bool PreScore(const ScoreContext&) override { return true; }
  TermResult Row(const ScoreContext& ctx, size_t i,
                 double weight) const override {
    const std::vector<int32_t>* counts = ctx.recent_placements;
    const int32_t placements =
        counts != nullptr && i < counts->size() ? (*counts)[i] : 0;
    return RecentPlacementsTerm(placements, ctx.config->penalty_per_placement,
                                weight);
  }
  bool ExplainedWhenOff() const override { return true; }
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeRecentPlacementsPlugin() {
  return std::make_unique<RecentPlacementsPlugin>();
}

}  // namespace ms
