// bind_only: the ceiling of the end-to-end benchmark (bench/e2e_bench.cc).
//
//   build/bench/bind_only --kubeconfig=FILE [--scheduler_name=bind-only]
//                         [--workers=32]
//
// A scheduler with the scheduling left out. It lists the nodes once, watches
// the pending pods of --scheduler_name (spec.schedulerName=NAME,
// spec.nodeName=) and binds each, in the order they arrive, to the next node
// round-robin. What is left is what every scheduler must do on an apiserver
// to place a pod: learn of it from a watch and POST its binding. Its pods/s
// and CPU per pod are the best a scheduler built on this project's client
// can reach; what metrics-scheduler spends beyond them is its own work
// (queue, decision, accounting, Events, the other informers).
//
// On those two paths it does what metrics-scheduler does, so that the
// comparison is like for like:
//   - the pending pods come through a kube::Informer over one KubeClient
//     (one connection pool, HTTP/1.1, JSON), with metrics-scheduler's field
//     selector, relisting as its informer does;
//   - the bindings are handed to --workers threads (metrics-scheduler's
//     --bind-workers default) through a deque under an absl::Mutex that each
//     idle worker awaits, as scheduler/binder.cc hands them over; a worker
//     sends one binding at a time, with the timeout metrics-scheduler gives
//     a binding without leader election (30 s);
//   - the process is set up as metrics-scheduler's main() sets it up: two
//     malloc arenas and a fixed mmap threshold, absl::Mutex deadlock
//     detection off.
// It makes no decision (any node will do: no kubelet runs the pods), keeps
// no accounting, writes no Event, and retries only what it must so as not
// to lose a pod: a binding that got no answer (scheduler/api.h's
// IsTransient) is sent again, and a 409 to that says the first one landed.
// Any other failure is logged and counted, and the pod stays pending.
//
// It writes "bind-only ready" to stderr once the pending pods are listed,
// and its counts when SIGTERM or SIGINT stops it.

#include <malloc.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "glog/logging.h"
#include "kube/client.h"
#include "kube/cluster_config.h"
#include "kube/informer.h"
#include "model/pod.h"
#include "scheduler/api.h"

ABSL_FLAG(std::string, kubeconfig, "",
          "The kubeconfig to reach the apiserver with (required).");
ABSL_FLAG(std::string, scheduler_name, "bind-only",
          "The spec.schedulerName of the pods to bind.");
ABSL_FLAG(int, workers, 32,
          "Bindings sent to the apiserver at once (metrics-scheduler's "
          "--bind-workers default).");

namespace ms::bench {
namespace {

// metrics-scheduler's binding timeout without leader election: BindTimeout
// in scheduler/main.cc, at most 30 s.
constexpr absl::Duration kBindTimeout = absl::Seconds(30);

// The signals that stop the process, waited for with sigwait().
sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

// The bindings to send, and the threads that send them.
//
// Thread-safe: Submit() from any thread.
class BindPool {
 public:
  BindPool(kube::KubeClient& client, int workers) : client_(client) {
    for (int i = 0; i < std::max(1, workers); ++i) {
      workers_.emplace_back([this] { Loop(); });
    }
  }
  // Each worker finishes the binding in hand; what is queued is dropped.
  ~BindPool() {
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
    }
    for (std::thread& t : workers_) t.join();
  }

  void Submit(Pod pod, std::string node) {
    absl::MutexLock lock(&mu_);
    tasks_.push_back({.pod = std::move(pod), .node = std::move(node)});
  }

  // What became of the bindings so far, for the log.
  std::string Counts() const {
    return absl::StrCat("bound ", bound_.load(), ", already bound (409) ",
                        already_.load(), ", gone ", gone_.load(), ", failed ",
                        failed_.load(), "; sent again ", resent_.load());
  }

 private:
  struct Task {
    Pod pod;
    std::string node;
  };

