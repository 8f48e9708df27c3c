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

#include "common/aligned_vector.h"
#include "model/node_info.h"
#include "scoring/image_index.h"
#include "scoring/pod_label_index.h"
#include "scoring/topology_index.h"

namespace ms {

class NodeTable {
 public:
  // Flags of a node that do not depend on the pod.
  enum Flag : uint32_t {
    kSoftTaints = 1u << 0,  // has a PreferNoSchedule taint
    kUnschedulable = 1u << 1,
    kHardTaints = 1u << 2,  // has a NoSchedule or NoExecute taint
    // An amount beyond 2^42 (4 TiB of memory) or below 0: the double-based
    // built-in arithmetic is only proven exact within that range, so Decide
    // computes this node's built-in scores in integers.
    kHuge = 1u << 3,
  };

  void Build(const std::vector<NodeInfo>& nodes);
  void Update(size_t i, const NodeInfo& node);

  // Rows come in blocks of kRowBlock. A block's version is new (among all
  // tables) whenever one of its rows is written, by Build or Update: it
  // tells a cache of per-row results (Decide's) which blocks to compute
  // again.
  static constexpr size_t kRowBlock = 256;
  uint64_t block_version(size_t block) const { return block_version_[block]; }

  size_t size() const { return flags_.size(); }
  // Per node: the Flag bits.
  const uint32_t* flags() const { return flags_.data(); }

  // What the fit filter reads, one array per field: free = allocatable -
  // requested. `gate` has kUnschedulable and kHardTaints as in
  // flags(), plus kNoRoom when no pod fits any more.
  struct FitColumns {
    const int64_t* free_cpu;
    const int64_t* free_memory;
    const int64_t* free_ephemeral;
    const int64_t* gate;
  };
  FitColumns fit_columns() const {
    return {free_cpu_.data(), free_memory_.data(), free_ephemeral_.data(),
            gate_.data()};
  }

  // What leastAllocated and balancedAllocation read that does not depend
  // on the pod, as doubles (exact below 2^53). All zero for a kHuge row
  // (Decide scores those in integers).
  struct ScoreColumns {
    const double* req_cpu;  // requested
    const double* req_memory;
    // 1 / allocatable, 0 when allocatable is 0 (or the row is kHuge): which
    // resources leastAllocated and balancedAllocation count.
    const double* inv_cpu;
    const double* inv_memory;
    const double* free100_cpu;  // (allocatable - non-zero requested) * 100
    const double* free100_memory;
    // ResourceBalanceScore of the node's own requests: balancedAllocation's
    // balance without the pod (1.36 on), from the scalar reference, so
    // exact; 100 for a kHuge row.
    const double* balance;
  };
  // The columns from node `first` on.
  ScoreColumns score_columns(size_t first = 0) const {
    const ScoreStorage& c = score_;
    return {c.req_cpu.data() + first,     c.req_memory.data() + first,
            c.inv_cpu.data() + first,     c.inv_memory.data() + first,
            c.free100_cpu.data() + first, c.free100_memory.data() + first,
            c.balance.data() + first};
  }
  static constexpr int64_t kNoRoom = int64_t{1} << 8;
  // The nodes with kHardTaints, in ascending order: the only nodes a pod
  // may fit that the vectorised filter pass rejects (when the pod tolerates
  // their taints).
  const std::vector<uint32_t>& tainted() const { return tainted_; }
  // The nodes with kSoftTaints, in ascending order: the only nodes
  // TaintToleration's score can tell apart.
  const std::vector<uint32_t>& soft_tainted() const { return soft_tainted_; }
  // Per node: how many PreferNoSchedule taints it has (TaintToleration's
  // raw score for a pod that tolerates none of them).
  const uint32_t* soft_taints() const { return soft_taints_.data(); }
  // The placed pods by label.
  const PodLabelIndex& pod_index() const { return pod_index_; }
  // The nodes' label values as ids, by key.
  const TopologyIndex& topology() const { return topology_; }
  // Which nodes hold each image.
  const ImageIndex& images() const { return images_; }
  // `nodes` (those this table was built from) with both indexes.
  PlacedPods placed(const std::vector<NodeInfo>& nodes) const {
    return {&nodes, &pod_index_, &topology_};
  }
  // How many nodes carry kHuge.
  size_t num_huge() const { return num_huge_; }
  // FNV-1a of the node name: the seeded tie-break key is derived from it, so
  // the choice does not depend on the order nodes are listed in.
  const uint64_t* name_hashes() const { return name_hash_.data(); }

 private:
  struct ScoreStorage {
    AlignedVector<double> req_cpu, req_memory, inv_cpu, inv_memory, free100_cpu,
        free100_memory, balance;
  };
  std::vector<uint32_t> flags_, soft_taints_;
  std::vector<uint64_t> name_hash_;
  AlignedVector<int64_t> free_cpu_, free_memory_, free_ephemeral_, gate_;
  ScoreStorage score_;
  std::vector<uint32_t> tainted_, soft_tainted_;
  PodLabelIndex pod_index_;
  TopologyIndex topology_;
  ImageIndex images_;
  size_t num_huge_ = 0;
  std::vector<uint64_t> block_version_;
};

uint64_t NodeNameHash(const std::string& name);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_NODE_TABLE_H_
