// Faults between the scheduler and the apiserver, injected while a burst of
// pods is being placed: the apiserver restarted, a watch expired (410), the
// connection cut and refused, the leader killed. After each, every pod is
// bound exactly once on a node that fits (FaultTest::ExpectEveryPodBoundOnce).

#include <signal.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/token_file.h"
#include "gtest/gtest.h"
#include "tests/faults/fault_fixture.h"
#include "tests/faults/watch_proxy.h"
#include "tests/testing/tcp_proxy.h"

namespace ms::testing {
namespace {

// Nodes of 2 cpu, pods of 150m: a node holds 13. 8 nodes hold 104, a
// burst is 100: the nodes fill up, so an over-commit would show. An
// over-filled burst is 112: exactly 104 are bound, 8 stay unschedulable.
constexpr int kNodes = 8;
constexpr char kNodeCpu[] = "2";
constexpr int kBurst = 100;
constexpr char kPodCpu[] = "150m";
constexpr int kSlots = kNodes * 13;
constexpr int kOverfilled = kSlots + 8;

// Bindings that ended without an answer from the apiserver, by outcome
// (scheduler/cycle/binder.h): proof that a fault hit a binding in flight.
double BindingsWithoutAnswer(SchedulerProcess* s) {
  double n = 0;
  for (const char* outcome :
       {"lost_answer_bound", "not_bound", "unknown", "refused"}) {
    n += s->Metric(absl::StrCat(
        "metrics_scheduler_binding_outcomes_total{outcome=\"", outcome,
        "\"}"));
  }
  return n;
}

// The request lines ("POST /api/v1/... HTTP/1.1") in bytes clients sent.
std::string RequestLines(absl::string_view bytes) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(bytes, "\r\n")) {
    for (absl::string_view method : {"GET ", "POST ", "PUT ", "PATCH ",
                                      "DELETE "}) {
      if (absl::StartsWith(line, method)) absl::StrAppend(&out, line, "\n");
    }
  }
  return out;
}

class ApiserverFaultTest : public FaultTest {
 protected:
  std::string ReadTrimmed(const std::string& path) {
    absl::StatusOr<std::string> text = ReadFile(path);
    return text.ok() ? std::string(absl::StripAsciiWhitespace(*text)) : "";
  }

  bool ApiserverReady() {
    absl::StatusOr<HttpResponse> r = env_.Admin("GET", "/readyz");
    return r.ok() && r->status == 200;
  }

  // Makes `testenv up` restart the apiserver (SIGUSR1) and waits until the
  // new one answers, so the shared control plane is left healthy.
  // `on_killed` runs once the old one is gone (the new one started, not yet
  // answering).
  void RestartApiserver(const std::function<void()>& on_killed = nullptr) {
    std::string up = ReadTrimmed(env_.dir() + "/up.pid");
    int up_pid = 0;
    ASSERT_TRUE(absl::SimpleAtoi(up, &up_pid) && up_pid > 0)
        << "no pid in " << env_.dir() << "/up.pid";
    const std::string pid_file = env_.dir() + "/kube-apiserver.pid";
    std::string before = ReadTrimmed(pid_file);
    ASSERT_EQ(kill(up_pid, SIGUSR1), 0);
    ASSERT_TRUE(WaitFor(
        [&] {
          std::string now = ReadTrimmed(pid_file);
          return !now.empty() && now != before;
        },
        absl::Seconds(60)))
        << "the apiserver was not restarted";
    if (on_killed) on_killed();
    ASSERT_TRUE(WaitFor([&] { return ApiserverReady(); }, absl::Seconds(60)))
        << "the restarted apiserver does not answer";
  }

  int ApiserverPort() {
    absl::string_view s = env_.server();
    return std::stoi(std::string(s.substr(s.rfind(':') + 1)));
  }
};

