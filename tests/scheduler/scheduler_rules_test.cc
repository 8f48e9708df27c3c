// The Scheduler's own rules, around the decision: which profile decides a
// pod, scheduling gates, the cold metrics cache, and retrying pods a
// metric's filter kept out when new values arrive. The binder's rules are
// in binder_test.cc; the decision's in tests/scoring.
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/notification.h"
#include "config/config.h"
#include "gtest/gtest.h"
#include "metrics/cache.h"
#include "scheduler/cycle/scheduler.h"
#include "scheduler/ha/leadership.h"
#include "scheduler/telemetry/self_metrics.h"
#include "tests/metrics/fake_source.h"
#include "tests/testing/builders.h"
#include "tests/testing/memory_api.h"
#include "tests/testing/metrics_text.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::ms::testing::MemoryApi;
using ::ms::testing::SeriesValue;
using ::ms::testing::WaitFor;

// A profile scored by one metric alone, with no built-in term.
ProfileConfig MetricOnly(const std::string& scheduler_name,
                         MetricConfig metric) {
  ProfileConfig profile;
  profile.scheduler_name = scheduler_name;
  for (size_t i = 0; i < kNumBuiltinTerms; ++i) {
    profile.builtins[static_cast<BuiltinTerm>(i)] = 0;
  }
  profile.metrics.push_back(std::move(metric));
  return profile;
}

// The `speed` label of a node, lower first or higher first.
MetricConfig SpeedLabel(Direction direction) {
  return {.name = "speed",
          .origin = {MetricOrigin::Kind::kNodeLabel, "speed"},
          .direction = direction};
}

// A query metric `load`, lower first, refreshed every 50 ms.
MetricConfig LoadQuery(MetricThreshold filter = {}) {
  return {.name = "load",
          .query = "load",
          .filter = filter,
          .ttl = absl::Milliseconds(50)};
}

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

// A Scheduler over `config` and `cache` (may be null) with an apiserver
// in memory that tells it of each pod it binds, as the informers would.
class Harness {
 public:
  Harness(const Config& config, metrics::MetricsCache* cache)
      : scheduler_(config,
                   {.identity = "test",
                    .seed = 1,
                    .queue = {.initial_backoff = absl::Milliseconds(10),
                              .max_backoff = absl::Milliseconds(100)}},
                   api_, cache, RealClock::Get(), registry_, leadership_) {
    api_.on_bound = [this](const Pod& pod) {
      scheduler_.OnPendingPod(pod);
      scheduler_.OnAssignedPod(pod);
    };
  }
  ~Harness() {
    scheduler_.Stop();
    if (run_.joinable()) run_.join();
  }

  void Start() {
    run_ = std::thread([this] { scheduler_.Run(); });
  }
  void Create(const Pod& pod) {
    api_.AddPod(pod);
    scheduler_.OnPendingPod(pod);
  }
  // Where `pod` is bound; "" while it is not.
  std::string NodeOf(const Pod& pod) {
    std::map<std::string, std::string> placements = api_.Placements();
    auto it = placements.find(pod.Key());
    return it == placements.end() ? "" : it->second;
  }
  // The value of one series on /metrics (-1: absent).
  double Sample(const std::string& series) {
    return SeriesValue(registry_.Render(), series);
  }

  Scheduler& scheduler() { return scheduler_; }
  MemoryApi& api() { return api_; }

 private:
  MemoryApi api_;
  Registry registry_;
  AlwaysLeader leadership_;
  Scheduler scheduler_;
  std::thread run_;
};

TEST(SchedulerRulesTest, APodIsDecidedByTheProfileItsSchedulerNameNames) {
  Config config;
  config.profiles = {MetricOnly("slow-first", SpeedLabel(Direction::kLower)),
                     MetricOnly("fast-first", SpeedLabel(Direction::kHigher))};
  Harness h(config, nullptr);
  h.scheduler().OnNode(MakeNode("slow").Label("speed", "1"));
  h.scheduler().OnNode(MakeNode("fast").Label("speed", "9"));
  h.Start();
  // Each profile twice, alternating, so neither order nor tie-breaks can
  // make the choices.
  for (int i = 0; i < 2; ++i) {
    const std::string n = std::to_string(i);
    Pod a = MakePod("a" + n).Scheduler("slow-first");
    Pod b = MakePod("b" + n).Scheduler("fast-first");
    h.Create(a);
    h.Create(b);
    ASSERT_TRUE(WaitFor([&] { return !h.NodeOf(a).empty(); }));
    ASSERT_TRUE(WaitFor([&] { return !h.NodeOf(b).empty(); }));
    EXPECT_EQ(h.NodeOf(a), "slow");
    EXPECT_EQ(h.NodeOf(b), "fast");
  }
  EXPECT_EQ(
      h.Sample(
          R"(metrics_scheduler_decisions_total{mode="metrics",profile="slow-first"})"),
      2);
  EXPECT_EQ(
      h.Sample(
          R"(metrics_scheduler_decisions_total{mode="metrics",profile="fast-first"})"),
      2);
}

