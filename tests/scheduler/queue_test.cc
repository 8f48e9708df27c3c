#include "scheduler/cycle/queue.h"

#include <thread>

#include "gtest/gtest.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::MakePod;

class QueueTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  SchedulingQueue queue_{clock_};

  std::string PopName() {
    std::optional<QueuedPod> p = queue_.Pop();
    return p ? p->pod.name : "<closed>";
  }
};

TEST_F(QueueTest, PriorityThenAge) {
  queue_.Add(MakePod("old-low"));
  clock_.Advance(absl::Seconds(1));
  queue_.Add(MakePod("new-high").Priority(100));
  clock_.Advance(absl::Seconds(1));
  queue_.Add(MakePod("newer-high").Priority(100));
  clock_.Advance(absl::Seconds(1));
  queue_.Add(MakePod("new-low"));
  EXPECT_EQ(PopName(), "new-high");
  EXPECT_EQ(PopName(), "newer-high");
  EXPECT_EQ(PopName(), "old-low");
  EXPECT_EQ(PopName(), "new-low");
  EXPECT_EQ(queue_.Lengths().in_flight, 4u);
}

TEST_F(QueueTest, BackoffDoublesToTenSeconds) {
  EXPECT_EQ(queue_.Backoff(1), absl::Seconds(1));
  EXPECT_EQ(queue_.Backoff(2), absl::Seconds(2));
  EXPECT_EQ(queue_.Backoff(3), absl::Seconds(4));
  EXPECT_EQ(queue_.Backoff(4), absl::Seconds(8));
  EXPECT_EQ(queue_.Backoff(5), absl::Seconds(10));
  EXPECT_EQ(queue_.Backoff(50), absl::Seconds(10));
}

TEST_F(QueueTest, FailedPodWaitsOutItsBackoff) {
  queue_.Add(MakePod("p"));
  std::optional<QueuedPod> first = queue_.Pop();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->attempts, 1);
  queue_.RequeueBackoff(*first);
  EXPECT_EQ(queue_.Lengths().backoff, 1u);

  clock_.Advance(absl::Milliseconds(999));
  queue_.Flush();
  EXPECT_EQ(queue_.Lengths().active, 0u);  // 1 s backoff not over yet
  clock_.Advance(absl::Milliseconds(1));
  queue_.Flush();
  ASSERT_EQ(queue_.Lengths().active, 1u);

  std::optional<QueuedPod> second = queue_.Pop();
  EXPECT_EQ(second->attempts, 2);
  queue_.RequeueBackoff(*second);
  clock_.Advance(absl::Seconds(1));
  queue_.Flush();
  EXPECT_EQ(queue_.Lengths().backoff, 1u);  // second backoff is 2 s
  clock_.Advance(absl::Seconds(1));
  queue_.Flush();
  EXPECT_EQ(queue_.Lengths().active, 1u);
}

TEST_F(QueueTest, UnschedulableWaitsForAClusterChangeOrFiveMinutes) {
  queue_.Add(MakePod("p"));
  queue_.RequeueUnschedulable(*queue_.Pop());
  clock_.Advance(absl::Minutes(4));
  queue_.Flush();
  EXPECT_EQ(queue_.Lengths().unschedulable, 1u);

  // A node was added: the pod, past its 1 s backoff, is active again.
  queue_.MoveAllToActive();
  EXPECT_EQ(queue_.Lengths().active, 1u);

  // Unschedulable again; nothing changes for 5 minutes: retried anyway.
  queue_.RequeueUnschedulable(*queue_.Pop());
  clock_.Advance(absl::Minutes(5));
  queue_.Flush();
  EXPECT_EQ(queue_.Lengths().active, 1u);
}

TEST_F(QueueTest, ClusterChangeDuringBackoffGoesThroughBackoff) {
  queue_.Add(MakePod("p"));
  queue_.RequeueUnschedulable(*queue_.Pop());
  queue_.MoveAllToActive();  // within its 1 s backoff
  EXPECT_EQ(queue_.Lengths().backoff, 1u);
  clock_.Advance(absl::Seconds(1));
  queue_.Flush();
  EXPECT_EQ(queue_.Lengths().active, 1u);
}

// A node added (or a pod deleted) while the pod was being tried: the
// attempt judged the old cluster, so "unschedulable" is not the last word.
// It is retried once its backoff ends, not parked until the next change or
// five minutes.
TEST_F(QueueTest, AClusterChangeWhileInFlightIsNotMissed) {
  queue_.Add(MakePod("p"));
  std::optional<QueuedPod> p = queue_.Pop();
  queue_.MoveAllToActive();  // a node arrives mid-attempt
  queue_.RequeueUnschedulable(*p);
  EXPECT_EQ(queue_.Lengths().unschedulable, 0u);
  EXPECT_EQ(queue_.Lengths().backoff, 1u);
  clock_.Advance(absl::Seconds(1));  // its backoff after one attempt
  queue_.Flush();
  EXPECT_EQ(queue_.Lengths().active, 1u);

  // The next attempt misses nothing: unschedulable it stays parked.
  queue_.RequeueUnschedulable(*queue_.Pop());
  clock_.Advance(absl::Minutes(4));
  queue_.Flush();
  EXPECT_EQ(queue_.Lengths().unschedulable, 1u);
}

TEST_F(QueueTest, ItsOwnSpecEditedWhileInFlightIsNotMissed) {
  queue_.Add(MakePod("p"));
  std::optional<QueuedPod> p = queue_.Pop();
  Pod edited = MakePod("p");
  edited.node_selector["zone"] = "b";  // now fits elsewhere
  queue_.Update(edited);
  queue_.RequeueUnschedulable(*p);
  EXPECT_EQ(queue_.Lengths().backoff, 1u);
  clock_.Advance(absl::Seconds(1));
  queue_.Flush();
  std::optional<QueuedPod> again = queue_.Pop();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->pod.node_selector.at("zone"), "b");
}

