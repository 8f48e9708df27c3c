#include "scheduler/scheduler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "scoring/explain.h"

namespace ms {
namespace {

constexpr absl::Duration kHousekeepingPeriod = absl::Seconds(1);

bool IsTerminal(const Pod& pod) {
  return pod.phase == PodPhase::kSucceeded || pod.phase == PodPhase::kFailed;
}

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

// A failure where the apiserver could not answer (restarting, overloaded, a
// broken connection): the same call may work a moment later, and a write
// may have taken effect even though its answer was lost.
bool IsTransient(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) ||
         absl::IsResourceExhausted(s);
}

// Like IsTransient, or PermissionDenied: a restarting kube-apiserver
// answers 403 for a moment, until its RBAC authorizer has synced. Retried
// for reads and Events, whose retry costs nothing.
bool IsTransientOrStarting(const absl::Status& s) {
  return IsTransient(s) || absl::IsPermissionDenied(s);
}

// Writing an Event: tries, and waits between them (doubling), about 25 s in
// all, enough for an apiserver restart.
constexpr int kEventAttempts = 10;
constexpr absl::Duration kEventRetryMin = absl::Milliseconds(200);
constexpr absl::Duration kEventRetryMax = absl::Seconds(5);
// Reading a pod back after a binding whose answer was lost: the same.
constexpr int kConfirmAttempts = 10;

}  // namespace

Scheduler::Scheduler(const Config& config, SchedulerOptions options,
                     SchedulerApi& api, metrics::MetricsCache* cache,
                     const Clock& clock, Registry& registry,
                     std::function<bool()> is_leader)
    : config_(config),
      options_(std::move(options)),
      scoring_(MakeScoringConfig(config)),
      api_(api),
      cache_(cache),
      clock_(clock),
      is_leader_(std::move(is_leader)),
      queue_(clock, options_.queue),
      state_(clock, config.herd.window),
      rng_(options_.seed),
      attempts_(registry.AddCounter(
          "metrics_scheduler_schedule_attempts_total",
          "Scheduling attempts by result: scheduled, unschedulable, error.",
          {"result"})),
      decisions_(registry.AddCounter(
          "metrics_scheduler_decisions_total",
          "Placement decisions by scoring mode: metrics or fallback.",
          {"mode"})),
      decision_seconds_(registry.AddHistogram(
          "metrics_scheduler_decision_duration_seconds",
          "Time to filter, score and pick a node for one pod.",
          ExponentialBuckets(0.00001, 2, 16))),
      binding_seconds_(registry.AddHistogram(
          "metrics_scheduler_binding_duration_seconds",
          "Time of one binding call to the apiserver.",
          ExponentialBuckets(0.001, 2, 14))),
      pending_to_bound_seconds_(registry.AddHistogram(
          "metrics_scheduler_pod_scheduling_duration_seconds",
          "Time from a pod's creation until it was bound.",
          ExponentialBuckets(0.01, 2, 16))),
      events_dropped_(registry.AddCounter(
          "metrics_scheduler_events_dropped_total",
          "Events not written because too many were waiting.", {})),
      registry_(registry) {
  RegisterMetrics();
  for (int i = 0; i < options_.bind_workers; ++i) {
    binders_.emplace_back([this] { BindLoop(); });
  }
  for (int i = 0; i < std::max(1, options_.event_workers); ++i) {
    event_writers_.emplace_back([this] { EventLoop(); });
  }
  // Also on standbys: their metrics cache follows the nodes too, so a
  // takeover decides with warm metrics.
  housekeeping_ = std::thread([this] { Housekeeping(); });
}

Scheduler::~Scheduler() {
  Stop();
  if (housekeeping_.joinable()) housekeeping_.join();
  {
    absl::MutexLock lock(&bind_mu_);
    bind_closed_ = true;
  }
  for (std::thread& t : binders_) t.join();
  // The binders' last events are queued by now: write them, then stop.
  {
    absl::MutexLock lock(&event_mu_);
    events_closed_ = true;
  }
  for (std::thread& t : event_writers_) t.join();
}

