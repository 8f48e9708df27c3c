#include "scheduler/binder.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "glog/logging.h"
#include "scoring/explain.h"

namespace ms {
namespace {

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

// The pod and the chosen node, for the JSON log.
LogFields Fields(const BindTask& task) {
  const Pod& pod = task.queued.pod;
  return std::move(LogFields().Pod(pod.namespace_, pod.name).Node(task.node));
}

}  // namespace

const char* Binder::OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kBound: return "bound";
    case Outcome::kLostAnswerBound: return "lost_answer_bound";
    case Outcome::kBoundElsewhere: return "bound_elsewhere";
    case Outcome::kGone: return "gone";
    case Outcome::kNotBound: return "not_bound";
    case Outcome::kUnknown: return "unknown";
    case Outcome::kRefused: return "refused";
    case Outcome::kNotLeader: return "not_leader";
    case Outcome::kNodeGone: return "node_gone";
    case Outcome::kVolumesFailed: return "volumes_failed";
  }
  return "unknown";
}

Binder::Binder(BinderOptions options, SchedulerApi& api, ClusterState& state,
               SchedulingQueue& queue, Leadership& leadership,
               EventRecorder& recorder, const Clock& clock,
               Registry& registry, AttemptMetrics& attempts)
    : options_(options),
      api_(api),
      state_(state),
      queue_(queue),
      leadership_(leadership),
      recorder_(recorder),
      clock_(clock),
      attempts_(attempts),
      outcomes_(registry.AddCounter(
          "metrics_scheduler_binding_outcomes_total",
          "Bindings by outcome: bound, lost_answer_bound (no answer, found "
          "bound on read-back), bound_elsewhere, gone, not_bound and unknown "
          "(no answer; retried), refused (retried), not_leader and node_gone "
          "(not sent; handed back to the queue).",
          {"outcome"})),
      binding_seconds_(registry.AddHistogram(
          "metrics_scheduler_binding_duration_seconds",
          "Time of one binding call to the apiserver.",
          ExponentialBuckets(0.001, 2, 14))),
      pending_to_bound_seconds_(registry.AddHistogram(
          "metrics_scheduler_pod_scheduling_duration_seconds",
          "Time from a pod's creation until it was bound.",
          ExponentialBuckets(0.01, 2, 16))),
      limit_({.min = options.min_in_flight,
              .max = options.max_in_flight,
              .initial = options.initial_in_flight}) {
  registry.AddGauge("metrics_scheduler_bindings_in_flight",
                    "Bindings being carried out now (sent, awaiting an "
                    "answer, or being read back).",
                    {}, [this] {
                      absl::MutexLock lock(&mu_);
                      return Registry::GaugeSamples{
                          {{}, static_cast<double>(binding_ + sending_)}};
                    });
  registry.AddGauge("metrics_scheduler_bindings_in_flight_limit",
                    "How many bindings may be sent at once now: adapts to "
                    "the apiserver's answers (fewer after 429s, timeouts "
                    "and slow answers).",
                    {}, [this] {
                      absl::MutexLock lock(&mu_);
                      return Registry::GaugeSamples{
                          {{}, static_cast<double>(limit_.limit())}};
                    });
  // Every outcome's series from the start (kVolumesFailed is the last).
  for (int o = 0; o <= static_cast<int>(Outcome::kVolumesFailed); ++o) {
    outcomes_.With({OutcomeName(static_cast<Outcome>(o))});
  }
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    workers_.emplace_back([this] { Loop(); });
  }
}

Binder::~Binder() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  for (std::thread& t : workers_) t.join();
}

void Binder::Submit(BindTask task) {
  if (!Ready(task)) {
    absl::MutexLock lock(&mu_);
    tasks_.push_back(std::move(task));
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (sending_ >= limit_.limit() || !waiting_.empty()) {
      waiting_.push_back(std::move(task));
      // Events yield while bindings wait for a slot.
      if (waiting_.size() == 1) recorder_.BindingsWaiting(true);
      return;
    }
    ++sending_;
  }
  Dispatch(std::move(task));
}

void Binder::Drain() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](Binder* b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(b->mu_) {
        return b->tasks_.empty() && b->answers_.empty() &&
               b->waiting_.empty() && b->binding_ == 0 && b->sending_ == 0;
      },
      this));
}

void Binder::Cancel() {
  if (!cancelled_.HasBeenNotified()) cancelled_.Notify();
}

bool Binder::Ready(const BindTask& task) {
  return task.decision.volume_bindings.empty() &&
         leadership_.AwaitWriteWindow(absl::ZeroDuration()) &&
         state_.HasNode(task.node);
}

