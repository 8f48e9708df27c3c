// The Scheduler's binder against an apiserver kept in memory (at our own
// SchedulerApi interface): every pod bound once on a node that fits, with
// bind workers, event writers and an "informer" all running at once (this
// test also runs under ThreadSanitizer), and each way a binding can fail.
// The same guarantees against a real kube-apiserver are in
// tests/scheduler/e2e_test.cc and tests/faults/.
#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "config/config.h"
#include "gtest/gtest.h"
#include "scheduler/cycle/event_recorder.h"
#include "scheduler/cycle/scheduler.h"
#include "scheduler/cycle/scheduler_api.h"
#include "scheduler/telemetry/self_metrics.h"
#include "tests/testing/builders.h"
#include "tests/testing/memory_api.h"
#include "tests/testing/metrics_text.h"
#include "tests/testing/scripted_leadership.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::ms::testing::MemoryApi;
using ::ms::testing::ScriptedLeadership;
using ::ms::testing::SeriesValue;
using ::ms::testing::WaitFor;

class BinderTest : public ::testing::Test {
 protected:
  BinderTest() {
    api_.on_bound = [this](const Pod& pod) {
      // As the informers would: the pod is on a node now.
      scheduler_.OnPendingPod(pod);
      scheduler_.OnAssignedPod(pod);
    };
    for (const char* name : {"n1", "n2", "n3", "n4"}) {
      scheduler_.OnNode(MakeNode(name));
    }
  }
  ~BinderTest() override {
    scheduler_.Stop();
    if (run_.joinable()) run_.join();
  }

  void Start() {
    run_ = std::thread([this] { scheduler_.Run(); });
  }
  // A new pending pod, as the apiserver and the pending-pods informer see it.
  void Create(const Pod& pod) {
    api_.AddPod(pod);
    scheduler_.OnPendingPod(pod);
  }
  bool QueueEmpty() {
    QueueLengths l = scheduler_.queue().Lengths();
    return l.active == 0 && l.backoff == 0 && l.in_flight == 0;
  }
  // The CPU the scheduler counts as requested on `node`.
  int64_t ChargedCpu(const std::string& node) {
    for (const NodeInfo& n : scheduler_.state().Nodes()) {
      if (n.node.name == node) return n.requested.milli_cpu;
    }
    return -1;
  }
  // The CPU requested on each node, from the pods bound there.
  std::map<std::string, int64_t> CpuPerNode(
      const std::map<std::string, int64_t>& cpu_of_pod) {
    std::map<std::string, int64_t> out;
    for (const auto& [key, node] : api_.Placements()) {
      if (!node.empty()) out[node] += cpu_of_pod.at(key);
    }
    return out;
  }

  // The value of one series on /metrics (-1: absent).
  double Sample(const std::string& series) {
    return SeriesValue(registry_.Render(), series);
  }

  Config config_;
  MemoryApi api_;
  Registry registry_;
  ScriptedLeadership leadership_;
  Scheduler scheduler_{config_,
                       {.identity = "test",
                        .bind_workers = 8,
                        .seed = 1,
                        .queue = {.initial_backoff = absl::Milliseconds(10),
                                  .max_backoff = absl::Milliseconds(100)}},
                       api_,
                       nullptr,
                       RealClock::Get(),
                       registry_,
                       leadership_};
  std::thread run_;
};