void Scheduler::RecordEvent(kube::PodEvent event) {
  absl::MutexLock lock(&event_mu_);
  if (event_queue_.size() >= kMaxPendingEvents) {
    events_dropped_.With({}).Inc();
    return;
  }
  event_queue_.push_back(std::move(event));
}

void Scheduler::EventLoop() {
  while (true) {
    kube::PodEvent event;
    {
      absl::MutexLock lock(&event_mu_);
      event_mu_.Await(absl::Condition(
          +[](Scheduler* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->event_mu_) {
            return s->events_closed_ || !s->event_queue_.empty();
          },
          this));
      if (event_queue_.empty()) return;  // closed and drained
      event = std::move(event_queue_.front());
      event_queue_.pop_front();
    }
    // One name for every attempt: a retry after a lost answer is refused
    // as a duplicate instead of recording the Event twice.
    if (event.name.empty()) {
      event.name = absl::StrCat(event.pod_name, ".",
                                absl::Hex(absl::ToUnixNanos(absl::Now())));
    }
    absl::Status s = api_.RecordEvent(event);
    absl::Duration backoff = kEventRetryMin;
    for (int attempt = 1; IsTransientOrStarting(s) && attempt < kEventAttempts;
         ++attempt) {
      // The apiserver is away for a moment: try again, unless shutting
      // down (then the rest of the queue gets one attempt each).
      {
        absl::MutexLock lock(&event_mu_);
        if (event_mu_.AwaitWithTimeout(absl::Condition(&events_closed_),
                                       backoff)) {
          break;
        }
      }
      backoff = std::min(backoff * 2, kEventRetryMax);
      s = api_.RecordEvent(event);
      if (absl::IsAlreadyExists(s)) s = absl::OkStatus();  // the lost one
    }
    if (!s.ok()) {
      LOG(WARNING) << event.pod_namespace << "/" << event.pod_name
                   << ": recording event: " << s;
    }
  }
}

std::optional<Pod> Scheduler::ReadBack(const Pod& pod) {
  absl::Duration backoff = kEventRetryMin;
  for (int attempt = 0; attempt < kConfirmAttempts; ++attempt) {
    absl::StatusOr<Pod> now = api_.GetPod(pod.namespace_, pod.name);
    if (now.ok()) {
      if (now->uid != pod.uid) return std::nullopt;  // recreated
      return *std::move(now);
    }
    if (!IsTransientOrStarting(now.status())) return std::nullopt;
    if (stopping_.WaitForNotificationWithTimeout(backoff)) return std::nullopt;
    backoff = std::min(backoff * 2, kEventRetryMax);
  }
  return std::nullopt;
}

