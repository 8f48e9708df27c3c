// NodeTable: the per-node facts scoring needs that do not depend on the pod,
// laid out as compact arrays for the hot path.
//
// The scheduler keeps one NodeTable beside its std::vector<NodeInfo>: Build()
// when the node list changes, Update(i) when node i changes (a pod assumed
// or removed, a new Node object). Decide reads it instead of walking the
// NodeInfo structs (strings, maps) so that the common pod - no node name, no
// selector or affinity, no host ports, no extended resources - is filtered
// from a few integers per node. When the caller passes no table, Decide
// builds one in its Workspace (correct, but O(nodes) work per decision).
// Thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_NODE_TABLE_H_
#define METRICS_SCHEDULER_SCORING_NODE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/node_info.h"

namespace ms {

class NodeTable {
 public:
  // Flags of a node that do not depend on the pod.
  enum Flag : uint32_t {
    kNotReady = 1u << 0,
    kUnschedulable = 1u << 1,
    kHardTaints = 1u << 2,  // has a NoSchedule or NoExecute taint
    // An amount beyond 2^42 (4 TiB of memory) or below 0: the double-based
    // built-in arithmetic is only proven exact within that range, so Decide
    // computes this node's built-in scores in integers.
    kHuge = 1u << 3,
  };

  // What the fit filter reads: free = allocatable - requested.
  struct FilterRow {
    int64_t free_cpu;
    int64_t free_memory;
    int64_t free_ephemeral;
    int32_t free_pods;
    uint32_t flags;
  };

  // What the built-in scores read, as doubles (exact below 2^53).
  struct ScoreRow {
    double alloc_cpu;
    double alloc_memory;
    double nz_cpu;  // non_zero_requested
    double nz_memory;
    double req_cpu;  // requested
    double req_memory;
    double inv_cpu;  // 1 / alloc_cpu, 0 when alloc_cpu is 0
    double inv_memory;
  };

  void Build(const std::vector<NodeInfo>& nodes);
  void Update(size_t i, const NodeInfo& node);

  size_t size() const { return filter_.size(); }
  const FilterRow* filter_rows() const { return filter_.data(); }
  const ScoreRow* score_rows() const { return score_.data(); }
  // The same as score_rows(), one array per field, for vectorised loops,
  // plus what the built-in scores need that does not depend on the pod.
  // All zero for a kHuge row (Decide scores those in integers).
  struct Columns {
    const double* alloc_cpu;
    const double* alloc_memory;
    const double* nz_cpu;
    const double* nz_memory;
    const double* req_cpu;
    const double* req_memory;
    const double* inv_cpu;
    const double* inv_memory;
    const double* free100_cpu;  // (alloc - nz) * 100, exact
    const double* free100_memory;
    // leastAllocated averages the resources with allocatable > 0: the
    // weight of each (0.5 and 0.5, 1 and 0, 0 and 1, or 0 and 0).
    const double* la_share_cpu;
    const double* la_share_memory;
    const double* both;  // 1 when both allocatables are > 0, else 0
  };
  Columns score_columns() const {
    return {cols_[0].data(),  cols_[1].data(),  cols_[2].data(),
            cols_[3].data(),  cols_[4].data(),  cols_[5].data(),
            cols_[6].data(),  cols_[7].data(),  cols_[8].data(),
            cols_[9].data(),  cols_[10].data(), cols_[11].data(),
            cols_[12].data()};
  }
  // The fit filter's inputs again, one int64 array per field, for the
  // vectorised filter pass. gate has kNotReady, kUnschedulable and
  // kHardTaints as in FilterRow::flags, plus kNoRoom when free_pods < 1.
  struct FilterColumns {
    const int64_t* free_cpu;
    const int64_t* free_memory;
    const int64_t* free_ephemeral;
    const int64_t* gate;
  };
  FilterColumns filter_columns() const {
    return {free_cpu_.data(), free_memory_.data(), free_ephemeral_.data(),
            gate_.data()};
  }
  static constexpr int64_t kNoRoom = int64_t{1} << 8;
  // The nodes with kHardTaints, in ascending order: the only nodes a pod
  // may fit that the vectorised filter pass rejects (when the pod tolerates
  // their taints).
  const std::vector<uint32_t>& tainted() const { return tainted_; }
  // How many nodes carry kHuge.
  size_t num_huge() const { return num_huge_; }
  // FNV-1a of the node name: the seeded tie-break key is derived from it, so
  // the choice does not depend on the order nodes are listed in.
  const uint64_t* name_hashes() const { return name_hash_.data(); }

 private:
  std::vector<FilterRow> filter_;
  std::vector<ScoreRow> score_;
  std::vector<uint64_t> name_hash_;
  std::vector<double> cols_[13];
  std::vector<int64_t> free_cpu_, free_memory_, free_ephemeral_, gate_;
  std::vector<uint32_t> tainted_;
  size_t num_huge_ = 0;
};

uint64_t NodeNameHash(const std::string& name);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_NODE_TABLE_H_
