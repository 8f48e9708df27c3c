// ReferenceScheduler: a small scheduler of the harness that places the
// pods of one schedulerName with one of the reference policies
// (policies.h), as the bind-only client binds (bench/bind_only.cc): it
// watches its pending pods, filters the pod's pool's nodes by requests,
// asks the policy, and binds. A pod no node fits is tried again every
// second. Its decisions read the same lagged Prometheus as every other
// scheduler's (through `views`), except the clairvoyant and learning ones'.
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_REFERENCE_SCHEDULER_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_REFERENCE_SCHEDULER_H_

#include <deque>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "bench/quality/policies.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "model/pod.h"

namespace ms::quality {

class ReferenceScheduler {
 public:
  struct PodRef {
    size_t pool = 0;
    size_t pod = 0;
  };
  struct Hooks {
    // The pool and index of a pod by name; nullopt: not the benchmark's.
    std::function<std::optional<PodRef>(const std::string& name)> locate;
    // The pod as the policy sees it.
    std::function<PodView(const PodRef&)> pod_view;
    // The pool's nodes as the policy sees them now, and their names.
    std::function<std::vector<NodeView>(size_t pool)> views;
    std::function<const std::vector<std::string>&(size_t pool)> node_names;
    // Told of each binding made, once the apiserver accepted it.
    std::function<void(const PodRef&, size_t node)> bound;
  };

  ReferenceScheduler(std::string scheduler_name, Policy policy,
                     kube::KubeClient& client, Hooks hooks);
  ~ReferenceScheduler();  // Stop()s

  void Start();
  void Stop();

 private:
  void Loop();
  // Decides and binds `pod`; false when it must be tried again.
  bool Place(const Pod& pod);

  const std::string scheduler_name_;
  const Policy policy_;
  kube::KubeClient& client_;
  const Hooks hooks_;
  kube::Informer<Pod> pending_;
  absl::Mutex mu_;
  std::deque<Pod> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::mt19937_64 rng_{1};  // ties; the loop's thread alone
  std::thread loop_;
};

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_REFERENCE_SCHEDULER_H_
