// What estimates of unseen load cost the scheduler (scheduler/cycle/
// metric_views.h), at 5,000 nodes holding 20,000 pods of 500 controllers:
//
// BM_NewSnapshot/E: aligning a policy's view to a new metrics snapshot, as
// every refresh does: 4 metric terms; with E=1 the first is estimated from
// siblings (the snapshot carries every pod's measured usage, 20,000
// samples, measured per controller) and 200 recent starts are estimated
// again; E=2 is E=1 with fade measured (each start's own sample looked up
// and taken off its estimate, as the shipped configuration does); E=0 has
// no estimate.
//
// BM_PlaceAndGet/E: what one decision adds besides Decide: a pod placed
// (its estimate added to the columns and the prepared table at once) and
// the view read for the next decision.
//
// Each reports `vs_no_estimate`: its CPU time divided by the same work
// with E=0, both timed in the same run (thread CPU time).
//
//   build/bench/metric_views_bench
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "model/metrics.h"
#include "model/node_info.h"
#include "scheduler/cycle/metric_views.h"

namespace ms {
namespace {

constexpr int kNodes = 5000;
constexpr int kPodsPerNode = 4;
constexpr int kControllers = 500;
constexpr int kMetrics = 4;
const absl::Time kNow = absl::FromUnixSeconds(1700000000);

double ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// The nodes, their pods (started an hour ago) and a snapshot of 4 metrics
// with every pod's measured CPU.
struct Cluster {
  std::vector<NodeInfo> nodes;
  std::vector<std::string> names;
  std::unordered_map<std::string, size_t> index;
  std::unordered_map<std::string, PodInfo> pods;
  MetricsSnapshot snapshot;
  uint64_t version = 1;

  Cluster() {
    const int64_t now_ms = absl::ToUnixMillis(kNow);
    auto by_pod = std::make_shared<PodSamples>();
    for (int m = 0; m < kMetrics; ++m) {
      snapshot.metrics.push_back({.name = absl::StrCat("m", m)});
    }
    for (int i = 0; i < kNodes; ++i) {
      NodeInfo info;
      info.node.name = absl::StrCat("node-", i);
      info.node.allocatable = {.milli_cpu = 16000, .memory = int64_t{64} << 30};
      index[info.node.name] = nodes.size();
      names.push_back(info.node.name);
      for (int m = 0; m < kMetrics; ++m) {
        snapshot.metrics[m].by_node[info.node.name] = {0.1 + (i % 97) / 200.0,
                                                       now_ms};
      }
      for (int p = 0; p < kPodsPerNode; ++p) {
        const int n = i * kPodsPerNode + p;
        const std::string key = absl::StrCat("ns/pod-", n);
        pods[key] = {.requests = {.milli_cpu = 500},
                     .start_time_ms = now_ms - 3600 * 1000,
                     .owner_uid = absl::StrCat("rs-", n % kControllers)};
        (*by_pod)[key] = {0.2 + (n % 13) / 10.0, now_ms};
      }
      nodes.push_back(std::move(info));
    }
    snapshot.metrics[0].by_pod = std::move(by_pod);
  }

