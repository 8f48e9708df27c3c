#include "scoring/plugins/balanced_allocation.h"

#include <memory>

namespace ms {

int64_t BalancedAllocationScore(const KubeVersion& kube,
                                const Resources& allocatable,
                                const Resources& node, const Resources& pod) {
  const int64_t with_pod = ResourceBalanceScore(
      allocatable.milli_cpu, SaturatingAdd(node.milli_cpu, pod.milli_cpu),
      allocatable.memory, SaturatingAdd(node.memory, pod.memory));
  if (!BalancedAllocationScoresChange(kube)) return with_pod;
  const int64_t without_pod = ResourceBalanceScore(
      allocatable.milli_cpu, node.milli_cpu, allocatable.memory, node.memory);
  return 50 + (50 + with_pod - without_pod) / 2;
}

TermResult BalancedAllocationTerm(const KubeVersion& kube, const NodeInfo& info,
                                  const Resources& requests, double weight) {
  const double score = static_cast<double>(BalancedAllocationScore(
      kube, info.node.allocatable, info.requested, requests));
  return BuiltinTermRow(BuiltinTermName(BuiltinTerm::kBalancedAllocation),
                        score, score,
                        BalancedAllocationApplies(requests) ? weight : 0);
}

namespace {

class BalancedAllocationPlugin final : public ScorePlugin {
 public:
  bool PreScore(const ScoreContext& ctx) override {
    return BalancedAllocationApplies(*ctx.requests);
  }
  TermResult Row(const ScoreContext& ctx, size_t i,
                 double weight) const override {
    return BalancedAllocationTerm(ctx.config->kube, (*ctx.nodes)[i],
                                  *ctx.requests, weight);
  }
  bool ExplainedWhenOff() const override { return true; }
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeBalancedAllocationPlugin() {
  return std::make_unique<BalancedAllocationPlugin>();
}

}  // namespace ms
