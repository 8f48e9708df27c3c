#include "bench/harness/kubelets.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/http.h"
#include "glog/logging.h"

namespace ms::bench {
namespace {

std::string Timestamp(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

// The InternalIP `testenv nodes` gives node-<i>.
std::string HostIp(absl::string_view node) {
  int i = 0;
  absl::string_view index = node.substr(node.rfind('-') + 1);
  if (!absl::SimpleAtoi(index, &i)) return "10.0.0.1";
  return absl::StrCat("10.", 1 + i / (250 * 256), ".", (i / 250) % 256, ".",
                      i % 250 + 1);
}

std::string Condition(absl::string_view type, bool status,
                      absl::string_view reason, absl::Time since) {
  return absl::StrCat(
      R"({"type":")", type, R"(","status":")", status ? "True" : "False",
      R"(","lastProbeTime":null,"lastTransitionTime":")", Timestamp(since),
      R"(")", reason.empty() ? "" : R"(,"reason":")", reason,
      reason.empty() ? "" : R"(")", "}");
}

// What the pod's kubelet writes at `step`: 0 ContainerCreating, 1 Running,
// 2 Ready. A merge patch: the lists are written whole, as the kubelet's
// status manager writes them.
std::string PodStatus(int step, absl::string_view node, absl::Time start,
                      absl::Time now, int pod_index) {
  const bool running = step >= 1, ready = step >= 2;
  const std::string pod_ip = absl::StrCat("10.244.", (pod_index / 250) % 256,
                                          ".", pod_index % 250 + 2);
  std::string state =
      running ? absl::StrCat(R"({"running":{"startedAt":")", Timestamp(now),
                             R"("}})")
              : std::string(R"({"waiting":{"reason":"ContainerCreating"}})");
  return absl::StrCat(
      R"({"status":{"phase":")", running ? "Running" : "Pending",
      R"(","conditions":[)",
      Condition("PodReadyToStartContainers", running, "", start), ",",
      Condition("Initialized", true, "", start), ",",
      Condition("Ready", ready, ready ? "" : "ContainersNotReady", start), ",",
      Condition("ContainersReady", ready, ready ? "" : "ContainersNotReady",
                start),
      ",", Condition("PodScheduled", true, "", start), R"(],"hostIP":")",
      HostIp(node), R"(","hostIPs":[{"ip":")", HostIp(node), R"("}],)",
      running ? absl::StrCat(R"("podIP":")", pod_ip, R"(","podIPs":[{"ip":")",
                             pod_ip, R"("}],)")
              : "",
      R"("startTime":")", Timestamp(start),
      R"(","containerStatuses":[{"name":"c","state":)", state,
      R"(,"lastState":{},"ready":)", ready ? "true" : "false",
      R"(,"restartCount":0,"image":"registry.k8s.io/pause:3.10","imageID":")",
      running ? "registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9"
                "be1ac3f505666ef0e3c98fae8199917a"
              : "",
      R"(","started":)", running ? "true" : "false", "}]}}");
}

// A node's heartbeat: its conditions as `testenv nodes` wrote them, with
// new heartbeat times. A strategic merge patch: conditions merge by type.
std::string NodeHeartbeat(absl::Time now) {
  std::string conditions;
  for (auto [type, status, reason] :
       {std::tuple{"MemoryPressure", "False", "KubeletHasSufficientMemory"},
        std::tuple{"DiskPressure", "False", "KubeletHasNoDiskPressure"},
        std::tuple{"PIDPressure", "False", "KubeletHasSufficientPID"},
        std::tuple{"Ready", "True", "KubeletReady"}}) {
    absl::StrAppend(&conditions, conditions.empty() ? "" : ",", R"({"type":")",
                    type, R"(","status":")", status, R"(","reason":")", reason,
                    R"(","lastHeartbeatTime":")", Timestamp(now), R"("})");
  }
  return absl::StrCat(R"({"status":{"conditions":[)", conditions, "]}}");
}

}  // namespace

