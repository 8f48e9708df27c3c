// The scoring hot path: one whole decision (filter + score + pick) over a
// grid of node and metric counts, against a baseline that only reads the
// same metric arrays once. Each BM_Decide/N/M reports `vs_baseline`: its
// CPU time per decision divided by BM_Baseline/N/M's, measured in the same
// run (thread CPU time, so other processes on a shared machine do not skew
// it). Use --benchmark_min_time=... for steadier figures.
//
// Each decision is followed, as in the scheduler, by the chosen node's
// table row being updated (the pod assumed on it), so the block of nodes
// it belongs to has its resource scores computed again: Decide keeps the
// leastAllocated and balancedAllocation of the last pod shape per block.
// BM_Decide/N/M/2 is the plain decision for a pod whose cpu request
// differs from the previous one's, so that nothing of it is reused.
//
// BM_Decide/N/M/1 runs the same decision with pod-to-pod constraints in
// play: four labelled pods placed per node (20,000 at 5,000 nodes), one in
// ten with a preferred anti-affinity term and one in a hundred with a
// required one, and an incoming pod with required hostname anti-affinity,
// a preferred zone affinity, a hard zone spread, a soft hostname spread
// and a preferred node affinity, so InterPodAffinity and PodTopologySpread
// filter and score and every default-profile plugin scores. (The plain pod
// /0 is scored by NodeResourcesFit, BalancedAllocation, TaintToleration and
// ImageLocality besides the metrics.)
//
// BM_Preempt/N: a pod no node fits, and preemption's dry run (below).
//
//   build/bench/scoring_bench --benchmark_filter='BM_Decide/5000/4'
#include <algorithm>
#include <cstdint>
#include <ctime>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "common/aligned_vector.h"
#include "model/image_names.h"
#include "model/metrics.h"
#include "model/node_info.h"
#include "model/pod.h"
#include "scoring/decide.h"
#include "scoring/metric_table.h"
#include "scoring/node_table.h"
#include "scoring/plugins/image_locality.h"
#include "scoring/plugins/inter_pod_affinity.h"
#include "scoring/plugins/node_affinity.h"
#include "scoring/plugins/pod_topology_spread.h"
#include "scoring/plugins/taint_toleration.h"