void Scheduler::RegisterMetrics() {
  registry_.AddGauge(
      "metrics_scheduler_pending_pods", "Pods waiting, by queue.", {"queue"},
      [this] {
        QueueLengths l = queue_.Lengths();
        return Registry::GaugeSamples{
            {{"active"}, static_cast<double>(l.active)},
            {{"backoff"}, static_cast<double>(l.backoff)},
            {{"unschedulable"}, static_cast<double>(l.unschedulable)},
            {{"in_flight"}, static_cast<double>(l.in_flight)}};
      });
  registry_.AddGauge("metrics_scheduler_assumed_pods",
                     "Pods placed by this scheduler, not yet seen bound.", {},
                     [this] {
                       return Registry::GaugeSamples{
                           {{}, static_cast<double>(state_.NumAssumed())}};
                     });
  registry_.AddGauge("metrics_scheduler_nodes", "Nodes known.", {}, [this] {
    return Registry::GaugeSamples{
        {{}, static_cast<double>(state_.NumNodes())}};
  });
  registry_.AddGauge("metrics_scheduler_leader",
                     "1 when this replica is the leader.", {}, [this] {
                       return Registry::GaugeSamples{
                           {{}, is_leader_() ? 1.0 : 0.0}};
                     });
  if (cache_ == nullptr) return;
  auto per_metric = [this](auto value) {
    Registry::GaugeSamples out;
    for (const metrics::MetricStats& s : cache_->Stats()) {
      out.push_back({{s.name}, value(s)});
    }
    return out;
  };
  registry_.AddGauge(
      "metrics_scheduler_metric_age_seconds",
      "Seconds since the metric was last fetched successfully (-1: never).",
      {"metric"}, [this, per_metric] {
        int64_t now = absl::ToUnixMillis(clock_.Now());
        return per_metric([now](const metrics::MetricStats& s) {
          return s.last_success_ms == 0
                     ? -1.0
                     : static_cast<double>(now - s.last_success_ms) / 1000;
        });
      });
  registry_.AddGauge(
      "metrics_scheduler_metric_nodes_with_data",
      "Nodes with a fresh, finite value of the metric.", {"metric"},
      [per_metric] {
        return per_metric([](const metrics::MetricStats& s) {
          return static_cast<double>(s.nodes_with_data);
        });
      });
  registry_.AddGauge(
      "metrics_scheduler_metric_nodes_missing",
      "Known nodes without a usable value of the metric.", {"metric"},
      [per_metric] {
        return per_metric([](const metrics::MetricStats& s) {
          return static_cast<double>(s.nodes_known - s.nodes_with_data);
        });
      });
  registry_.AddGauge(
      "metrics_scheduler_metric_refreshes_total",
      "Fetches of the metric, by result.", {"metric", "result"}, [this] {
        Registry::GaugeSamples out;
        for (const metrics::MetricStats& s : cache_->Stats()) {
          out.push_back({{s.name, "success"},
                         static_cast<double>(s.refresh_successes)});
          out.push_back({{s.name, "failure"},
                         static_cast<double>(s.refresh_failures)});
        }
        return out;
      });
}

void Scheduler::OnPendingPod(const Pod& pod) {
  if (pod.deleting || IsTerminal(pod) || !pod.node_name.empty()) {
    queue_.Delete(pod.Key());
    return;
  }
  queue_.Update(pod);
}

void Scheduler::OnPendingPodDeleted(const Pod& pod) {
  queue_.Delete(pod.Key());
}

void Scheduler::OnAssignedPod(const Pod& pod) {
  state_.UpsertAssignedPod(pod);
}

void Scheduler::OnAssignedPodDeleted(const Pod& pod) {
  state_.RemoveAssignedPod(pod);
  queue_.MoveAllToActive();  // its resources are free again
}

void Scheduler::OnNode(const Node& node) {
  if (state_.UpsertNode(node)) queue_.MoveAllToActive();
  absl::MutexLock lock(&nodes_mu_);
  nodes_dirty_ = true;
}

void Scheduler::OnNodeDeleted(const Node& node) {
  state_.RemoveNode(node.name);
  absl::MutexLock lock(&nodes_mu_);
  nodes_dirty_ = true;
}

void Scheduler::SyncNodesToCache() {
  bool dirty;
  {
    absl::MutexLock lock(&nodes_mu_);
    dirty = nodes_dirty_;
    nodes_dirty_ = false;
  }
  if (dirty && cache_ != nullptr) cache_->SetNodes(state_.NodeAddressList());
}

void Scheduler::Housekeeping() {
  while (!stopping_.WaitForNotificationWithTimeout(kHousekeepingPeriod)) {
    queue_.Flush();
    SyncNodesToCache();
  }
}

