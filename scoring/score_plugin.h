// The built-in score plugins as Decide runs them: one ScorePlugin per
// built-in term of model/policy.h, each defined in its plugin file under
// scoring/plugins/ and listed once in score_plugins.cc's table.
//
// Per decision, for the pod being placed: PreScore once, over the feasible
// nodes (kube-scheduler's PreScore, Score and NormalizeScore together);
// then Decide adds weight * each node's score (Scores()) to its built-in
// sum, in table order, and asks the winner's row (and every feasible
// node's, for explain) of Row. leastAllocated, balancedAllocation and
// recentPlacements have no Scores(): the vectorised kernels in decide.cc
// compute them from the NodeTable's columns, with the plugins' functions
// as their reference.
//
// A plugin keeps its scratch between decisions (one set per Workspace): not
// thread-safe.
#ifndef METRICS_SCHEDULER_SCORING_SCORE_PLUGIN_H_
#define METRICS_SCHEDULER_SCORING_SCORE_PLUGIN_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
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
#include "scoring/term_scores.h"
#include "scoring/unseen_load.h"

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
  // Per metric term, what each controller's pods measure
  // (DecideInput::siblings); null: nothing measured.
  const std::vector<SiblingUsages>* siblings = nullptr;
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

  // After PreScore returned true: the normalised score of each feasible
  // node. None for the terms the kernels compute.
  virtual std::optional<TermScores> Scores() const { return std::nullopt; }

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

  std::optional<TermScores> Scores() const final {
    return TermScores{.dense = scores_.data()};
  }
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

// A plugin whose scores are the same on all but a few nodes (those with
// soft taints, those holding the pod's images): PreScore lists those
// nodes, ascending, with their raw and normalised scores, and the others
// read as `base_raw` and `base_score`. Nothing is written per node.
class SparseScorePlugin : public ScorePlugin {
 public:
  SparseScorePlugin(BuiltinTerm term, int64_t base_raw, double base_score)
      : base_raw_(base_raw), base_score_(base_score), term_(term) {}

  std::optional<TermScores> Scores() const final {
    return TermScores{.base = base_score_,
                      .nodes = nodes_.data(),
                      .values = scores_.data(),
                      .count = nodes_.size()};
  }
  TermResult Row(const ScoreContext&, size_t i, double weight) const final {
    const auto at = std::lower_bound(nodes_.begin(), nodes_.end(), i);
    const bool listed = at != nodes_.end() && *at == i;
    const size_t e = static_cast<size_t>(at - nodes_.begin());
    return BuiltinTermRow(BuiltinTermName(term_),
                          static_cast<double>(listed ? raw_[e] : base_raw_),
                          listed ? scores_[e] : base_score_, weight);
  }

 protected:
  std::vector<uint32_t> nodes_;  // ascending
  std::vector<int64_t> raw_;     // [e]: nodes_[e]'s
  std::vector<double> scores_;   // [e]: nodes_[e]'s, in [0, 100]

 private:
  const int64_t base_raw_;
  const double base_score_;
  const BuiltinTerm term_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_SCORE_PLUGIN_H_