  // scheduler/binder.cc's Binder::Loop, without its in-flight gauge.
  void Loop() {
    while (true) {
      Task task;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](BindPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
              return p->closed_ || !p->tasks_.empty();
            },
            this));
        if (closed_) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      Bind(task);
    }
  }

  void Bind(Task& task) {
    const absl::Status status = client_.Bind(task.pod, task.node, kBindTimeout);
    if (status.ok()) {
      ++bound_;
    } else if (IsTransient(status)) {
      // No answer: the binding may or may not have been made. Send it
      // again after scheduler/api.h's first retry wait; a 409 then says
      // the first one landed.
      LOG(WARNING) << task.pod.Key() << ": binding to " << task.node
                   << " unanswered, sending it again: " << status;
      ++resent_;
      absl::SleepFor(kRetryMin);
      Submit(std::move(task.pod), std::move(task.node));
    } else if (absl::IsAborted(status)) {
      ++already_;  // by an unanswered binding of ours, or by someone else
    } else if (absl::IsNotFound(status)) {
      ++gone_;
    } else {
      LOG(WARNING) << task.pod.Key() << ": binding to " << task.node
                   << " refused; the pod stays pending: " << status;
      ++failed_;
    }
  }

  kube::KubeClient& client_;
  absl::Mutex mu_;
  std::deque<Task> tasks_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
  std::atomic<int64_t> bound_{0}, already_{0}, gone_{0}, resent_{0}, failed_{0};
};

int Run() {
  const std::string kubeconfig = absl::GetFlag(FLAGS_kubeconfig);
  if (kubeconfig.empty()) {
    std::cerr << "bind_only: --kubeconfig is required\n";
    return 2;
  }
  absl::StatusOr<kube::ClusterConfig> cluster =
      kube::LoadKubeconfig(kubeconfig);
  if (!cluster.ok()) {
    LOG(ERROR) << "cannot reach the cluster: " << cluster.status();
    return 2;
  }
  kube::KubeClient client(*std::move(cluster), "bind-only");

  absl::StatusOr<kube::ObjectList<Node>> listed = client.ListNodes({});
  if (!listed.ok()) {
    LOG(ERROR) << "listing the nodes: " << listed.status();
    return 1;
  }
  std::vector<std::string> nodes;
  for (const Node& n : listed->items) nodes.push_back(n.name);
  if (nodes.empty()) {
    LOG(ERROR) << "no nodes to bind to";
    return 1;
  }

  const std::string name = absl::GetFlag(FLAGS_scheduler_name);
  BindPool pool(client, absl::GetFlag(FLAGS_workers));
  size_t next = 0;  // the informer's thread alone uses it
  kube::Informer<Pod> pending(
      "pending pods",
      kube::PodSource(
          client, {.field_selector = absl::StrCat("spec.schedulerName=", name,
                                                  ",spec.nodeName=")}),
      {.on_add = [&](const Pod& pod) {
        pool.Submit(pod, nodes[next++ % nodes.size()]);
      }});
  pending.Start();
  while (!pending.WaitForSync(absl::Seconds(10))) {
    LOG(WARNING) << "the pending pods are not listed yet";
  }
  std::cerr << "bind-only ready: binding the pods of " << name << " to "
            << nodes.size() << " nodes with " << absl::GetFlag(FLAGS_workers)
            << " workers" << std::endl;

  const sigset_t stop = StopSignals();
  int received = 0;
  sigwait(&stop, &received);
  pending.Stop();
  std::cerr << "bind-only stopping: " << pool.Counts() << std::endl;
  return 0;
}

}  // namespace
}  // namespace ms::bench

int main(int argc, char** argv) {
  // Run() waits for SIGTERM and SIGINT: every thread, each started after
  // this, has them blocked.
  const sigset_t stop = ms::bench::StopSignals();
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  // As metrics-scheduler's main() (scheduler/main.cc) sets the process up.
  mallopt(M_ARENA_MAX, 2);
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  ms::InitLogging(argv[0], ms::LogFormat::kText);
  return ms::bench::Run();
}