TEST_F(BinderTest, EveryPodIsBoundOnceOnANodeThatFits) {
  Start();
  // 40 pods of 500m for 4 nodes of 4 cores: 32 fit, 8 do not. They arrive
  // from two threads while the scheduler runs.
  std::map<std::string, int64_t> cpu;
  std::vector<Pod> pods;
  for (int i = 0; i < 40; ++i) {
    pods.push_back(MakePod(absl::StrCat("p", i)).Req(500, 0));
    cpu[pods.back().Key()] = 500;
  }
  std::thread other([&] {
    for (size_t i = 1; i < pods.size(); i += 2) Create(pods[i]);
  });
  for (size_t i = 0; i < pods.size(); i += 2) Create(pods[i]);
  other.join();

  auto bound = [&] {
    int n = 0;
    for (const auto& [key, node] : api_.Placements()) n += !node.empty();
    return n;
  };
  // Each pod left unbound has its PodScheduled=False condition written
  // (by the recorder's thread, after its FailedScheduling Event).
  auto told = [&] {
    for (const auto& [key, node] : api_.Placements()) {
      if (node.empty() && !api_.Condition(key)) return false;
    }
    return true;
  };
  ASSERT_TRUE(WaitFor([&] {
    return bound() == 32 && api_.EventPods("Scheduled").size() == 32 &&
           api_.EventPods("FailedScheduling").size() >= 8 && told();
  })) << bound() << " bound";

  for (const auto& [node, milli_cpu] : CpuPerNode(cpu)) {
    EXPECT_LE(milli_cpu, 4000) << node;
  }
  std::multiset<std::string> scheduled = api_.EventPods("Scheduled");
  for (const auto& [key, node] : api_.Placements()) {
    if (node.empty()) {
      // Unschedulable: said so on the pod, never bound.
      EXPECT_EQ(scheduled.count(key), 0u) << key;
      std::optional<kube::PodCondition> c = api_.Condition(key);
      ASSERT_TRUE(c.has_value()) << key;
      EXPECT_EQ(c->reason, "Unschedulable");
      EXPECT_TRUE(absl::StrContains(c->message, "Insufficient cpu"))
          << c->message;
    } else {
      EXPECT_EQ(api_.BindCalls(key), 1) << key;
      EXPECT_EQ(scheduled.count(key), 1u) << key;
    }
  }
}

// The waits between the tries of a write the apiserver did not answer:
// 200 ms doubling to 5 s, about 25 s over kRetryAttempts tries.
TEST(RetryBackoffTest, DoublesUpToItsCeiling) {
  EXPECT_EQ(RetryBackoff(1), absl::Milliseconds(200));
  EXPECT_EQ(RetryBackoff(2), absl::Milliseconds(400));
  EXPECT_EQ(RetryBackoff(5), absl::Milliseconds(3200));
  EXPECT_EQ(RetryBackoff(6), absl::Seconds(5));
  EXPECT_EQ(RetryBackoff(1000), absl::Seconds(5));
  absl::Duration total;
  for (int tries = 1; tries < kRetryAttempts; ++tries) {
    total += RetryBackoff(tries);
  }
  EXPECT_EQ(total, absl::Milliseconds(26200));
}

TEST_F(BinderTest, BindingsBeyondTheLimitWaitForASlot) {
  Registry registry;
  Scheduler limited(config_,
                    {.identity = "test", .max_bindings_in_flight = 2, .seed = 1},
                    api_, nullptr, RealClock::Get(), registry, leadership_);
  for (const char* name : {"n1", "n2", "n3", "n4"}) {
    limited.OnNode(MakeNode(name));
  }
  api_.on_bound = [&](const Pod& pod) {
    limited.OnPendingPod(pod);
    limited.OnAssignedPod(pod);
  };
  api_.DeferBinds();
  std::thread run([&] { limited.Run(); });
  absl::Cleanup stop = [&] {
    // Whatever is still held is answered, so the binder can settle it.
    while (api_.Deferred() > 0) api_.AnswerOldest();
    limited.Stop();
    run.join();
    api_.on_bound = nullptr;
  };
  constexpr int kPods = 6;
  for (int i = 0; i < kPods; ++i) {
    Pod pod = MakePod(absl::StrCat("p", i)).Req(500, 0);
    api_.AddPod(pod);
    limited.OnPendingPod(pod);
  }
  // Two in flight whenever two are left to bind; each answer lets the
  // next one go.
  for (int answered = 0; answered < kPods; ++answered) {
    const size_t in_flight = std::min(2, kPods - answered);
    ASSERT_TRUE(WaitFor([&] { return api_.Deferred() == in_flight; }))
        << api_.Deferred() << " in flight after " << answered << " answers";
    api_.AnswerOldest();
  }
  ASSERT_TRUE(WaitFor([&] {
    int bound = 0;
    for (const auto& [key, node] : api_.Placements()) bound += !node.empty();
    return bound == kPods;
  }));
  EXPECT_EQ(api_.MaxDeferred(), 2u);
}

