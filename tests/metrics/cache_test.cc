#include "metrics/cache.h"

#include <glog/logging.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/metrics/fake_source.h"

namespace ms::metrics {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr int64_t kT0 = 1700000000000;  // FakeClock's default start, in ms

MetricConfig Metric(const std::string& name, absl::Duration ttl = absl::Seconds(15),
                    absl::Duration max_staleness = absl::Seconds(60)) {
  MetricConfig m;
  m.name = name;
  m.query = name;
  m.ttl = ttl;
  m.max_staleness = max_staleness;
  m.join.label = "node";
  return m;
}

std::vector<NodeAddresses> Nodes(std::vector<std::string> names) {
  std::vector<NodeAddresses> out;
  for (std::string& n : names) out.push_back({std::move(n), {}});
  return out;
}

// node -> value of metric `index` in the current snapshot.
std::map<std::string, double> Values(const MetricsCache& cache, size_t index) {
  std::map<std::string, double> out;
  for (const auto& [node, sample] : cache.Snapshot()->metrics[index].by_node) {
    out[node] = sample.value;
  }
  return out;
}

class CacheTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  FakeSource source_;
  CacheOptions Options() { return {.clock = &clock_}; }
};

TEST_F(CacheTest, NothingIsFetchedBeforeTheNodeListIsKnown) {
  MetricsCache cache(&source_, {Metric("cpu")}, Options());
  cache.RefreshDue();
  EXPECT_EQ(source_.fetches("cpu"), 0);
  EXPECT_FALSE(cache.FirstRefreshDone());
  EXPECT_EQ(cache.NextDue(), absl::InfiniteFuture());
  ASSERT_EQ(cache.Snapshot()->metrics.size(), 1u);
  EXPECT_EQ(cache.Snapshot()->metrics[0].name, "cpu");
  EXPECT_EQ(cache.Snapshot()->metrics[0].fetched_at_ms, 0);
}

TEST_F(CacheTest, FirstRefreshPublishesValuesAndCoverage) {
  source_.Set("cpu", "n1", 0.5, kT0);
  source_.Set("cpu", "n2", 0.7, kT0);
  source_.Set("cpu", "other", 0.9, kT0);  // not a node
  source_.Set("lat", "n1", 10, kT0);
  source_.Set("lat", "n2", 20, kT0);
  source_.Set("lat", "n3", 30, kT0);
  MetricsCache cache(&source_, {Metric("cpu"), Metric("lat")}, Options());
  cache.SetNodes(Nodes({"n1", "n2", "n3"}));
  cache.RefreshDue();

  EXPECT_TRUE(cache.FirstRefreshDone());
  EXPECT_TRUE(cache.WaitForFirstRefresh(absl::ZeroDuration()));
  std::shared_ptr<const MetricsSnapshot> snap = cache.Snapshot();
  ASSERT_EQ(snap->metrics.size(), 2u);
  EXPECT_EQ(snap->metrics[0].name, "cpu");
  EXPECT_EQ(snap->metrics[0].fetched_at_ms, kT0);
  EXPECT_EQ(snap->metrics[0].last_error, "");
  EXPECT_THAT(Values(cache, 0), ElementsAre(Pair("n1", 0.5), Pair("n2", 0.7)));
  EXPECT_THAT(Values(cache, 1),
              ElementsAre(Pair("n1", 10), Pair("n2", 20), Pair("n3", 30)));

  std::vector<MetricStats> stats = cache.Stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].name, "cpu");
  EXPECT_EQ(stats[0].refresh_successes, 1);
  EXPECT_EQ(stats[0].refresh_failures, 0);
  EXPECT_EQ(stats[0].last_success_ms, kT0);
  EXPECT_EQ(stats[0].nodes_known, 3);
  EXPECT_EQ(stats[0].nodes_with_data, 2);
  EXPECT_THAT(stats[0].nodes_missing, ElementsAre("n3"));
  EXPECT_EQ(stats[0].series, 3);
  EXPECT_EQ(stats[0].unmatched, 1);
  EXPECT_THAT(stats[0].unmatched_examples, ElementsAre("other"));
  EXPECT_EQ(stats[1].nodes_with_data, 3);
  EXPECT_THAT(stats[1].nodes_missing, IsEmpty());
}

// The lines logged while it is installed that contain `part`.
class LogLines : public google::LogSink {
 public:
  explicit LogLines(std::string part) : part_(std::move(part)) {
    google::AddLogSink(this);
  }
  ~LogLines() override { google::RemoveLogSink(this); }
  using google::LogSink::send;
  void send(google::LogSeverity, const char*, const char*, int,
            const google::LogMessageTime&, const char* message,
            size_t message_len) override {
    std::string line(message, message_len);
    absl::MutexLock lock(&mu_);
    if (absl::StrContains(line, part_)) lines_.push_back(std::move(line));
  }
  std::vector<std::string> lines() const {
    absl::MutexLock lock(&mu_);
    return lines_;
  }

