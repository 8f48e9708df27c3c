#include "scheduler/cycle/event_recorder.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "glog/logging.h"

namespace ms {
namespace {

// The memory of what was said is cleared when the pod is bound or gone;
// this bounds it should those notices be missed (a pod deleted while the
// informer was away).
constexpr size_t kMaxRemembered = 100000;

}  // namespace

EventRecorder::EventRecorder(EventRecorderOptions options, SchedulerApi& api,
                             Registry& registry)
    : options_(std::move(options)),
      api_(api),
      dropped_(registry.AddCounter(
          "metrics_scheduler_events_dropped_total",
          "Events not written because too many were waiting.", {})),
      suppressed_(registry.AddCounter(
          "metrics_scheduler_events_suppressed_total",
          "FailedScheduling Events and PodScheduled conditions not written "
          "because they repeated the last one for the pod.",
          {})) {
  registry.AddGauge(
      "metrics_scheduler_events_pending",
      "Events and PodScheduled conditions not yet written: queued, in "
      "flight, or waiting to be retried.",
      {}, [this] {
        absl::MutexLock lock(&mu_);
        return Registry::GaugeSamples{
            {{}, static_cast<double>(events_.size() + queue_.size() +
                                     retries_.size() + sending_)}};
      });
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    writers_.emplace_back([this] { Loop(); });
  }
}

EventRecorder::~EventRecorder() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  for (std::thread& t : writers_) t.join();
  // The writers wait for every answer, but an answer's callback may still
  // be on its way out (or pumping) on the I/O thread, which outlives the
  // recorder: not one may touch it once this returns.
  absl::MutexLock lock(&mu_);
  auto let_go = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return callbacks_ == 0;
  };
  mu_.Await(absl::Condition(&let_go));
}

kube::PodEvent EventRecorder::MakeEvent(const Pod& pod, const Pod& by,
                                        absl::string_view type,
                                        absl::string_view reason,
                                        absl::string_view action,
                                        std::string message) const {
  const bool ours =
      absl::c_linear_search(options_.components, by.scheduler_name);
  return {.pod_namespace = pod.namespace_,
          .pod_name = pod.name,
          .pod_uid = pod.uid,
          .type = std::string(type),
          .reason = std::string(reason),
          .action = std::string(action),
          .message = std::move(message),
          .reporting_component =
              ours ? by.scheduler_name : options_.components.front(),
          .reporting_instance = options_.instance,
          .time = absl::Now()};
}

void EventRecorder::Scheduled(const Pod& pod, std::string message) {
  Enqueue({.event = MakeEvent(pod, pod, "Normal", "Scheduled", "Binding",
                              std::move(message))});
}

void EventRecorder::Warning(const Pod& pod, absl::string_view reason,
                            absl::string_view action, std::string message) {
  Enqueue({.event = MakeEvent(pod, pod, "Warning", reason, action,
                              std::move(message))});
}

void EventRecorder::Normal(const Pod& pod, absl::string_view reason,
                           absl::string_view action, std::string message) {
  Enqueue({.event = MakeEvent(pod, pod, "Normal", reason, action,
                              std::move(message))});
}

void EventRecorder::NodeEvent(const std::string& node, absl::string_view reason,
                              absl::string_view action, std::string message) {
  Enqueue({.event = kube::PodEvent{
               .kind = "Node",
               .pod_namespace = "default",
               .pod_name = node,
               .type = "Normal",
               .reason = std::string(reason),
               .action = std::string(action),
               .message = std::move(message),
               .reporting_component = options_.components.front(),
               .reporting_instance = options_.instance,
               .time = absl::Now()}});
}

void EventRecorder::Preempted(const Pod& victim, const Pod& preemptor,
                              const std::string& node) {
  Enqueue({.event =
               MakeEvent(victim, preemptor, "Normal", "Preempted", "Preempting",
                         absl::StrCat("Preempted by pod ", preemptor.uid,
                                      " on node ", node))});
}

void EventRecorder::FailedScheduling(const Pod& pod, absl::string_view action,
                                     std::string message) {
  {
    absl::MutexLock lock(&mu_);
    if (said_.size() >= kMaxRemembered) said_.clear();
    std::string& last = said_[pod.uid].failed_message;
    if (last == message) {
      suppressed_.With({}).Inc();
      return;
    }
    last = message;
  }
  Enqueue({.event = MakeEvent(pod, pod, "Warning", "FailedScheduling", action,
                              std::move(message))});
}

void EventRecorder::Unschedulable(const Pod& pod, const std::string& message) {
  FailedScheduling(pod, "Scheduling", message);
  {
    absl::MutexLock lock(&mu_);
    std::string& last = said_[pod.uid].condition_message;
    if (last == message) {
      suppressed_.With({}).Inc();
      return;
    }
    last = message;
  }
  Enqueue({.pod = pod,
           .condition = kube::PodCondition{.status = "False",
                                           .reason = "Unschedulable",
                                           .message = message}});
}

void EventRecorder::Forget(const Pod& pod) {
  absl::MutexLock lock(&mu_);
  said_.erase(pod.uid);
}

namespace {

// Names an Event once, for all its attempts.
void NameEvent(kube::PodEvent& event) {
  if (event.name.empty()) {
    event.name = absl::StrCat(event.pod_name, ".",
                              absl::Hex(absl::ToUnixNanos(absl::Now())));
  }
}

}  // namespace