// While a binding is in flight, the Scheduled Events of those answered
// wait; once none is, those held back go out at once.
TEST_F(BinderTest, EventsYieldWhileABindingIsInFlight) {
  api_.DeferBinds();
  api_.DeferEvents();
  Start();
  constexpr int kPods = 5;
  for (int i = 0; i < kPods; ++i) {
    Create(MakePod(absl::StrCat("p", i)).Req(100, 0));
  }
  ASSERT_TRUE(WaitFor([&] { return api_.Deferred() == kPods; }));
  // Each answer is settled on this thread: its Event is sent or held
  // before AnswerOldest returns.
  for (int i = 0; i + 1 < kPods; ++i) api_.AnswerOldest();
  EXPECT_EQ(api_.HeldEvents(), 0u);
  EXPECT_EQ(api_.EventPods("Scheduled").size(), 0u);
  api_.AnswerOldest();  // the last binding in flight
  EXPECT_EQ(api_.HeldEvents(), static_cast<size_t>(kPods));
  while (api_.HeldEvents() > 0) api_.AnswerOldestEvent();
  EXPECT_EQ(api_.EventPods("Scheduled").size(), static_cast<size_t>(kPods));
}

TEST_F(BinderTest, ABindingWhoseAnswerWasLostIsNotRepeated) {
  Pod pod = MakePod("lost").Req(500, 0);
  api_.FailNextBind(pod.Key(), absl::UnavailableError("connection reset"),
                    /*applied=*/true);
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").count(pod.Key()) == 1 && QueueEmpty();
  }));
  EXPECT_EQ(api_.BindCalls(pod.Key()), 1);
  EXPECT_FALSE(api_.Placements().at(pod.Key()).empty());
  EXPECT_EQ(api_.EventPods("FailedScheduling").count(pod.Key()), 0u);
}

// The apiserver turns bindings away for load (429): each pod is read back,
// found unbound and retried, and bound in the end; the burst of refusals
// halves the bindings allowed in flight, once.
TEST_F(BinderTest, RefusalsForLoadHalveTheLimitAndEveryPodIsBound) {
  EXPECT_EQ(Sample("metrics_scheduler_bindings_in_flight_limit"), 32);
  constexpr int kPods = 10;
  std::vector<Pod> pods;
  for (int i = 0; i < kPods; ++i) {
    pods.push_back(MakePod(absl::StrCat("throttled", i)).Req(100, 0));
    api_.FailNextBind(pods.back().Key(),
                      absl::ResourceExhaustedError("Too many requests"),
                      /*applied=*/false);
    Create(pods.back());
  }
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").size() == kPods && QueueEmpty();
  }));
  for (const Pod& pod : pods) {
    EXPECT_FALSE(api_.Placements().at(pod.Key()).empty()) << pod.Key();
    EXPECT_EQ(api_.BindCalls(pod.Key()), 2) << pod.Key();
  }
  EXPECT_EQ(
      Sample("metrics_scheduler_binding_outcomes_total{outcome=\"not_bound\"}"),
      kPods);
  EXPECT_EQ(Sample("metrics_scheduler_bindings_in_flight_limit"), 16);
}

// libcurl re-sends a request whose reused connection died before an
// answer: the first one bound the pod, the second is refused with 409. The
// pod is where we chose, so it was our binding.
TEST_F(BinderTest, A409ForOurOwnResentBindingCountsAsBound) {
  Pod pod = MakePod("resent").Req(500, 0);
  api_.FailNextBind(pod.Key(),
                    absl::AbortedError("pod is already assigned to a node"),
                    /*applied=*/true);
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").count(pod.Key()) == 1 && QueueEmpty();
  }));
  EXPECT_EQ(api_.BindCalls(pod.Key()), 1);
  EXPECT_EQ(api_.EventPods("FailedScheduling").count(pod.Key()), 0u);
  EXPECT_EQ(Sample("metrics_scheduler_binding_outcomes_total{outcome=\"lost_"
                   "answer_bound\"}"),
            1);
}

TEST_F(BinderTest, ABindingThatDidNotHappenIsRetried) {
  Pod pod = MakePod("retried").Req(500, 0);
  api_.FailNextBind(pod.Key(), absl::UnavailableError("connection refused"),
                    /*applied=*/false);
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").count(pod.Key()) == 1 && QueueEmpty();
  }));
  EXPECT_EQ(api_.BindCalls(pod.Key()), 2);
  EXPECT_FALSE(api_.Placements().at(pod.Key()).empty());
  // The failed attempt is on the pod.
  bool recorded = false;
  for (const kube::PodEvent& e : api_.Events()) {
    recorded |= e.reason == "FailedScheduling" && e.action == "Binding" &&
                absl::StrContains(e.message, "connection refused");
  }
  EXPECT_TRUE(recorded);
}