 private:
  const std::string part_;
  mutable absl::Mutex mu_;
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
};

// A detected join is kept in the stats and logged when first found and
// when it changes; a configured join is never reported as detected.
TEST_F(CacheTest, ADetectedJoinIsLoggedOnceAndOnChange) {
  LogLines log("series name");
  MetricConfig cpu = Metric("cpu");
  cpu.join.automatic = true;
  source_.Set("cpu", "n1", 0.5, kT0);
  source_.Set("lat", "n1", 10, kT0);
  source_.SetDetectedJoin("cpu", "instance (address)");
  source_.SetDetectedJoin("lat", "node (name)");  // not automatic: ignored
  MetricsCache cache(&source_, {cpu, Metric("lat")}, Options());
  cache.SetNodes(Nodes({"n1"}));
  cache.RefreshAll();
  cache.RefreshAll();
  EXPECT_EQ(cache.Stats()[0].detected_join, "instance (address)");
  EXPECT_THAT(log.lines(),
              ElementsAre("metric cpu: series name nodes by instance "
                          "(address); set join to fix it"));

  source_.SetDetectedJoin("cpu", "");
  cache.RefreshAll();
  source_.SetDetectedJoin("cpu", "node (name)");
  cache.RefreshAll();
  cache.RefreshAll();
  EXPECT_THAT(
      log.lines(),
      ElementsAre(
          "metric cpu: series name nodes by instance (address); set join "
          "to fix it",
          "metric cpu: no series names a node by any candidate join (tried "
          "node (name), instance (address), kubernetes_node (name), nodename "
          "(name), hostname (name), host (name)); set join to fix it",
          "metric cpu: series name nodes by node (name); set join to fix it"));
}

TEST_F(CacheTest, EachMetricIsRefreshedOnItsOwnTtl) {
  MetricsCache cache(
      &source_, {Metric("fast", absl::Seconds(10)), Metric("slow", absl::Seconds(30))},
      Options());
  cache.SetNodes(Nodes({"n1"}));
  cache.RefreshDue();
  EXPECT_EQ(cache.NextDue(), clock_.Now() + absl::Seconds(10));

  struct Step {
    absl::Duration advance;
    int fast, slow;  // fetches so far
  };
  const std::vector<Step> steps = {
      {absl::Seconds(9), 1, 1},   // t=9: nothing due
      {absl::Seconds(1), 2, 1},   // t=10: fast
      {absl::Seconds(10), 3, 1},  // t=20: fast
      {absl::Seconds(10), 4, 2},  // t=30: both
      {absl::Seconds(0), 4, 2},   // t=30 again: nothing due
  };
  for (const Step& step : steps) {
    clock_.Advance(step.advance);
    cache.RefreshDue();
    EXPECT_EQ(source_.fetches("fast"), step.fast);
    EXPECT_EQ(source_.fetches("slow"), step.slow);
  }
  cache.RefreshAll();
  EXPECT_EQ(source_.fetches("fast"), 5);
  EXPECT_EQ(source_.fetches("slow"), 3);
}