namespace ms {
namespace {

constexpr int64_t kNowMs = 1700000000000;

// A cluster as the scheduler would hold it: mostly schedulable nodes of a
// few shapes with pods on them, a few cordoned, tainted or not ready (with
// the not-ready taint), one in twenty with a PreferNoSchedule taint, each
// holding a few images, one of them the pod's.
struct Cluster {
  std::vector<NodeInfo> nodes;
  NodeTable table;
  std::vector<MetricColumn> metrics;
  MetricTable prepared;  // as the scheduler prepares them on alignment
  std::vector<int32_t> placements;
  ScoringConfig config;
  Pod pod;
};

Cluster MakeCluster(int num_nodes, int num_metrics) {
  Cluster c;
  std::mt19937_64 rng(42);
  c.nodes.resize(num_nodes);
  for (int i = 0; i < num_nodes; ++i) {
    NodeInfo& info = c.nodes[i];
    Node& n = info.node;
    n.name = absl::StrCat("node-", i);
    n.ready = i % 97 != 0;
    n.unschedulable = i % 101 == 0;
    n.labels = {{"kubernetes.io/hostname", n.name},
                {"topology.kubernetes.io/zone", absl::StrCat("z", i % 3)}};
    if (i % 50 == 0) {
      n.taints.push_back({"dedicated", "gpu", TaintEffect::kNoSchedule});
    }
    if (!n.ready) {
      n.taints.push_back(
          {"node.kubernetes.io/not-ready", "", TaintEffect::kNoSchedule});
    }
    if (i % 20 == 0) {
      n.taints.push_back({"spot", "true", TaintEffect::kPreferNoSchedule});
    }
    for (int image = 0; image < 3; ++image) {
      n.images.push_back(InternImageName(
          absl::StrCat("app-", (i + image) % 7, ":1"), 300LL << 20));
    }
    n.allocatable.milli_cpu = (i % 2 == 0 ? 16000 : 32000);
    n.allocatable.memory = (i % 2 == 0 ? 64LL : 128LL) << 30;
    n.allocatable.ephemeral_storage = 100LL << 30;
    n.allocatable.pods = 110;
    int pods = static_cast<int>(rng() % 40);
    info.requested.milli_cpu = pods * 250;
    info.requested.memory = pods * (512LL << 20);
    info.requested.pods = pods;
    info.non_zero_requested = info.requested;
  }
  c.table.Build(c.nodes);
  std::uniform_real_distribution<double> value(0.001, 2.0);
  c.metrics.resize(num_metrics);
  for (MetricColumn& col : c.metrics) {
    col.values.resize(num_nodes);
    col.time_ms.resize(num_nodes);
    for (int i = 0; i < num_nodes; ++i) {
      col.values[i] = value(rng);
      col.time_ms[i] = kNowMs - 5000;
    }
  }
  c.prepared.Build(c.metrics, num_nodes);
  c.placements.assign(num_nodes, 0);
  for (int i = 0; i < num_nodes; i += 7) c.placements[i] = 1;
  for (int m = 0; m < num_metrics; ++m) {
    MetricTerm t;
    t.name = absl::StrCat("metric", m);
    t.weight = 1 + m;
    t.direction = m % 2 == 0 ? Direction::kLower : Direction::kHigher;
    t.normalization.type = m % 3 == 2 ? NormalizationType::kRatio
                                      : NormalizationType::kMinMax;
    c.config.metrics.push_back(t);
  }
  Container container;
  container.image = "app-3:1";
  container.requests.milli_cpu = 100;
  container.requests.memory = 128LL << 20;
  c.pod.name = "p";
  c.pod.namespace_ = "default";
  c.pod.containers = {container};
  return c;
}

PodAffinityTerm Term(const std::string& app, const std::string& key) {
  return {.label_selector = LabelSelector{.match_labels = {{"app", app}}},
          .namespaces = {"default"},
          .topology_key = key};
}

// Places four labelled pods on every node (some with anti-affinity terms)
// and gives the incoming pod terms of its own; the table follows.
void AddPodConstraints(Cluster& c) {
  constexpr char kHost[] = "kubernetes.io/hostname";
  constexpr char kZone[] = "topology.kubernetes.io/zone";
  int k = 0;
  for (NodeInfo& info : c.nodes) {
    for (int j = 0; j < 4; ++j, ++k) {
      PodInfo pod{.namespace_ = "default",
                  .labels = Labels{{"app", absl::StrCat("app-", k % 50)},
                                   {"pod-template-hash", absl::StrCat(k % 500)}}};
      PodAffinityRules anti;
      if (k % 10 == 0) {
        anti.preferred.push_back(
            {.weight = 10, .term = Term(absl::StrCat("app-", k % 50), kHost)});
      }
      if (k % 100 == 1) anti.required.push_back(Term("batch", kHost));
      pod.terms = PodAffinityTerms({}, anti);
      info.AddPod(PodCharge{.pod = std::make_shared<const PodInfo>(pod)});
    }
  }
  c.table.Build(c.nodes);
  c.pod.labels = {{"app", "app-7"}};
  c.pod.pod_anti_affinity.required.push_back(Term("app-7", kHost));
  c.pod.pod_affinity.preferred.push_back(
      {.weight = 50, .term = Term("app-3", kZone)});
  // A hard zone spread and a soft hostname spread of its own app.
  for (auto [key, action] :
       {std::pair{kZone, UnsatisfiableAction::kDoNotSchedule},
        std::pair{kHost, UnsatisfiableAction::kScheduleAnyway}}) {
    c.pod.topology_spread.push_back(
        {.max_skew = 2,
         .topology_key = key,
         .when_unsatisfiable = action,
         .label_selector = LabelSelector{.match_labels = {{"app", "app-7"}}}});
  }
  // And a preferred node affinity, so that every default-profile plugin
  // scores.
  NodeSelectorTerm zone;
  zone.match_expressions.push_back({kZone, SelectorOperator::kIn, {"z1"}});
  c.pod.preferred_node_affinity.push_back({.weight = 10, .preference = zone});
}


// CPU time of this thread: the ratio stays meaningful on a shared machine,
// where wall time includes other processes' slices.
double ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// Nanoseconds per iteration of the baseline, by (nodes, metrics), filled by
// BM_Baseline, which runs first for each size (registration order).
std::map<std::pair<int, int>, double>& BaselineNs() {
  static auto* m = new std::map<std::pair<int, int>, double>;
  return *m;
}

// The metric columns as the baseline reads them: copies that start on a
// cache line, so that its figure does not depend on where malloc put the
// originals (an unaligned 64-byte load spans two lines).
struct AlignedColumns {
  std::vector<AlignedVector<double>> values;
  std::vector<AlignedVector<int64_t>> time_ms;
};

AlignedColumns Aligned(const std::vector<MetricColumn>& metrics) {
  AlignedColumns a;
  for (const MetricColumn& col : metrics) {
    a.values.emplace_back(col.values.begin(), col.values.end());
    a.time_ms.emplace_back(col.time_ms.begin(), col.time_ms.end());
  }
  return a;
}

// Reads every value and sample time of every metric column once, with
// independent accumulators so that the loop runs at load throughput rather
// than add latency.
void ReadColumns(const AlignedColumns& metrics) {
  for (size_t m = 0; m < metrics.values.size(); ++m) {
    const double* v = metrics.values[m].data();
    const int64_t* t = metrics.time_ms[m].data();
    size_t n = metrics.values[m].size();
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t t0 = 0, t1 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      s0 += v[i];
      s1 += v[i + 1];
      s2 += v[i + 2];
      s3 += v[i + 3];
      t0 = std::max(t0, std::max(t[i], t[i + 1]));
      t1 = std::max(t1, std::max(t[i + 2], t[i + 3]));
    }
    for (; i < n; ++i) {
      s0 += v[i];
      t0 = std::max(t0, t[i]);
    }
    double s = s0 + s1 + s2 + s3;
    int64_t tm = std::max(t0, t1);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(tm);
  }
}

void BM_Baseline(benchmark::State& state) {
  Cluster c = MakeCluster(static_cast<int>(state.range(0)),
                          static_cast<int>(state.range(1)));
  const AlignedColumns columns = Aligned(c.metrics);
  for (auto _ : state) {
    ReadColumns(columns);
    benchmark::ClobberMemory();
  }
  // A separate, longer timing of the same loop for the ratio, so that the
  // counter does not depend on the framework's iteration bookkeeping.
  constexpr int kReps = 2000;
  double start = ThreadCpuNs();
  for (int r = 0; r < kReps; ++r) {
    ReadColumns(columns);
    benchmark::ClobberMemory();
  }
  double ns = (ThreadCpuNs() - start) / kReps;
  BaselineNs()[{static_cast<int>(state.range(0)),
                static_cast<int>(state.range(1))}] = ns;
}

void BM_Decide(benchmark::State& state) {
  const int num_nodes = static_cast<int>(state.range(0));
  const int num_metrics = static_cast<int>(state.range(1));
  Cluster c = MakeCluster(num_nodes, num_metrics);
  const bool constraints = state.range(2) == 1;
  const bool new_shape = state.range(2) == 2;
  if (constraints) AddPodConstraints(c);
  Workspace ws;
  // Two cpu requests the pod alternates between (kNewShape).
  const int64_t cpu[2] = {c.pod.containers[0].requests.milli_cpu,
                          c.pod.containers[0].requests.milli_cpu + 50};
  DecideInput in{.pod = &c.pod,
                 .nodes = &c.nodes,
                 .table = &c.table,
                 .metrics = &c.metrics,
                 .metric_table = &c.prepared,
                 .recent_placements = &c.placements,
                 .now_ms = kNowMs,
                 .seed = 1};
  Decision first = Decide(in, c.config, ws);
  if (!first.ok() || first.mode != ScoringMode::kMetrics) {
    state.SkipWithError("the benchmark cluster must schedule in metrics mode");
    return;
  }
  uint64_t seed = 0;
  // One decision as the scheduler makes it in a burst: after it, the pod is
  // assumed on the chosen node, whose table row changes (here Update with
  // the same NodeInfo: the row's block is computed again next time). With
  // a new shape, the pod's cpu request differs from the previous one's.
  auto decide = [&] {
    in.seed = ++seed;
    if (new_shape) c.pod.containers[0].requests.milli_cpu = cpu[seed % 2];
    Decision d = Decide(in, c.config, ws);
    benchmark::DoNotOptimize(d.node_index);
    if (d.node_index >= 0) c.table.Update(d.node_index, c.nodes[d.node_index]);
  };
  for (auto _ : state) decide();
  constexpr int kReps = 500;
  double start = ThreadCpuNs();
  for (int r = 0; r < kReps; ++r) decide();
  double ns = (ThreadCpuNs() - start) / kReps;
  auto it = BaselineNs().find({num_nodes, num_metrics});
  if (it != BaselineNs().end() && it->second > 0) {
    state.counters["vs_baseline"] = ns / it->second;
  }
  state.counters["nodes_feasible"] = first.num_feasible;
  auto scored = [&](absl::string_view term) {
    return std::any_of(first.terms.begin(), first.terms.end(),
                       [&](const TermResult& t) { return t.name == term; });
  };
  if (constraints &&
      !(scored(BuiltinTermName(BuiltinTerm::kInterPodAffinity)) &&
        scored(BuiltinTermName(BuiltinTerm::kPodTopologySpread)) &&
        scored(BuiltinTermName(BuiltinTerm::kNodeAffinity)))) {
    state.SkipWithError(
        "InterPodAffinity, PodTopologySpread or NodeAffinity did not score");
  }
  if (!(scored(BuiltinTermName(BuiltinTerm::kTaintToleration)) &&
        scored(BuiltinTermName(BuiltinTerm::kImageLocality)))) {
    state.SkipWithError("TaintToleration or ImageLocality did not score");
  }
}

// Preemption at scale: every node full of priority-0 pods (four of 1 CPU
// on 4 CPUs, started at different times), a priority-1000 pod of 2 CPUs.
// The decision that finds no node, then the dry run that picks a node and
// its victims; `vs_no_preemption` is its CPU time over the same decision
// without preemption, measured in the same run.
void BM_Preempt(benchmark::State& state) {
  const int num_nodes = static_cast<int>(state.range(0));
  std::vector<NodeInfo> nodes(num_nodes);
  for (int i = 0; i < num_nodes; ++i) {
    Node& n = nodes[i].node;
    n.name = absl::StrCat("node-", i);
    n.ready = true;
    n.labels["kubernetes.io/hostname"] = n.name;
    n.allocatable = {.milli_cpu = 4000, .memory = int64_t{16} << 30,
                     .pods = 110};
    for (int j = 0; j < 4; ++j) {
      Pod p;
      p.name = absl::StrCat("low-", i, "-", j);
      p.namespace_ = "default";
      p.uid = p.name;
      p.start_time_ms = kNowMs - (i * 4 + j) * 1000;
      p.containers.push_back({});
      p.containers[0].requests = {.milli_cpu = 1000, .memory = 1 << 30};
      nodes[i].AddPod(p, KubeVersion{});
    }
  }
  Pod pod;
  pod.name = "high";
  pod.namespace_ = "default";
  pod.uid = "high";
  pod.priority = 1000;
  pod.containers.push_back({});
  pod.containers[0].requests = {.milli_cpu = 2000, .memory = 1 << 30};
  NodeTable table;
  table.Build(nodes);
  ScoringConfig config;
  Workspace ws;
  DecideInput in{.pod = &pod, .nodes = &nodes, .table = &table,
                 .preempt = true, .now_ms = kNowMs};
  Decision first = Decide(in, config, ws);
  if (first.ok() || !first.preemption || !first.preemption->ok() ||
      first.preemption->victims.size() != 2) {
    state.SkipWithError("expected a preemption of two pods");
    return;
  }
  uint64_t seed = 0;
  for (auto _ : state) {
    in.seed = ++seed;
    Decision d = Decide(in, config, ws);
    benchmark::DoNotOptimize(d.preemption);
  }
  constexpr int kReps = 50;
  auto time = [&](bool preempt) {
    in.preempt = preempt;
    double start = ThreadCpuNs();
    for (int r = 0; r < kReps; ++r) {
      in.seed = ++seed;
      Decision d = Decide(in, config, ws);
      benchmark::DoNotOptimize(d.preemption);
    }
    return (ThreadCpuNs() - start) / kReps;
  };
  const double with = time(true);
  const double without = time(false);
  state.counters["vs_no_preemption"] = with / without;
  state.counters["victims"] = static_cast<double>(first.preemption->victims.size());
}

// Registered pairwise so that each size's baseline runs just before it.
void RegisterAll() {
  for (int nodes : {100, 1000, 5000, 15000}) {
    for (int metrics : {1, 4, 8}) {
      benchmark::RegisterBenchmark("BM_Baseline", BM_Baseline)
          ->Args({nodes, metrics});
      benchmark::RegisterBenchmark("BM_Decide", BM_Decide)
          ->Args({nodes, metrics, 0});
      if (nodes >= 1000 && metrics == 4) {
        benchmark::RegisterBenchmark("BM_Decide", BM_Decide)
            ->Args({nodes, metrics, 1});
        benchmark::RegisterBenchmark("BM_Decide", BM_Decide)
            ->Args({nodes, metrics, 2});
      }
    }
  }
  for (int nodes : {1000, 5000}) {
    benchmark::RegisterBenchmark("BM_Preempt", BM_Preempt)->Arg(nodes)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace ms

int main(int argc, char** argv) {
  ms::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
