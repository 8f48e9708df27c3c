#include "scoring/node_table.h"

#include <algorithm>
#include <limits>

namespace ms {
namespace {

constexpr int64_t kExactLimit = int64_t{1} << 46;

int32_t ClampToInt32(int64_t v) {
  return static_cast<int32_t>(
      std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max()));
}

bool Huge(int64_t v) { return v > kExactLimit || v < -kExactLimit; }

}  // namespace

uint64_t NodeNameHash(const std::string& name) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void NodeTable::Build(const std::vector<NodeInfo>& nodes) {
  filter_.resize(nodes.size());
  score_.resize(nodes.size());
  name_hash_.resize(nodes.size());
  for (std::vector<double>& c : cols_) c.resize(nodes.size());
  num_huge_ = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    filter_[i].flags = 0;
    Update(i, nodes[i]);
  }
}

void NodeTable::Update(size_t i, const NodeInfo& info) {
  const Node& node = info.node;
  const Resources& alloc = node.allocatable;
  uint32_t flags = 0;
  if (!node.ready) flags |= kNotReady;
  if (node.unschedulable) flags |= kUnschedulable;
  for (const Taint& t : node.taints) {
    if (t.effect != TaintEffect::kPreferNoSchedule) flags |= kHardTaints;
  }
  if (Huge(alloc.milli_cpu) || Huge(alloc.memory) ||
      Huge(info.requested.milli_cpu) || Huge(info.requested.memory) ||
      Huge(info.non_zero_requested.milli_cpu) ||
      Huge(info.non_zero_requested.memory)) {
    flags |= kHuge;
  }
  if ((filter_[i].flags & kHuge) != 0) --num_huge_;
  if ((flags & kHuge) != 0) ++num_huge_;
  filter_[i] = FilterRow{
      .free_cpu = alloc.milli_cpu - info.requested.milli_cpu,
      .free_memory = alloc.memory - info.requested.memory,
      .free_ephemeral = alloc.ephemeral_storage - info.requested.ephemeral_storage,
      .free_pods = ClampToInt32(alloc.pods - info.requested.pods),
      .flags = flags,
  };
  auto d = [](int64_t v) { return static_cast<double>(v); };
  score_[i] = ScoreRow{
      .alloc_cpu = d(alloc.milli_cpu),
      .alloc_memory = d(alloc.memory),
      .nz_cpu = d(info.non_zero_requested.milli_cpu),
      .nz_memory = d(info.non_zero_requested.memory),
      .req_cpu = d(info.requested.milli_cpu),
      .req_memory = d(info.requested.memory),
      .inv_cpu = alloc.milli_cpu > 0 ? 1.0 / d(alloc.milli_cpu) : 0.0,
      .inv_memory = alloc.memory > 0 ? 1.0 / d(alloc.memory) : 0.0,
  };
  const ScoreRow& r = score_[i];
  const double row[8] = {r.alloc_cpu, r.alloc_memory, r.nz_cpu,  r.nz_memory,
                         r.req_cpu,   r.req_memory,   r.inv_cpu, r.inv_memory};
  for (int c = 0; c < 8; ++c) cols_[c][i] = row[c];
  name_hash_[i] = NodeNameHash(node.name);
}

}  // namespace ms
