#include "scoring/node_table.h"

#include <algorithm>
#include <limits>

namespace ms {
namespace {

constexpr int64_t kExactLimit = int64_t{1} << 42;

int32_t ClampToInt32(int64_t v) {
  return static_cast<int32_t>(
      std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max()));
}

bool Huge(int64_t v) { return v > kExactLimit || v < 0; }

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
  free_cpu_.resize(nodes.size());
  free_memory_.resize(nodes.size());
  free_ephemeral_.resize(nodes.size());
  gate_.resize(nodes.size());
  tainted_.clear();
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
  const bool has_cpu = alloc.milli_cpu > 0, has_memory = alloc.memory > 0;
  const double share = has_cpu && has_memory ? 0.5 : 1.0;
  const double row[13] = {
      r.alloc_cpu,
      r.alloc_memory,
      r.nz_cpu,
      r.nz_memory,
      r.req_cpu,
      r.req_memory,
      r.inv_cpu,
      r.inv_memory,
      (r.alloc_cpu - r.nz_cpu) * 100,
      (r.alloc_memory - r.nz_memory) * 100,
      has_cpu ? share : 0.0,
      has_memory ? share : 0.0,
      has_cpu && has_memory ? 1.0 : 0.0,
  };
  // A kHuge row is scored in integers: zeros keep the vectorised pass's
  // arithmetic in range for it.
  for (int c = 0; c < 13; ++c) cols_[c][i] = (flags & kHuge) ? 0.0 : row[c];
  name_hash_[i] = NodeNameHash(node.name);
  const FilterRow& f = filter_[i];
  free_cpu_[i] = f.free_cpu;
  free_memory_[i] = f.free_memory;
  free_ephemeral_[i] = f.free_ephemeral;
  gate_[i] = static_cast<int64_t>(f.flags & (kNotReady | kUnschedulable |
                                             kHardTaints)) |
             (f.free_pods < 1 ? kNoRoom : 0);
  const uint32_t index = static_cast<uint32_t>(i);
  auto at = std::lower_bound(tainted_.begin(), tainted_.end(), index);
  const bool listed = at != tainted_.end() && *at == index;
  if ((flags & kHardTaints) != 0 && !listed) tainted_.insert(at, index);
  if ((flags & kHardTaints) == 0 && listed) tainted_.erase(at);
}

}  // namespace ms
