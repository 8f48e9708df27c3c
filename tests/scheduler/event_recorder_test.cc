// The EventRecorder against an apiserver kept in memory (memory_api.h):
// Events retried without holding back new writes, Events yielding to
// bindings, and the recorder's lifetime against answers that come late:
// Events sent without waiting are answered on the apiserver client's I/O
// thread, which outlives the recorder (scheduler/cycle/event_recorder.h).
//
// Run under AddressSanitizer (`make asan`), a callback that touches the
// recorder after its destructor returned is a heap-use-after-free; the
// counts below catch the same thing in any build.
#include "scheduler/cycle/event_recorder.h"

#include <atomic>
#include <deque>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "model/pod.h"
#include "scheduler/cycle/scheduler_api.h"
#include "scheduler/telemetry/self_metrics.h"
#include "tests/testing/builders.h"
#include "tests/testing/memory_api.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::MakePod;
using ::ms::testing::MemoryApi;
using ::ms::testing::WaitFor;

// The apiserver client's side of Events, as the recorder sees it. Events
// sent without waiting are answered from a thread of the fake's own (the
// client's I/O thread), which outlives any recorder. Their answers are
// held until the recorder makes a blocking write, which it does only once
// closing (its writers give the Events still queued their last attempt,
// scheduler/cycle/event_recorder.h), or until StartAnswering(): so the answers
// are provably outstanding when the destructor begins. From then on they
// are given one by one, `delay` apart, every third one Unavailable (a lost
// answer, retried).
class LateAnswersApi final : public SchedulerApi {
 public:
  explicit LateAnswersApi(absl::Duration delay) : delay_(delay) {
    answerer_ = std::thread([this] { Answer(); });
  }
  // Answers whatever is still held, then stops.
  ~LateAnswersApi() override {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      answering_ = true;
    }
    answerer_.join();
  }

  absl::Status Bind(const Pod&, const std::string&, absl::Duration) override {
    return absl::UnimplementedError("Bind");
  }
  absl::Status RecordEvent(const kube::PodEvent&) override {
    absl::MutexLock lock(&mu_);
    answering_ = true;
    return absl::OkStatus();
  }
  void RecordEventAsync(const kube::PodEvent&, Done done) override {
    absl::MutexLock lock(&mu_);
    held_.push_back(std::move(done));
  }
  absl::Status SetPodCondition(const Pod&, const kube::PodCondition&,
                               absl::Duration) override {
    return absl::OkStatus();
  }

  // Whether the caller is the answering thread, once it answers.
  bool AnsweringHere() {
    absl::MutexLock lock(&mu_);
    return answering_ && std::this_thread::get_id() == answerer_.get_id();
  }
  // Events sent without waiting whose answer has not been given yet.
  int Held() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(held_.size());
  }
  // Whether every answer has been given and its callback has returned.
  bool Idle() {
    absl::MutexLock lock(&mu_);
    return held_.empty() && in_callback_ == 0;
  }
  // Starts answering now, rather than at the recorder's first blocking
  // write.
  void StartAnswering() {
    absl::MutexLock lock(&mu_);
    answering_ = true;
  }
  // Puts the fake back to holding answers (after the last was given).
  void HoldAgain() {
    absl::MutexLock lock(&mu_);
    answering_ = false;
  }

 private:
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || (answering_ && !held_.empty());
  }
  void Answer() {
    int answered = 0;
    while (true) {
      Done done;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &LateAnswersApi::HasWork));
        if (held_.empty()) return;  // stopping
        done = std::move(held_.front());
        held_.pop_front();
        ++in_callback_;
      }
      absl::SleepFor(delay_);  // the apiserver's time
      done(++answered % 3 == 0 ? absl::UnavailableError("connection reset")
                               : absl::OkStatus());
      absl::MutexLock lock(&mu_);
      --in_callback_;
    }
  }

  const absl::Duration delay_;
  absl::Mutex mu_;
  std::deque<Done> held_ ABSL_GUARDED_BY(mu_);
  int in_callback_ ABSL_GUARDED_BY(mu_) = 0;
  bool answering_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread answerer_;
};

