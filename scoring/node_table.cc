#include "scoring/node_table.h"

#include <algorithm>
#include <atomic>
#include <limits>

#include "scoring/plugins/resource_balance.h"

namespace ms {
namespace {

constexpr int64_t kExactLimit = int64_t{1} << 42;

int32_t ClampToInt32(int64_t v) {
  return static_cast<int32_t>(
      std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max()));
}

bool Huge(int64_t v) { return v > kExactLimit || v < 0; }

// Keeps `i` in the ascending list `set` exactly when `member`.
void SetMember(std::vector<uint32_t>& set, size_t i, bool member) {
  const uint32_t index = static_cast<uint32_t>(i);
  auto at = std::lower_bound(set.begin(), set.end(), index);
  const bool listed = at != set.end() && *at == index;
  if (member && !listed) set.insert(at, index);
  if (!member && listed) set.erase(at);
}

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
  const size_t n = nodes.size();
  block_version_.assign((n + kRowBlock - 1) / kRowBlock, 0);
  flags_.assign(n, 0);
  soft_taints_.resize(n);
  name_hash_.resize(n);
  for (AlignedVector<int64_t>* c :
       {&free_cpu_, &free_memory_, &free_ephemeral_, &gate_}) {
    c->resize(n);
  }
  ScoreStorage& s = score_;
  for (AlignedVector<double>* c :
       {&s.req_cpu, &s.req_memory, &s.inv_cpu, &s.inv_memory, &s.free100_cpu,
        &s.free100_memory, &s.balance}) {
    c->resize(n);
  }
  tainted_.clear();
  soft_tainted_.clear();
  num_huge_ = 0;
  pod_index_.Build({});
  topology_.Build({});
  images_.Build({});
  for (size_t i = 0; i < n; ++i) Update(i, nodes[i]);
}

void NodeTable::Update(size_t i, const NodeInfo& info) {
  const Node& node = info.node;
  const Resources& alloc = node.allocatable;
  const Resources& req = info.requested;
  const Resources& nz = info.non_zero_requested;
  static std::atomic<uint64_t> last_version{0};
  block_version_[i / kRowBlock] =
      last_version.fetch_add(1, std::memory_order_relaxed) + 1;
  uint32_t flags = 0;
  uint32_t soft = 0;
  if (node.unschedulable) flags |= kUnschedulable;
  for (const Taint& t : node.taints) {
    const bool prefer = t.effect == TaintEffect::kPreferNoSchedule;
    flags |= prefer ? kSoftTaints : kHardTaints;
    soft += prefer ? 1 : 0;
  }
  soft_taints_[i] = soft;
  if (Huge(alloc.milli_cpu) || Huge(alloc.memory) || Huge(req.milli_cpu) ||
      Huge(req.memory) || Huge(nz.milli_cpu) || Huge(nz.memory)) {
    flags |= kHuge;
  }
  if ((flags_[i] & kHuge) != 0) --num_huge_;
  if ((flags & kHuge) != 0) ++num_huge_;
  flags_[i] = flags;
  name_hash_[i] = NodeNameHash(node.name);

  free_cpu_[i] = alloc.milli_cpu - req.milli_cpu;
  free_memory_[i] = alloc.memory - req.memory;
  free_ephemeral_[i] = alloc.ephemeral_storage - req.ephemeral_storage;
  gate_[i] =
      static_cast<int64_t>(flags & (kUnschedulable | kHardTaints)) |
      (ClampToInt32(alloc.pods - req.pods) < 1 ? kNoRoom : 0);

  // A kHuge row is scored in integers: zeros keep the vectorised pass's
  // arithmetic in range for it.
  const bool exact = (flags & kHuge) == 0;
  auto d = [exact](int64_t v) { return exact ? static_cast<double>(v) : 0.0; };
  const bool has_cpu = exact && alloc.milli_cpu > 0;
  const bool has_memory = exact && alloc.memory > 0;
  ScoreStorage& s = score_;
  s.req_cpu[i] = d(req.milli_cpu);
  s.req_memory[i] = d(req.memory);
  s.inv_cpu[i] = has_cpu ? 1.0 / d(alloc.milli_cpu) : 0.0;
  s.inv_memory[i] = has_memory ? 1.0 / d(alloc.memory) : 0.0;
  s.free100_cpu[i] = (d(alloc.milli_cpu) - d(nz.milli_cpu)) * 100;
  s.free100_memory[i] = (d(alloc.memory) - d(nz.memory)) * 100;
  s.balance[i] =
      exact ? static_cast<double>(ResourceBalanceScore(
                  alloc.milli_cpu, req.milli_cpu, alloc.memory, req.memory))
            : 100.0;

  SetMember(tainted_, i, (flags & kHardTaints) != 0);
  SetMember(soft_tainted_, i, (flags & kSoftTaints) != 0);
  pod_index_.Update(i, info);
  topology_.Update(i, node);
  images_.Update(i, node);
}

}  // namespace ms