// The pending-pods watch delivers an update written before the binding
// (our own status patch) after the binding's answer and before the pod
// leaves the pending pods: the pod is not decided again (no second
// binding, no second Scheduled Event, its charge stays where it is bound).
TEST_F(BinderTest, AStaleUpdateAfterTheBindingIsNotDecidedAgain) {
  Pod pod = MakePod("stale").Req(3000, 0);
  std::atomic<bool> first = true;
  api_.on_bound = [&](const Pod& bound) {
    // The assigned-pods informer sees it at once; the pending-pods one is
    // late: first an old version, then the pod's departure.
    scheduler_.OnAssignedPod(bound);
    if (!first.exchange(false)) scheduler_.OnPendingPod(bound);
  };
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor(
      [&] { return api_.EventPods("Scheduled").count(pod.Key()) == 1; }));
  const std::string node = api_.Placements().at(pod.Key());
  Pod stale = pod;
  stale.resource_version = "2";
  stale.nominated_node_name = node;
  scheduler_.OnPendingPod(stale);
  // A pod created after the stale update is decided after anything it
  // queued (same priority, later): once it is bound, the stale update has
  // had every chance to be decided.
  Pod later = MakePod("later").Req(100, 0);
  Create(later);
  ASSERT_TRUE(WaitFor(
      [&] { return api_.EventPods("Scheduled").count(later.Key()) == 1; }));
  EXPECT_EQ(api_.BindCalls(pod.Key()), 1);
  EXPECT_EQ(api_.EventPods("Scheduled").count(pod.Key()), 1u);
  EXPECT_EQ(ChargedCpu(node), 3000 + (api_.Placements().at(later.Key()) == node
                                          ? 100
                                          : 0));
  scheduler_.OnPendingPodDeleted(pod);  // it left the pending pods
  EXPECT_TRUE(QueueEmpty());
}

// A binding without an answer reads back unbound, and the apiserver
// commits it later (a server can, after its client gave up). Until the
// binding is settled its node stays charged: a pod decided meanwhile does
// not take that room, and the binding sent again finds the first one
// landed (409, read back on our node).
TEST_F(BinderTest, AnUnansweredBindingThatLandsLateOverCommitsNothing) {
  api_.on_bound = nullptr;  // the informers are slow here: told by hand
  for (const char* n : {"n2", "n3", "n4"}) {
    Pod filler = MakePod(absl::StrCat("filler-", n)).Req(4000, 0);
    filler.node_name = n;
    api_.AddPod(filler);
    scheduler_.OnAssignedPod(filler);
  }
  Pod first = MakePod("first").Req(3000, 0);
  api_.FailNextBind(first.Key(), absl::DeadlineExceededError("timed out"),
                    /*applied=*/false);
  Create(first);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("FailedScheduling").count(first.Key()) == 1;
  }));
  api_.BindLate(first.Key(), "n1");
  Pod second = MakePod("second").Req(3000, 0);  // fits only where `first` went
  Create(second);
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").count(second.Key()) +
               api_.EventPods("FailedScheduling").count(second.Key()) >=
           1;
  }));
  EXPECT_EQ(api_.Placements().at(second.Key()), "");
  // The informers catch up.
  Pod bound = first;
  bound.node_name = "n1";
  scheduler_.OnAssignedPod(bound);
  scheduler_.OnPendingPodDeleted(first);
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").count(first.Key()) == 1;
  }));
  EXPECT_EQ(api_.Placements().at(first.Key()), "n1");
  EXPECT_EQ(ChargedCpu("n1"), 3000);
  EXPECT_EQ(Sample("metrics_scheduler_binding_outcomes_total{outcome=\"lost_"
                   "answer_bound\"}"),
            1);
}

