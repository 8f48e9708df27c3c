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
// An unloaded term (UnloadedValue, model/metrics.h) reads its sample times
// 1 - u, u its utilisation term's value as sampled.
//
// The columns also carry the load the metrics have not seen yet: every pod
// started on a node recently (placed here, or bound by anyone else) adds
// its estimate (scoring/unseen_load.h) to each estimated metric's value
// there until that node's sample is taken a warm-up after the pod started.
// Filters and scores read the sum; `unseen` keeps what was added. A term
// whose estimate learns from siblings measures each controller's pods
// (MeasureSiblings) whenever the metrics change.
//
// A view of a policy whose metric filters have scopes or read the nodes'
// annotations also keeps their node side (scoring/filter_bounds.h): which
// scopes' node selectors select each node, and each node's annotated
// bounds. It is matched again only when nodes are added or removed or
// their labels or annotations change (NodeLayout's versions), not on new
// metrics, so that decisions never match label selectors per node.
//
// Not thread-safe: ClusterState keeps it under its lock, beside the node
// list it is aligned to.
#ifndef METRICS_SCHEDULER_SCHEDULER_CYCLE_METRIC_VIEWS_H_
#define METRICS_SCHEDULER_SCHEDULER_CYCLE_METRIC_VIEWS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/time/time.h"
#include "model/metrics.h"
#include "model/node_info.h"
#include "scoring/filter_bounds.h"
#include "scoring/metric_table.h"
#include "scoring/scoring_config.h"
#include "scoring/unseen_load.h"

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
  // The assigned pod under a namespace/name key, or null: whose siblings a
  // per-pod usage sample measures. May be empty (no pod is known).
  std::function<const PodInfo*(const std::string& key)> find_pod;
};

class MetricViews {
 public:
  // What one policy's decisions read: indexed as the layout's nodes.
  struct View {
    std::vector<MetricColumn> columns;  // one per metric term
    MetricTable metric_table;           // the columns, prepared
    std::vector<int32_t> recent;        // herd counts per node
    // Per metric term, what estimates add per node (included in columns
    // and metric_table); empty for a term with no estimate.
    std::vector<std::vector<double>> unseen;
    // Per metric term with estimate.siblings, what each controller's pods
    // measure, as of `metrics`; empty for the others.
    std::vector<SiblingUsages> siblings;
    // Per metric term, the node side of its scoped filter (MatchNodeBounds);
    // empty when no term has one.
    NodeBounds node_bounds;

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
    bool estimates = false;       // a term has an estimate
    // Per metric term, the index of the term whose unseen load it grows
    // with (estimate from queueing), -1 for the others.
    std::vector<int> utilisation_of;
    // Per metric term, the index of the term it is unloaded by, -1 for the
    // others.
    std::vector<int> unloaded_of;
    uint64_t starts_version = 0;  // of the starts the estimates include
    bool scoped_filters = false;  // a term has a scoped filter
    // The layout node_bounds was matched over; 0: never.
    uint64_t bounds_layout_version = 0;
    uint64_t bounds_attributes_version = 0;
  };

  // `longest_herd_window`: how long placements are kept, the longest
  // ScoringConfig::herd_window_ms of the policies decided with;
  // `longest_estimate_window`: how long pod starts are kept, the longest
  // warm-up plus maxStaleness of their estimated terms (a start older than
  // that is shown by every fresh sample).
  MetricViews(absl::Duration longest_herd_window,
              absl::Duration longest_estimate_window)
      : longest_herd_window_(longest_herd_window),
        longest_estimate_window_(longest_estimate_window) {}

  // The view of `config` with `metrics` (null: none) over `layout`, aligned
  // if anything it was aligned from changed, its placements older than its
  // herd window no longer counted. `config` must stay put and unchanged
  // while these views are used. The reference is valid until the next call.
  const View& Get(const ScoringConfig& config,
                  const std::shared_ptr<const MetricsSnapshot>& metrics,
                  absl::Time now, const NodeLayout& layout);