TEST(SchedulerRulesTest, AGatedPodWaitsUnqueuedUntilItsLastGateGoes) {
  Config config;
  Harness h(config, nullptr);
  h.scheduler().OnNode(MakeNode("n1"));
  h.Start();
  Pod gated = MakePod("gated");
  gated.scheduling_gated = true;
  h.Create(gated);
  // Not queued at all (no attempt, no Event), counted as gated.
  QueueLengths lengths = h.scheduler().queue().Lengths();
  EXPECT_EQ(lengths.active + lengths.backoff + lengths.unschedulable +
                lengths.in_flight,
            0u);
  EXPECT_EQ(h.Sample(R"(metrics_scheduler_pending_pods{queue="gated"})"), 1);

  // The update that removes the last gate queues it.
  Pod open = gated;
  open.scheduling_gated = false;
  h.scheduler().OnPendingPod(open);
  ASSERT_TRUE(WaitFor([&] { return h.NodeOf(gated) == "n1"; }));
  EXPECT_EQ(h.Sample(R"(metrics_scheduler_pending_pods{queue="gated"})"), 0);
  EXPECT_TRUE(h.api().EventPods("FailedScheduling").empty());

  // A gated pod deleted is no longer counted.
  Pod gone = MakePod("gone");
  gone.scheduling_gated = true;
  h.Create(gone);
  EXPECT_EQ(h.Sample(R"(metrics_scheduler_pending_pods{queue="gated"})"), 1);
  h.scheduler().OnPendingPodDeleted(gone);
  EXPECT_EQ(h.Sample(R"(metrics_scheduler_pending_pods{queue="gated"})"), 0);
}

// While the cache has never refreshed, the loop waits for it only until
// fallback.coldCacheDeadline, then decides in fallback mode; once the cache
// answers, decisions use the metrics.
TEST(SchedulerRulesTest, ACacheStillColdAtTheDeadlineMeansFallback) {
  Config config;
  config.profiles = {MetricOnly("metrics-scheduler", LoadQuery())};
  config.fallback.cold_cache_deadline = absl::Milliseconds(200);
  absl::Notification release;
  metrics::FakeSource source;
  source.Set("load", "n1", 9, NowMs());
  source.Set("load", "n2", 1, NowMs());
  source.SetHook([&](const MetricConfig&) { release.WaitForNotification(); });
  // The cache's destructor waits for its hung fetch: released on any exit.
  absl::Cleanup release_at_exit = [&] {
    if (!release.HasBeenNotified()) release.Notify();
  };
  metrics::MetricsCache cache(&source, config.profiles[0].metrics,
                              {.refresh_timeout = absl::Hours(1)});
  cache.Start();
  {
    Harness h(config, &cache);
    h.scheduler().OnNode(MakeNode("n1"));
    h.scheduler().OnNode(MakeNode("n2"));
    h.Start();
    Pod early = MakePod("early");
    h.Create(early);
    ASSERT_TRUE(WaitFor([&] { return !h.NodeOf(early).empty(); }));
    EXPECT_FALSE(cache.FirstRefreshDone());  // decided without metrics
    EXPECT_EQ(
        h.Sample(
            R"(metrics_scheduler_decisions_total{mode="fallback",profile="metrics-scheduler"})"),
        1);

    release.Notify();
    ASSERT_TRUE(WaitFor([&] { return cache.FirstRefreshDone(); }));
    Pod late = MakePod("late");
    h.Create(late);
    ASSERT_TRUE(WaitFor([&] { return !h.NodeOf(late).empty(); }));
    EXPECT_EQ(h.NodeOf(late), "n2");  // the lower load
    EXPECT_EQ(
        h.Sample(
            R"(metrics_scheduler_decisions_total{mode="metrics",profile="metrics-scheduler"})"),
        1);
  }
}

