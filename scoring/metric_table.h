// MetricTable: the metric columns prepared once for the hot path.
//
// The scheduler keeps one MetricTable beside its aligned MetricColumns and
// rebuilds it whenever it re-aligns them (a new metrics snapshot or a new
// node list): Build() is O(nodes x metrics). Decide then reads, per metric,
// one array of values that are already cleaned - NaN wherever the node has
// no sample, a sample time of 0, or a non-finite value - instead of testing
// every value and sample time on every decision.
//
// Staleness still depends on the decision's clock and on the metric's
// maxStaleness, so the table also keeps, per column, the oldest and newest
// sample time among the present values. With cutoff = now - maxStaleness:
//   cutoff <= oldest            every present value is fresh (the usual
//                               case: one query samples all nodes at once);
//   cutoff > newest             no value is fresh;
//   otherwise                   some are: Decide cleans a copy per decision
//                               (one vectorised pass over the column).
// A value sampled exactly at the cutoff is fresh, as in decide.h.
//
// When the caller passes no table, Decide builds one in its Workspace
// (correct, but O(nodes x metrics) work per decision). Thread-compatible.
#ifndef METRICS_SCHEDULER_SCORING_METRIC_TABLE_H_
#define METRICS_SCHEDULER_SCORING_METRIC_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/aligned_vector.h"
#include "model/metrics.h"

namespace ms {

class MetricTable {
 public:
  // Which present values of a column are fresh at a given cutoff.
  enum class Freshness {
    kNone,  // no value is usable (or the column is not aligned)
    kAll,   // every present value is fresh: values() is ready to use
    kSome,  // fresh iff time_ms()[i] >= cutoff: clean a copy first
  };

  struct Column {
    // NaN where the node has no sample (time 0) or a non-finite value.
    AlignedVector<double> values;
    // The sample time of each present value; INT64_MIN where none.
    std::vector<int64_t> time_ms;
    int64_t oldest_ms = 0;  // over the present values; 0 when none
    int64_t newest_ms = 0;
    size_t present = 0;    // how many values are present
    bool aligned = false;  // the source column had one entry per node
    // Over the present values: the smallest and largest, a node holding
    // each, and the nodes with no value. When both of those nodes are
    // feasible, the stats over the feasible nodes follow without a pass.
    double min = 0, max = 0;
    uint32_t argmin = 0, argmax = 0;
    std::vector<uint32_t> missing;
  };

  // Prepares `columns` (AlignMetric's output, or any columns indexed like
  // a list of `num_nodes` nodes). A column whose sizes differ from
  // num_nodes is kept as not aligned: it has no usable data.
  void Build(const std::vector<MetricColumn>& columns, size_t num_nodes);

  size_t num_nodes() const { return num_nodes_; }
  size_t num_metrics() const { return columns_.size(); }
  const Column& column(size_t m) const { return columns_[m]; }

  // Adds `delta` to node i's present value in column m (an estimate of
  // load the sample has not seen yet); nothing when it has none. The
  // column's extremes follow in O(log nodes) (O(nodes) for the first Add
  // after Build, which builds the tree below).
  void Add(size_t m, size_t i, double delta);

  // Which values of column m are usable at `cutoff_ms` (= now -
  // maxStaleness): a present value sampled at or after the cutoff.
  Freshness FreshnessAt(size_t m, int64_t cutoff_ms) const;

 private:
  // A column's tournament tree for Add: entry k (1 <= k < 2 x leaves) holds
  // the node with the smallest (lowest) and largest (highest) present value
  // among the leaves under it; leaf i is entry leaves + i; kNone where no
  // value is present. Empty until the column's first Add.
  struct Extremes {
    static constexpr uint32_t kNone = UINT32_MAX;
    size_t leaves = 0;
    std::vector<uint32_t> lowest, highest;
  };
  // Builds `e` over `c`'s values.
  static void BuildExtremes(const Column& c, Extremes& e);
  // Recomputes entry k of `e` from its two children.
  static void Merge(const Column& c, Extremes& e, size_t k);

  size_t num_nodes_ = 0;
  std::vector<Column> columns_;
  std::vector<Extremes> extremes_;  // one per column
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_METRIC_TABLE_H_
