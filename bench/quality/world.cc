#include "bench/quality/world.h"

#include <algorithm>
#include <utility>

#include "bench/quality/cluster_objects.h"

namespace ms::quality {

World::World(std::vector<PoolSpec> pools, ModelParams params,
             double hot_threshold, double sample_every_s)
    : pools_(std::move(pools)),
      params_(params),
      sample_every_s_(sample_every_s) {
  absl::MutexLock lock(&mu_);
  for (const PoolSpec& spec : pools_) {
    const size_t pods = spec.trace->pods.size();
    Pool pool{.nodes = std::vector<Node>(spec.trace->nodes.size()),
              .node_of_pod = std::vector<int>(pods, -1),
              .ended = std::vector<bool>(pods, false),
              .left_s = std::vector<double>(pods),
              .ends_s = std::vector<double>(pods),
              .started_s = std::vector<double>(pods, -1),
              .names = std::vector<std::string>(pods),
              .cpu_seconds = std::vector<double>(spec.trace->pods.size(), 0),
              .figures = FigureAccumulator(hot_threshold),
              .series = {.sample_every_s = sample_every_s,
                         .by_node = std::vector<std::vector<double>>(
                             spec.trace->nodes.size())}};
    for (size_t i = 0; i < pods; ++i) {
      pool.left_s[i] = spec.trace->pods[i].duration_s;
    }
    for (size_t n = 0; n < pool.nodes.size(); ++n) {
      pool.nodes[n].state = NodeAt(spec.trace->nodes[n], {}, 0, params_);
    }
    state_.push_back(std::move(pool));
  }
}

bool World::Bound(size_t pool, size_t pod, size_t node, double t,
                  const std::string& name) {
  absl::MutexLock lock(&mu_);
  Pool& p = state_[pool];
  if (p.node_of_pod[pod] >= 0 || p.ended[pod]) return false;
  p.node_of_pod[pod] = static_cast<int>(node);
  p.ends_s[pod] = t + p.left_s[pod];
  if (p.started_s[pod] < 0) p.started_s[pod] = t;
  p.names[pod] = name;
  p.figures.Placement(p.nodes[node].state);
  p.nodes[node].pods.push_back(
      {.spec = &pools_[pool].trace->pods[pod], .started_s = t});
  return true;
}

void World::RemoveRunning(size_t pool, size_t pod, int node) {
  const PodSpec* spec = &pools_[pool].trace->pods[pod];
  std::vector<RunningPod>& pods = state_[pool].nodes[node].pods;
  pods.erase(
      std::remove_if(pods.begin(), pods.end(),
                     [&](const RunningPod& r) { return r.spec == spec; }),
      pods.end());
}

void World::Ended(size_t pool, size_t pod) {
  absl::MutexLock lock(&mu_);
  Pool& p = state_[pool];
  if (p.ended[pod]) return;
  p.ended[pod] = true;
  const int node = p.node_of_pod[pod];
  if (node < 0) return;
  RemoveRunning(pool, pod, node);
}

bool World::Evicted(size_t pool, size_t pod, double t) {
  absl::MutexLock lock(&mu_);
  Pool& p = state_[pool];
  const int node = p.node_of_pod[pod];
  if (node < 0 || p.ended[pod]) return false;
  p.left_s[pod] = std::max(0.0, p.ends_s[pod] - t);
  p.node_of_pod[pod] = -1;
  p.cpu_seconds[pod] = 0;  // its replacement's counter starts anew
  ++p.evictions;
  RemoveRunning(pool, pod, node);
  return true;
}

std::string World::NameOf(size_t pool, size_t pod) const {
  absl::MutexLock lock(&mu_);
  return state_[pool].names[pod];
}

void World::Advance(double t) {
  absl::MutexLock lock(&mu_);
  const double dt = t - now_;
  if (dt <= 0) return;
  const bool sample = t >= next_sample_;
  if (sample) next_sample_ = t + sample_every_s_;
  for (size_t i = 0; i < state_.size(); ++i) {
    Pool& pool = state_[i];
    const Trace& trace = *pools_[i].trace;
    std::vector<NodeState> states;
    std::vector<int> pods, own;
    for (size_t n = 0; n < pool.nodes.size(); ++n) {
      Node& node = pool.nodes[n];
      // The step is integrated with the state at its end: the load is
      // piecewise linear and the steps are short (a second).
      node.state = NodeAt(trace.nodes[n], node.pods, t, params_);
      Accumulate(node.state, trace.nodes[n].cores, dt, node.counters);
      AccumulatePods(i, n, t, dt);
      states.push_back(node.state);
      pods.push_back(static_cast<int>(node.pods.size()));
      own.push_back(static_cast<int>(std::count_if(
          node.pods.begin(), node.pods.end(),
          [](const RunningPod& p) { return p.spec->scheduler.empty(); })));
      if (sample) pool.series.by_node[n].push_back(node.state.utilisation);
    }
    pool.figures.Tick(dt, states, pods, own);
  }
  now_ = t;
}

void World::AccumulatePods(size_t pool, size_t n, double t, double dt) {
  const std::vector<PodSpec>& specs = pools_[pool].trace->pods;
  const NodeSpec& spec = pools_[pool].trace->nodes[n];
  Pool& p = state_[pool];
  // As the node's counters: the step at the state at its end.
  for (const RunningPod& r : p.nodes[n].pods) {
    const double usage = UsageAt(*r.spec, r.spec->usage, r.started_s, t);
    p.cpu_seconds[static_cast<size_t>(r.spec - specs.data())] +=
        PodCpuCores(usage, spec.cores, p.nodes[n].state) * dt;
  }
}

std::vector<ExportedPod> World::RunningPods() const {
  std::vector<ExportedPod> pods;
  for (size_t i = 0; i < state_.size(); ++i) {
    const Pool& pool = state_[i];
    for (size_t k = 0; k < pool.node_of_pod.size(); ++k) {
      if (pool.node_of_pod[k] < 0 || pool.ended[k]) continue;
      pods.push_back({.pod_namespace = kPodNamespace,
                      .name = pool.names[k],
                      .cpu_seconds = pool.cpu_seconds[k]});
    }
  }
  return pods;
}

std::string World::Exposition() const {
  std::vector<ExportedNode> nodes;
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < state_.size(); ++i) {
    const PoolSpec& spec = pools_[i];
    for (size_t n = 0; n < spec.node_names.size(); ++n) {
      nodes.push_back({.name = spec.node_names[n],
                       .address = spec.node_addresses[n],
                       .cores = spec.trace->nodes[n].cores,
                       .counters = state_[i].nodes[n].counters});
    }
  }
  return RenderExposition(nodes, RunningPods());
}

