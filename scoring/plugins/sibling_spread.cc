#include "scoring/plugins/sibling_spread.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "scoring/pod_label_index.h"

namespace ms {

bool SiblingsMeasured(const ScoringConfig& config,
                      const std::vector<SiblingUsages>* siblings,
                      const std::string& owner_uid) {
  if (siblings == nullptr) return false;
  for (size_t t = 0; t < config.metrics.size() && t < siblings->size(); ++t) {
    if (config.metrics[t].estimate.siblings_query.empty()) continue;
    if ((*siblings)[t].contains(owner_uid)) return true;
  }
  return false;
}

namespace {

class SiblingSpreadPlugin final : public SparseScorePlugin {
 public:
  SiblingSpreadPlugin()
      : SparseScorePlugin(BuiltinTerm::kSiblingSpread, 0, kMaxNodeScore) {}

  bool PreScore(const ScoreContext& ctx) override {
    nodes_.clear();
    raw_.clear();
    scores_.clear();
    if (ctx.config->builtins[BuiltinTerm::kSiblingSpread] <= 0) return false;
    const Pod& pod = *ctx.pod;
    if (!pod.controller.has_value() || pod.controller->uid.empty()) {
      return false;
    }
    const std::string& owner = pod.controller->uid;
    if (SiblingsMeasured(*ctx.config, ctx.siblings, owner)) return false;
    const PodLabelIndex::Entries* placed =
        ctx.table->pod_index().WithOwner(owner);
    if (placed == nullptr) return false;
    counts_.clear();
    for (const PodLabelIndex::Entry& e : *placed) {
      if (ctx.feasible[e.node] == 0 || e.pod->terminating ||
          e.pod->uid == pod.uid) {
        continue;
      }
      counts_.push_back(e.node);
    }
    if (counts_.empty()) return false;
    std::sort(counts_.begin(), counts_.end());
    int64_t hi = 0;
    for (size_t i = 0; i < counts_.size();) {
      size_t j = i;
      while (j < counts_.size() && counts_[j] == counts_[i]) ++j;
      nodes_.push_back(counts_[i]);
      raw_.push_back(static_cast<int64_t>(j - i));
      hi = std::max(hi, raw_.back());
      i = j;
    }
    constexpr int64_t kMax = static_cast<int64_t>(kMaxNodeScore);
    for (int64_t raw : raw_) {
      scores_.push_back(static_cast<double>(kMax - kMax * raw / hi));
    }
    return true;
  }

 private:
  std::vector<uint32_t> counts_;  // the siblings' nodes, one per sibling
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeSiblingSpreadPlugin() {
  return std::make_unique<SiblingSpreadPlugin>();
}

}  // namespace ms
