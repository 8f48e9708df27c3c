// bind_only: the ceiling of the end-to-end benchmark (bench/e2e_bench.cc).
//
//   build/bench/bind_only --kubeconfig=FILE [--scheduler_name=bind-only]
//                         [--in_flight=64]
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
//   - the bindings go out as metrics-scheduler's do, without waiting
//     (KubeClient::BindAsync: the client's one I/O thread carries them all),
//     with the timeout metrics-scheduler gives a binding without leader
//     election (30 s), at most --in_flight at once (metrics-scheduler's
//     --max-bindings-in-flight default; it adapts below that, this does
//     not), the rest waiting in a deque for a slot;
//   - the process is set up as metrics-scheduler's main() sets it up: two
//     malloc arenas and a fixed mmap threshold, absl::Mutex deadlock
//     detection off.
// It makes no decision (any node will do: no kubelet runs the pods), keeps
// no accounting, writes no Event, and retries only what it must so as not
// to lose a pod: a binding that got no answer
// (scheduler/cycle/scheduler_api.h's IsTransient) is sent again, and a 409 to
// that says the first one landed. Any other failure is logged and counted, and
// the pod stays pending.
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
#include <memory>
#include <optional>
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
#include "scheduler/cycle/scheduler_api.h"

ABSL_FLAG(std::string, kubeconfig, "",
          "The kubeconfig to reach the apiserver with (required).");
ABSL_FLAG(std::string, scheduler_name, "bind-only",
          "The spec.schedulerName of the pods to bind.");
ABSL_FLAG(int, in_flight, 64,
          "Bindings sent to the apiserver at once (metrics-scheduler's "
          "--max-bindings-in-flight default).");

namespace ms::bench {
namespace {

// metrics-scheduler's binding timeout without leader election: BindTimeout
// in scheduler/cmd/main.cc, at most 30 s.
constexpr absl::Duration kBindTimeout = absl::Seconds(30);

// The signals that stop the process, waited for with sigwait().
sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

// The bindings to send, at most `in_flight` at once.
//
// Thread-safe: Submit() from any thread.
class BindPool {
 public:
  BindPool(kube::KubeClient& client, int in_flight)
      : client_(client), in_flight_(std::max(1, in_flight)) {}
  // Waits for the answers to the bindings sent; what is queued is dropped.
  ~BindPool() {
    absl::MutexLock lock(&mu_);
    tasks_.clear();
    mu_.Await(absl::Condition(
        +[](BindPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
          return p->sending_ == 0;
        },
        this));
  }

  void Submit(Pod pod, std::string node) {
    Task task{.pod = std::move(pod), .node = std::move(node)};
    {
      absl::MutexLock lock(&mu_);
      if (sending_ >= in_flight_) {
        tasks_.push_back(std::move(task));
        return;
      }
      ++sending_;
    }
    Send(std::move(task));
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

  void Send(Task task) {
    auto sent = std::make_shared<Task>(std::move(task));
    client_.BindAsync(sent->pod, sent->node, kBindTimeout,
                      [this, sent](absl::Status status) {
                        Answered(std::move(*sent), status);
                      });
  }

  // On the client's I/O thread.
  void Answered(Task task, const absl::Status& status) {
    std::optional<Task> next;
    if (status.ok()) {
      ++bound_;
    } else if (IsTransient(status)) {
      // No answer: the binding may or may not have been made. Send it
      // again; a 409 then says the first one landed.
      LOG(WARNING) << task.pod.Key() << ": binding to " << task.node
                   << " unanswered, sending it again: " << status;
      ++resent_;
      next = std::move(task);
    } else if (absl::IsAborted(status)) {
      ++already_;  // by an unanswered binding of ours, or by someone else
    } else if (absl::IsNotFound(status)) {
      ++gone_;
    } else {
      LOG(WARNING) << task.pod.Key() << ": binding to " << task.node
                   << " refused; the pod stays pending: " << status;
      ++failed_;
    }
    {
      absl::MutexLock lock(&mu_);
      if (!next && !tasks_.empty()) {
        next = std::move(tasks_.front());
        tasks_.pop_front();
      }
      if (!next) {
        --sending_;
        return;
      }
    }
    Send(*std::move(next));  // keeps the slot
  }

  kube::KubeClient& client_;
  const int in_flight_;
  absl::Mutex mu_;
  std::deque<Task> tasks_ ABSL_GUARDED_BY(mu_);
  int sending_ ABSL_GUARDED_BY(mu_) = 0;
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
  BindPool pool(client, absl::GetFlag(FLAGS_in_flight));
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
            << nodes.size() << " nodes, " << absl::GetFlag(FLAGS_in_flight)
            << " bindings in flight at most" << std::endl;

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
  // As metrics-scheduler's main() (scheduler/cmd/main.cc) sets the process up.
  mallopt(M_ARENA_MAX, 2);
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  ms::InitLogging(argv[0], ms::LogFormat::kText);
  return ms::bench::Run();
}