Kubelets::Kubelets(const Admin& admin, std::string pod_namespace,
                   Options options)
    : namespace_(std::move(pod_namespace)), options_(options) {
  for (int i = 0; i < options_.threads; ++i) admins_.push_back(admin.Clone());
  for (auto& a : admins_) {
    threads_.emplace_back([this, &a = *a] { Work(a); });
  }
}

Kubelets::~Kubelets() { Stop(); }

void Kubelets::SetNodes(int nodes) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  for (int i = nodes_; i < nodes; ++i) {
    queue_.push(
        {.due = now + options_.node_period * (i - nodes_) / (nodes - nodes_),
         .name = absl::StrCat("node-", i)});
  }
  nodes_ = std::max(nodes_, nodes);
  changed_.SignalAll();
}

void Kubelets::SetHeartbeats(bool on) {
  absl::MutexLock lock(&mu_);
  heartbeats_ = on;
}

void Kubelets::Bound(const std::string& name, const std::string& node) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  const absl::Time now = absl::Now();
  for (int step = 0; step < 3; ++step) {
    queue_.push({.due = now + options_.pod_steps[step],
                 .name = name,
                 .node = node,
                 .step = step,
                 .start = now});
  }
  pod_writes_left_ += 3;
  changed_.SignalAll();
}

bool Kubelets::AwaitPodWrites(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(this, &Kubelets::PodWritesDone),
                              timeout);
}

Kubelets::Counts Kubelets::counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

void Kubelets::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    changed_.SignalAll();
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void Kubelets::Work(Admin& admin) {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      changed_.Wait(&mu_);
      continue;
    }
    if (queue_.top().due > absl::Now()) {
      changed_.WaitWithDeadline(&mu_, queue_.top().due);
      continue;
    }
    Write w = queue_.top();
    queue_.pop();
    if (w.step >= 0 || heartbeats_) {
      mu_.Unlock();
      Send(admin, w);
      mu_.Lock();
    }
    if (w.step >= 0) {
      --pod_writes_left_;
    } else {  // the node's next heartbeat
      w.due += options_.node_period;
      queue_.push(std::move(w));
      changed_.Signal();
    }
  }
}

void Kubelets::Send(Admin& admin, const Write& w) {
  const absl::Time now = absl::Now();
  const bool pod = w.step >= 0;
  int pod_index = 0;
  if (pod) {
    (void)absl::SimpleAtoi(
        absl::string_view(w.name).substr(w.name.rfind('-') + 1), &pod_index);
  }
  const std::string path =
      pod ? absl::StrCat("/api/v1/namespaces/", namespace_, "/pods/", w.name,
                         "/status")
          : absl::StrCat("/api/v1/nodes/", w.name, "/status");
  absl::StatusOr<HttpResponse> r =
      pod ? admin.Call("PATCH", path,
                       PodStatus(w.step, w.node, w.start, now, pod_index),
                       "application/merge-patch+json")
          : admin.Call("PATCH", path, NodeHeartbeat(now),
                       "application/strategic-merge-patch+json");
  absl::MutexLock lock(&mu_);
  if (r.ok() && r->status / 100 == 2) {
    ++(pod ? counts_.pod_writes : counts_.node_writes);
  } else if (r.ok() && r->status == 404 && pod) {
    ++counts_.gone;
  } else {
    ++counts_.failed;
    // One line, not one per write: a failure that repeats would otherwise
    // bury the run's own output.
    if (!failure_logged_) {
      failure_logged_ = true;
      LOG(WARNING) << "kubelets: PATCH " << path
                   << " (later failures are only counted): "
                   << (r.ok() ? absl::StrCat("HTTP ", r->status, " ",
                                             r->body.substr(0, 300))
                              : r.status().ToString());
    }
  }
}

}  // namespace ms::bench
