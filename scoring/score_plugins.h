// The table of built-in score plugins: one per BuiltinTerm, in
// kBuiltinTerms' order (model/policy.h), each made by its plugin file.
#ifndef METRICS_SCHEDULER_SCORING_SCORE_PLUGINS_H_
#define METRICS_SCHEDULER_SCORING_SCORE_PLUGINS_H_

#include <array>
#include <memory>

#include "model/policy.h"
#include "scoring/score_plugin.h"

namespace ms {

// One plugin per built-in term, indexed by BuiltinTerm.
using ScorePlugins = std::array<std::unique_ptr<ScorePlugin>, kNumBuiltinTerms>;
ScorePlugins MakeScorePlugins();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_SCORE_PLUGINS_H_