  NodeLayout Layout() const {
    return {.nodes = &nodes,
            .names = &names,
            .index = &index,
            .version = version,
            .attributes_version = 1,
            .find_pod = [this](const std::string& key) -> const PodInfo* {
              auto it = pods.find(key);
              return it != pods.end() ? &it->second : nullptr;
            }};
  }
};

const Cluster& TheCluster() {
  static const Cluster* cluster = new Cluster();
  return *cluster;
}

// `estimate`: 0 none, 1 from siblings, 2 from siblings with fade measured.
ScoringConfig Policy(int estimate) {
  ScoringConfig config;
  config.herd_window_ms = 120000;
  for (int m = 0; m < kMetrics; ++m) {
    config.metrics.push_back(
        {.name = absl::StrCat("m", m), .max_staleness_ms = 120000});
  }
  if (estimate > 0) {
    config.metrics[0].estimate = {
        .basis = UnseenLoadEstimate::Basis::kCpuRequests,
        .warmup_ms = 120000,
        .siblings_query = "usage",
        .fade = estimate == 2 ? UnseenLoadEstimate::Fade::kMeasured
                              : UnseenLoadEstimate::Fade::kStep};
  }
  return config;
}

std::shared_ptr<const PodInfo> NewPod(int n) {
  return std::make_shared<const PodInfo>(
      PodInfo{.requests = {.milli_cpu = 500},
              .owner_uid = absl::StrCat("rs-", n % kControllers)});
}

// A view with 200 pods placed in the last minute.
MetricViews WarmViews(const ScoringConfig& config, const Cluster& cluster) {
  MetricViews views(absl::Minutes(2), absl::Minutes(4));
  auto snapshot = std::make_shared<const MetricsSnapshot>(cluster.snapshot);
  views.Get(config, snapshot, kNow, cluster.Layout());
  for (int p = 0; p < 200; ++p) {
    views.Place(p % kNodes, kNow, cluster.Layout(), absl::StrCat("ns/new-", p),
                NewPod(p));
  }
  return views;
}

// CPU ns per new snapshot aligned, over `reps`.
double AlignNs(const ScoringConfig& config, int reps) {
  const Cluster& cluster = TheCluster();
  MetricViews views = WarmViews(config, cluster);
  const double start = ThreadCpuNs();
  for (int r = 0; r < reps; ++r) {
    auto snapshot = std::make_shared<const MetricsSnapshot>(cluster.snapshot);
    const MetricViews::View& view =
        views.Get(config, snapshot, kNow, cluster.Layout());
    benchmark::DoNotOptimize(view.columns.data());
  }
  return (ThreadCpuNs() - start) / reps;
}

void BM_NewSnapshot(benchmark::State& state) {
  const ScoringConfig config = Policy(static_cast<int>(state.range(0)));
  const Cluster& cluster = TheCluster();
  MetricViews views = WarmViews(config, cluster);
  for (auto _ : state) {
    state.PauseTiming();
    auto snapshot = std::make_shared<const MetricsSnapshot>(cluster.snapshot);
    state.ResumeTiming();
    const MetricViews::View& view =
        views.Get(config, snapshot, kNow, cluster.Layout());
    benchmark::DoNotOptimize(view.columns.data());
  }
  constexpr int kReps = 10;
  state.counters["vs_no_estimate"] =
      AlignNs(config, kReps) / AlignNs(Policy(0), kReps);
}

// CPU ns per pod placed and view read, over `reps`.
double PlaceNs(const ScoringConfig& config, int reps, int first) {
  const Cluster& cluster = TheCluster();
  MetricViews views = WarmViews(config, cluster);
  auto snapshot = std::make_shared<const MetricsSnapshot>(cluster.snapshot);
  views.Get(config, snapshot, kNow, cluster.Layout());  // aligned before
  std::vector<std::shared_ptr<const PodInfo>> pods;
  for (int r = 0; r < reps; ++r) pods.push_back(NewPod(first + r));
  const double start = ThreadCpuNs();
  for (int r = 0; r < reps; ++r) {
    views.Place((first + r) % kNodes, kNow, cluster.Layout(),
                absl::StrCat("ns/placed-", first + r), pods[r]);
    const MetricViews::View& view =
        views.Get(config, snapshot, kNow, cluster.Layout());
    benchmark::DoNotOptimize(view.recent.data());
  }
  return (ThreadCpuNs() - start) / reps;
}

void BM_PlaceAndGet(benchmark::State& state) {
  const ScoringConfig config = Policy(static_cast<int>(state.range(0)));
  const Cluster& cluster = TheCluster();
  MetricViews views = WarmViews(config, cluster);
  auto snapshot = std::make_shared<const MetricsSnapshot>(cluster.snapshot);
  views.Get(config, snapshot, kNow, cluster.Layout());
  int n = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::shared_ptr<const PodInfo> pod = NewPod(n);
    std::string key = absl::StrCat("ns/placed-", n);
    state.ResumeTiming();
    views.Place(n % kNodes, kNow, cluster.Layout(), key, std::move(pod));
    const MetricViews::View& view =
        views.Get(config, snapshot, kNow, cluster.Layout());
    benchmark::DoNotOptimize(view.recent.data());
    ++n;
  }
  constexpr int kReps = 2000;
  state.counters["vs_no_estimate"] =
      PlaceNs(config, kReps, 0) / PlaceNs(Policy(0), kReps, 0);
}

BENCHMARK(BM_NewSnapshot)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlaceAndGet)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ms

BENCHMARK_MAIN();