TEST_F(CacheTest, FailureKeepsValuesUntilMaxStalenessAndSparesOtherMetrics) {
  source_.Set("cpu", "n1", 0.5, kT0);
  source_.Set("cpu", "n2", 0.7, kT0);
  source_.Set("lat", "n1", 10, kT0);
  MetricsCache cache(&source_, {Metric("cpu"), Metric("lat")}, Options());
  cache.SetNodes(Nodes({"n1", "n2"}));
  cache.RefreshDue();

  source_.SetError("cpu", absl::UnavailableError("metric cpu: connection refused"));
  clock_.Advance(absl::Seconds(15));
  source_.Set("lat", "n1", 11, kT0 + 15000);
  cache.RefreshDue();

  std::shared_ptr<const MetricsSnapshot> snap = cache.Snapshot();
  EXPECT_THAT(Values(cache, 0), ElementsAre(Pair("n1", 0.5), Pair("n2", 0.7)));
  EXPECT_EQ(snap->metrics[0].fetched_at_ms, kT0);
  EXPECT_EQ(snap->metrics[0].last_error,
            "UNAVAILABLE: metric cpu: connection refused");
  EXPECT_THAT(Values(cache, 1), ElementsAre(Pair("n1", 11)));
  EXPECT_EQ(snap->metrics[1].last_error, "");
  std::vector<MetricStats> stats = cache.Stats();
  EXPECT_EQ(stats[0].refresh_successes, 1);
  EXPECT_EQ(stats[0].refresh_failures, 1);
  EXPECT_EQ(stats[0].last_status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(stats[0].last_success_ms, kT0);
  EXPECT_EQ(stats[0].last_attempt_ms, kT0 + 15000);
  EXPECT_EQ(stats[0].nodes_with_data, 2);  // 15 s old: still fresh

  // Retries back off from 1 s, doubling up to the ttl (15 s):
  // failures at t=15, 16, 18, 22, 30, 45 (capped), 60.
  const std::vector<int64_t> retry_at_s = {16, 18, 22, 30, 45, 60};
  for (int64_t t : retry_at_s) {
    SCOPED_TRACE(t);
    EXPECT_EQ(cache.NextDue(), absl::FromUnixMillis(kT0 + t * 1000));
    clock_.Set(absl::FromUnixMillis(kT0 + t * 1000));
    cache.RefreshDue();
  }
  // At t=60 the samples are exactly maxStaleness (60 s) old: still usable.
  EXPECT_EQ(cache.Stats()[0].nodes_with_data, 2);
  EXPECT_EQ(Values(cache, 0).size(), 2u);

  clock_.Advance(absl::Seconds(15));  // t=75: 75 s old
  cache.RefreshDue();
  EXPECT_THAT(Values(cache, 0), IsEmpty());
  stats = cache.Stats();
  EXPECT_EQ(stats[0].nodes_with_data, 0);
  EXPECT_THAT(stats[0].nodes_missing, ElementsAre("n1", "n2"));
  EXPECT_EQ(stats[0].refresh_failures, 8);
  // The other metric was refreshed all along.
  EXPECT_EQ(stats[1].refresh_failures, 0);

  // Recovery.
  source_.SetError("cpu", absl::OkStatus());
  source_.Set("cpu", "n1", 0.25, kT0 + 75000);
  clock_.Advance(absl::Seconds(15));
  cache.RefreshDue();
  EXPECT_THAT(Values(cache, 0), ElementsAre(Pair("n1", 0.25)));
  EXPECT_EQ(cache.Snapshot()->metrics[0].last_error, "");
  EXPECT_TRUE(cache.Stats()[0].last_status.ok());
}

TEST_F(CacheTest, ASuccessfulAnswerReplacesTheValues) {
  source_.Set("cpu", "n1", 1, kT0);
  source_.Set("cpu", "n2", 2, kT0);
  MetricsCache cache(&source_, {Metric("cpu")}, Options());
  cache.SetNodes(Nodes({"n1", "n2"}));
  cache.RefreshDue();
  source_.Remove("cpu", "n2");
  source_.Set("cpu", "n1", 3, kT0 + 15000);
  clock_.Advance(absl::Seconds(15));
  cache.RefreshDue();
  EXPECT_THAT(Values(cache, 0), ElementsAre(Pair("n1", 3)));
  EXPECT_THAT(cache.Stats()[0].nodes_missing, ElementsAre("n2"));
}

TEST_F(CacheTest, NonFiniteAndOldSamplesCountAsMissing) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  source_.Set("cpu", "n1", nan, kT0);
  source_.Set("cpu", "n2", std::numeric_limits<double>::infinity(), kT0);
  source_.Set("cpu", "n3", 1, kT0 - 61000);  // sampled 61 s ago
  source_.Set("cpu", "n4", 1, kT0 - 60000);  // exactly maxStaleness
  MetricsCache cache(&source_, {Metric("cpu")}, Options());
  cache.SetNodes(Nodes({"n1", "n2", "n3", "n4"}));
  cache.RefreshDue();
  // NaN and Inf are published as sent (scoring decides); n3 is dropped.
  std::shared_ptr<const MetricsSnapshot> snap = cache.Snapshot();
  EXPECT_EQ(snap->metrics[0].by_node.size(), 3u);
  EXPECT_TRUE(std::isnan(snap->metrics[0].by_node.at("n1").value));
  EXPECT_EQ(snap->metrics[0].by_node.count("n3"), 0u);
  EXPECT_THAT(cache.Stats()[0].nodes_missing, ElementsAre("n1", "n2", "n3"));
}

