// The figures the placement-quality benchmark reports per policy
// (docs/quality.md, "Figures"), accumulated over a run's ticks.
//
// - Experienced latency: each running pod experiences its node's mean
//   request latency; the mean and the 99th percentile are over pod-seconds
//   (a pod counts for as long as it runs, wherever it runs). The own mean
//   counts only the pods the policy placed itself, not those another
//   scheduler placed beside them (the other-scheduler trace).
// - Hot-node-seconds: the time each node spends above the hot threshold
//   (utilisation), summed over nodes; hot nodes: how many were ever above
//   it.
// - Utilisation spread: the coefficient of variation (standard deviation
//   over mean) of the nodes' utilisation, averaged over time.
// - Placements onto a hot node: bindings to a node above the threshold at
//   the moment of binding.
// - Pending: pods of the policy still unbound at the end.
// - Evictions: pods the policy evicted to place them again (rebalancing).
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_FIGURES_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_FIGURES_H_

#include <utility>
#include <vector>

#include "bench/quality/load_model.h"

namespace ms::quality {

struct Figures {
  double mean_latency_s = 0;
  double p99_latency_s = 0;
  double own_mean_latency_s = 0;
  double hot_node_seconds = 0;
  int hot_nodes = 0;
  double utilisation_cv = 0;
  int placements = 0;
  int placements_on_hot = 0;
  int pending = 0;
  int evictions = 0;  // pods the policy moved (rebalancing)
};

class FigureAccumulator {
 public:
  explicit FigureAccumulator(double hot_threshold)
      : hot_threshold_(hot_threshold) {}

  // One tick of `dt` seconds: each node's state, how many pods run on it,
  // and how many of those the policy placed itself.
  void Tick(double dt, const std::vector<NodeState>& nodes,
            const std::vector<int>& pods_per_node,
            const std::vector<int>& own_pods_per_node);
  // A pod bound to a node in state `node`.
  void Placement(const NodeState& node);
  // The figures so far, with `pending` pods left unbound.
  Figures Finish(int pending) const;
  // (latency, pod-seconds) for each node and tick with pods.
  const std::vector<std::pair<double, double>>& latency_samples() const {
    return latency_;
  }

 private:
  const double hot_threshold_;
  std::vector<std::pair<double, double>> latency_;
  double own_latency_sum_ = 0;  // sum of latency x own pod-seconds
  double own_pod_seconds_ = 0;
  double hot_node_seconds_ = 0;
  std::vector<bool> ever_hot_;  // by node
  double cv_time_ = 0;  // sum of cv x dt
  double time_ = 0;     // sum of dt
  int placements_ = 0;
  int placements_on_hot_ = 0;
};

// The `q` quantile (0..1) of weighted samples (value, weight): the least
// value whose cumulative weight reaches q of the total. 0 when empty.
double WeightedQuantile(std::vector<std::pair<double, double>> samples,
                        double q);

// Standard deviation over mean of `values`; 0 when the mean is 0.
double CoefficientOfVariation(const std::vector<double>& values);

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_FIGURES_H_
