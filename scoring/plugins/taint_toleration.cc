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

class TaintTolerationPlugin final : public NormalizedScorePlugin {
 public:
  TaintTolerationPlugin()
      : NormalizedScorePlugin(BuiltinTerm::kTaintToleration) {}

  // Only the nodes with PreferNoSchedule taints can score below 100, so
  // only they are counted.
  bool PreScore(const ScoreContext& ctx) override {
    const std::vector<NodeInfo>& nodes = *ctx.nodes;
    const size_t n = nodes.size();
    const std::vector<uint32_t>& soft = ctx.table->soft_tainted();
    int64_t hi = 0;
    bool zeroed = false;
    for (uint32_t i : soft) {
      if (ctx.feasible[i] == 0) continue;
      if (!zeroed) {
        Reserve(n);
        std::fill_n(raw_.begin(), n, 0);
        zeroed = true;
      }
      raw_[i] =
          TaintTolerationScore(ctx.pod->tolerations, nodes[i].node.taints);
      hi = std::max(hi, raw_[i]);
    }
    if (hi == 0) return false;
    // DefaultNormalizeScore, reversed, over the only nodes that can differ
    // from 100.
    std::fill_n(scores_.begin(), n, kMaxNodeScore);
    constexpr int64_t kMax = static_cast<int64_t>(kMaxNodeScore);
    for (uint32_t i : soft) {
      if (ctx.feasible[i] == 0 || raw_[i] == 0) continue;
      scores_[i] = static_cast<double>(kMax - kMax * raw_[i] / hi);
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeTaintTolerationPlugin() {
  return std::make_unique<TaintTolerationPlugin>();
}

}  // namespace ms