// A pod every node's load kept out waits as unschedulable (for up to five
// minutes, or a cluster change); new values of a filtered query metric
// retry it at once.
TEST(SchedulerRulesTest, NewMetricValuesRetryAPodAFilterKeptOut) {
  Config config;
  config.profiles = {MetricOnly("metrics-scheduler", LoadQuery({.max = 5}))};
  metrics::FakeSource source;
  source.Set("load", "n1", 9, NowMs());
  source.Set("load", "n2", 9, NowMs());
  metrics::MetricsCache cache(&source, config.profiles[0].metrics);
  cache.Start();
  {
    Harness h(config, &cache);
    h.scheduler().OnNode(MakeNode("n1"));
    h.scheduler().OnNode(MakeNode("n2"));
    h.Start();
    ASSERT_TRUE(WaitFor([&] { return cache.FirstRefreshDone(); }));
    Pod pod = MakePod("p");
    h.Create(pod);
    ASSERT_TRUE(WaitFor([&] {
      return h.api().EventPods("FailedScheduling").count(pod.Key()) > 0;
    }));
    ASSERT_TRUE(WaitFor(
        [&] { return h.scheduler().queue().Lengths().unschedulable == 1; }));

    source.Set("load", "n2", 1, NowMs());
    ASSERT_TRUE(WaitFor([&] { return h.NodeOf(pod) == "n2"; }));
  }
}

// Load the metrics have not seen: each pod bound since the nodes were
// sampled, ours or another scheduler's, adds its CPU requests over the
// node's (a fraction, as the metric) until a sample a warm-up later shows
// it. The filter reads the sum, so a burst stops at the bound instead of
// passing it together.
TEST(SchedulerRulesTest, PodsTheMetricsHaveNotSeenCountAgainstTheFilter) {
  MetricConfig load = LoadQuery({.max = 0.9});
  load.estimate = {.basis = UnseenLoadEstimate::Basis::kCpuRequests,
                   .factor = 1,
                   .warmup_ms = 60000};
  Config config;
  config.profiles = {MetricOnly("metrics-scheduler", load)};
  const int64_t sampled = NowMs();
  metrics::FakeSource source;
  source.Set("load", "n1", 0.5, sampled);
  source.Set("load", "n2", 0.5, sampled);
  metrics::MetricsCache cache(&source, config.profiles[0].metrics);
  cache.Start();
  {
    Harness h(config, &cache);
    h.scheduler().OnNode(MakeNode("n1").Capacity(4000, 1 << 30));
    h.scheduler().OnNode(MakeNode("n2").Capacity(4000, 1 << 30));
    // Bound to n1 by another scheduler: 2 of its 4 CPUs, so 0.5 + 0.5.
    h.scheduler().OnAssignedPod(
        MakePod("theirs").Req(2000, 0).Scheduler("default-scheduler").NodeName(
            "n1"));
    h.Start();
    ASSERT_TRUE(WaitFor([&] { return cache.FirstRefreshDone(); }));
    // n1 is at 1.0: both go to n2, at 0.5 then 0.75 (the bound is on the
    // node's load before the pod).
    for (const char* name : {"first", "second"}) {
      Pod pod = MakePod(name).Req(1000, 0);
      h.Create(pod);
      ASSERT_TRUE(WaitFor([&] { return !h.NodeOf(pod).empty(); }));
      EXPECT_EQ(h.NodeOf(pod), "n2") << name;
    }
    // n2 is at 1.0 too: no node passes. Without the estimates every node
    // would still read 0.5.
    Pod third = MakePod("third").Req(1000, 0);
    h.Create(third);
    ASSERT_TRUE(WaitFor([&] {
      return h.api().EventPods("FailedScheduling").count(third.Key()) > 0;
    }));
    EXPECT_EQ(h.NodeOf(third), "");

    // Samples taken after the warm-up show every pod: the estimates go,
    // and the new values retry the pod. n1 first, so that the pod goes
    // there whichever of the two values a refresh reads first.
    const int64_t later = NowMs() + 120000;
    source.Set("load", "n1", 0.6, later);
    source.Set("load", "n2", 0.8, later);
    ASSERT_TRUE(WaitFor([&] { return h.NodeOf(third) == "n1"; }));
  }
}

}  // namespace
}  // namespace ms
