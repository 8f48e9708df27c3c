#include "scheduler/cycle/binder.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/http.h"
#include "common/logging.h"
#include "glog/logging.h"
#include "scoring/explanation.h"

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
    case Outcome::kNotSent: return "not_sent";
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
          "Bindings by outcome: bound, lost_answer_bound (no answer or 409, "
          "found bound on read-back), bound_elsewhere, gone, not_bound and "
          "unknown (no answer; read back unbound, or not readable: the same "
          "binding is sent again), refused (retried), not_leader and "
          "node_gone (not sent; handed back to the queue), not_sent (its "
          "deadline passed before it left: placed again, or sent again), "
          "volumes_failed (retried). bound_elsewhere also counts a pod found "
          "bound where we chose after this replica's write window closed "
          "(the next leader may have bound it: not claimed).",
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
                    "answer, being read back, or waiting to be sent again).",
                    {}, [this] {
                      absl::MutexLock lock(&mu_);
                      return Registry::GaugeSamples{
                          {{}, static_cast<double>(binding_ + sending_ +
                                                   resends_.size())}};
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
  // Every outcome's series from the start (kNotSent is the last).
  for (int o = 0; o <= static_cast<int>(Outcome::kNotSent); ++o) {
    outcomes_.With({OutcomeName(static_cast<Outcome>(o))});
  }
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    workers_.emplace_back([this] { Loop(); });
  }
}

Binder::~Binder() {
  Cancel();  // nothing is sent again
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
      return;
    }
    ++sending_;
    TellRecorder();
  }
  Dispatch(std::move(task));
}

void Binder::Drain() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](Binder* b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(b->mu_) {
        return b->tasks_.empty() && b->answers_.empty() &&
               b->resends_.empty() && b->waiting_.empty() &&
               b->binding_ == 0 && b->sending_ == 0;
      },
      this));
}

void Binder::Cancel() {
  {
    absl::MutexLock lock(&mu_);
    cancelling_ = true;  // wakes the workers: resends are due at once
  }
  if (!cancelled_.HasBeenNotified()) cancelled_.Notify();
}

bool Binder::Ready(const BindTask& task) {
  return task.decision.volume_bindings.empty() &&
         leadership_.AwaitWriteWindow(absl::ZeroDuration()) &&
         state_.HasNode(task.node);
}

void Binder::Dispatch(BindTask task) {
  if (!Ready(task)) {  // it waited for its slot meanwhile
    bool idle;
    {
      absl::MutexLock lock(&mu_);
      --sending_;
      tasks_.push_back(std::move(task));
      idle = TellRecorder();
    }
    if (idle) recorder_.SendWaiting();
    return;
  }
  // std::function wants a copyable callable: the task travels by pointer.
  ++task.sent;
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
  bool idle;  // no binding in flight or waiting any more
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
    idle = TellRecorder();
  }
  for (BindTask& t : next) Dispatch(std::move(t));
  if (idle) recorder_.SendWaiting();
}

bool Binder::TellRecorder() {
  const bool busy = sending_ > 0 || !waiting_.empty();
  if (busy == told_busy_) return false;
  told_busy_ = busy;
  recorder_.BindingsBusy(busy);
  return !busy;
}

void Binder::Loop() {
  while (true) {
    enum class Work { kBind, kAnswer, kSendAgain } work;
    BindTask task;
    absl::Status answer;
    {
      absl::MutexLock lock(&mu_);
      while (true) {
        if (!answers_.empty()) {
          work = Work::kAnswer;
          task = std::move(answers_.front().first);
          answer = std::move(answers_.front().second);
          answers_.pop_front();
          break;
        }
        if (!tasks_.empty()) {
          work = Work::kBind;
          task = std::move(tasks_.front());
          tasks_.pop_front();
          break;
        }
        auto next = std::min_element(
            resends_.begin(), resends_.end(),
            [](const Resend& a, const Resend& b) { return a.due < b.due; });
        if (next != resends_.end() &&
            (cancelling_ || next->due <= absl::Now())) {
          work = Work::kSendAgain;
          task = std::move(next->task);
          resends_.erase(next);
          break;
        }
        // Closed, the workers stay until every binding sent is answered and
        // every answer settled.
        auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return closed_ && sending_ == 0 && waiting_.empty() &&
                 resends_.empty();
        };
        if (drained()) return;
        const uint64_t added = resends_added_;
        auto woken = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return !answers_.empty() || !tasks_.empty() ||
                 (cancelling_ && !resends_.empty()) ||
                 resends_added_ != added || drained();
        };
        mu_.AwaitWithDeadline(absl::Condition(&woken),
                              next == resends_.end() ? absl::InfiniteFuture()
                                                     : next->due);
      }
      ++binding_;
    }
    switch (work) {
      case Work::kAnswer: Resolve(task, answer); break;
      case Work::kBind: Bind(task); break;
      case Work::kSendAgain: SendAgain(task); break;
    }
    absl::MutexLock lock(&mu_);
    --binding_;
  }
}

