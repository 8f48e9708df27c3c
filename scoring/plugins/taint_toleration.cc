#include "scoring/plugins/taint_toleration.h"

#include <algorithm>

namespace ms {

bool ToleratesTaint(const Toleration& t, const Taint& taint) {
  if (t.effect.has_value() && *t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  switch (t.op) {
    case TolerationOperator::kEqual:
      return t.value == taint.value;
    case TolerationOperator::kExists:
      return true;
  }
  return false;
}

bool ToleratesTaint(const std::vector<Toleration>& tolerations,
                    const Taint& taint) {
  for (const Toleration& t : tolerations) {
    if (ToleratesTaint(t, taint)) return true;
  }
  return false;
}

bool IsHardTaint(const Taint& t) {
  return t.effect == TaintEffect::kNoSchedule ||
         t.effect == TaintEffect::kNoExecute;
}

const Taint* FirstUntoleratedTaint(const std::vector<Toleration>& tolerations,
                                   const std::vector<Taint>& taints) {
  for (const Taint& taint : taints) {
    if (IsHardTaint(taint) && !ToleratesTaint(tolerations, taint)) {
      return &taint;
    }
  }
  return nullptr;
}

int64_t TaintTolerationScore(const std::vector<Toleration>& tolerations,
                             const std::vector<Taint>& taints) {
  int64_t count = 0;
  for (const Taint& taint : taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule &&
        !ToleratesTaint(tolerations, taint)) {
      ++count;
    }
  }
  return count;
}

namespace {

class TaintTolerationPlugin final : public SparseScorePlugin {
 public:
  TaintTolerationPlugin()
      : SparseScorePlugin(BuiltinTerm::kTaintToleration, 0, kMaxNodeScore) {}

  // Only the nodes with PreferNoSchedule taints can score below 100, so
  // only they are counted.
  bool PreScore(const ScoreContext& ctx) override {
    const std::vector<NodeInfo>& nodes = *ctx.nodes;
    nodes_.clear();
    raw_.clear();
    scores_.clear();
    // A pod none of whose tolerations has the effect PreferNoSchedule (or
    // none) scores each node's count of such taints (the table's).
    const std::vector<Toleration>& tolerations = ctx.pod->tolerations;
    const bool may_tolerate = std::any_of(
        tolerations.begin(), tolerations.end(), [](const Toleration& t) {
          return !t.effect.has_value() ||
                 *t.effect == TaintEffect::kPreferNoSchedule;
        });
    const uint32_t* counts = ctx.table->soft_taints();
    int64_t hi = 0;
    for (uint32_t i : ctx.table->soft_tainted()) {
      if (ctx.feasible[i] == 0) continue;
      const int64_t raw =
          may_tolerate ? TaintTolerationScore(tolerations, nodes[i].node.taints)
                       : counts[i];
      if (raw == 0) continue;
      nodes_.push_back(i);
      raw_.push_back(raw);
      hi = std::max(hi, raw);
    }
    if (hi == 0) return false;
    // DefaultNormalizeScore, reversed, over the only nodes that can differ
    // from 100.
    // One division per count in a row (most nodes have one such taint).
    constexpr int64_t kMax = static_cast<int64_t>(kMaxNodeScore);
    int64_t last_raw = -1;
    double last_score = 0;
    for (int64_t raw : raw_) {
      if (raw != last_raw) {
        last_raw = raw;
        last_score = static_cast<double>(kMax - kMax * raw / hi);
      }
      scores_.push_back(last_score);
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeTaintTolerationPlugin() {
  return std::make_unique<TaintTolerationPlugin>();
}

}  // namespace ms
