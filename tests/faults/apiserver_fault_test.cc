// Faults between the scheduler and the apiserver, injected while a burst of
// pods is being placed: the apiserver restarted, a watch expired (410), the
// connection cut and refused, the leader killed. After each, every pod is
// bound exactly once on a node that fits (FaultTest::ExpectEveryPodBoundOnce).

#include <signal.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
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
// burst is 100: the nodes fill up, so an over-commit would show.
constexpr int kNodes = 8;
constexpr char kNodeCpu[] = "2";
constexpr int kBurst = 100;
constexpr char kPodCpu[] = "150m";

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
  void RestartApiserver() {
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
    ASSERT_TRUE(WaitFor([&] { return ApiserverReady(); }, absl::Seconds(60)))
        << "the restarted apiserver does not answer";
  }

  int ApiserverPort() {
    absl::string_view s = env_.server();
    return std::stoi(std::string(s.substr(s.rfind(':') + 1)));
  }
};

TEST_F(ApiserverFaultTest, ApiserverRestartedInTheMiddleOfABurst) {
  AddNodes(kNodes, kNodeCpu);
  SchedulerProcess* s = StartScheduler({});
  ASSERT_NE(s, nullptr);
  WaitForLeader(s);

  CreatePodsInBackground("restart", kBurst, kPodCpu);
  ASSERT_TRUE(WaitFor([&] { return CountBound() >= 20; }, absl::Seconds(60)));
  RestartApiserver();
  JoinCreator();
  ASSERT_TRUE(WaitForAllBound(kBurst)) << CountBound() << " bound";
  ExpectEveryPodBoundOnce(kBurst);
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

  CreatePodsInBackground("cut", kBurst, kPodCpu);
  ASSERT_TRUE(WaitFor([&] { return CountBound() >= 20; }, absl::Seconds(60)));
  // Cut everything (watches, bindings in flight, the lease) and refuse new
  // connections until the scheduler has tried to reconnect a few times.
  int accepted = (*proxy)->Accepted();
  (*proxy)->SetRefuse(true);
  (*proxy)->CutAll();
  bool retried = WaitFor([&] { return (*proxy)->Accepted() >= accepted + 5; },
                         absl::Seconds(8));
  (*proxy)->SetRefuse(false);
  EXPECT_TRUE(retried) << "the scheduler did not try to reconnect";
  JoinCreator();
  ASSERT_TRUE(WaitForAllBound(kBurst)) << CountBound() << " bound";
  ExpectEveryPodBoundOnce(kBurst);
  EXPECT_TRUE(s->Ready());
  EXPECT_EQ(s->Metric("metrics_scheduler_leader"), 1);
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