// The apiserver is killed and restarted while a binding awaits its answer:
// the apiserver carried the binding out, and its answer is lost with it.
// The scheduler must read the pod back through the restart (no apiserver
// for a few seconds, then 403s while its RBAC authorizer syncs) and settle
// it, and keep its lease.
TEST_F(ApiserverFaultTest, ApiserverRestartedInTheMiddleOfABurst) {
  AddNodes(kNodes, kNodeCpu);
  // Through a plain-HTTP front of the apiserver (`kubectl proxy`'s place),
  // which can hold an answer back.
  absl::StatusOr<std::unique_ptr<WatchProxy>> front =
      WatchProxy::Start(env_.server(), env_.dir() + "/pki/ca.crt");
  ASSERT_TRUE(front.ok()) << front.status();
  SchedulerProcess* s = StartScheduler(
      {}, "fault",
      {"--master=" + (*front)->url(), "--master-keeps-credentials"});
  ASSERT_NE(s, nullptr);
  WaitForLeader(s);

  CreatePodsInBackground("restart", kBurst, kPodCpu);
  ASSERT_TRUE(WaitFor([&] { return CountBound() >= 20; }, absl::Seconds(60)));
  // The next binding is carried out and its answer held back: the restart
  // strikes while that binding is unanswered, and its answer goes with the
  // old apiserver.
  (*front)->HoldNextAnswer("/binding");
  ASSERT_TRUE(
      WaitFor([&] { return (*front)->HeldAnswers() == 1; }, absl::Seconds(60)))
      << "no binding after the 20th";
  const double unanswered_before = BindingsWithoutAnswer(s);
  const int bound_at_restart = CountBound();
  RestartApiserver([&] { (*front)->DropHeldAnswers(); });
  JoinCreator();
  EXPECT_LT(bound_at_restart, kBurst) << "the burst was over before the fault";
  ASSERT_TRUE(WaitForAllBound(kBurst)) << CountBound() << " bound";
  ExpectEveryPodBoundOnce(kBurst);
  // The binding the restart hit was read back and settled.
  EXPECT_TRUE(WaitFor(
      [&] { return BindingsWithoutAnswer(s) >= unanswered_before + 1; }))
      << "the restart hit no binding\n"
      << s->Log();
  EXPECT_TRUE(s->Ready());
  EXPECT_EQ(s->Metric("metrics_scheduler_leader"), 1);
}

TEST_F(ApiserverFaultTest, ExpiredWatchesAreRelisted) {
  AddNodes(kNodes, kNodeCpu);
  absl::StatusOr<std::unique_ptr<WatchProxy>> proxy =
      WatchProxy::Start(env_.server(), env_.dir() + "/pki/ca.crt");
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  SchedulerProcess* s =
      StartScheduler({}, "fault",
                     {"--master=" + (*proxy)->url(),
                      // A front of the same apiserver: it needs the token.
                      "--master-keeps-credentials"});
  ASSERT_NE(s, nullptr);
  WaitForLeader(s);
  // One list each at start.
  const std::string pending = "schedulerName";  // spec.schedulerName=...
  const std::string assigned = "status.phase";  // spec.nodeName!=,...
  ASSERT_EQ((*proxy)->Lists(pending), 1);
  ASSERT_EQ((*proxy)->Lists(assigned), 1);

  // The pending-pod and assigned-pod watches each get a 410 after their
  // next event, in the middle of the burst.
  CreatePodsInBackground("expired", kBurst / 2, kPodCpu);
  ASSERT_TRUE(WaitFor([&] { return CountBound() >= 10; }, absl::Seconds(60)));
  (*proxy)->ExpireNextWatchEvent(pending);
  (*proxy)->ExpireNextWatchEvent(assigned);
  JoinCreator();
  for (int i = kBurst / 2; i < kBurst; ++i) {
    CreatePod(absl::StrCat("expired-", i), kPodCpu);
  }
  ASSERT_TRUE(WaitFor([&] { return (*proxy)->Expired() == 2; }));
  // Each expired watch made its informer list again.
  EXPECT_TRUE(WaitFor([&] {
    return (*proxy)->Lists(pending) == 2 && (*proxy)->Lists(assigned) == 2;
  })) << "pending lists " << (*proxy)->Lists(pending) << ", assigned lists "
      << (*proxy)->Lists(assigned);
  ASSERT_TRUE(WaitForAllBound(kBurst)) << CountBound() << " bound";
  ExpectEveryPodBoundOnce(kBurst);
}