TEST_F(QueueTest, DeletedPodsAreDropped) {
  queue_.Add(MakePod("a"));
  queue_.Add(MakePod("b"));
  queue_.Delete("default/a");
  EXPECT_EQ(PopName(), "b");

  // Deleted while in flight: not requeued.
  queue_.Add(MakePod("c"));
  std::optional<QueuedPod> c = queue_.Pop();
  queue_.Delete("default/c");
  queue_.RequeueBackoff(*c);
  QueueLengths l = queue_.Lengths();
  EXPECT_EQ(l.backoff + l.active + l.unschedulable, 0u);
}

TEST_F(QueueTest, UpdateKeepsTheLatestVersion) {
  Pod p = MakePod("p");
  queue_.Add(p);
  std::optional<QueuedPod> popped = queue_.Pop();
  p.node_selector["zone"] = "a";
  queue_.Update(p);  // while in flight: it is retried after its backoff
  queue_.RequeueUnschedulable(*popped);
  EXPECT_EQ(queue_.Lengths().backoff, 1u);
  p.tolerations.push_back({.op = TolerationOperator::kExists});
  queue_.Update(p);  // still backing off: replaced where it is
  clock_.Advance(absl::Seconds(1));
  queue_.Flush();
  std::optional<QueuedPod> again = queue_.Pop();
  EXPECT_EQ(again->pod.node_selector.at("zone"), "a");
  EXPECT_EQ(again->pod.tolerations.size(), 1u);
  EXPECT_EQ(again->attempts, 2);

  // Parked unschedulable, an update that changes the spec retries it.
  queue_.RequeueUnschedulable(*again);
  EXPECT_EQ(queue_.Lengths().unschedulable, 1u);
  p.node_selector["zone"] = "b";
  queue_.Update(p);
  EXPECT_EQ(queue_.Lengths().active, 1u);
}

TEST_F(QueueTest, DoneForgetsThePodUnlessItWasRecreated) {
  Pod p = MakePod("p");
  p.uid = "1";
  queue_.Add(p);
  std::optional<QueuedPod> first = queue_.Pop();
  queue_.Done(first->pod);
  EXPECT_EQ(queue_.Lengths().in_flight, 0u);
  EXPECT_EQ(queue_.Lengths().active, 0u);
  queue_.Delete("default/p");  // bound: it left the pending pods

  // Deleted and recreated (new uid) while the old one was binding.
  queue_.Add(p);
  std::optional<QueuedPod> old = queue_.Pop();
  queue_.Delete("default/p");
  Pod recreated = p;
  recreated.uid = "2";
  queue_.Add(recreated);
  queue_.Done(old->pod);
  std::optional<QueuedPod> next = queue_.Pop();
  EXPECT_EQ(next->pod.uid, "2");
  EXPECT_EQ(next->attempts, 1);
}

// The pending-pods watch can deliver an update written before the binding
// (our own condition patch, say) after the binding's answer and before the
// pod leaves the pending pods: the pod is bound, and is not queued again.
// Only its deletion, or a pod recreated under its name, ends that.
TEST_F(QueueTest, AStaleUpdateAfterDoneDoesNotQueueTheBoundPodAgain) {
  Pod p = MakePod("p");
  p.uid = "1";
  p.resource_version = "10";
  queue_.Add(p);
  std::optional<QueuedPod> bound = queue_.Pop();
  queue_.Done(bound->pod);

  Pod stale = p;
  stale.resource_version = "11";
  stale.nominated_node_name = "n1";  // our own nomination, seen late
  queue_.Update(stale);
  queue_.MoveAllToActive();
  clock_.Advance(absl::Minutes(10));
  queue_.Flush();
  QueueLengths l = queue_.Lengths();
  EXPECT_EQ(l.active + l.backoff + l.unschedulable + l.in_flight, 0u);

  // Its deletion (it left the pending pods when bound) ends the memory;
  // a pod recreated under the name is a new pod.
  queue_.Delete("default/p");
  Pod recreated = p;
  recreated.uid = "2";
  queue_.Add(recreated);
  std::optional<QueuedPod> next = queue_.Pop();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->pod.uid, "2");

  // Recreated before the old one's deletion was seen: a new pod too.
  queue_.Done(next->pod);
  Pod third = p;
  third.uid = "3";
  queue_.Update(third);
  next = queue_.Pop();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->pod.uid, "3");
  EXPECT_EQ(next->attempts, 1);
}

TEST_F(QueueTest, StatusOnlyUpdateLeavesAnUnschedulablePodParked) {
  Pod p = MakePod("p");
  queue_.Add(p);
  queue_.RequeueUnschedulable(*queue_.Pop());
  p.resource_version = "2";  // e.g. our own PodScheduled=False patch
  queue_.Update(p);
  EXPECT_EQ(queue_.Lengths().unschedulable, 1u);
}

TEST_F(QueueTest, AddingTwiceKeepsOneEntry) {
  queue_.Add(MakePod("p"));
  queue_.Add(MakePod("p"));
  EXPECT_EQ(queue_.Lengths().active, 1u);
}

TEST_F(QueueTest, CloseWakesABlockedPop) {
  std::optional<QueuedPod> result = QueuedPod{};
  std::thread popper([&] { result = queue_.Pop(); });
  queue_.Close();
  popper.join();
  EXPECT_FALSE(result.has_value());
}

}  // namespace
}  // namespace ms