void Binder::Dispatch(BindTask task) {
  if (!Ready(task)) {  // it waited for its slot meanwhile
    absl::MutexLock lock(&mu_);
    --sending_;
    tasks_.push_back(std::move(task));
    return;
  }
  // std::function wants a copyable callable: the task travels by pointer.
  auto sent = std::make_shared<BindTask>(std::move(task));
  const absl::Time start = absl::Now();
  api_.BindAsync(sent->queued.pod, sent->node, options_.timeout,
                 [this, sent, start](absl::Status status) {
                   Answered(std::move(*sent), std::move(status),
                            absl::Now() - start);
                 });
}

void Binder::Answered(BindTask task, absl::Status status,
                      absl::Duration latency) {
  binding_seconds_.With({}).Observe(Seconds(latency));
  if (status.ok()) {
    Count(Outcome::kBound);
    Succeeded(task);
  }
  std::vector<BindTask> next;
  bool caught_up = false;  // the last binding waiting for a slot is sent
  {
    absl::MutexLock lock(&mu_);
    // 429 (API Priority and Fairness' queues are full) or no answer in
    // time: the apiserver has more than it can take.
    const bool overloaded =
        absl::IsResourceExhausted(status) || absl::IsDeadlineExceeded(status);
    limit_.Observe(latency, overloaded, !waiting_.empty());
    --sending_;
    // Anything but success may need a read-back: a worker's.
    if (!status.ok()) answers_.emplace_back(std::move(task), std::move(status));
    while (sending_ < limit_.limit() && !waiting_.empty()) {
      next.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
      ++sending_;
    }
    if (!next.empty() && waiting_.empty()) {
      recorder_.BindingsWaiting(false);
      caught_up = true;
    }
  }
  for (BindTask& t : next) Dispatch(std::move(t));
  if (caught_up) recorder_.SendWaiting();
}