// The connection is cut while a binding awaits its answer, and new ones
// are refused for a while; meanwhile pods are deleted and edited, events
// the scheduler can only learn when its watches resume. More pods than
// slots: the room of the deleted pods must be used, and no more.
TEST_F(ApiserverFaultTest, ConnectionCutAndRefusedInTheMiddleOfABurst) {
  AddNodes(kNodes, kNodeCpu);
  absl::StatusOr<std::unique_ptr<TcpProxy>> proxy =
      TcpProxy::Start(ApiserverPort());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  // Same CA and token; the serving certificate is for 127.0.0.1.
  SchedulerProcess* s = StartScheduler(
      {}, "fault",
      {absl::StrCat("--master=https://127.0.0.1:", (*proxy)->port()),
       "--master-keeps-credentials"});
  ASSERT_NE(s, nullptr);
  WaitForLeader(s);

  // Half the slots' pods first, the rest once answers are held back: the
  // scheduler may bind a whole burst before this thread holds anything
  // back, and then no binding would be left to catch.
  constexpr int kFirst = kSlots / 2;
  CreatePodsInBackground("cut", kFirst, kPodCpu);
  ASSERT_TRUE(WaitFor([&] { return CountBound() >= 20; }, absl::Seconds(60)));
  // Pods bound before answers are held back: deleting one of these in the
  // gap cannot turn the binding the cut hits into a deleted pod.
  std::map<std::string, std::string> answered = Placements();
  // Hold the apiserver's answers back until a binding waits for one: the
  // answer to any binding the apiserver carries out from now on is held
  // (5 s, beyond the binding's 4 s timeout), so a pod found bound that was
  // not when the delay began has its binding in flight, unanswered. (The
  // scheduler's in-flight gauge is no proof: a binding whose answer passed
  // the proxy just before the delay still counts for a moment.)
  (*proxy)->SetDelay(absl::Seconds(5));
  const std::map<std::string, std::string> at_delay = Placements();
  JoinCreator();
  for (int i = kFirst; i < kOverfilled; ++i) {
    CreatePod(absl::StrCat("cut-", i), kPodCpu);
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const auto& [pod, node] : Placements()) {
          auto was = at_delay.find(pod);
          if (!node.empty() && (was == at_delay.end() || was->second.empty())) {
            return true;
          }
        }
        return false;
      },
      absl::Seconds(60)))
      << "no binding while the answers were held back";
  // Cut everything (watches, the binding in flight, the lease) and refuse
  // new connections until the scheduler has tried to reconnect a few times.
  int accepted = (*proxy)->Accepted();
  (*proxy)->SetRefuse(true);
  (*proxy)->CutAll();
  (*proxy)->SetDelay(absl::ZeroDuration());
  // In the gap: four bound pods deleted, four pods edited.
  std::vector<std::string> deleted;
  for (const auto& [pod, node] : answered) {
    if (node.empty() || deleted.size() == 4) continue;
    DeletePod(pod);
    deleted.push_back(pod);
  }
  ASSERT_EQ(deleted.size(), 4u);
  int edited = 0;
  for (const auto& [pod, node] : Placements()) {
    if (edited == 4 || absl::c_linear_search(deleted, pod)) continue;
    LabelPod(pod, "edited", "in-the-gap");
    ++edited;
  }
  ASSERT_EQ(edited, 4);
  bool retried = WaitFor([&] { return (*proxy)->Accepted() >= accepted + 5; },
                         absl::Seconds(8));
  (*proxy)->SetRefuse(false);
  EXPECT_TRUE(retried) << "the scheduler did not try to reconnect";

  const int pods = kOverfilled - 4;
  ASSERT_TRUE(WaitForUnschedulable(kSlots))
      << CountBound() << " bound of " << pods << ", " << kSlots << " slots";
  ExpectEveryPodBoundOnce(pods, /*allow_lost_events=*/false, kSlots);
  EXPECT_GE(BindingsWithoutAnswer(s), 1) << "the fault hit no binding\n"
                                         << s->Log();
  EXPECT_TRUE(s->Ready());
  EXPECT_EQ(s->Metric("metrics_scheduler_leader"), 1);
}