// The recorder is destroyed while Events it sent are still unanswered; the
// answers come afterwards on the client's thread. The destructor must not
// return while any answer's callback is running in the recorder or still to
// come: none may touch it afterwards. The recorder's `busy` callback, which
// it asks on the answering thread when it sends more, lingers there for a
// moment once the answers flow, so that a callback still under way is
// caught in the act (counted, and under ASan a use after free). In every
// other round the answers start just before the destructor, so that it
// begins with callbacks already sending more.
TEST(EventRecorderTest, DestroyedWhileAnswersAreOutstanding) {
  LateAnswersApi api(absl::Microseconds(200));
  constexpr int kRounds = 50;
  constexpr int kInFlight = 3;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    Registry registry;
    absl::Notification destroyed;
    std::atomic<int> in_busy = 0;
    std::atomic<int> busy_after_destruction = 0;
    auto busy = [&] {
      if (!api.AnsweringHere()) return false;
      ++in_busy;
      // Until the destructor returns, or for a moment: with the recorder
      // waiting for this callback, it cannot return meanwhile.
      destroyed.WaitForNotificationWithTimeout(absl::Milliseconds(20));
      if (destroyed.HasBeenNotified()) ++busy_after_destruction;
      --in_busy;
      return false;
    };
    auto recorder = std::make_unique<EventRecorder>(
        EventRecorderOptions{.components = {"metrics-scheduler"},
                             .instance = "test",
                             .workers = 2,
                             .max_in_flight = kInFlight,
                             .busy = busy},
        api, registry);
    // kInFlight sent and held; the rest queued behind them.
    for (int i = 0; i < 2 * kInFlight; ++i) {
      recorder->Scheduled(MakePod(absl::StrCat("p", i)), "bound");
    }
    recorder->Unschedulable(MakePod("unfit"), "no node fits");
    ASSERT_EQ(api.Held(), kInFlight);

    if (round % 2 == 1) api.StartAnswering();
    recorder.reset();
    // Nothing of the recorder's may be running now, nor start later.
    EXPECT_EQ(in_busy.load(), 0) << "a callback still ran in the recorder";
    EXPECT_EQ(api.Held(), 0) << "the destructor did not wait for every "
                                "answer";
    destroyed.Notify();
    // Let any callback still (wrongly) under way finish before the counts
    // are read and this round's state goes.
    ASSERT_TRUE(::ms::testing::WaitFor(
        [&] { return api.Idle() && in_busy.load() == 0; }));
    EXPECT_EQ(busy_after_destruction.load(), 0);
    api.HoldAgain();
  }
}

// An Event the apiserver keeps refusing for a while (a namespace being
// terminated answers 403) is retried without holding the recorder's one
// thread: the writes queued after it go out while it waits.
TEST(EventRecorderTest, NewWritesDoNotWaitBehindRetries) {
  MemoryApi api;
  Registry registry;
  std::atomic<int> refused = 0;
  api.on_event = [&](const kube::PodEvent& e) {
    if (e.pod_name != "stuck") return absl::OkStatus();
    ++refused;
    return absl::PermissionDeniedError(
        "unable to create new content in namespace ns because it is being "
        "terminated");
  };
  EventRecorder recorder({.components = {"metrics-scheduler"},
                          .instance = "test",
                          .workers = 1,
                          .max_in_flight = 1},
                         api, registry);
  recorder.FailedScheduling(MakePod("stuck"), "Scheduling", "no node fits");
  // PodScheduled=False conditions go through the recorder's thread.
  for (int i = 0; i < 3; ++i) {
    recorder.Unschedulable(MakePod(absl::StrCat("p", i)), "no node fits");
  }
  ASSERT_TRUE(WaitFor([&] {
    for (int i = 0; i < 3; ++i) {
      if (api.ConditionWrites(absl::StrCat("default/p", i)) != 1) return false;
    }
    return true;
  }));
  // The refused Event is still being retried, not given up on or done.
  EXPECT_GE(refused.load(), 1);
  EXPECT_LT(refused.load(), kRetryAttempts);
  EXPECT_EQ(api.EventPods("FailedScheduling").count("default/stuck"), 0u);
}

