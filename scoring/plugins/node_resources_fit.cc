#include "scoring/plugins/node_resources_fit.h"

namespace ms {
namespace {

int64_t LeastRequested(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * 100 / capacity;
}

}  // namespace

FitResult Fit(const Resources& req, const NodeInfo& info) {
  FitResult r;
  const Resources& alloc = info.node.allocatable;
  const Resources& used = info.requested;
  r.too_many_pods = used.pods + 1 > alloc.pods;
  r.cpu = req.milli_cpu > 0 && req.milli_cpu > alloc.milli_cpu - used.milli_cpu;
  r.memory = req.memory > 0 && req.memory > alloc.memory - used.memory;
  r.ephemeral_storage =
      req.ephemeral_storage > 0 &&
      req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage;
  for (size_t i = 0; i < req.scalar.size() && i < 64; ++i) {
    const auto& [name, amount] = req.scalar[i];
    if (amount != 0 && amount > alloc.Scalar(name) - used.Scalar(name)) {
      r.scalars |= uint64_t{1} << i;
    }
  }
  return r;
}

int64_t LeastAllocatedScore(int64_t alloc_cpu, int64_t requested_cpu,
                            int64_t alloc_memory, int64_t requested_memory) {
  int64_t sum = 0, weights = 0;
  if (alloc_cpu != 0) {
    sum += LeastRequested(requested_cpu, alloc_cpu);
    ++weights;
  }
  if (alloc_memory != 0) {
    sum += LeastRequested(requested_memory, alloc_memory);
    ++weights;
  }
  return weights == 0 ? 0 : sum / weights;
}

TermResult LeastAllocatedTerm(const NodeInfo& info,
                              const Resources& pod_non_zero, double weight) {
  const Resources& alloc = info.node.allocatable;
  const Resources& nz = info.non_zero_requested;
  const double score = static_cast<double>(LeastAllocatedScore(
      alloc.milli_cpu, SaturatingAdd(nz.milli_cpu, pod_non_zero.milli_cpu),
      alloc.memory, SaturatingAdd(nz.memory, pod_non_zero.memory)));
  return BuiltinTermRow(BuiltinTermName(BuiltinTerm::kLeastAllocated), score,
                        score, weight);
}

namespace {

class LeastAllocatedPlugin final : public ScorePlugin {
 public:
  bool PreScore(const ScoreContext&) override { return true; }
  TermResult Row(const ScoreContext& ctx, size_t i,
                 double weight) const override {
    return LeastAllocatedTerm((*ctx.nodes)[i], *ctx.non_zero, weight);
  }
  bool ExplainedWhenOff() const override { return true; }
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeLeastAllocatedPlugin() {
  return std::make_unique<LeastAllocatedPlugin>();
}

}  // namespace ms
