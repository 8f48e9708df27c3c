// Load the metrics have not seen yet: what a pod adds to a metric's value
// on its node from the moment it starts there until a sample shows it
// (UnseenLoadEstimate, model/metrics.h; docs/configuration.md). The
// scheduler adds it to the sampled values its filters and scores read
// (scheduler/cycle/metric_views.h), for every pod bound recently, by this
// scheduler or any other.
#ifndef METRICS_SCHEDULER_SCORING_UNSEEN_LOAD_H_
#define METRICS_SCHEDULER_SCORING_UNSEEN_LOAD_H_

#include <cstdint>

#include "model/node.h"
#include "model/node_info.h"
#include "scoring/scoring_config.h"

namespace ms {

// What `pod` adds to `term` on `node` while unseen: its annotation
// estimate.metrics-scheduler.io/<term name> when that is a finite decimal,
// else the term's basis (0 for a node with no allocatable of the
// resource). 0 when the term has no estimate.
double UnseenLoad(const MetricTerm& term, const PodInfo& pod, const Node& node);

// Whether a sample taken at `sample_ms` shows a pod that started at
// `start_ms` (epoch ms).
inline bool SampleShows(const UnseenLoadEstimate& estimate, int64_t sample_ms,
                        int64_t start_ms) {
  return sample_ms >= start_ms + estimate.warmup_ms;
}

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_UNSEEN_LOAD_H_