// While the scheduler is busy (pods wait for a decision), Events yield
// to the bindings: no more than busy_in_flight are sent at once. None is
// lost, they go out in order once it is not, and each carries the time it
// happened, not the time it was sent.
TEST(EventRecorderTest, EventsYieldToBindingsWhileTheSchedulerIsBusy) {
  MemoryApi api;
  api.DeferEvents();
  Registry registry;
  std::atomic<bool> busy = true;
  EventRecorder recorder({.components = {"metrics-scheduler"},
                          .instance = "test",
                          .max_in_flight = 8,
                          .busy = [&] { return busy.load(); },
                          .busy_in_flight = 2},
                         api, registry);
  const absl::Time before = absl::Now();
  constexpr int kEvents = 10;
  for (int i = 0; i < kEvents; ++i) {
    recorder.Scheduled(MakePod(absl::StrCat("p", i)), "bound");
  }
  const absl::Time recorded = absl::Now();
  // Each answer (given here, on this thread) lets the next one go.
  EXPECT_EQ(api.HeldEvents(), 2u);
  api.AnswerOldestEvent();
  EXPECT_EQ(api.HeldEvents(), 2u);
  api.AnswerOldestEvent();
  EXPECT_EQ(api.HeldEvents(), 2u);
  EXPECT_TRUE(absl::StrContains(registry.Render(),
                                "metrics_scheduler_events_pending 8\n"));
  // Not busy: up to max_in_flight at once.
  busy = false;
  api.AnswerOldestEvent();
  EXPECT_EQ(api.HeldEvents(), 7u);
  while (api.HeldEvents() > 0) api.AnswerOldestEvent();
  std::vector<kube::PodEvent> written = api.Events();
  ASSERT_EQ(written.size(), static_cast<size_t>(kEvents));
  for (int i = 0; i < kEvents; ++i) {
    EXPECT_EQ(written[i].pod_name, absl::StrCat("p", i));
    EXPECT_GE(written[i].time, before);
    EXPECT_LE(written[i].time, recorded);
  }
  EXPECT_TRUE(absl::StrContains(registry.Render(),
                                "metrics_scheduler_events_pending 0\n"));
}

// Up to 8 Events at once while nothing is busy; bindings in flight hold
// every one back, whatever busy_in_flight says.
EventRecorderOptions EightAtOnce() {
  return {.components = {"metrics-scheduler"},
          .instance = "test",
          .max_in_flight = 8};
}

// Bindings in flight hold Events back; once none is, the Events held back
// go out at once.
TEST(EventRecorderTest, EventsYieldWhileBindingsAreInFlight) {
  MemoryApi api;
  api.DeferEvents();
  Registry registry;
  EventRecorder recorder(EightAtOnce(), api, registry);
  recorder.BindingsBusy(true);
  for (int i = 0; i < 6; ++i) {
    recorder.Scheduled(MakePod(absl::StrCat("p", i)), "bound");
  }
  EXPECT_EQ(api.HeldEvents(), 0u);
  recorder.BindingsBusy(false);
  recorder.SendWaiting();
  EXPECT_EQ(api.HeldEvents(), 6u);
  while (api.HeldEvents() > 0) api.AnswerOldestEvent();
  EXPECT_EQ(api.EventPods("Scheduled").size(), 6u);
}

// Events stop yielding once kYieldBelow of them wait, so that a long
// stream of bindings delays them without dropping one: what comes beyond
// that goes out as if nothing were busy.
TEST(EventRecorderTest, ManyEventsWaitingStopYielding) {
  MemoryApi api;
  api.DeferEvents();
  Registry registry;
  EventRecorder recorder(EightAtOnce(), api, registry);
  recorder.BindingsBusy(true);
  // Every one held, up to kYieldBelow - 1 of them.
  size_t recorded = 0;
  auto record = [&] {
    recorder.Scheduled(MakePod(absl::StrCat("p", recorded++)), "bound");
  };
  while (recorded < EventRecorder::kYieldBelow - 1) record();
  EXPECT_EQ(api.HeldEvents(), 0u);
  // From then on, each new one lets one go, up to max_in_flight.
  for (size_t in_flight = 1; in_flight <= 8; ++in_flight) {
    record();
    EXPECT_EQ(api.HeldEvents(), in_flight);
  }
  record();
  EXPECT_EQ(api.HeldEvents(), 8u);
  // Their answers let none go while the bindings are under way; the rest
  // go once they are not.
  while (api.HeldEvents() > 0) api.AnswerOldestEvent();
  EXPECT_EQ(api.EventPods("Scheduled").size(), 9u);
  recorder.BindingsBusy(false);
  recorder.SendWaiting();
  while (api.HeldEvents() > 0) api.AnswerOldestEvent();
  EXPECT_EQ(api.EventPods("Scheduled").size(), recorded);
  EXPECT_TRUE(absl::StrContains(registry.Render(),
                                "metrics_scheduler_events_dropped_total 0\n"));
}

}  // namespace
}  // namespace ms
