// Load the metrics have not seen yet: what a pod adds to a metric's value
// on its node from the moment it starts there until a sample shows it
// (UnseenLoadEstimate, model/metrics.h; docs/configuration.md). The
// scheduler adds it to the sampled values its filters and scores read
// (scheduler/cycle/metric_views.h), for every pod bound recently, by this
// scheduler or any other.
#ifndef METRICS_SCHEDULER_SCORING_UNSEEN_LOAD_H_
#define METRICS_SCHEDULER_SCORING_UNSEEN_LOAD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "model/metrics.h"
#include "model/node.h"
#include "model/node_info.h"
#include "scoring/scoring_config.h"

namespace ms {

// What a controller's pods measure (estimate.siblings): their mean usage in
// the basis' unit (cores, bytes), over `pods` pods.
struct SiblingUsage {
  double mean = 0;
  int pods = 0;
};

// Per controller uid.
using SiblingUsages = absl::flat_hash_map<std::string, SiblingUsage>;

// The measured usage of each controller's pods, from a per-pod query's
// answer `by_pod`: the mean over the pods `find_pod` knows that have a
// controller and a finite sample no older than `max_staleness_ms` at
// `now_ms`, taken the estimate's sibling_warmup_ms() after the pod started
// (before that it may still be ramping up, or the query's window still
// reach back before its start; a pod not known to have started counts as
// not).
SiblingUsages MeasureSiblings(
    const UnseenLoadEstimate& estimate, const PodSamples& by_pod,
    absl::FunctionRef<const PodInfo*(const std::string& key)> find_pod,
    int64_t now_ms, int64_t max_staleness_ms);

// A pod's estimate for one metric term, and where it comes from (explain
// says which and why).
struct PodEstimate {
  enum class From {
    kNone,         // the term has no estimate
    kAnnotation,   // estimate.metrics-scheduler.io/<term>
    kSiblings,     // its controller's pods' measured usage
    kRequests,     // its requests (no sibling measured; no limit)
    kLimits,       // its limits (no sibling measured)
    kPerPod,       // the term's perPod factor
    kPerPodShare,  // the term's perPodShare factor (a share, not a value)
    kOwn,          // its own measured usage (PodTakes only)
  };
  From from = From::kNone;
  double value = 0;
  SiblingUsage siblings;  // with kSiblings
  double own = 0;         // with kOwn: its usage (cores, bytes)
};

// What `pod` adds to `term` on `node` while unseen: its annotation
// estimate.metrics-scheduler.io/<term name> when that is a finite decimal;
// else, for a basis on resources, factor x its siblings' mean usage (when
// `siblings`, non-null, has its controller) or its limit (a limits basis,
// when it has one) or its requests, over the node's allocatable (0 for a
// node with none); for perPod and perPodShare, the factor (for
// perPodShare a share of the node's sampled value, not a value:
// UnseenLoad multiplies it).
// 0 when the term has no estimate or grows by queueing (a node's, not a
// pod's: QueueingGrowth).
PodEstimate EstimatePod(const MetricTerm& term, const PodInfo& pod,
                        const Node& node, const SiblingUsages* siblings);

// The pod under `key` (namespace/name)'s own sample of `term`'s siblings
// query in `metrics` (null: none), when it is finite and was taken within
// the term's maxStaleness of `at_ms`; nullopt otherwise.
std::optional<double> OwnSample(const MetricsSnapshot* metrics,
                                const MetricTerm& term, const std::string& key,
                                int64_t at_ms);

// What `pod`, running on `node`, takes off `term`'s value there when it
// leaves (rebalancing, scoring/rebalance.h): for a basis on resources, its own
// measured usage `own` (in the basis' unit, its fresh sample of the
// siblings query; nullopt when none) x factor over the node's allocatable;
// else EstimatePod.
PodEstimate PodTakes(const MetricTerm& term, const PodInfo& pod,
                     const Node& node, const SiblingUsages* siblings,
                     std::optional<double> own);

// "siblings' measured usage (3 pods, 0.42 cores each)", "requests (no
// sibling measured)": how `estimate` of `term` was made, for explain.
std::string DescribeEstimate(const MetricTerm& term,
                             const PodEstimate& estimate);

// Per estimated term of `terms`, what `pod` adds on `node` and why:
// "cpu +0.375 for 2m: siblings' measured usage (2 pods, 1.5 cores each)".
// `siblings`: per term, as MetricViews measured them (may be empty).
std::vector<std::string> ExplainEstimates(
    const std::vector<MetricTerm>& terms, const PodInfo& pod, const Node& node,
    const std::vector<SiblingUsages>& siblings);

// For each estimated term of `terms` whose annotation
// estimate.metrics-scheduler.io/<term> in `annotations` is not a finite
// decimal: what is wrong and what is used instead, for an Event on the pod
// ("annotation estimate.metrics-scheduler.io/cpu: \"a lot\" is not a
// decimal; cpu is estimated as configured").
std::vector<std::string> InvalidEstimateAnnotations(
    const std::vector<MetricTerm>& terms,
    const std::map<std::string, std::string>& annotations);

// How much a queueing metric (estimate from queueing: a response time, a
// queue's length) grows when the utilisation `u` its sample saw becomes
// u + `unseen`: (1 - u) / (1 - u - unseen), as an M/M/1 queue's response
// time, and the load factor of Kingman's formula for any single-server
// queue, grow. Both utilisations are held to [0, kMaxQueueingUtilisation],
// so the growth is 1 when nothing is unseen or the node was already past
// it, and at most 20.
inline constexpr double kMaxQueueingUtilisation = 0.95;
double QueueingGrowth(double u, double unseen);

// The value an `unloaded` term reads (UnloadedValue, model/metrics.h):
// `sample` x (1 - u / full), u / full held to [0,
// kMaxUnloadedUtilisation]; NaN when `sample` or `u` is not finite.
inline constexpr double kMaxUnloadedUtilisation = 0.9;
double Unloaded(double sample, double u, double full);

// Whether a sample taken at `sample_ms` shows a pod that started at
// `start_ms` (epoch ms).
inline bool SampleShows(const UnseenLoadEstimate& estimate, int64_t sample_ms,
                        int64_t start_ms) {
  return sample_ms >= start_ms + estimate.warmup_ms;
}

// The part of a pod's estimate a sample taken at `sample_ms` has not seen,
// the pod started at `start_ms`: 1 then 0 once SampleShows (fade step and
// measured); 1 - (sample - start) / warmup within [0, 1] (fade linear).
double UnseenPart(const UnseenLoadEstimate& estimate, int64_t sample_ms,
                  int64_t start_ms);

// What `pod`, started at `start_ms` on `node`, adds to `term`'s value
// there, `sampled` at `sample_ms`: its estimate (EstimatePod) x
// UnseenPart, and for perPodShare x `sampled` too (0 when that is not
// finite, and never below 0); with fade measured, less what its own sample
// `own` of the siblings query (cores, bytes; nullopt: none) shows of it on
// the node, never below 0.
double UnseenLoad(const MetricTerm& term, const PodInfo& pod, const Node& node,
                  const SiblingUsages* siblings, int64_t sample_ms,
                  int64_t start_ms, double sampled, std::optional<double> own);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_UNSEEN_LOAD_H_