// A binding without an answer, the pod not readable (the apiserver is
// unreachable), and the pod deleted before the binding is settled: its
// charge is released.
TEST_F(BinderTest, APodDeletedBeforeItsBindingIsSettledReleasesItsCharge) {
  Pod pod = MakePod("deleted").Req(3000, 0);
  api_.SetUnreachable(true);
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor(
      [&] {
        return Sample("metrics_scheduler_binding_outcomes_total{outcome="
                      "\"unknown\"}") >= 1;
      },
      absl::Seconds(60)));
  api_.RemovePod(pod.Key());
  scheduler_.OnPendingPodDeleted(pod);
  api_.SetUnreachable(false);
  ASSERT_TRUE(WaitFor([&] {
    int64_t total = 0;
    for (const char* n : {"n1", "n2", "n3", "n4"}) total += ChargedCpu(n);
    return total == 0 && scheduler_.state().NumAssumed() == 0;
  }));
  EXPECT_EQ(api_.EventPods("Scheduled").count(pod.Key()), 0u);
}

// A 409 and then the pod cannot be read: it is bound somewhere, maybe by
// this very binding. Nothing is settled on that: the node stays charged
// and the binding is sent again, whose 409 and read-back show it ours.
TEST_F(BinderTest, A409WithThePodUnreadableIsSettledOnlyOnEvidence) {
  api_.on_bound = nullptr;  // the informers are slow here
  Pod pod = MakePod("conflict").Req(3000, 0);
  api_.FailNextBind(pod.Key(), absl::AbortedError("already assigned"),
                    /*applied=*/true);
  api_.SetUnreadable(true);
  Create(pod);
  Start();
  // The binder has given up reading it, for now or for good.
  ASSERT_TRUE(WaitFor(
      [&] {
        return Sample("metrics_scheduler_binding_outcomes_total{outcome="
                      "\"unknown\"}") +
                   Sample("metrics_scheduler_binding_outcomes_total{outcome="
                          "\"bound_elsewhere\"}") >=
               1;
      },
      absl::Seconds(60)));
  api_.SetUnreadable(false);
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").count(pod.Key()) == 1;
  }));
  const std::string node = api_.Placements().at(pod.Key());
  EXPECT_EQ(ChargedCpu(node), 3000);
  EXPECT_EQ(scheduler_.state().NumAssumed(), 1u);  // until the informer
}

TEST_F(BinderTest, APodBoundByAnotherSchedulerStaysWhereItIs) {
  Pod pod = MakePod("taken").Req(4000, 0);
  Pod elsewhere = pod;
  elsewhere.node_name = "n1";
  api_.AddPod(elsewhere);  // bound by someone else, to a node...
  Node cordoned = MakeNode("n1");
  cordoned.unschedulable = true;
  scheduler_.OnNode(cordoned);   // ...we would not choose,
  scheduler_.OnPendingPod(pod);  // ...before our informer saw it
  Start();
  ASSERT_TRUE(WaitFor([&] { return QueueEmpty() && api_.BindCalls(pod.Key()) > 0; }));
  EXPECT_EQ(api_.BindCalls(pod.Key()), 1);
  EXPECT_EQ(api_.Placements().at(pod.Key()), "n1");
  EXPECT_EQ(api_.EventPods("Scheduled").count(pod.Key()), 0u);
  // n1 is charged for it at once, and the node we chose is not.
  EXPECT_EQ(ChargedCpu("n1"), 4000);
  int64_t total = 0;
  for (const char* n : {"n1", "n2", "n3", "n4"}) total += ChargedCpu(n);
  EXPECT_EQ(total, 4000);
}

TEST_F(BinderTest, APodDeletedBeforeItsBindingIsDropped) {
  Pod pod = MakePod("gone").Req(500, 0);
  scheduler_.OnPendingPod(pod);  // the apiserver no longer has it
  Start();
  ASSERT_TRUE(WaitFor([&] { return QueueEmpty() && api_.BindCalls(pod.Key()) > 0; }));
  EXPECT_EQ(api_.BindCalls(pod.Key()), 1);
  EXPECT_EQ(api_.EventPods("Scheduled").count(pod.Key()), 0u);
  // The node chosen for it is not left charged.
  for (const char* n : {"n1", "n2", "n3", "n4"}) EXPECT_EQ(ChargedCpu(n), 0) << n;
}