void Scheduler::Run() {
  running_.store(true);
  // The metrics cache fetches nothing before it knows the nodes: do not
  // leave the first decisions to wait for the next housekeeping tick.
  SyncNodesToCache();
  LOG(INFO) << "scheduling pods with schedulerName " << config_.scheduler_name;
  while (std::optional<QueuedPod> queued = queue_.Pop()) {
    ScheduleOne(std::move(*queued));
  }
  // Let the bindings already handed out finish.
  {
    absl::MutexLock lock(&bind_mu_);
    bind_mu_.Await(absl::Condition(
        +[](Scheduler* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->bind_mu_) {
          return s->bind_queue_.empty() && s->binding_ == 0;
        },
        this));
  }
  running_.store(false);
  stopped_.Notify();
}

void Scheduler::Stop() {
  if (stopping_.HasBeenNotified()) {
    if (running_.load()) stopped_.WaitForNotification();
    return;
  }
  stopping_.Notify();
  queue_.Close();
  if (running_.load()) stopped_.WaitForNotification();
}

std::shared_ptr<const MetricsSnapshot> Scheduler::MetricsForCycle(
    bool* force_fallback) {
  *force_fallback = false;
  if (cache_ == nullptr) return nullptr;
  if (!cache_->FirstRefreshDone()) {
    absl::Time now = clock_.Now();
    if (cold_since_ == absl::InfinitePast()) cold_since_ = now;
    absl::Duration left =
        cold_since_ + config_.fallback.cold_cache_deadline - now;
    if (left <= absl::ZeroDuration() || !cache_->WaitForFirstRefresh(left)) {
      *force_fallback = true;
      VLOG(2) << "metrics cache still cold: deciding in fallback mode";
    }
  }
  return cache_->Snapshot();
}

void Scheduler::ScheduleOne(QueuedPod queued) {
  const Pod& pod = queued.pod;
  bool force_fallback = false;
  std::shared_ptr<const MetricsSnapshot> metrics =
      MetricsForCycle(&force_fallback);
  DecisionRequest request{.pod = &pod,
                          .config = &scoring_,
                          .metrics = std::move(metrics),
                          .force_fallback = force_fallback,
                          .seed = rng_()};
  std::string node;
  absl::Time start = absl::Now();
  Decision decision = state_.DecideAndAssume(request, workspace_, &node);
  decision_seconds_.With({}).Observe(Seconds(absl::Now() - start));

  if (!decision.ok()) {
    attempts_.With({"unschedulable"}).Inc();
    ReportUnschedulable(queued, decision);
    queue_.RequeueUnschedulable(queued);
    return;
  }
  decisions_.With({ModeName(decision.mode)}).Inc();
  VLOG(1) << pod.Key() << " -> " << node << " ("
          << SummarizeTerms(decision.score, decision.mode, decision.terms)
          << ")";
  absl::MutexLock lock(&bind_mu_);
  bind_queue_.push_back(
      {std::move(queued), std::move(node), std::move(decision), absl::Now()});
}

void Scheduler::ReportUnschedulable(const QueuedPod& queued,
                                    const Decision& decision) {
  const Pod& pod = queued.pod;
  LOG(INFO) << pod.Key() << " is unschedulable: " << decision.filter_summary;
  RecordEvent({.pod_namespace = pod.namespace_,
               .pod_name = pod.name,
               .pod_uid = pod.uid,
               .type = "Warning",
               .reason = "FailedScheduling",
               .action = "Scheduling",
               .message = decision.filter_summary,
               .reporting_component = config_.scheduler_name,
               .reporting_instance = options_.identity});
  absl::Status s = api_.SetPodCondition(pod, {.status = "False",
                                 .reason = "Unschedulable",
                                 .message = decision.filter_summary});
  if (!s.ok()) LOG(WARNING) << pod.Key() << ": setting condition: " << s;
}

void Scheduler::BindLoop() {
  while (true) {
    BindTask task;
    {
      absl::MutexLock lock(&bind_mu_);
      bind_mu_.Await(absl::Condition(
          +[](Scheduler* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->bind_mu_) {
            return s->bind_closed_ || !s->bind_queue_.empty();
          },
          this));
      if (bind_queue_.empty()) return;  // closed and drained
      task = std::move(bind_queue_.front());
      bind_queue_.pop_front();
      ++binding_;
    }
    Bind(std::move(task));
    absl::MutexLock lock(&bind_mu_);
    --binding_;
  }
}

