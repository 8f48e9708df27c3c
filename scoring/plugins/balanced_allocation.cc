#include "scoring/plugins/balanced_allocation.h"

#include <algorithm>
#include <cmath>

namespace ms {

int64_t BalancedAllocationScore(int64_t alloc_cpu, int64_t requested_cpu,
                                int64_t alloc_memory,
                                int64_t requested_memory) {
  double fractions[2];
  int n = 0;
  if (alloc_cpu != 0) {
    fractions[n++] = std::min(static_cast<double>(requested_cpu) /
                                  static_cast<double>(alloc_cpu),
                              1.0);
  }
  if (alloc_memory != 0) {
    fractions[n++] = std::min(static_cast<double>(requested_memory) /
                                  static_cast<double>(alloc_memory),
                              1.0);
  }
  double std_dev = n == 2 ? std::abs((fractions[0] - fractions[1]) / 2) : 0;
  return static_cast<int64_t>((1 - std_dev) * 100);
}

TermResult BalancedAllocationTerm(const NodeInfo& info,
                                  const Resources& requests, double weight) {
  const Resources& alloc = info.node.allocatable;
  const Resources& used = info.requested;
  const double score = static_cast<double>(BalancedAllocationScore(
      alloc.milli_cpu, SaturatingAdd(used.milli_cpu, requests.milli_cpu),
      alloc.memory, SaturatingAdd(used.memory, requests.memory)));
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
    return BalancedAllocationTerm((*ctx.nodes)[i], *ctx.requests, weight);
  }
  bool ExplainedWhenOff() const override { return true; }
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeBalancedAllocationPlugin() {
  return std::make_unique<BalancedAllocationPlugin>();
}

}  // namespace ms
