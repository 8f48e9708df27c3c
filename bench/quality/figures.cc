#include "bench/quality/figures.h"

#include <algorithm>
#include <cmath>

namespace ms::quality {

void FigureAccumulator::Tick(double dt, const std::vector<NodeState>& nodes,
                             const std::vector<int>& pods_per_node,
                             const std::vector<int>& own_pods_per_node) {
  std::vector<double> utilisation;
  utilisation.reserve(nodes.size());
  ever_hot_.resize(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeState& n = nodes[i];
    utilisation.push_back(n.utilisation);
    if (n.utilisation > hot_threshold_) {
      hot_node_seconds_ += dt;
      ever_hot_[i] = true;
    }
    if (pods_per_node[i] > 0) {
      latency_.emplace_back(n.mean_latency_s, pods_per_node[i] * dt);
    }
    own_latency_sum_ += n.mean_latency_s * own_pods_per_node[i] * dt;
    own_pod_seconds_ += own_pods_per_node[i] * dt;
  }
  cv_time_ += CoefficientOfVariation(utilisation) * dt;
  time_ += dt;
}

void FigureAccumulator::Placement(const NodeState& node) {
  ++placements_;
  if (node.utilisation > hot_threshold_) ++placements_on_hot_;
}

Figures FigureAccumulator::Finish(int pending) const {
  Figures f;
  double weight = 0, sum = 0;
  for (const auto& [latency, w] : latency_) {
    sum += latency * w;
    weight += w;
  }
  f.mean_latency_s = weight > 0 ? sum / weight : 0;
  f.p99_latency_s = WeightedQuantile(latency_, 0.99);
  f.own_mean_latency_s =
      own_pod_seconds_ > 0 ? own_latency_sum_ / own_pod_seconds_ : 0;
  f.hot_node_seconds = hot_node_seconds_;
  f.hot_nodes =
      static_cast<int>(std::count(ever_hot_.begin(), ever_hot_.end(), true));
  f.utilisation_cv = time_ > 0 ? cv_time_ / time_ : 0;
  f.placements = placements_;
  f.placements_on_hot = placements_on_hot_;
  f.pending = pending;
  return f;
}

double WeightedQuantile(std::vector<std::pair<double, double>> samples,
                        double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  double total = 0;
  for (const auto& s : samples) total += s.second;
  double seen = 0;
  for (const auto& [value, weight] : samples) {
    seen += weight;
    if (seen >= q * total) return value;
  }
  return samples.back().first;
}

double CoefficientOfVariation(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  if (mean == 0) return 0;
  double var = 0;
  for (double v : values) var += (v - mean) * (v - mean);
  var /= static_cast<double>(values.size());
  return std::sqrt(var) / mean;
}

}  // namespace ms::quality
