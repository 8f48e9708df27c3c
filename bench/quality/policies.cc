#include "bench/quality/policies.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "bench/quality/load_model.h"

namespace ms::quality {
namespace {

double Clamp(double x, double lo, double hi) {
  return std::min(std::max(x, lo), hi);
}

// A NaN utilisation (no value yet, the run's first half-minute) reads as
// an idle node. The peers score a node without metrics 0 instead, which
// here would pile the first pods onto one node (docs/quality.md,
// "Policies").
double Known(double v) { return std::isnan(v) ? 0 : v; }

// TargetLoadPacking's defaults: target 40 %, a pod predicted at 1.5x its
// CPU request (no limits here).
constexpr double kTarget = 40;
constexpr double kRequestMultiplier = 1.5;

// LoadAware's defaults: CPU threshold 65 %, estimates 85 % of the request.
constexpr double kLoadAwareThreshold = 65;
constexpr double kLoadAwareScaling = 0.85;

}  // namespace

const char* PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kTargetLoadPacking:
      return "target-load-packing";
    case Policy::kLoadVariationRiskBalancing:
      return "load-variation-risk-balancing";
    case Policy::kLoadAware:
      return "load-aware";
    case Policy::kClairvoyant:
      return "clairvoyant";
    case Policy::kLearning:
      return "learning";
  }
  return "?";
}

absl::StatusOr<Policy> ParsePolicy(absl::string_view name) {
  for (Policy p :
       {Policy::kTargetLoadPacking, Policy::kLoadVariationRiskBalancing,
        Policy::kLoadAware, Policy::kClairvoyant, Policy::kLearning}) {
    if (name == PolicyName(p)) return p;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown policy ", name));
}

double TargetLoadPackingScore(const PodView& pod, const NodeView& node) {
  const double capacity = node.cpu_allocatable;
  if (capacity <= 0) return 0;
  const double used = Known(node.utilisation_mean) * capacity;
  const double predicted =
      kRequestMultiplier * (pod.cpu_request + node.recent_cpu_requested);
  const double p = 100 * (used + predicted) / capacity;
  if (p <= kTarget) return std::round((100 - kTarget) * p / kTarget + kTarget);
  if (p <= 100) return std::round(kTarget * (100 - p) / (100 - kTarget));
  return 0;
}

double LoadVariationRiskBalancingScore(const PodView& pod,
                                       const NodeView& node) {
  const double capacity = node.cpu_allocatable;
  if (capacity <= 0) return 0;
  // Margin 1 and sensitivity 1: sigma is the standard deviation itself.
  const double mu =
      Clamp(Known(node.utilisation_mean) + pod.cpu_request / capacity, 0, 1);
  const double sigma = Clamp(Known(node.utilisation_stddev), 0, 1);
  return std::round((1 - (mu + sigma) / 2) * 100);
}

double LoadAwareScore(const PodView& pod, const NodeView& node) {
  const double capacity = node.cpu_allocatable;
  if (capacity <= 0) return 0;
  const double estimated =
      Known(node.utilisation_mean) * capacity +
      kLoadAwareScaling * (node.recent_cpu_requested + pod.cpu_request);
  if (std::round(100 * estimated / capacity) > kLoadAwareThreshold) return -1;
  if (estimated > capacity) return 0;
  return std::floor((capacity - estimated) * 100 / capacity);
}

double ClairvoyantScore(const PodView& pod, const NodeView& node) {
  // The rise of the pods' summed mean latency if the pod goes there: it
  // sees the node's latency with it, and every pod already there sees the
  // node slow down. Scored so that the smallest rise is best.
  const ModelParams params;
  if (node.true_capacity <= 0 || node.cpu_allocatable <= 0) return 0;
  const double speed = node.true_capacity / node.cpu_allocatable;
  const double service = params.service_time_s / speed;
  const double before = QueueLatency(
      service, node.true_demand / node.true_capacity, params.max_latency_s);
  const double after = QueueLatency(
      service, (node.true_demand + pod.true_usage) / node.true_capacity,
      params.max_latency_s);
  const double rise = (node.pods + 1) * after - node.pods * before;
  // 100 for no rise, falling towards 0 the larger it is: the same scale on
  // every node, so the smallest rise scores best.
  return 100 * params.service_time_s / (params.service_time_s + rise);
}

int Choose(Policy policy, const PodView& pod,
           const std::vector<NodeView>& nodes, uint64_t random) {
  std::vector<int> best;
  double best_score = -1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    double score = 0;
    switch (policy) {
      case Policy::kTargetLoadPacking:
        score = TargetLoadPackingScore(pod, nodes[i]);
        break;
      case Policy::kLoadVariationRiskBalancing:
        score = LoadVariationRiskBalancingScore(pod, nodes[i]);
        break;
      case Policy::kLoadAware:
        score = LoadAwareScore(pod, nodes[i]);
        break;
      case Policy::kClairvoyant:
      case Policy::kLearning:
        score = ClairvoyantScore(pod, nodes[i]);
        break;
    }
    if (score < 0 || score < best_score) continue;
    if (score > best_score) best.clear();
    best.push_back(static_cast<int>(i));
    best_score = score;
  }
  return best.empty() ? -1 : best[random % best.size()];
}

}  // namespace ms::quality
