// Kubelets: what the kubelets of a real cluster write to the apiserver,
// for the benchmarks' control plane, which has none (e2e_bench --kubelets).
//
// Every scheduler watches the pods bound to nodes and the nodes, so it
// receives all of this, though little of it changes what it reads:
//
// - Pods: a pod reported bound (Bound()) has its status written three
//   times, as a kubelet writes it while it starts the pod: ContainerCreating
//   (Pending, with its start time, host IP and conditions), Running (the
//   container started, not ready yet), then Ready. Each write is due at its
//   offset from the moment the pod was reported (Options::pod_steps).
// - Nodes: node-0 .. node-(n-1) have their status written again every
//   `node_period`, the nodes spread evenly over it: the heartbeat times of
//   their four conditions, nothing else. A kubelet writes its node's
//   status when something in it changed and at least every 5 minutes
//   (nodeStatusReportFrequency); it renews its Lease every 10 s, which
//   schedulers do not watch.
//
// The writes go out from threads of their own, each with its own
// connection, earliest due first; a write found late goes out at once. A
// pod already gone (404) is passed over; any other failure is counted and
// the first one logged. Nothing is retried.
//
// Thread-safe.
#ifndef METRICS_SCHEDULER_BENCH_HARNESS_KUBELETS_H_
#define METRICS_SCHEDULER_BENCH_HARNESS_KUBELETS_H_

#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/harness/control_plane.h"

namespace ms::bench {

class Kubelets {
 public:
  struct Options {
    // A pod's three writes, from the moment it was reported bound.
    absl::Duration pod_steps[3] = {absl::Milliseconds(500), absl::Seconds(2),
                                   absl::Seconds(4)};
    absl::Duration node_period = absl::Seconds(60);
    int threads = 4;
  };
  struct Counts {
    int64_t pod_writes = 0;   // 2xx
    int64_t node_writes = 0;  // 2xx
    int64_t gone = 0;         // 404: the pod was deleted first
    int64_t failed = 0;       // any other answer, or none
  };

  // Writes the status of pods in `pod_namespace` and of nodes as `admin`.
  Kubelets(const Admin& admin, std::string pod_namespace, Options options);
  ~Kubelets();  // Stop()s

  // Node i < `nodes` gets its heartbeats from now on, its first within a
  // period; those already beating keep their rhythm.
  void SetNodes(int nodes);
  // Off: nodes' heartbeats are skipped (each keeps its rhythm), so a
  // measurement can take what a quiet cluster costs. On by default.
  void SetHeartbeats(bool on);
  // Pod `name` was bound to node `node` (node-<index>).
  void Bound(const std::string& name, const std::string& node);
  // Waits until every pod write queued so far has been sent and answered;
  // false after `timeout`.
  bool AwaitPodWrites(absl::Duration timeout);
  Counts counts() const;
  // Stops the threads once their requests in flight are answered and drops
  // what is still queued. Idempotent.
  void Stop();

 private:
  struct Write {
    absl::Time due;
    // A pod's: its name, node, step (0..2) and start time; a node's: its
    // name, step -1.
    std::string name;
    std::string node;
    int step = -1;
    absl::Time start;
    bool operator>(const Write& o) const { return due > o.due; }
  };

  void Work(Admin& admin);
  // Sends one write; true on a 2xx.
  void Send(Admin& admin, const Write& w);
  bool PodWritesDone() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return pod_writes_left_ == 0;
  }

  const std::string namespace_;
  const Options options_;
  mutable absl::Mutex mu_;
  absl::CondVar changed_;
  std::priority_queue<Write, std::vector<Write>, std::greater<Write>> queue_
      ABSL_GUARDED_BY(mu_);
  int nodes_ ABSL_GUARDED_BY(mu_) = 0;
  bool heartbeats_ ABSL_GUARDED_BY(mu_) = true;
  // Pod writes queued or in flight.
  int64_t pod_writes_left_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool failure_logged_ ABSL_GUARDED_BY(mu_) = false;
  Counts counts_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Admin>> admins_;  // one per thread
  std::vector<std::thread> threads_;
};

}  // namespace ms::bench

#endif  // METRICS_SCHEDULER_BENCH_HARNESS_KUBELETS_H_