TEST_F(CacheTest, APerPodQueryIsFetchedBesideItsMetric) {
  MetricConfig cpu = Metric("cpu");
  cpu.estimate = {.basis = UnseenLoadEstimate::Basis::kCpuRequests,
                  .siblings_query = "usage by pod"};
  source_.Set("cpu", "n1", 0.5, kT0);
  source_.SetPod("cpu", "shop/web-1", 1.5, kT0);
  source_.SetPod("cpu", "shop/web-2", 1.25, kT0);
  MetricsCache cache(&source_, {cpu, Metric("lat")}, Options());
  cache.SetNodes(Nodes({"n1"}));
  cache.RefreshDue();
  std::shared_ptr<const MetricsSnapshot> first = cache.Snapshot();
  ASSERT_NE(first->metrics[0].by_pod, nullptr);
  EXPECT_THAT(
      *first->metrics[0].by_pod,
      UnorderedElementsAre(Pair("shop/web-1", MetricSample{1.5, kT0}),
                           Pair("shop/web-2", MetricSample{1.25, kT0})));
  EXPECT_EQ(first->metrics[1].by_pod, nullptr);  // no per-pod query
  EXPECT_EQ(cache.Stats()[0].pods_measured, 2);

  // A failure keeps the pods' values and spares the metric's own.
  source_.SetPodError("cpu", absl::UnavailableError("down"));
  source_.Set("cpu", "n1", 0.75, kT0 + 15000);
  clock_.Advance(absl::Seconds(15));
  cache.RefreshDue();
  std::shared_ptr<const MetricsSnapshot> second = cache.Snapshot();
  EXPECT_EQ(second->metrics[0].by_pod, first->metrics[0].by_pod);
  EXPECT_THAT(Values(cache, 0), ElementsAre(Pair("n1", 0.75)));
  EXPECT_TRUE(absl::IsUnavailable(cache.Stats()[0].last_pod_status));

  // The next answer replaces them.
  source_.SetPodError("cpu", absl::OkStatus());
  source_.SetPod("cpu", "shop/web-1", 1.0, kT0 + 30000);
  clock_.Advance(absl::Seconds(15));
  cache.RefreshDue();
  EXPECT_EQ(cache.Snapshot()->metrics[0].by_pod->at("shop/web-1").value, 1.0);
  EXPECT_TRUE(cache.Stats()[0].last_pod_status.ok());
}

TEST_F(CacheTest, SnapshotsAreImmutable) {
  source_.Set("cpu", "n1", 1, kT0);
  MetricsCache cache(&source_, {Metric("cpu")}, Options());
  cache.SetNodes(Nodes({"n1"}));
  cache.RefreshDue();
  std::shared_ptr<const MetricsSnapshot> before = cache.Snapshot();
  source_.Set("cpu", "n1", 2, kT0 + 15000);
  clock_.Advance(absl::Seconds(15));
  cache.RefreshDue();
  EXPECT_EQ(before->metrics[0].by_node.at("n1").value, 1);
  EXPECT_EQ(cache.Snapshot()->metrics[0].by_node.at("n1").value, 2);
  EXPECT_NE(before.get(), cache.Snapshot().get());
}

TEST_F(CacheTest, ANewNodeListRefreshesAfterTheNodeChangeDelay) {
  source_.Set("cpu", "n1", 1, kT0);
  source_.Set("cpu", "n2", 2, kT0);
  MetricsCache cache(&source_, {Metric("cpu")}, Options());
  cache.SetNodes(Nodes({"n1"}));
  cache.RefreshDue();
  EXPECT_EQ(source_.fetches("cpu"), 1);

  cache.SetNodes(Nodes({"n1"}));  // unchanged: nothing to do
  EXPECT_EQ(cache.NextDue(), clock_.Now() + absl::Seconds(15));

  cache.SetNodes(Nodes({"n1", "n2"}));
  EXPECT_EQ(cache.NextDue(), clock_.Now() + absl::Seconds(1));
  cache.RefreshDue();  // within the delay
  EXPECT_EQ(source_.fetches("cpu"), 1);
  clock_.Advance(absl::Seconds(1));
  cache.RefreshDue();
  EXPECT_EQ(source_.fetches("cpu"), 2);
  EXPECT_THAT(Values(cache, 0), ElementsAre(Pair("n1", 1), Pair("n2", 2)));
  EXPECT_THAT(cache.Stats()[0].nodes_missing, IsEmpty());
  EXPECT_EQ(cache.NextDue(), clock_.Now() + absl::Seconds(15));
}

