#include "bench/quality/reference_scheduler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

namespace ms::quality {
namespace {

constexpr absl::Duration kBindTimeout = absl::Seconds(10);
constexpr absl::Duration kRetryEvery = absl::Seconds(1);

}  // namespace

ReferenceScheduler::ReferenceScheduler(std::string scheduler_name,
                                       Policy policy, kube::KubeClient& client,
                                       Hooks hooks)
    : scheduler_name_(std::move(scheduler_name)),
      policy_(policy),
      client_(client),
      hooks_(std::move(hooks)),
      pending_(
          "pending pods of " + scheduler_name_,
          kube::PodSource(client_, {.field_selector = absl::StrCat(
                                        "spec.schedulerName=", scheduler_name_,
                                        ",spec.nodeName=")}),
          {.on_add = [this](const Pod& pod) {
            absl::MutexLock lock(&mu_);
            queue_.push_back(pod);
          }}) {}

ReferenceScheduler::~ReferenceScheduler() { Stop(); }

void ReferenceScheduler::Start() {
  pending_.Start();
  loop_ = std::thread([this] { Loop(); });
}

void ReferenceScheduler::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (loop_.joinable()) loop_.join();
  pending_.Stop();
}

void ReferenceScheduler::Loop() {
  std::deque<Pod> retry;
  absl::Time next_retry = absl::Now() + kRetryEvery;
  while (true) {
    std::optional<Pod> pod;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this] {
        mu_.AssertHeld();
        return stopping_ || !queue_.empty();
      };
      mu_.AwaitWithDeadline(absl::Condition(&ready), next_retry);
      if (stopping_) return;
      if (!queue_.empty()) {
        pod = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    if (pod) {
      if (!Place(*pod)) retry.push_back(std::move(*pod));
      continue;
    }
    // Every second, the pods nothing fitted are tried once more.
    next_retry = absl::Now() + kRetryEvery;
    std::deque<Pod> again;
    again.swap(retry);
    for (Pod& p : again) {
      if (!Place(p)) retry.push_back(std::move(p));
    }
  }
}

bool ReferenceScheduler::Place(const Pod& pod) {
  std::optional<PodRef> ref = hooks_.locate(pod.name);
  if (!ref) return true;  // not the benchmark's: leave it
  const PodView view = hooks_.pod_view(*ref);
  const std::vector<NodeView> nodes = hooks_.views(ref->pool);
  const double memory_gib =
      static_cast<double>(
          pod.containers.empty() ? 0 : pod.containers[0].requests.memory) /
      (1 << 30);
  // Filter by requests, as every scheduler does; the policy scores the rest.
  std::vector<NodeView> fit;
  std::vector<size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeView& n = nodes[i];
    if (n.cpu_requested + view.cpu_request <= n.cpu_allocatable + 1e-9 &&
        n.memory_requested_gib + memory_gib <=
            n.memory_allocatable_gib + 1e-9) {
      fit.push_back(n);
      index.push_back(i);
    }
  }
  const int chosen = fit.empty() ? -1 : Choose(policy_, view, fit, rng_());
  if (chosen < 0) return false;
  const size_t node = index[chosen];
  absl::Status s =
      client_.Bind(pod, hooks_.node_names(ref->pool)[node], kBindTimeout);
  if (s.ok() || absl::IsAborted(s)) {  // 409: an earlier try landed
    if (s.ok()) hooks_.bound(*ref, node);
    return true;
  }
  if (absl::IsNotFound(s)) return true;  // deleted meanwhile
  LOG(WARNING) << pod.Key() << ": binding failed, trying again: " << s;
  return false;
}

}  // namespace ms::quality
