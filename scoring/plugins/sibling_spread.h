// siblingSpread (ours, off unless weighted): spreads a controller's pods
// over nodes while what they use is not measured yet.
//
// Until a workload's pods have run long enough for a sample to show their
// usage, each is estimated from its requests, and its siblings (the pods of
// the same controller: ReplicaSet, StatefulSet, Job...) are all off by the
// same factor: a workload that uses three times its requests does so on
// every node. Nodes that hold several of them stack one unknown several
// times, so the pod goes where fewer of its siblings are, as
// kube-scheduler's old SelectorSpread spread a ReplicaSet, by the
// controller of any kind. Once a term with estimate.siblings measures the
// controller (MetricViews), its estimate says what each pod adds and the
// term stops counting for its pods.
//
// Score, for a pod with a controller no term measures: raw = the
// non-terminating pods of that controller on the node (the pod itself
// left out); with M the highest raw over the feasible nodes,
// score = 100 - 100 * raw / M (integer division, as kube-scheduler's
// reversed DefaultNormalizeScore). It does not count (weight 0, no row)
// for a pod without a controller, with its controller measured, or when
// no feasible node holds a sibling (M = 0).
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_SIBLING_SPREAD_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_SIBLING_SPREAD_H_

#include <memory>
#include <string>
#include <vector>

#include "scoring/score_plugin.h"
#include "scoring/scoring_config.h"
#include "scoring/unseen_load.h"

namespace ms {

// Whether some term of `config` with estimate.siblings measures the
// controller with uid `owner_uid` in `siblings` (per term, as
// DecideInput::siblings; null or short: nothing measured).
bool SiblingsMeasured(const ScoringConfig& config,
                      const std::vector<SiblingUsages>* siblings,
                      const std::string& owner_uid);

// The siblingSpread term (sparse: only nodes holding a sibling score below
// 100).
std::unique_ptr<ScorePlugin> MakeSiblingSpreadPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_SIBLING_SPREAD_H_