TEST_F(CacheTest, MetricsAreFetchedInParallel) {
  absl::Mutex mu;
  int inside = 0;
  int max_inside = 0;
  source_.SetHook([&](const MetricConfig&) {
    absl::MutexLock lock(&mu);
    ++inside;
    max_inside = std::max(max_inside, inside);
    // Each fetch waits until all three are in (or gives up after 10 s,
    // which a sequential cache would hit).
    auto all_in = [&]() { return max_inside == 3; };
    mu.AwaitWithTimeout(absl::Condition(&all_in), absl::Seconds(10));
    --inside;
  });
  MetricsCache cache(&source_, {Metric("a"), Metric("b"), Metric("c")},
                     Options());
  cache.SetNodes(Nodes({"n1"}));
  cache.RefreshDue();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(max_inside, 3);
}

TEST_F(CacheTest, FetchDurationComesFromTheClock) {
  source_.SetHook([&](const MetricConfig&) { clock_.Advance(absl::Seconds(2)); });
  MetricsCache cache(&source_, {Metric("cpu")}, Options());
  cache.SetNodes(Nodes({"n1"}));
  cache.RefreshDue();
  MetricStats stats = cache.Stats()[0];
  EXPECT_EQ(stats.last_fetch_duration, absl::Seconds(2));
  EXPECT_EQ(stats.last_success_ms, kT0 + 2000);
  // Due a ttl after the fetch started.
  EXPECT_EQ(cache.NextDue(), absl::FromUnixMillis(kT0 + 15000));
}

// on_fetch hears of every fetch once, as it ends: which metric, how long
// it took (by the clock) and how it ended.
TEST_F(CacheTest, OnFetchIsCalledOncePerFetch) {
  struct Call {
    std::string metric;
    absl::Duration duration;
    absl::StatusCode code;
  };
  std::vector<Call> calls;  // on the refreshing thread: this one
  CacheOptions options = Options();
  options.on_fetch = [&calls](const MetricConfig& metric, absl::Duration d,
                              const absl::Status& status) {
    calls.push_back({metric.name, d, status.code()});
  };
  source_.SetHook([&](const MetricConfig&) { clock_.Advance(absl::Seconds(2)); });
  MetricsCache cache(&source_, {Metric("cpu")}, options);
  cache.SetNodes(Nodes({"n1"}));
  cache.RefreshAll();
  source_.SetError("cpu", absl::DeadlineExceededError("slow"));
  cache.RefreshAll();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].metric, "cpu");
  EXPECT_EQ(calls[0].duration, absl::Seconds(2));
  EXPECT_EQ(calls[0].code, absl::StatusCode::kOk);
  EXPECT_EQ(calls[1].duration, absl::Seconds(2));
  EXPECT_EQ(calls[1].code, absl::StatusCode::kDeadlineExceeded);
  // Nothing due: no fetch, no call.
  cache.RefreshDue();
  EXPECT_EQ(calls.size(), 2u);
}

TEST_F(CacheTest, BackgroundThreadAndWaitForFirstRefresh) {
  absl::Notification release;
  source_.SetHook([&](const MetricConfig&) { release.WaitForNotification(); });
  source_.Set("cpu", "n1", 1, kT0);
  MetricsCache cache(&source_, {Metric("cpu")}, Options());
  cache.Start();
  cache.SetNodes(Nodes({"n1"}));
  // The first fetch is blocked: the wait gives up at its deadline.
  absl::Time start = absl::Now();
  EXPECT_FALSE(cache.WaitForFirstRefresh(absl::Milliseconds(50)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(50));
  EXPECT_THAT(cache.Snapshot()->metrics[0].by_node, IsEmpty());
  release.Notify();
  EXPECT_TRUE(cache.WaitForFirstRefresh(absl::Seconds(30)));
  EXPECT_THAT(Values(cache, 0), ElementsAre(Pair("n1", 1)));
  cache.Stop();
}

TEST_F(CacheTest, WaitForFirstRefreshWithoutMetricsReturnsAtOnce) {
  MetricsCache cache(&source_, {}, Options());
  EXPECT_TRUE(cache.WaitForFirstRefresh(absl::ZeroDuration()));
  EXPECT_TRUE(cache.Snapshot()->metrics.empty());
}

TEST(IsFreshTest, Table) {
  const absl::Duration max = absl::Seconds(60);
  EXPECT_TRUE(IsFresh({1, kT0}, kT0, max));
  EXPECT_TRUE(IsFresh({1, kT0 - 60000}, kT0, max));
  EXPECT_FALSE(IsFresh({1, kT0 - 60001}, kT0, max));
  EXPECT_FALSE(IsFresh({1, 0}, kT0, max));  // never sampled
  EXPECT_FALSE(IsFresh({std::numeric_limits<double>::quiet_NaN(), kT0}, kT0, max));
  EXPECT_FALSE(IsFresh({-std::numeric_limits<double>::infinity(), kT0}, kT0, max));
}

}  // namespace
}  // namespace ms::metrics