// Outside the lease's write window a binding is not sent, and the pod is
// not dropped: it goes back to the queue, and binds once the replica may
// write again (a late renewal, not a lost lease).
TEST_F(BinderTest, OutsideTheWriteWindowPodsGoBackToTheQueue) {
  leadership_.leader = false;
  for (int i = 0; i < 5; ++i) Create(MakePod(absl::StrCat("p", i)).Req(500, 0));
  Start();
  ASSERT_TRUE(WaitFor([&] { return leadership_.awaits.load() >= 5; }));
  EXPECT_EQ(api_.TotalBindCalls(), 0);
  ASSERT_TRUE(WaitFor([&] {
    QueueLengths l = scheduler_.queue().Lengths();
    return l.active + l.backoff + l.in_flight == 5;
  }));
  leadership_.leader = true;
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").size() == 5 && QueueEmpty();
  }));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(api_.BindCalls(absl::StrCat("default/p", i)), 1);
  }
  int64_t total = 0;
  for (const char* n : {"n1", "n2", "n3", "n4"}) total += ChargedCpu(n);
  EXPECT_EQ(total, 5 * 500);
}

// The answer was lost and, read back, the pod is gone (deleted meanwhile):
// its charge is released, not kept for ever.
TEST_F(BinderTest, ALostAnswerForAPodNowGoneReleasesItsCharge) {
  Pod pod = MakePod("vanished").Req(4000, 0);
  api_.FailNextBind(pod.Key(), absl::DeadlineExceededError("timed out"),
                    /*applied=*/false, /*deleted=*/true);
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return QueueEmpty() && api_.BindCalls(pod.Key()) == 1;
  }));
  ASSERT_TRUE(WaitFor([&] {
    int64_t total = 0;
    for (const char* n : {"n1", "n2", "n3", "n4"}) total += ChargedCpu(n);
    return total == 0;
  }));
  EXPECT_EQ(api_.EventPods("Scheduled").count(pod.Key()), 0u);
  EXPECT_EQ(scheduler_.state().NumAssumed(), 0u);
}

// The chosen node is deleted between the decision and the binding: the
// binding is not sent, and the pod is placed on a node that exists.
TEST_F(BinderTest, ABindingToANodeDeletedSinceTheDecisionIsNotSent) {
  Pod pod = MakePod("moved").Req(500, 0);
  std::atomic<bool> deleted = false;
  std::string victim;
  leadership_.on_await = [&] {
    if (deleted.exchange(true)) return;
    // The decision is made and charged: delete the node it chose.
    for (const NodeInfo& n : scheduler_.state().Nodes()) {
      if (n.requested.milli_cpu > 0) victim = n.node.name;
    }
    scheduler_.OnNodeDeleted(Node{.name = victim});
  };
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").count(pod.Key()) == 1 && QueueEmpty();
  }));
  ASSERT_FALSE(victim.empty());
  EXPECT_EQ(api_.BindCalls(pod.Key()), 1);
  EXPECT_NE(api_.Placements().at(pod.Key()), victim);
}

// An unschedulable pod tried again and again with nothing new to say gets
// one FailedScheduling Event and one condition write, not one per attempt.
TEST_F(BinderTest, RepeatedFailuresAreNotRewritten) {
  Pod pod = MakePod("huge").Req(64000, 0);
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] { return api_.ConditionWrites(pod.Key()) == 1; }));
  auto attempts = [&] {
    return Sample("metrics_scheduler_schedule_attempts_total"
                  "{result=\"unschedulable\",profile=\"metrics-scheduler\"}");
  };
  for (int i = 0; i < 3; ++i) {
    // A cluster change sends it back to be tried (to active or backoff):
    // it does not fit, and is parked again.
    ASSERT_TRUE(WaitFor([&] {
      return scheduler_.queue().Lengths().unschedulable == 1;
    }));
    double before = attempts();
    scheduler_.queue().MoveAllToActive();
    ASSERT_TRUE(WaitFor([&] {
      return attempts() > before &&
             scheduler_.queue().Lengths().unschedulable == 1;
    }));
  }
  // Decided before the pod was parked: three attempts, each an Event and a
  // condition not written.
  EXPECT_TRUE(absl::StrContains(registry_.Render(),
                                "metrics_scheduler_events_suppressed_total 6"))
      << registry_.Render();
  EXPECT_EQ(api_.ConditionWrites(pod.Key()), 1);
  EXPECT_EQ(api_.EventPods("FailedScheduling").count(pod.Key()), 1u);
}