  // A pod placed here on the layout's node `node_index` at `now`: every
  // view aligned to `layout` counts it (herd, estimates) at once, the others
  // when they align. `key` is the pod's namespace/name.
  void Place(size_t node_index, absl::Time now, const NodeLayout& layout,
             const std::string& key, std::shared_ptr<const PodInfo> pod);
  // A pod seen bound to `node` by someone else, started at `start_ms`
  // (status.startTime; the time it was seen when unset): estimated until a
  // sample shows it. Ignored when it started too long ago to matter.
  void Started(const std::string& node, absl::Time now,
               const NodeLayout& layout, const std::string& key,
               int64_t start_ms, std::shared_ptr<const PodInfo> pod);
  // The pod under `key` left its node (deleted, moved, forgotten): its
  // estimate no longer counts.
  void Stopped(const std::string& key);

  // The herd count of `node` in `config`'s view as of its last Get; 0 when
  // there is no such view, it is not aligned to `layout`, or no such node.
  int Recent(const std::string& node, const ScoringConfig& config,
             const NodeLayout& layout) const;

 private:
  struct Placement {
    absl::Time time;
    std::string node;
  };
  struct Start {
    absl::Time kept_since;  // when it was recorded
    int64_t start_ms = 0;
    std::string node;
    std::string key;
    std::shared_ptr<const PodInfo> pod;  // null once stopped
  };

  void Align(View& view, const std::shared_ptr<const MetricsSnapshot>& metrics,
             absl::Time now, const NodeLayout& layout);
  // Reads each unloaded term of the view's columns as its sample x
  // (1 - u) (Unloaded), u its utilisation term's sample on the node when
  // that is no older than the utilisation term's maxStaleness before the
  // term's own; none (NaN) otherwise. Before any estimate is added.
  static void Unload(View& view);
  // Measures the siblings of the view's estimated terms in its metrics.
  static void MeasureAllSiblings(View& view, absl::Time now,
                                 const NodeLayout& layout);
  // Matches the node side of the view's scoped filters over `layout`.
  static void MatchBounds(View& view, const NodeLayout& layout);
  // Counts the placements kept from view.counted_from on afresh.
  void Recount(View& view, const NodeLayout& layout);
  void Expire(View& view, absl::Time now, const NodeLayout& layout);
  // Whether `p` is newer than its node's metrics in `view`.
  static bool Counts(const View& view, const Placement& p,
                     const NodeLayout& layout);
  // Adds `start`'s estimates to `view`'s columns (aligned to `layout`),
  // and to `table` unless null.
  static void Estimate(View& view, const Start& start, const NodeLayout& layout,
                       MetricTable* table);
  // Grows node i's queueing terms in `view` with their utilisation terms'
  // unseen load (QueueingGrowth), in `table` too unless null.
  static void Requeue(View& view, size_t i, MetricTable* table);
  // Records a start; estimates it at once in the views that are up to date.
  void AddStart(Start start, const NodeLayout& layout);
  void DropOldStarts(absl::Time now);

  const absl::Duration longest_herd_window_;
  // One per policy decided with; few (one per profile).
  std::vector<std::unique_ptr<View>> views_;
  // Our placements in time order, kept for longest_herd_window_; the first
  // has sequence number placements_dropped_.
  std::deque<Placement> placements_;
  uint64_t placements_dropped_ = 0;
  const absl::Duration longest_estimate_window_;
  // Pods started recently, in the order recorded, kept for
  // longest_estimate_window_; the first has sequence number starts_dropped_.
  std::deque<Start> starts_;
  uint64_t starts_dropped_ = 0;
  std::unordered_map<std::string, uint64_t> start_of_;  // key -> sequence
  uint64_t starts_version_ = 1;  // bumped by every change to starts_
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CYCLE_METRIC_VIEWS_H_
