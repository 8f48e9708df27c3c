#include "scheduler/cycle/shadow.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "common/logging.h"
#include "glog/logging.h"

namespace ms {

Shadow::Shadow(std::string watched, ClusterState& state,
               const ScoringConfig& scoring,
               const metrics::MetricsCache* cache, Registry& registry)
    : watched_(std::move(watched)),
      state_(state),
      scoring_(scoring),
      cache_(cache),
      decisions_(registry.AddCounter(
          "metrics_scheduler_shadow_decisions_total",
          "Shadow mode: pods of the watched scheduler judged when first seen "
          "bound, by whether metrics-scheduler would have chosen the same "
          "node.",
          {"agreed"})),
      infeasible_(registry.AddCounter(
          "metrics_scheduler_shadow_infeasible_total",
          "Shadow mode: pods whose node, as the watched scheduler chose it, "
          "fails metrics-scheduler's filters (a metric threshold, or a view "
          "of the cluster that differs).")),
      gap_(registry.AddHistogram(
          "metrics_scheduler_shadow_score_gap",
          "Shadow mode: metrics-scheduler's choice's total score minus the "
          "chosen node's, under metrics-scheduler's scoring (0 when they "
          "agree).",
          {0, 1, 2, 5, 10, 20, 30, 50, 75, 100})) {
  decisions_.With({"true"});
  decisions_.With({"false"});
  infeasible_.With({});
  gap_.With({});
}

void Shadow::OnPodDeleted(const Pod& pod) {
  absl::MutexLock lock(&mu_);
  pending_.erase(pod.uid);
}

void Shadow::OnPod(const Pod& pod) {
  if (pod.scheduler_name != watched_) return;
  absl::MutexLock lock(&mu_);
  if (pod.node_name.empty()) {
    pending_.insert(pod.uid);
    return;
  }
  if (pending_.erase(pod.uid) == 0) return;  // not seen pending, or judged

  Pod pending = pod;  // as the watched scheduler saw it
  pending.node_name.clear();
  std::string ours;
  Decision d = state_.DecideAndAssume(
      {.pod = &pending,
       .config = &scoring_,
       .metrics = cache_ != nullptr ? cache_->Snapshot() : nullptr,
       .explain = true,
       .assume = false},
      workspace_, &ours);
  const NodeExplanation* theirs = nullptr;
  if (d.explanation.has_value()) {
    for (const NodeExplanation& row : d.explanation->nodes) {
      if (row.node == pod.node_name) theirs = &row;
    }
  }
  const bool agreed = ours == pod.node_name;
  decisions_.With({agreed ? "true" : "false"}).Inc();
  if (theirs == nullptr || !theirs->feasible) {
    infeasible_.With({}).Inc();
    MS_VLOG(1) << "shadow: " << pod.Key() << " went to " << pod.node_name
               << ", which metrics-scheduler's filters reject ("
               << (theirs != nullptr ? theirs->filter_reason : "unknown node")
               << "); it would have chosen "
               << (ours.empty() ? "no node" : ours)
               << LogFields().Pod(pod.namespace_, pod.name).Node(pod.node_name);
    return;
  }
  const double gap = d.ok() ? d.score - theirs->total : 0;
  gap_.With({}).Observe(gap);
  if (!agreed) {
    MS_VLOG(1) << absl::StrFormat(
                      "shadow: %s went to %s (%.2f); metrics-scheduler would "
                      "have chosen %s (%.2f, mode %s)",
                      pod.Key(), pod.node_name, theirs->total, ours, d.score,
                      d.mode == ScoringMode::kMetrics ? "metrics" : "fallback")
               << LogFields().Pod(pod.namespace_, pod.name).Node(pod.node_name);
  }
}

}  // namespace ms
