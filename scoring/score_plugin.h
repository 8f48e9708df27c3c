// The built-in score plugins as Decide runs them: one ScorePlugin per
// built-in term of model/policy.h, each defined in its plugin file under
// scoring/plugins/ and listed once in score_plugins.cc's table.
//
// Per decision, for the pod being placed: PreScore once, over the feasible
// nodes (kube-scheduler's PreScore, Score and NormalizeScore together);
// then Decide adds weight * Scores()[i] to each node's built-in sum, in
// table order, and asks the winner's row (and every feasible node's, for
// explain) of Row. leastAllocated, balancedAllocation and recentPlacements
// have no Scores(): the vectorised kernels in decide.cc compute them from
// the NodeTable's columns, with the plugins' functions as their reference.
//
// A plugin keeps its scratch between decisions (one set per Workspace): not
// thread-safe.
#ifndef METRICS_SCHEDULER_SCORING_SCORE_PLUGIN_H_
#define METRICS_SCHEDULER_SCORING_SCORE_PLUGIN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/node_info.h"
#include "model/pod.h"
#include "model/pod_affinity.h"
#include "model/policy.h"
#include "model/resources.h"
#include "model/topology_spread.h"
#include "scoring/explanation.h"
#include "scoring/node_table.h"
#include "scoring/scoring_config.h"

namespace ms {

struct VolumeBindingFilter;  // scoring/plugins/volume_binding.h
class VolumeCatalog;         // scoring/volume_catalog.h

// What a plugin may read of one decision; every pointer outlives it.
struct ScoreContext {
  const Pod* pod = nullptr;
  const Resources* requests = nullptr;  // PodRequests(pod)
  const Resources* non_zero = nullptr;  // PodScoringRequests(pod)
  const std::vector<NodeInfo>* nodes = nullptr;
  const NodeTable* table = nullptr;   // built from `nodes`
  const int64_t* feasible = nullptr;  // [node]: != 0 when feasible
  const ScoringConfig* config = nullptr;
  const NamespaceLabels* namespaces = nullptr;
  const WorkloadSelectors* workloads = nullptr;  // null: none
  // Per node, this scheduler's placements since its metrics were sampled;
  // null: none.
  const std::vector<int32_t>* recent_placements = nullptr;
  // VolumeBinding's pre-filter state and the catalog it read; null when
  // the pod has no volumes.
  const VolumeBindingFilter* volume_binding = nullptr;
  const VolumeCatalog* volume_catalog = nullptr;

  size_t num_nodes() const { return nodes->size(); }
};

class ScorePlugin {
 public:
  virtual ~ScorePlugin() = default;

  // Pre-score and normalise over the feasible nodes. Returns whether the
  // term counts for this pod: false gives it weight 0 (a plugin that
  // kube-scheduler skips for the pod, or one that would score every node
  // alike) and no explain row unless ExplainedWhenOff.
  virtual bool PreScore(const ScoreContext& ctx) = 0;

  // After PreScore returned true: the normalised score in [0, 100] of each
  // feasible node, indexed by node. Null for the terms the kernels
  // compute.
  virtual const double* Scores() const { return nullptr; }

  // Node i's explanation row; `weight` is the configured weight when the
  // term counts, else 0.
  virtual TermResult Row(const ScoreContext& ctx, size_t i,
                         double weight) const = 0;

  // Whether the row is shown also when the term does not count (the
  // resource terms are on every node's row, "unused" when off).
  virtual bool ExplainedWhenOff() const { return false; }
};

// A plugin whose PreScore fills, per node, a raw score and its normalised
// one (the plugins other than the kernels'); its row shows both.
class NormalizedScorePlugin : public ScorePlugin {
 public:
  explicit NormalizedScorePlugin(BuiltinTerm term) : term_(term) {}

  const double* Scores() const final { return scores_.data(); }
  TermResult Row(const ScoreContext&, size_t i, double weight) const final {
    return BuiltinTermRow(BuiltinTermName(term_), static_cast<double>(raw_[i]),
                          scores_[i], weight);
  }

 protected:
  // Makes raw_ and scores_ hold at least `n` entries, kept between
  // decisions.
  void Reserve(size_t n) {
    if (raw_.size() < n) raw_.resize(n);
    if (scores_.size() < n) scores_.resize(n);
  }

  std::vector<int64_t> raw_;    // [node]
  std::vector<double> scores_;  // [node], in [0, 100]

 private:
  const BuiltinTerm term_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_SCORE_PLUGIN_H_
