// Liveness: a part that holds work past the bound is stalled, and /livez
// says so; a wedged scheduling loop fails the probe, and passes again once
// the loop moves.
#include "scheduler/telemetry/liveness.h"

#include <httplib.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "config/config.h"
#include "gtest/gtest.h"
#include "metrics/cache.h"
#include "scheduler/cycle/scheduler.h"
#include "scheduler/cycle/scheduler_api.h"
#include "scheduler/ha/leadership.h"
#include "scheduler/serve/status_server.h"
#include "scheduler/telemetry/self_metrics.h"
#include "tests/metrics/fake_source.h"
#include "tests/testing/memory_api.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::MemoryApi;
using ::ms::testing::WaitFor;

TEST(LivenessMonitorTest, OnlyWorkHeldPastTheBoundIsAStall) {
  FakeClock clock;
  LivenessMonitor monitor(clock, absl::Seconds(60));
  LivenessMonitor::Part& loop = monitor.Register("scheduling loop");
  monitor.Register("nodes informer");  // idle throughout

  clock.Advance(absl::Hours(1));  // idle for an hour: a quiet cluster
  EXPECT_TRUE(monitor.Stalled().empty());
  {
    LivenessMonitor::Busy busy(monitor, loop);
    clock.Advance(absl::Seconds(60));  // at the bound: still live
    EXPECT_TRUE(monitor.Stalled().empty());
    clock.Advance(absl::Seconds(15));
    EXPECT_EQ(monitor.Stalled(),
              std::vector<std::string>{"scheduling loop (busy 1m15s)"});
  }
  EXPECT_TRUE(monitor.Stalled().empty());  // done with it
}

TEST(LivenessMonitorTest, NestedScopesEndWithTheOutermost) {
  FakeClock clock;
  LivenessMonitor monitor(clock, absl::Seconds(1));
  LivenessMonitor::Part& part = monitor.Register("p");
  {
    LivenessMonitor::Busy outer(monitor, part);
    { LivenessMonitor::Busy inner(monitor, part); }
    clock.Advance(absl::Seconds(2));
    EXPECT_EQ(monitor.Stalled().size(), 1u);
  }
  EXPECT_TRUE(monitor.Stalled().empty());
}

int GetStatus(int port, const std::string& path, std::string* body) {
  httplib::Client client("127.0.0.1", port);
  httplib::Result res = client.Get(path);
  if (!res) return -1;
  *body = res->body;
  return res->status;
}

// The scheduling loop waits for a metrics cache whose first refresh hangs
// (a cold-cache deadline of an hour): the loop holds its pod, and once that
// is longer than the bound, /livez and /healthz fail naming it.
TEST(LivenessTest, AWedgedSchedulingLoopFailsTheProbe) {
  Config config;
  MetricConfig metric;
  metric.name = "latency";
  metric.query = "latency";
  config.profiles[0].metrics.push_back(metric);
  config.fallback.cold_cache_deadline = absl::Hours(1);

  absl::Notification release;
  metrics::FakeSource source;
  source.SetHook([&](const MetricConfig&) { release.WaitForNotification(); });
  metrics::MetricsCache cache(&source, config.profiles[0].metrics,
                              {.refresh_timeout = absl::Hours(1)});
  cache.Start();

  FakeClock liveness_clock;
  LivenessMonitor liveness(liveness_clock, absl::Seconds(60));
  MemoryApi api;  // the wedged loop never gets as far as a write
  Registry registry;
  AlwaysLeader leader;
  auto scheduler = std::make_unique<Scheduler>(
      config, SchedulerOptions{.identity = "test", .bind_workers = 1},
      api, &cache, RealClock::Get(), registry, leader, &liveness);
  Node node{.name = "n1", .ready = true};
  node.allocatable = {.milli_cpu = 1000, .memory = 1 << 30, .pods = 10};
  scheduler->OnNode(node);

  StatusServer status(registry, [] { return true; },
                      [&] { return liveness.Stalled(); });
  absl::StatusOr<int> port = status.Start("127.0.0.1:0");
  ASSERT_TRUE(port.ok()) << port.status();
  std::string body;
  EXPECT_EQ(GetStatus(*port, "/livez", &body), 200);

  std::thread run([&] { scheduler->Run(); });
  scheduler->OnPendingPod(Pod{.name = "p", .namespace_ = "ns", .uid = "u"});
  // The loop has the pod; it waits on the cache. Move the monitor's clock
  // until the hold counts as a stall (the loop marks itself busy just
  // after it pops the pod).
  ASSERT_TRUE(
      WaitFor([&] { return scheduler->queue().Lengths().in_flight == 1; }));
  ASSERT_TRUE(WaitFor([&] {
    liveness_clock.Advance(absl::Seconds(61));
    return !liveness.Stalled().empty();
  }));
  EXPECT_EQ(GetStatus(*port, "/livez", &body), 500);
  EXPECT_TRUE(absl::StrContains(body, "scheduling loop")) << body;
  EXPECT_EQ(GetStatus(*port, "/healthz", &body), 500);

  // The cache answers: the loop moves on and the probe passes again.
  release.Notify();
  ASSERT_TRUE(WaitFor([&] { return liveness.Stalled().empty(); }));
  EXPECT_EQ(GetStatus(*port, "/livez", &body), 200);
  scheduler->Stop();
  run.join();
  status.Stop();
}

}  // namespace
}  // namespace ms