// A pod meant for us that the decoder refused is told why, once, and an
// older version of it waiting in the queue is not placed.
TEST_F(BinderTest, ARefusedPodIsToldWhyAndNotPlaced) {
  Pod pod = MakePod("odd").Req(500, 0);
  scheduler_.OnPendingPod(pod);  // an earlier version we could read
  kube::RejectedObject rejected{.resource = "pods",
                                .namespace_ = "default",
                                .name = "odd",
                                .uid = pod.uid,
                                .resource_version = "7",
                                .error = "unknown toleration operator \"Gt\""};
  scheduler_.OnPendingPodRejected(rejected);
  scheduler_.OnPendingPodRejected(rejected);  // a relist: not said again
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("FailedScheduling").count("default/odd") == 1;
  }));
  std::vector<kube::PodEvent> events = api_.Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(absl::StrContains(events[0].message, "toleration operator"))
      << events[0].message;
  EXPECT_TRUE(QueueEmpty());
  EXPECT_EQ(api_.TotalBindCalls(), 0);
}

// Storage for the volume tests: a WaitForFirstConsumer class `local`
// without a provisioner and `dynamic` with one, a claim `data` of `cls` in
// the pods' namespace, and, when `with_volume`, a free PV for it.
void AddStorage(Scheduler& scheduler, const std::string& cls,
                bool with_volume) {
  scheduler.OnStorage(StorageClass{.name = "local",
                                   .provisioner = "kubernetes.io/no-provisioner",
                                   .binding_mode =
                                       BindingMode::kWaitForFirstConsumer},
                      false);
  scheduler.OnStorage(StorageClass{.name = "dynamic",
                                   .provisioner = "csi.example.com",
                                   .binding_mode =
                                       BindingMode::kWaitForFirstConsumer},
                      false);
  scheduler.OnStorage(PersistentVolumeClaim{.namespace_ = "default",
                                            .name = "data",
                                            .uid = "claim-uid",
                                            .resource_version = "1",
                                            .storage_class = cls,
                                            .access_modes = kReadWriteOnce},
                      false);
  if (with_volume) {
    scheduler.OnStorage(PersistentVolume{.name = "pv",
                                         .resource_version = "1",
                                         .storage_class = cls,
                                         .capacity = 1 << 30,
                                         .access_modes = kReadWriteOnce,
                                         .phase = VolumePhase::kAvailable},
                        false);
  }
}

Pod WithData(Pod pod) {
  pod.claims = {{.name = "data"}};
  return pod;
}

// The PV is bound to the claim first; the pod is bound only once the PV
// controller (here a thread) shows the claim bound.
TEST_F(BinderTest, AClaimIsBoundBeforeItsPod) {
  AddStorage(scheduler_, "local", /*with_volume=*/true);
  absl::Notification written;
  std::optional<VolumeBindings::Bind> bind;
  api_.on_bind_volume = [&](const VolumeBindings::Bind& b) {
    bind = b;
    written.Notify();
    return absl::OkStatus();
  };
  std::atomic<bool> claim_bound_at_pod_bind = false;
  api_.on_bound = [&](const Pod& pod) {
    // The claim as the scheduler sees it when the pod is bound.
    scheduler_.state().AwaitVolumes(
        0, absl::InfinitePast(), [&](const VolumeCatalog& c) {
          claim_bound_at_pod_bind = c.Claim("default", "data")->fully_bound();
        });
    scheduler_.OnPendingPod(pod);
    scheduler_.OnAssignedPod(pod);
  };
  std::thread pv_controller([&] {
    written.WaitForNotification();
    PersistentVolumeClaim bound{.namespace_ = "default",
                                .name = "data",
                                .uid = "claim-uid",
                                .resource_version = "2",
                                .storage_class = "local",
                                .volume_name = "pv",
                                .bind_completed = true,
                                .access_modes = kReadWriteOnce,
                                .phase = ClaimPhase::kBound};
    scheduler_.OnStorage(bound, false);
  });
  Pod pod = WithData(MakePod("web").Req(500, 0));
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").count(pod.Key()) == 1;
  }));
  pv_controller.join();
  ASSERT_TRUE(bind.has_value());
  EXPECT_EQ(bind->volume, "pv");
  EXPECT_EQ(bind->volume_version, "1");
  EXPECT_EQ(bind->claim, (ClaimRef{"default", "data", "claim-uid"}));
  EXPECT_EQ(bind->claim_version, "1");
  EXPECT_TRUE(claim_bound_at_pod_bind);
  EXPECT_EQ(api_.BindCalls(pod.Key()), 1);
}

