// PodStatusWriter: the benchmark's stand-in for a kubelet's status writes.
//
// The control plane has no kubelets, so nothing else marks a bound pod
// Running or gives it status.startTime, and metrics-scheduler trusts a
// pod's measured CPU usage only from a warm-up after that start
// (docs/quality.md, "One run"). When the load model starts a pod, the
// harness calls Started(); the writer PATCHes the pod's status
// (cluster_objects.h, PodRunningPatch) from threads of its own, so the
// loop that advances the model and the pod watcher never wait on the
// apiserver. Every policy's pods go through it alike.
//
// A pod already gone (404: its duration ran out first, or the run is being
// cleaned up) is passed over quietly; the first other failure is logged,
// later ones only counted. Nothing is retried: a pod whose write failed
// stays as its binding left it, and Stop()'s counts say how many did.
//
// Thread-safe: Started() only queues, from any thread.
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_POD_STATUS_WRITER_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_POD_STATUS_WRITER_H_

#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/harness/control_plane.h"

namespace ms::quality {

class PodStatusWriter {
 public:
  // Writes the status of pods in `pod_namespace` as `admin`, cloned once
  // per thread (each has its own connection).
  PodStatusWriter(const bench::Admin& admin, std::string pod_namespace,
                  int threads = 2);
  ~PodStatusWriter();  // Stop()s

  // The model started pod `name` at `start`: queues its status write.
  void Started(const std::string& name, absl::Time start);

  struct Counts {
    int written = 0;  // 2xx
    int gone = 0;     // 404: deleted before its write
    int failed = 0;   // any other answer, or no answer
    int dropped = 0;  // still queued at Stop()
    // The longest time from Started() to the apiserver's answer.
    absl::Duration longest_wait;
  };
  // Stops the threads once their requests in flight are answered, drops
  // what is still queued (the run deletes its pods next) and returns the
  // counts. Idempotent.
  Counts Stop();

 private:
  struct Pending {
    std::string name;
    absl::Time start;
    absl::Time queued;
  };
  enum class Outcome { kWritten, kGone, kFailed };

  void Work(bench::Admin& admin);
  // PATCHes one pod's status and counts the answer.
  void Write(bench::Admin& admin, const Pending& pod);
  // `failure` says what went wrong when `outcome` is kFailed.
  void Count(Outcome outcome, absl::Duration wait, const std::string& failure);
  bool HasWorkOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !queue_.empty();
  }

  const std::string namespace_;
  absl::Mutex mu_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Counts counts_ ABSL_GUARDED_BY(mu_);
  bool failure_logged_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<bench::Admin>> admins_;  // one per thread
  std::vector<std::thread> threads_;
};

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_POD_STATUS_WRITER_H_
