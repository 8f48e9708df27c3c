// MetricViews: what each policy's decisions read besides the nodes.
//
// A policy (a ScoringConfig, known by its address: one per profile) reads
// its metric columns aligned to the node list, prepared as a MetricTable,
// and its herd counts: the pods this scheduler placed on each node since
// that node's metrics were sampled, within the policy's herd window. A view
// is aligned again when the node list, the metrics or (for node-attribute
// terms) the nodes' labels and annotations changed. Placements are kept for
// the longest herd window of all policies; each view counts them within its
// own, so every policy sees every placement.
//
// Not thread-safe: ClusterState keeps it under its lock, beside the node
// list it is aligned to.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_METRIC_VIEWS_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_METRIC_VIEWS_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/time/time.h"
#include "model/metrics.h"
#include "model/node_info.h"
#include "scoring/metric_table.h"
#include "scoring/scoring_config.h"

namespace ms {

// The node list views are aligned to, in decision order, as ClusterState
// keeps it.
struct NodeLayout {
  const std::vector<NodeInfo>* nodes = nullptr;
  const std::vector<std::string>* names = nullptr;  // names[i]: nodes[i]'s
  const std::unordered_map<std::string, size_t>* index = nullptr;  // by name
  // Bumped when nodes are added or removed...
  uint64_t version = 0;
  // ...and when a node's labels or annotations change.
  uint64_t attributes_version = 0;
};

class MetricViews {
 public:
  // What one policy's decisions read: indexed as the layout's nodes.
  struct View {
    std::vector<MetricColumn> columns;  // one per metric term
    MetricTable metric_table;           // the columns, prepared
    std::vector<int32_t> recent;        // herd counts per node

   private:
    friend class MetricViews;
    const ScoringConfig* config = nullptr;
    absl::Duration herd_window;
    // What the columns were aligned from; layout_version 0: never.
    uint64_t layout_version = 0;
    uint64_t attributes_version = 0;
    std::shared_ptr<const MetricsSnapshot> metrics;
    bool reads_attributes = false;    // a term is a node attribute
    std::vector<int64_t> sampled_ms;  // newest query sample per node
    // The sequence number of the oldest placement this view still counts.
    uint64_t counted_from = 0;
  };

  // `longest_herd_window`: how long placements are kept, the longest
  // ScoringConfig::herd_window_ms of the policies decided with.
  explicit MetricViews(absl::Duration longest_herd_window)
      : longest_herd_window_(longest_herd_window) {}

  // The view of `config` with `metrics` (null: none) over `layout`, aligned
  // if anything it was aligned from changed, its placements older than its
  // herd window no longer counted. `config` must stay put and unchanged
  // while these views are used. The reference is valid until the next call.
  const View& Get(const ScoringConfig& config,
                  const std::shared_ptr<const MetricsSnapshot>& metrics,
                  absl::Time now, const NodeLayout& layout);

  // A pod placed on the layout's node `node_index` at `now`: every view
  // aligned to `layout` counts it at once, the others when they align.
  void Place(size_t node_index, absl::Time now, const NodeLayout& layout);

  // The herd count of `node` in `config`'s view as of its last Get; 0 when
  // there is no such view, it is not aligned to `layout`, or no such node.
  int Recent(const std::string& node, const ScoringConfig& config,
             const NodeLayout& layout) const;

 private:
  struct Placement {
    absl::Time time;
    std::string node;
  };

  void Align(View& view, const std::shared_ptr<const MetricsSnapshot>& metrics,
             const NodeLayout& layout);
  // Counts the placements kept from view.counted_from on afresh.
  void Recount(View& view, const NodeLayout& layout);
  void Expire(View& view, absl::Time now, const NodeLayout& layout);
  // Whether `p` is newer than its node's metrics in `view`.
  static bool Counts(const View& view, const Placement& p,
                     const NodeLayout& layout);

  const absl::Duration longest_herd_window_;
  // One per policy decided with; few (one per profile).
  std::vector<std::unique_ptr<View>> views_;
  // Our placements in time order, kept for longest_herd_window_; the first
  // has sequence number placements_dropped_.
  std::deque<Placement> placements_;
  uint64_t placements_dropped_ = 0;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_METRIC_VIEWS_H_
