// World: the load model running live for a set of pools.
//
// A pool is one trace's fleet placed by one policy: its own copy of the
// trace's nodes, so every policy meets the same nodes and the same pods at
// the same moments. The harness tells the World when a pod is bound and
// when it ends; the World advances time in steps, keeping each node's and
// each running pod's counters (what Prometheus scrapes, exporter.h; the
// pods named as the cluster knows them, cluster_objects.h) and each pool's
// figures
// (figures.h), and a coarse record of every node's utilisation over time
// for the report.
//
// Thread-safe: the trace driver, the pod watcher, the exporter's scrapes and
// the clairvoyant policy call it from their own threads.
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_WORLD_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_WORLD_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "bench/quality/exporter.h"
#include "bench/quality/figures.h"
#include "bench/quality/load_model.h"
#include "bench/quality/trace.h"

namespace ms::quality {

struct PoolSpec {
  std::string name;              // also the prefix of its nodes' names
  const Trace* trace = nullptr;  // must outlive the World
  std::string policy;
  std::vector<std::string> node_names;      // as the cluster knows them
  std::vector<std::string> node_addresses;  // their InternalIPs
};

// A node's utilisation over time, for the report: one sample per
// `sample_every_s`.
struct UtilisationSeries {
  double sample_every_s = 5;
  std::vector<std::vector<double>> by_node;  // [node][sample]
};

class World {
 public:
  World(std::vector<PoolSpec> pools, ModelParams params, double hot_threshold,
        double sample_every_s = 5);

  const std::vector<PoolSpec>& pools() const { return pools_; }

  // Pod `pod` (its index in the pool's trace) was seen bound to node `node`
  // at time `t` (seconds from the start), as the object `name`: it starts
  // there, for what is left of its duration. Counted once: true only for
  // the call that started it (the harness then writes the pod's status, as
  // a kubelet would), false when it runs or has ended.
  bool Bound(size_t pool, size_t pod, size_t node, double t,
             const std::string& name);
  // Pod `pod` ended (was deleted): its load leaves its node, and it is
  // never started again.
  void Ended(size_t pool, size_t pod);
  // Pod `pod` was evicted at `t` before its end (rebalancing): its load
  // leaves its node, and it waits, unbound, to start again for the rest of
  // its duration (its replacement, warming up anew). True only for the
  // call that evicted it; false when it was not running.
  bool Evicted(size_t pool, size_t pod, double t);
  // The object the pod runs as now (its name at its last Bound).
  std::string NameOf(size_t pool, size_t pod) const;
  // Moves every node to time `t` (>= the last), counters and figures
  // integrated over the step.
  void Advance(double t);

  // What the exporter serves: every pool's nodes' counters, and the CPU
  // time of every pod bound and not ended.
  std::string Exposition() const;

  // The true state of pool `pool`'s nodes at the last Advance, each pod
  // counted at its full usage (warmed up or not): what only a clairvoyant
  // scheduler knows. Demand in cores, capacity cores x speed.
  struct TrueNode {
    double demand_cores = 0;
    double capacity_cores = 0;
  };
  std::vector<TrueNode> TrueLoad(size_t pool) const;

  // Whether pod `pod`'s usage could be known from metrics by the last
  // Advance: it, or another pod of its owner, started at least that pod's
  // warm-up plus `lag_s` before (a pod without an owner: only its own).
  bool UsageKnown(size_t pool, size_t pod, double lag_s) const;
  // TrueLoad with each pod counted as a scheduler that learns from metrics
  // at best knows it: at its full usage once UsageKnown, at its CPU request
  // until then. What the learning policy knows (policies.h).
  std::vector<TrueNode> KnownLoad(size_t pool, double lag_s) const;

  // The pods of pool `pool` that have run their duration by `t` and not
  // ended yet: the harness deletes them.
  std::vector<size_t> DuePods(size_t pool, double t) const;

  // What each of the pool's nodes has requested (by its bound pods), in
  // cores and GiB, and the CPU requests of pods bound in the `recent_s`
  // seconds before the last Advance.
  struct Requested {
    double cpu = 0;
    double memory_gib = 0;
    double recent_cpu = 0;
    int pods = 0;
  };
  std::vector<Requested> RequestedOf(size_t pool, double recent_s) const;

  // Whether the pod has been bound, and the pool's figures so far with
  // `pending` pods of the policy left unbound.
  bool IsBound(size_t pool, size_t pod) const;
  Figures FiguresOf(size_t pool, int pending) const;
  UtilisationSeries SeriesOf(size_t pool) const;
  // (latency, pod-seconds) samples of the pool, for the report's CDF.
  std::vector<std::pair<double, double>> LatencySamplesOf(size_t pool) const;

 private:
  struct Node {
    std::vector<RunningPod> pods;
    NodeCounters counters;
    NodeState state;  // at the last Advance
  };
  struct Pool {
    std::vector<Node> nodes;
    std::vector<int> node_of_pod;  // -1: not bound (yet), or evicted
    std::vector<bool> ended;
    std::vector<double> left_s;      // of each pod's duration, as of its start
    std::vector<double> ends_s;      // when a running pod ends
    std::vector<double> started_s;   // its first start; -1: not yet
    std::vector<std::string> names;  // each pod's object, once bound
    int evictions = 0;
    std::vector<double> cpu_seconds;  // each pod's CPU time, core-seconds
    FigureAccumulator figures;
    UtilisationSeries series;
  };

  bool UsageKnownLocked(size_t pool, size_t pod, double lag_s) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // TrueLoad (lag_s < 0) or KnownLoad.
  std::vector<TrueNode> LoadLocked(size_t pool, double lag_s) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes pod `pod` off node `node`'s running pods.
  void RemoveRunning(size_t pool, size_t pod, int node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds `dt` seconds of node `n`'s pods' CPU time at `t` to `pool`.
  void AccumulatePods(size_t pool, size_t n, double t, double dt)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<ExportedPod> RunningPods() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::vector<PoolSpec> pools_;
  const ModelParams params_;
  const double sample_every_s_;
  mutable absl::Mutex mu_;
  std::vector<Pool> state_ ABSL_GUARDED_BY(mu_);
  double now_ ABSL_GUARDED_BY(mu_) = 0;
  double next_sample_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_WORLD_H_