void Scheduler::Bind(BindTask task) {
  const Pod& pod = task.queued.pod;
  if (!is_leader_()) {
    // Leadership lost: bind nothing more; the new leader will place it.
    state_.Forget(pod);
    queue_.Done(pod);
    return;
  }
  absl::Time start = absl::Now();
  absl::Status status = api_.Bind(pod, task.node);
  binding_seconds_.With({}).Observe(Seconds(absl::Now() - start));
  // Without an answer (a broken connection, a restart) the binding may
  // have taken effect; after a 409 the pod is bound somewhere. Either way,
  // ask the apiserver where the pod is now.
  const bool unanswered = IsTransient(status);
  std::optional<Pod> now;
  if (unanswered || absl::IsAborted(status)) now = ReadBack(pod);
  if (unanswered && now && now->node_name == task.node) {
    LOG(INFO) << pod.Key() << ": bound to " << task.node
              << "; the answer was lost: " << status.message();
    status = absl::OkStatus();
  }

  if (status.ok()) {
    attempts_.With({"scheduled"}).Inc();
    if (pod.creation_time_ms > 0) {
      pending_to_bound_seconds_.With({}).Observe(
          static_cast<double>(absl::ToUnixMillis(clock_.Now()) -
                              pod.creation_time_ms) /
          1000);
    }
    queue_.Done(pod);
    std::string message = absl::StrCat(
        "Successfully assigned ", pod.Key(), " to ", task.node, "; ",
        SummarizeTerms(task.decision.score, task.decision.mode,
                       task.decision.terms));
    if (task.decision.mode == ScoringMode::kFallback) {
      absl::StrAppend(&message, " [fallback: ",
                      FallbackReasonName(task.decision.fallback_reason), "]");
    }
    RecordEvent({.pod_namespace = pod.namespace_,
                 .pod_name = pod.name,
                 .pod_uid = pod.uid,
                 .type = "Normal",
                 .reason = "Scheduled",
                 .action = "Binding",
                 .message = std::move(message),
                 .reporting_component = config_.scheduler_name,
                 .reporting_instance = options_.identity});
    return;
  }

  if (now && !now->node_name.empty()) {
    // Bound elsewhere (by another scheduler, or by an attempt of ours whose
    // answer was lost): charge the node it is on at once, rather than
    // leave it uncharged until the informer shows it there.
    LOG(INFO) << pod.Key() << ": not bound to " << task.node
              << ", already on " << now->node_name << ": " << status.message();
    state_.UpsertAssignedPod(*now);
    attempts_.With({"error"}).Inc();
    queue_.Done(pod);
    return;
  }
  // Unanswered and still unknown: the binding may have taken effect, so the
  // chosen node stays charged until the informer or the pod's next
  // decision settles it. Otherwise the binding did not happen.
  if (!(unanswered && !now)) state_.Forget(pod);
  if (absl::IsAborted(status) || absl::IsNotFound(status)) {
    // Bound by someone else, or gone: nothing to retry.
    LOG(INFO) << pod.Key() << ": not bound to " << task.node << ": "
              << status.message();
    attempts_.With({"error"}).Inc();
    queue_.Done(pod);
    return;
  }
  LOG(WARNING) << pod.Key() << ": binding to " << task.node
               << " failed, backing off: " << status;
  attempts_.With({"error"}).Inc();
  RecordEvent(
      {.pod_namespace = pod.namespace_,
       .pod_name = pod.name,
       .pod_uid = pod.uid,
       .type = "Warning",
       .reason = "FailedScheduling",
       .action = "Binding",
       .message = absl::StrCat("Binding rejected: ", status.message()),
       .reporting_component = config_.scheduler_name,
       .reporting_instance = options_.identity});
  queue_.RequeueBackoff(task.queued);
}

}  // namespace ms