void Binder::Count(Outcome outcome) {
  outcomes_.With({OutcomeName(outcome)}).Inc();
}

Binder::ReadBack Binder::ReadPodBack(const Pod& pod) {
  absl::StatusOr<Pod> now = api_.GetPod(pod.namespace_, pod.name);
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
  HandBack(task);
  return false;
}

void Binder::HandBack(const BindTask& task) {
  // Not leading (or the lease is not fresh enough to write under): the pod
  // goes back to the queue for whoever leads next.
  MS_VLOG(1) << task.queued.pod.Key() << ": not bound to " << task.node
             << ": outside the lease's write window; back to the queue"
             << Fields(task);
  Count(Outcome::kNotLeader);
  state_.Forget(task.queued.pod);
  queue_.RequeueBackoff(task.queued);
}

absl::Status Binder::BindVolumes(const BindTask& task) {
  const VolumeBindings& v = task.decision.volume_bindings;
  // Each write starts inside the lease's write window, as a binding does.
  auto in_window = [this] {
    return leadership_.AwaitWriteWindow(options_.leadership_wait);
  };
  for (const VolumeBindings::Bind& b : v.binds) {
    if (!in_window()) return OutsideWriteWindowError();
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
    if (!in_window()) return OutsideWriteWindowError();
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
    absl::Status volumes = BindVolumes(task);
    if (IsOutsideWriteWindow(volumes)) {
      HandBack(task);
      return;
    }
    if (!volumes.ok()) {
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

  ++task.sent;
  absl::Time start = absl::Now();
  absl::Status status = api_.Bind(pod, task.node, options_.timeout);
  binding_seconds_.With({}).Observe(Seconds(absl::Now() - start));
  Resolve(task, status);
}

void Binder::SendAgainLater(BindTask task) {
  absl::MutexLock lock(&mu_);
  const absl::Time due = absl::Now() + RetryBackoff(std::max(1, task.sent));
  resends_.push_back({due, std::move(task)});
  ++resends_added_;
}

void Binder::SendAgain(BindTask& task) {
  const Pod& pod = task.queued.pod;
  if (cancelled_.HasBeenNotified()) {
    // Shutting down: whoever leads next sees in its informers where the
    // pod is. The node stays charged here.
    LOG(INFO) << pod.Key() << ": binding to " << task.node
              << " abandoned at shutdown; whether it landed is not known"
              << Fields(task);
    attempts_.Attempted(pod.scheduler_name, AttemptMetrics::Result::kError,
                        task.started);
    queue_.RequeueBackoff(task.queued);
    return;
  }
  if (!state_.HasNode(task.node)) {
    // Its pods go with it: wherever the first binding went, the pod is
    // placed again (a 409 then tells if it had landed).
    LOG(INFO) << pod.Key() << ": not sending the binding to " << task.node
              << " again: the node was deleted; back to the queue"
              << Fields(task);
    Count(Outcome::kNodeGone);
    state_.Forget(pod);
    queue_.RequeueBackoff(task.queued);
    return;
  }
  if (!leadership_.AwaitWriteWindow(absl::ZeroDuration())) {
    // A late renewal: keep the pod (and its charge) and try later. A lost
    // lease ends in shutdown, which abandons it.
    MS_VLOG(1) << pod.Key() << ": binding to " << task.node
               << " waits for the lease's write window to be sent again"
               << Fields(task);
    SendAgainLater(std::move(task));
    return;
  }
  ++task.sent;
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
  if (IsNotSent(status)) {
    // Its deadline passed before it left (a slow credential plugin, a
    // busy client): certainly without effect. The first sending: the pod is
    // placed again. A sending again: the first one is still unknown.
    MS_VLOG(1) << pod.Key() << ": binding to " << task.node
               << " not sent: " << status.message() << Fields(task);
    Count(Outcome::kNotSent);
    if (task.sent > 1) {
      SendAgainLater(std::move(task));
      return;
    }
    state_.Forget(pod);
    attempts_.Attempted(pod.scheduler_name, AttemptMetrics::Result::kError,
                        task.started);
    queue_.RequeueBackoff(task.queued);
    return;
  }
  const bool unanswered = IsTransient(status);
  // A refusal proves the binding refused did not happen; after a sending
  // again, it says nothing of the first one (a restarting apiserver
  // answers 403 for a moment): read back, as for no answer.
  if (!unanswered && !absl::IsAborted(status) && task.sent == 1) {
    LOG(WARNING) << pod.Key() << ": binding to " << task.node
                 << " refused, backing off: " << status
                 << Fields(task).Err(status);
    Count(Outcome::kRefused);
    Retry(task, absl::StrCat("Binding rejected: ", status.message()));
    return;
  }
  ResolveByReadBack(task, status);
}

void Binder::ResolveByReadBack(BindTask& task, const absl::Status& status) {
  // No answer (it may have taken effect), a 409 (bound somewhere), or a
  // binding sent again refused: where is the pod now?
  const Pod& pod = task.queued.pod;
  ReadBack now = ReadPodBack(pod);
  if (now.kind == ReadBack::Kind::kGone) {
    LOG(INFO) << pod.Key() << ": gone while binding to " << task.node
              << Fields(task);
    Settle(task, Outcome::kGone);
    return;
  }
  if (now.kind == ReadBack::Kind::kUnknown || now.pod.node_name.empty()) {
    // Nothing known: it may have landed, or may still (the server can
    // commit a write after its client gave up). The node stays charged
    // and the same binding is sent again, which settles it.
    const bool unread = now.kind == ReadBack::Kind::kUnknown;
    LOG(WARNING) << pod.Key() << ": binding to " << task.node << ": "
                 << status << (unread ? "; the pod cannot be read back"
                                      : "; the pod reads back unbound")
                 << "; sending it again" << Fields(task).Err(status);
    Count(unread ? Outcome::kUnknown : Outcome::kNotBound);
    if (task.sent == 1) {
      recorder_.FailedScheduling(
          pod, "Binding",
          absl::StrCat("Binding to ", task.node, " not answered: ",
                       status.message(), "; sending it again"));
    }
    SendAgainLater(std::move(task));
    return;
  }
  // On the chosen node: our binding took effect (without an answer, or
  // with a 409 when a binding of ours was sent again, by us or by libcurl
  // on a connection that died before the first answer came back), unless
  // another replica may have led since and bound it there itself. Only the
  // leader binds, so while this replica may still write (asked after the
  // read), no one else can have: the binding is ours.
  if (now.pod.node_name == task.node &&
      leadership_.AwaitWriteWindow(absl::ZeroDuration())) {
    LOG(INFO) << pod.Key() << ": bound to " << task.node
              << "; the answer was lost: " << status.message()
              << Fields(task);
    Count(Outcome::kLostAnswerBound);
    Succeeded(task);
    return;
  }
  // Bound elsewhere (by another scheduler, or by an earlier decision of
  // ours whose answer was lost), or bound where we chose by a replica that
  // may have led since: charge the node it is on at once, rather than
  // leave it uncharged until the informer shows it there, and claim
  // nothing (no Scheduled Event: if the binding was ours, that Event is
  // lost).
  LOG(INFO) << pod.Key() << ": not bound to " << task.node << ", already on "
            << now.pod.node_name << ": " << status.message() << Fields(task);
  Count(Outcome::kBoundElsewhere);
  state_.UpsertAssignedPod(now.pod);
  attempts_.Attempted(pod.scheduler_name, AttemptMetrics::Result::kError,
                      task.started);
  queue_.Done(pod);
  recorder_.Forget(pod);
}

}  // namespace ms