void Binder::Loop() {
  while (true) {
    BindTask task;
    std::optional<absl::Status> answer;
    {
      absl::MutexLock lock(&mu_);
      // Closed, the workers stay until every binding sent is answered and
      // every answer settled.
      mu_.Await(absl::Condition(
          +[](Binder* b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(b->mu_) {
            return !b->tasks_.empty() || !b->answers_.empty() ||
                   (b->closed_ && b->sending_ == 0 && b->waiting_.empty());
          },
          this));
      if (!answers_.empty()) {
        task = std::move(answers_.front().first);
        answer = std::move(answers_.front().second);
        answers_.pop_front();
      } else if (!tasks_.empty()) {
        task = std::move(tasks_.front());
        tasks_.pop_front();
      } else {
        return;  // closed and drained
      }
      ++binding_;
    }
    if (answer) {
      Resolve(task, *answer);
    } else {
      Bind(task);
    }
    absl::MutexLock lock(&mu_);
    --binding_;
  }
}

void Binder::Count(Outcome outcome) {
  outcomes_.With({OutcomeName(outcome)}).Inc();
}

Binder::ReadBack Binder::ReadPodBack(const Pod& pod) {
  absl::StatusOr<Pod> now;
  // The answer is in `now`.
  (void)RetryWhileUnavailable(
      [&] {
        now = api_.GetPod(pod.namespace_, pod.name);
        return now.status();
      },
      [this](absl::Duration backoff) {
        return cancelled_.WaitForNotificationWithTimeout(backoff);
      });
  if (now.ok()) {
    if (now->uid != pod.uid) return {.kind = ReadBack::Kind::kGone};
    return {.kind = ReadBack::Kind::kFound, .pod = *std::move(now)};
  }
  if (absl::IsNotFound(now.status())) return {.kind = ReadBack::Kind::kGone};
  return {.kind = ReadBack::Kind::kUnknown};
}

void Binder::Succeeded(const BindTask& task) {
  const Pod& pod = task.queued.pod;
  attempts_.Attempted(pod.scheduler_name, AttemptMetrics::Result::kScheduled,
                      task.started);
  attempts_.Bound(task.queued.attempts,
                  clock_.Now() - task.queued.first_enqueued);
  if (pod.creation_time_ms > 0) {
    pending_to_bound_seconds_.With({}).Observe(
        static_cast<double>(absl::ToUnixMillis(clock_.Now()) -
                            pod.creation_time_ms) /
        1000);
  }
  queue_.Done(pod);
  recorder_.Forget(pod);
  std::string message = absl::StrCat(
      "Successfully assigned ", pod.Key(), " to ", task.node, "; ",
      SummarizeTerms(task.decision.score, task.decision.mode,
                     task.decision.terms));
  if (task.decision.mode == ScoringMode::kFallback) {
    absl::StrAppend(&message, " [fallback: ",
                    FallbackReasonName(task.decision.fallback_reason), "]");
  }
  recorder_.Scheduled(pod, std::move(message));
}

void Binder::Settle(const BindTask& task, Outcome outcome) {
  const Pod& pod = task.queued.pod;
  Count(outcome);
  state_.Forget(pod);
  attempts_.Attempted(pod.scheduler_name, AttemptMetrics::Result::kError,
                      task.started);
  queue_.Done(pod);
  recorder_.Forget(pod);
}

void Binder::Retry(const BindTask& task, const std::string& message) {
  const Pod& pod = task.queued.pod;
  state_.Forget(pod);
  attempts_.Attempted(pod.scheduler_name, AttemptMetrics::Result::kError,
                      task.started);
  if (!message.empty()) recorder_.FailedScheduling(pod, "Binding", message);
  queue_.RequeueBackoff(task.queued);
}

bool Binder::InWriteWindow(const BindTask& task) {
  if (leadership_.AwaitWriteWindow(options_.leadership_wait)) return true;
  // Not leading (or the lease is not fresh enough to write under): the pod
  // goes back to the queue for whoever leads next.
  MS_VLOG(1) << task.queued.pod.Key() << ": not bound to " << task.node
             << ": outside the lease's write window; back to the queue"
             << Fields(task);
  Count(Outcome::kNotLeader);
  state_.Forget(task.queued.pod);
  queue_.RequeueBackoff(task.queued);
  return false;
}

absl::Status Binder::BindVolumes(const BindTask& task) {
  const VolumeBindings& v = task.decision.volume_bindings;
  for (const VolumeBindings::Bind& b : v.binds) {
    absl::Status s = api_.BindVolume(b, options_.timeout);
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("binding persistentvolume \"", b.volume,
                                       "\" to claim \"", b.claim.name,
                                       "\": ", s.message()));
    }
    MS_VLOG(2) << task.queued.pod.Key() << ": bound PV " << b.volume
               << " to claim " << b.claim.namespace_ << "/" << b.claim.name
               << Fields(task);
  }
  for (const VolumeBindings::Provision& p : v.provisions) {
    absl::Status s = api_.SelectNode(p, v.node, options_.timeout);
    if (!s.ok()) {
      return absl::Status(
          s.code(), absl::StrCat("selecting node for persistentvolumeclaim \"",
                                 p.name, "\": ", s.message()));
    }
    MS_VLOG(2) << task.queued.pod.Key() << ": claim " << p.namespace_ << "/"
               << p.name << " to be provisioned on " << v.node
               << Fields(task);
  }
  // Wait for the PV controller (and provisioners), as the informers show
  // it; each check is kube-scheduler's checkBindings.
  // Real time: the waits below are the mutex's.
  const absl::Time deadline = absl::Now() + options_.volume_binding_timeout;
  uint64_t seen = 0;
  while (true) {
    absl::Status verdict;
    bool done = true;
    seen = state_.AwaitVolumes(
        seen, std::min(deadline, absl::Now() + absl::Seconds(1)),
        [&](const VolumeCatalog& catalog) {
          for (const VolumeBindings::Bind& b : v.binds) {
            const PersistentVolume* pv = catalog.Volume(b.volume);
            if (pv == nullptr || !pv->claim_ref || pv->claim_ref->uid.empty()) {
              verdict = absl::AbortedError(
                  absl::StrCat("ClaimRef got reset for pv \"", b.volume, "\""));
              return;
            }
            const PersistentVolumeClaim* claim =
                catalog.Claim(b.claim.namespace_, b.claim.name);
            done &= claim != nullptr && claim->fully_bound();
          }
          for (const VolumeBindings::Provision& p : v.provisions) {
            const PersistentVolumeClaim* claim =
                catalog.Claim(p.namespace_, p.name);
            if (claim == nullptr || claim->selected_node.empty()) {
              verdict = absl::AbortedError(absl::StrCat(
                  "selectedNode annotation reset for PVC \"", p.name, "\""));
              return;
            }
            if (claim->selected_node != v.node) {
              verdict = absl::AbortedError(absl::StrCat(
                  "provisioning failed for PVC \"", p.name, "\""));
              return;
            }
            done &= claim->fully_bound();
          }
        });
    if (!verdict.ok()) return verdict;
    if (done) return absl::OkStatus();
    if (cancelled_.HasBeenNotified()) {
      return absl::CancelledError("shutting down");
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "timed out after ", absl::FormatDuration(options_.volume_binding_timeout),
          " waiting for the claims to be bound"));
    }
  }
}

