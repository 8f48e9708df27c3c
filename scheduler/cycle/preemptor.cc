#include "scheduler/cycle/preemptor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "glog/logging.h"

namespace ms {
namespace {

// The victim as the API calls name it.
Pod AsPod(const PodInfo& p) {
  return Pod{.name = p.name, .namespace_ = p.namespace_, .uid = p.uid};
}

}  // namespace

Preemptor::Preemptor(PreemptorOptions options, SchedulerApi& api,
                     EventRecorder& recorder, Leadership& leadership,
                     Registry& registry,
                     std::function<void(const Pod&)> failed)
    : options_(std::move(options)),
      api_(api),
      recorder_(recorder),
      leadership_(leadership),
      failed_(std::move(failed)),
      outcomes_(registry.AddCounter(
          "metrics_scheduler_preemption_outcomes_total",
          "Preemptions carried out (done), or not: failed (a write refused) "
          "or not_leader.",
          {"result"})),
      victims_(registry.AddHistogram(
          "metrics_scheduler_preemption_victims",
          "Pods evicted per preemption carried out.",
          ExponentialBuckets(1, 2, 7))) {
  for (const char* result : {"done", "failed", "not_leader"}) {
    outcomes_.With({result});
  }
  thread_ = std::thread([this] { Loop(); });
}

Preemptor::~Preemptor() { Drain(); }

void Preemptor::Submit(PreemptionTask task) {
  absl::MutexLock lock(&mu_);
  if (closed_) {
    LOG(WARNING) << task.preemptor.Key()
                 << ": not preempting: the scheduler is stopping"
                 << LogFields()
                        .Pod(task.preemptor.namespace_, task.preemptor.name)
                        .Node(task.node);
    return;
  }
  in_flight_.insert(task.preemptor.uid);
  queue_.push_back(std::move(task));
}

bool Preemptor::InFlight(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  return in_flight_.contains(uid);
}

void Preemptor::Drain() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Preemptor::Cancel() {
  if (!cancelled_.HasBeenNotified()) cancelled_.Notify();
}

absl::Status Preemptor::Write(
    absl::FunctionRef<absl::Status(absl::Duration)> call) {
  return RetryWhileUnavailable(
      [&] {
        if (!leadership_.AwaitWriteWindow(options_.leadership_wait)) {
          return OutsideWriteWindowError();
        }
        return call(options_.timeout);
      },
      [this](absl::Duration backoff) {
        return cancelled_.WaitForNotificationWithTimeout(backoff);
      });
}

void Preemptor::Loop() {
  while (true) {
    PreemptionTask task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](Preemptor* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
            return p->closed_ || !p->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // closed and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    const bool done = Run(task);
    {
      absl::MutexLock lock(&mu_);
      in_flight_.erase(task.preemptor.uid);
    }
    if (!done) failed_(task.preemptor);
  }
}

bool Preemptor::Run(const PreemptionTask& task) {
  const Pod& preemptor = task.preemptor;
  auto fields = [&] {
    return LogFields().Pod(preemptor.namespace_, preemptor.name).Node(task.node);
  };
  // Not leading (or the lease is late): what is written stays written,
  // nothing more is.
  auto not_leader = [&] {
    LOG(WARNING) << preemptor.Key()
                 << ": preemption stopped: not leading (or the lease is "
                    "late)"
                 << fields();
    outcomes_.With({"not_leader"}).Inc();
    return false;
  };
  const kube::PodCondition condition{
      .type = "DisruptionTarget",
      .status = "True",
      .reason = "PreemptionByScheduler",
      .message = absl::StrCat(preemptor.scheduler_name,
                              ": preempting to accommodate a higher priority "
                              "pod")};
  for (const auto& v : task.victims) {
    const Pod victim = AsPod(*v);
    absl::Status s = Write([&](absl::Duration timeout) {
      return api_.SetPodCondition(victim, condition, timeout);
    });
    if (s.ok()) {
      s = Write([&](absl::Duration timeout) {
        return api_.DeletePod(victim.namespace_, victim.name, victim.uid,
                              timeout);
      });
    }
    if (IsOutsideWriteWindow(s)) return not_leader();
    if (absl::IsNotFound(s) || absl::IsAborted(s)) {
      MS_VLOG(1) << preemptor.Key() << ": victim " << victim.Key()
                 << " is already gone" << fields();
      continue;
    }
    if (!s.ok()) {
      LOG(WARNING) << preemptor.Key() << ": preempting " << victim.Key()
                   << " on " << task.node << ": " << s << fields().Err(s);
      outcomes_.With({"failed"}).Inc();
      return false;
    }
    LOG(INFO) << preemptor.Key() << " preempted " << victim.Key() << " on "
              << task.node << fields();
    recorder_.Preempted(victim, preemptor, task.node);
  }
  for (const auto& p : task.lower_nominated) {
    const Pod lower = AsPod(*p);
    absl::Status s = Write([&](absl::Duration timeout) {
      return api_.SetNominatedNode(lower, "", timeout);
    });
    if (IsOutsideWriteWindow(s)) return not_leader();
    if (!s.ok() && !absl::IsNotFound(s)) {
      LOG(WARNING) << lower.Key() << ": clearing its nominated node: " << s
                   << LogFields().Pod(lower.namespace_, lower.name).Err(s);
    }
  }
  absl::Status s = Write([&](absl::Duration timeout) {
    return api_.SetNominatedNode(preemptor, task.node, timeout);
  });
  if (IsOutsideWriteWindow(s)) return not_leader();
  if (!s.ok()) {
    LOG(WARNING) << preemptor.Key() << ": nominating " << task.node << ": "
                 << s << fields().Err(s);
    outcomes_.With({"failed"}).Inc();
    return false;
  }
  outcomes_.With({"done"}).Inc();
  victims_.With({}).Observe(static_cast<double>(task.victims.size()));
  return true;
}

}  // namespace ms
