// TaintToleration (kube-scheduler: plugins/tainttoleration).
//
// Filter: every NoSchedule and NoExecute taint of the node must be tolerated
// by one of the pod's tolerations, else "node(s) had untolerated taint(s)"
// (kube-scheduler logs which one at -v=4; it is not in the reason).
// PreferNoSchedule taints never filter.
//
// Score: how many PreferNoSchedule taints of the node the pod does not
// tolerate, normalised in reverse (DefaultNormalizeScore): 100 - 100 *
// count / the highest count among the feasible nodes, 100 everywhere when
// that is 0. kube-scheduler never skips it, but with no PreferNoSchedule
// taint on any node it is 100 on every node and cannot change the choice:
// Decide then leaves it out (no row, no weight), as it does for skipped
// plugins.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_TAINT_TOLERATION_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_TAINT_TOLERATION_H_

#include <memory>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "scoring/score_plugin.h"

namespace ms {

// v1helper's ToleratesTaint: effects match (an empty toleration effect
// matches any), keys match (an empty key with Exists matches any), then
// Equal compares values and Exists does not.
bool ToleratesTaint(const Toleration& toleration, const Taint& taint);
bool ToleratesTaint(const std::vector<Toleration>& tolerations,
                    const Taint& taint);

// Whether the taint can filter (NoSchedule or NoExecute).
bool IsHardTaint(const Taint& taint);

// Filter: the first hard taint of `taints` not tolerated, or null.
const Taint* FirstUntoleratedTaint(const std::vector<Toleration>& tolerations,
                                   const std::vector<Taint>& taints);

inline constexpr char kReasonUntoleratedTaint[] =
    "node(s) had untolerated taint(s)";

// Score.
int64_t TaintTolerationScore(const std::vector<Toleration>& tolerations,
                             const std::vector<Taint>& taints);

// The taintToleration term: TaintTolerationScore, normalised reversed;
// counts only when a feasible node has a PreferNoSchedule taint the pod does
// not tolerate (otherwise every node scores 100).
std::unique_ptr<ScorePlugin> MakeTaintTolerationPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_TAINT_TOLERATION_H_