std::vector<World::TrueNode> World::TrueLoad(size_t pool) const {
  absl::MutexLock lock(&mu_);
  return LoadLocked(pool, -1);
}

std::vector<World::TrueNode> World::KnownLoad(size_t pool,
                                              double lag_s) const {
  absl::MutexLock lock(&mu_);
  return LoadLocked(pool, lag_s);
}

std::vector<World::TrueNode> World::LoadLocked(size_t pool,
                                               double lag_s) const {
  const Trace& trace = *pools_[pool].trace;
  std::vector<TrueNode> out;
  for (size_t n = 0; n < trace.nodes.size(); ++n) {
    TrueNode node{
        .demand_cores = BackgroundAt(trace.nodes[n], now_),
        .capacity_cores = trace.nodes[n].cores * SpeedAt(trace.nodes[n], now_)};
    for (const RunningPod& p : state_[pool].nodes[n].pods) {
      const size_t i = static_cast<size_t>(p.spec - trace.pods.data());
      node.demand_cores +=
          lag_s >= 0 && !UsageKnownLocked(pool, i, lag_s)
              ? p.spec->cpu_request
              : p.spec->usage *
                    (now_ >= p.spec->shift_at_s ? p.spec->shift_factor : 1);
    }
    out.push_back(node);
  }
  return out;
}

std::vector<size_t> World::DuePods(size_t pool, double t) const {
  absl::MutexLock lock(&mu_);
  std::vector<size_t> due;
  const Pool& p = state_[pool];
  for (const Node& node : p.nodes) {
    for (const RunningPod& r : node.pods) {
      const size_t i =
          static_cast<size_t>(r.spec - pools_[pool].trace->pods.data());
      if (p.ends_s[i] <= t) due.push_back(i);
    }
  }
  return due;
}

std::vector<World::Requested> World::RequestedOf(size_t pool,
                                                 double recent_s) const {
  absl::MutexLock lock(&mu_);
  std::vector<Requested> out;
  for (const Node& node : state_[pool].nodes) {
    Requested r;
    for (const RunningPod& p : node.pods) {
      r.cpu += p.spec->cpu_request;
      r.memory_gib += p.spec->memory_request_gib;
      if (p.started_s > now_ - recent_s) r.recent_cpu += p.spec->cpu_request;
      ++r.pods;
    }
    out.push_back(r);
  }
  return out;
}

bool World::UsageKnown(size_t pool, size_t pod, double lag_s) const {
  absl::MutexLock lock(&mu_);
  return UsageKnownLocked(pool, pod, lag_s);
}

bool World::UsageKnownLocked(size_t pool, size_t pod, double lag_s) const {
  const std::vector<PodSpec>& pods = pools_[pool].trace->pods;
  const Pool& p = state_[pool];
  auto measured = [&](size_t i) {
    return p.started_s[i] >= 0 &&
           p.started_s[i] + pods[i].warmup_s + lag_s <= now_;
  };
  if (measured(pod)) return true;
  if (pods[pod].owner.empty()) return false;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].owner == pods[pod].owner && measured(i)) return true;
  }
  return false;
}

bool World::IsBound(size_t pool, size_t pod) const {
  absl::MutexLock lock(&mu_);
  return state_[pool].node_of_pod[pod] >= 0;
}

Figures World::FiguresOf(size_t pool, int pending) const {
  absl::MutexLock lock(&mu_);
  Figures f = state_[pool].figures.Finish(pending);
  f.evictions = state_[pool].evictions;
  return f;
}

UtilisationSeries World::SeriesOf(size_t pool) const {
  absl::MutexLock lock(&mu_);
  return state_[pool].series;
}

std::vector<std::pair<double, double>> World::LatencySamplesOf(
    size_t pool) const {
  absl::MutexLock lock(&mu_);
  return state_[pool].figures.latency_samples();
}

}  // namespace ms::quality