// A provisioner that gives up takes its node off the claim: the pod is not
// bound and is told why.
TEST_F(BinderTest, AClaimWhoseProvisioningFailedKeepsItsPodBack) {
  AddStorage(scheduler_, "dynamic", /*with_volume=*/false);
  std::atomic<int> selected = 0;
  api_.on_select_node = [&](const VolumeBindings::Provision& claim,
                            const std::string& node) {
    EXPECT_EQ(claim.name, "data");
    EXPECT_FALSE(node.empty());
    ++selected;
    // What the informer shows next: the annotation written, then removed.
    scheduler_.OnStorage(PersistentVolumeClaim{.namespace_ = "default",
                                               .name = "data",
                                               .uid = "claim-uid",
                                               .resource_version = absl::StrCat(
                                                   "gave-up-", selected.load()),
                                               .storage_class = "dynamic",
                                               .access_modes = kReadWriteOnce},
                         false);
    return absl::OkStatus();
  };
  Pod pod = WithData(MakePod("web").Req(500, 0));
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    for (const kube::PodEvent& e : api_.Events()) {
      if (e.reason == "FailedScheduling" &&
          e.message == "binding volumes: selectedNode annotation reset for "
                       "PVC \"data\"") {
        return true;
      }
    }
    return false;
  }));
  EXPECT_GE(selected.load(), 1);
  EXPECT_EQ(api_.BindCalls(pod.Key()), 0);
}

// A PV taken by someone else since the decision: the write is refused
// (its resourceVersion has moved on) and the pod backs off, told why.
TEST_F(BinderTest, AVolumeWriteRefusedKeepsThePodBack) {
  AddStorage(scheduler_, "local", /*with_volume=*/true);
  api_.on_bind_volume = [](const VolumeBindings::Bind&) {
    return absl::AbortedError(
        "Operation cannot be fulfilled on persistentvolumes \"pv\": the "
        "object has been modified");
  };
  Pod pod = WithData(MakePod("web").Req(500, 0));
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    for (const kube::PodEvent& e : api_.Events()) {
      if (e.reason == "FailedScheduling" &&
          absl::StrContains(e.message,
                            "binding volumes: binding persistentvolume "
                            "\"pv\" to claim \"data\": Operation cannot")) {
        return true;
      }
    }
    return false;
  }));
  EXPECT_EQ(api_.BindCalls(pod.Key()), 0);
  EXPECT_GE(Sample("metrics_scheduler_binding_outcomes_total{outcome=\"volumes_failed\"}"), 1);
}

// The lease's write window closes between two of a pod's volume writes:
// the second is not written (a former leader writes nothing once a standby
// may lead), and the pod goes back to the queue.
TEST_F(BinderTest, AVolumeWriteStartsOnlyInsideTheWriteWindow) {
  AddStorage(scheduler_, "local", /*with_volume=*/true);
  scheduler_.OnStorage(PersistentVolumeClaim{.namespace_ = "default",
                                             .name = "logs",
                                             .uid = "logs-uid",
                                             .resource_version = "1",
                                             .storage_class = "dynamic",
                                             .access_modes = kReadWriteOnce},
                       false);
  api_.on_bind_volume = [&](const VolumeBindings::Bind&) {
    leadership_.leader = false;  // the lease is lost after this write
    return absl::OkStatus();
  };
  std::atomic<int> selected = 0;
  api_.on_select_node = [&](const VolumeBindings::Provision&,
                            const std::string&) {
    ++selected;
    return absl::OkStatus();
  };
  Pod pod = MakePod("web").Req(500, 0);
  pod.claims = {{.name = "data"}, {.name = "logs"}};
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return Sample("metrics_scheduler_binding_outcomes_total{outcome="
                  "\"not_leader\"}") >= 1;
  }));
  EXPECT_EQ(selected.load(), 0);
  EXPECT_EQ(api_.BindCalls(pod.Key()), 0);
  int64_t total = 0;
  for (const char* n : {"n1", "n2", "n3", "n4"}) total += ChargedCpu(n);
  EXPECT_EQ(total, 0);
}

}  // namespace
}  // namespace ms