void Binder::Bind(BindTask& task) {
  const Pod& pod = task.queued.pod;
  if (!InWriteWindow(task)) return;
  if (!state_.HasNode(task.node)) {
    LOG(INFO) << pod.Key() << ": not bound to " << task.node
              << ": the node was deleted; back to the queue" << Fields(task);
    Count(Outcome::kNodeGone);
    state_.Forget(pod);
    queue_.RequeueBackoff(task.queued);
    return;
  }

  if (!task.decision.volume_bindings.empty()) {
    if (absl::Status volumes = BindVolumes(task); !volumes.ok()) {
      LOG(WARNING) << pod.Key() << ": binding volumes for " << task.node
                   << " failed, backing off: " << volumes
                   << Fields(task).Err(volumes);
      Count(Outcome::kVolumesFailed);
      Retry(task, absl::StrCat("binding volumes: ", volumes.message()));
      return;
    }
    // The claims may have taken long to bind: lead still, or hand back.
    if (!InWriteWindow(task)) return;
  }

  absl::Time start = absl::Now();
  absl::Status status = api_.Bind(pod, task.node, options_.timeout);
  binding_seconds_.With({}).Observe(Seconds(absl::Now() - start));
  Resolve(task, status);
}

void Binder::Resolve(BindTask& task, const absl::Status& status) {
  const Pod& pod = task.queued.pod;
  if (status.ok()) {
    Count(Outcome::kBound);
    Succeeded(task);
    return;
  }
  if (absl::IsNotFound(status)) {
    LOG(INFO) << pod.Key() << ": not bound to " << task.node << ": "
              << status.message() << Fields(task).Err(status);
    Settle(task, Outcome::kGone);
    return;
  }
  const bool unanswered = IsTransient(status);
  if (!unanswered && !absl::IsAborted(status)) {
    LOG(WARNING) << pod.Key() << ": binding to " << task.node
                 << " refused, backing off: " << status
                 << Fields(task).Err(status);
    Count(Outcome::kRefused);
    Retry(task, absl::StrCat("Binding rejected: ", status.message()));
    return;
  }

  // No answer (it may have taken effect), or a 409 (bound somewhere):
  // where is the pod now?
  ReadBack now = ReadPodBack(pod);
  switch (now.kind) {
    case ReadBack::Kind::kGone:
      LOG(INFO) << pod.Key() << ": gone while binding to " << task.node
                << Fields(task);
      Settle(task, Outcome::kGone);
      return;
    case ReadBack::Kind::kUnknown:
      if (unanswered) {
        // It may have landed: the chosen node stays charged until the
        // informer or the pod's next decision settles it.
        LOG(WARNING) << pod.Key() << ": binding to " << task.node
                     << " unanswered and the pod cannot be read back; "
                        "backing off: "
                     << status << Fields(task).Err(status);
        Count(Outcome::kUnknown);
        attempts_.Attempted(task.queued.pod.scheduler_name,
                            AttemptMetrics::Result::kError, task.started);
        queue_.RequeueBackoff(task.queued);
        return;
      }
      // A 409 says it is bound, but not where: the informer will tell.
      Settle(task, Outcome::kBoundElsewhere);
      return;
    case ReadBack::Kind::kFound:
      break;
  }
  // On the chosen node: our binding took effect. Without an answer, or
  // with a 409 when libcurl re-sent the request on a connection that died
  // before the first answer came back.
  if (now.pod.node_name == task.node) {
    LOG(INFO) << pod.Key() << ": bound to " << task.node
              << "; the answer was lost: " << status.message()
              << Fields(task);
    Count(Outcome::kLostAnswerBound);
    Succeeded(task);
    return;
  }
  if (!now.pod.node_name.empty()) {
    // Bound elsewhere (by another scheduler, or by an attempt of ours whose
    // answer was lost): charge the node it is on at once, rather than
    // leave it uncharged until the informer shows it there.
    LOG(INFO) << pod.Key() << ": not bound to " << task.node
              << ", already on " << now.pod.node_name << ": "
              << status.message() << Fields(task);
    Count(Outcome::kBoundElsewhere);
    state_.UpsertAssignedPod(now.pod);
    attempts_.Attempted(pod.scheduler_name, AttemptMetrics::Result::kError,
                        task.started);
    queue_.Done(pod);
    recorder_.Forget(pod);
    return;
  }
  // Still unbound: the binding did not happen.
  LOG(WARNING) << pod.Key() << ": binding to " << task.node
               << " failed, backing off: " << status
               << Fields(task).Err(status);
  Count(Outcome::kNotBound);
  Retry(task, absl::StrCat("Binding rejected: ", status.message()));
}

}  // namespace ms
