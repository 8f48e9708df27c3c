#include "bench/quality/load_model.h"

#include <algorithm>
#include <cmath>

namespace ms::quality {

double RampedUsage(double full, double warmup_s, double age_s) {
  if (age_s <= 0) return 0;
  if (warmup_s <= 0 || age_s >= warmup_s) return full;
  return full * age_s / warmup_s;
}

double UsageAt(const PodSpec& pod, double full, double started_s, double t) {
  return RampedUsage(full, pod.warmup_s, t - started_s) *
         (t >= pod.shift_at_s ? pod.shift_factor : 1);
}

double SpeedAt(const NodeSpec& node, double t) {
  return t >= node.degrade_at_s ? node.speed * node.degrade_factor : node.speed;
}

double BackgroundAt(const NodeSpec& node, double t) {
  double load = node.background_cores;
  if (node.burst_period_s > 0 && t >= 0) {
    double phase = std::fmod(t, node.burst_period_s) / node.burst_period_s;
    if (phase < node.burst_duty) load += node.burst_cores;
  }
  return load;
}

double QueueLatency(double service_s, double u, double max_latency_s) {
  if (u >= 1) return max_latency_s;
  return std::min(max_latency_s, service_s / (1 - std::max(0.0, u)));
}

double LatencyCdf(double mean_s, double le) {
  if (le <= 0) return 0;
  if (mean_s <= 0) return 1;
  return 1 - std::exp(-le / mean_s);
}

double ErrorRatio(const ModelParams& params, double u) {
  if (u <= params.error_onset) return 0;
  if (u < 1) {
    double x = (u - params.error_onset) / (1 - params.error_onset);
    return params.error_at_one * x * x;
  }
  // Beyond saturation the excess (1 - 1/u of the requests) fails as well.
  return params.error_at_one + (1 - params.error_at_one) * (1 - 1 / u);
}

NodeState NodeAt(const NodeSpec& node, const std::vector<RunningPod>& pods,
                 double t, const ModelParams& params) {
  NodeState s;
  double pod_cores = 0;
  double io = 0;
  for (const RunningPod& p : pods) {
    pod_cores += UsageAt(*p.spec, p.spec->usage, p.started_s, t);
    io += UsageAt(*p.spec, p.spec->io, p.started_s, t);
  }
  const double speed = SpeedAt(node, t);
  s.demand_cores = BackgroundAt(node, t) + pod_cores;
  s.capacity_cores = node.cores * speed;
  s.utilisation =
      s.capacity_cores > 0 ? s.demand_cores / s.capacity_cores : kNever;
  s.cpu_busy = std::min(1.0, s.utilisation);
  s.request_rate = pod_cores * params.requests_per_core;
  s.mean_latency_s = QueueLatency(
      speed > 0 ? params.service_time_s / speed : params.max_latency_s,
      s.utilisation, params.max_latency_s);
  s.io_units = io;
  s.io_latency_s = QueueLatency(params.io_service_s, io / params.io_capacity,
                                params.max_latency_s);
  s.error_ratio = ErrorRatio(params, s.utilisation);
  return s;
}

double PodCpuCores(double usage, double cores, const NodeState& state) {
  const double denominator = std::max(state.capacity_cores, state.demand_cores);
  return denominator > 0 ? usage * cores / denominator : 0;
}

}  // namespace ms::quality