// A network partition, not a reset: the leader's connections go silent,
// starting with a binding request of its, held unanswered. It must stop
// binding before its lease can expire, give up and exit 1 within
// --shutdown-timeout, and the standby take over. The partition then heals
// while the former leader still runs: what it sent is delivered on every
// connection it still holds open, as TCP would retransmit it. None of that
// may be a binding: each binding request gives up (and closes its
// connection) below leaseDuration - renewDeadline, so none is still open
// once a standby may lead. One still open would land now, after the
// standby's own writes.
TEST_F(ApiserverFaultTest, ABlackholedLeaderStopsBeforeTheStandbyLeads) {
  AddNodes(kNodes, kNodeCpu);
  // replica-a -> the partition (TcpProxy) -> a plain-HTTP front of the
  // apiserver (WatchProxy, `kubectl proxy`'s place), so that the requests
  // the partition holds and delivers can be read.
  absl::StatusOr<std::unique_ptr<WatchProxy>> front =
      WatchProxy::Start(env_.server(), env_.dir() + "/pki/ca.crt");
  ASSERT_TRUE(front.ok()) << front.status();
  absl::StatusOr<std::unique_ptr<TcpProxy>> proxy =
      TcpProxy::Start((*front)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  FaultConfig config;
  config.lease_duration = "4s";
  config.renew_deadline = "3s";
  config.retry_period = "1s";
  SchedulerProcess* a = StartScheduler(
      config, "replica-a",
      {absl::StrCat("--master=http://127.0.0.1:", (*proxy)->port()),
       "--master-keeps-credentials"});
  ASSERT_NE(a, nullptr);
  WaitForLeader(a);
  SchedulerProcess* b = StartScheduler(config, "replica-b");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(WaitFor([&] { return b->Ready(); }));

  CreatePodsInBackground("partition", kOverfilled, kPodCpu);
  ASSERT_TRUE(WaitFor([&] { return CountBound() >= 20; }, absl::Seconds(60)));
  // The partition starts with replica-a's next binding request, held in it.
  constexpr char kBinding[] = "/binding HTTP/1.1";
  (*proxy)->BlackholeOnClientBytes(kBinding);
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains((*proxy)->HeldFromClients(), kBinding);
      },
      absl::Seconds(60)))
      << "no binding held by the partition";
  const int bound_at_partition = CountBound();

  // replica-a gives up its lease once its renewals have failed for the
  // renew deadline; the standby leads once the lease has expired, and
  // writes (its lease, then bindings).
  ASSERT_TRUE(WaitFor(
      [&] {
        return a->Scrape().ok() && a->Metric("metrics_scheduler_leader") == 0;
      },
      absl::Seconds(30)))
      << "replica-a did not give up its lease\n"
      << a->Log();
  const absl::Time lost = absl::Now();
  WaitForLeader(b, absl::Seconds(60));
  const std::string bound =
      "metrics_scheduler_binding_outcomes_total{outcome=\"bound\"}";
  ASSERT_TRUE(WaitFor([&] { return b->Metric(bound) >= 1; },
                      absl::Seconds(60)))
      << "the standby bound nothing";

  // Heal while replica-a still runs, its connections open.
  ASSERT_TRUE(a->Running())
      << "replica-a exited before the partition healed: nothing it held "
         "open could be delivered\n"
      << a->Log();
  (*proxy)->SetBlackhole(false);
  // It exits 1 within --shutdown-timeout (10 s) of losing its lease; the
  // 5 s more are for a loaded machine.
  std::optional<int> code =
      a->WaitForExit(lost + absl::Seconds(15) - absl::Now());
  ASSERT_TRUE(code.has_value())
      << "replica-a still runs 15 s after it lost its lease\n"
      << a->Log();
  EXPECT_EQ(*code, 1)
      << "the former leader should exit with failure on losing the lease";
  // Nothing replica-a had open when the partition healed was a binding.
  EXPECT_FALSE(absl::StrContains((*proxy)->DeliveredAfterHeal(), kBinding))
      << "a binding request of the former leader was delivered after the "
         "standby led; requests delivered then:\n"
      << RequestLines((*proxy)->DeliveredAfterHeal());
  JoinCreator();

  ASSERT_TRUE(WaitForUnschedulable(kSlots))
      << CountBound() << " bound, " << kSlots << " slots";
  EXPECT_LT(bound_at_partition, kSlots) << "the burst was over too soon";
  BindingReport report = ExpectEveryPodBoundOnce(
      kOverfilled, /*allow_lost_events=*/true, kSlots);
  // The standby placed the rest, but for pods a binding of the former
  // leader's placed before the partition, whose answer or Event it held.
  EXPECT_GE(report.events_by_instance["replica-b"] + report.pods_without_event,
            kSlots - bound_at_partition);
}

TEST_F(ApiserverFaultTest, LeaderKilledInTheMiddleOfABurst) {
  AddNodes(kNodes, kNodeCpu);
  FaultConfig config;
  config.lease_duration = "4s";
  config.renew_deadline = "3s";
  config.retry_period = "1s";
  SchedulerProcess* a = StartScheduler(config, "replica-a");
  ASSERT_NE(a, nullptr);
  WaitForLeader(a);
  SchedulerProcess* b = StartScheduler(config, "replica-b");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(WaitFor([&] { return b->Ready(); }));
  EXPECT_EQ(b->Metric("metrics_scheduler_leader"), 0);

  // Kill the leader as soon as it has bound a few pods: bindings and Events
  // are in flight, most of the burst is still to come.
  CreatePodsInBackground("leader", kBurst, kPodCpu);
  ASSERT_TRUE(WaitFor([&] { return CountBound() >= 5; }, absl::Seconds(60)));
  a->Kill();
  int bound_at_kill = CountBound();
  JoinCreator();
  ASSERT_TRUE(WaitForAllBound(kBurst)) << CountBound() << " bound";
  EXPECT_LT(bound_at_kill, kBurst) << "the burst was over before the kill";
  // The standby's Events are written after its bindings, off its loop.
  EXPECT_TRUE(WaitFor(
      [&] {
        return CountScheduledEvents("replica-b") >= kBurst - bound_at_kill;
      },
      absl::Seconds(90)))
      << CountScheduledEvents("replica-b") << " Scheduled events by replica-b";
  // A replica killed between a binding and its Event loses the Event; no pod
  // may have two.
  BindingReport report =
      ExpectEveryPodBoundOnce(kBurst, /*allow_lost_events=*/true);
  EXPECT_GE(report.events_by_instance["replica-b"], kBurst - bound_at_kill);
  // Only pods replica-a bound can have lost their Event.
  EXPECT_LE(report.pods_without_event, bound_at_kill);
  EXPECT_EQ(b->Metric("metrics_scheduler_leader"), 1);
}

}  // namespace
}  // namespace ms::testing