void EventRecorder::Enqueue(Write write) {
  {
    absl::MutexLock lock(&mu_);
    std::deque<Write>& to = write.event ? events_ : queue_;
    if (to.size() >= kMaxPending) {
      dropped_.With({}).Inc();
      return;
    }
    to.push_back(std::move(write));
    if (!to.back().event) return;  // for the writers
  }
  Pump();
}

void EventRecorder::Pump() {
  {
    absl::MutexLock lock(&mu_);
    if (pumping_) {
      pump_again_ = true;
      return;
    }
    pumping_ = true;
  }
  while (true) {
    // Asked outside the lock: `busy` takes the scheduling queue's.
    const bool binding = bindings_busy_.load();
    const bool deciding = options_.busy && options_.busy();
    std::shared_ptr<Write> next;
    {
      absl::MutexLock lock(&mu_);
      int room = options_.max_in_flight;
      if (events_.size() < kYieldBelow) {
        // Held while bindings are under way: the binder lets them go once
        // it is idle (SendWaiting). Nothing would wake them once the queue
        // empties, so pods waiting for a decision only slow them down.
        if (binding) {
          room = 0;
        } else if (deciding) {
          room = std::clamp(options_.busy_in_flight, 1, options_.max_in_flight);
        }
      }
      // Once closing, the writers make the last attempts.
      if (closed_ || events_.empty() || sending_ >= room) {
        if (!pump_again_) {
          pumping_ = false;
          return;
        }
        pump_again_ = false;
        continue;
      }
      ++sending_;
      ++callbacks_;
      // std::function wants a copyable callable: the write travels by
      // pointer.
      next = std::make_shared<Write>(std::move(events_.front()));
      events_.pop_front();
    }
    NameEvent(*next->event);
    api_.RecordEventAsync(*next->event, [this, next](absl::Status status) {
      Sent(std::move(*next), status);
    });
  }
}

void EventRecorder::Sent(Write write, const absl::Status& status) {
  ++write.attempts;
  if (!status.ok() && !IsTransientOrStarting(status)) Failed(write, status);
  {
    absl::MutexLock lock(&mu_);
    --sending_;
    if (IsTransientOrStarting(status)) Retry(std::move(write));
    // Once closing, the writers make the last attempts: nothing to pump,
    // and the destructor may return as soon as this lock is let go.
    if (closed_) {
      --callbacks_;
      return;
    }
  }
  Pump();
  // The last touch of the recorder, under the lock its destructor waits on.
  absl::MutexLock lock(&mu_);
  --callbacks_;
}

void EventRecorder::Retry(Write write) {
  if (retries_.size() >= kMaxPending) {
    dropped_.With({}).Inc();
    return;
  }
  write.due = absl::Now() + RetryBackoff(write.attempts);
  retries_.push_back(std::move(write));
  ++retries_added_;
}

void EventRecorder::Failed(const Write& write, const absl::Status& s) {
  if (write.event) {
    LOG(WARNING) << write.event->pod_namespace << "/" << write.event->pod_name
                 << ": recording event: " << s
                 << LogFields()
                        .Pod(write.event->pod_namespace, write.event->pod_name)
                        .Err(s);
  } else {
    LOG(WARNING) << write.pod.Key() << ": setting condition: " << s
                 << LogFields().Pod(write.pod.namespace_, write.pod.name).Err(s);
  }
}

void EventRecorder::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    // A new write first; then the retry due soonest, once due (at once
    // when closing: each gets one last attempt).
    auto soonest = absl::c_min_element(
        retries_, [](const Write& a, const Write& b) { return a.due < b.due; });
    std::optional<Write> write;
    if (!queue_.empty()) {
      write = std::move(queue_.front());
      queue_.pop_front();
    } else if (closed_ && !events_.empty()) {
      write = std::move(events_.front());
      events_.pop_front();
    } else if (soonest != retries_.end() &&
               (closed_ || soonest->due <= absl::Now())) {
      write = std::move(*soonest);
      retries_.erase(soonest);
    } else if (closed_ && sending_ == 0 && retries_.empty()) {
      return;  // closed and drained
    }
    if (write) {
      mu_.Unlock();
      Attempt(*std::move(write));
      mu_.Lock();
      continue;
    }
    // Until new work, closing, a new retry (maybe due sooner), or the
    // soonest one's time.
    const uint64_t added = retries_added_;
    const absl::Time wake =
        soonest == retries_.end() ? absl::InfiniteFuture() : soonest->due;
    auto woken = [this, added]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !queue_.empty() || retries_added_ != added ||
             (closed_ && (sending_ == 0 || !retries_.empty() ||
                          !events_.empty()));
    };
    mu_.AwaitWithDeadline(absl::Condition(&woken), wake);
  }
}

void EventRecorder::Attempt(Write write) {
  if (write.event) NameEvent(*write.event);
  absl::Status s = write.event
                       ? api_.RecordEvent(*write.event)
                       : api_.SetPodCondition(write.pod, *write.condition,
                                              kube::kDefaultRequestTimeout);
  // A retry refused as a duplicate: the lost answer's write took effect.
  if (write.attempts > 0 && write.event && absl::IsAlreadyExists(s)) {
    s = absl::OkStatus();
  }
  ++write.attempts;
  if (IsTransientOrStarting(s) && write.attempts < kRetryAttempts) {
    absl::MutexLock lock(&mu_);
    // The apiserver is away for a moment: try again, unless closing.
    if (!closed_) {
      Retry(std::move(write));
      return;
    }
  }
  if (!s.ok()) Failed(write, s);
}

}  // namespace ms
