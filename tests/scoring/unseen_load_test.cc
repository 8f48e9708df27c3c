#include "scoring/unseen_load.h"

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ms {
namespace {

using Basis = UnseenLoadEstimate::Basis;
using From = PodEstimate::From;

MetricTerm Term(Basis basis, double factor) {
  return {.name = "cpu", .estimate = {.basis = basis, .factor = factor}};
}

double EstimateOf(const MetricTerm& term, const PodInfo& pod,
                  const Node& node) {
  return EstimatePod(term, pod, node, nullptr).value;
}

TEST(UnseenLoadTest, RequestsOverAllocatableTimesTheFactor) {
  Node node;
  node.allocatable = {.milli_cpu = 4000, .memory = 8 << 20};
  PodInfo pod{.requests = {.milli_cpu = 500, .memory = 1 << 20}};
  EXPECT_EQ(EstimateOf(Term(Basis::kCpuRequests, 100), pod, node), 12.5);
  EXPECT_EQ(EstimateOf(Term(Basis::kMemoryRequests, 1), pod, node), 0.125);
  EXPECT_EQ(EstimateOf(Term(Basis::kPerPod, 0.02), pod, node), 0.02);
  EXPECT_EQ(EstimateOf(Term(Basis::kNone, 1), pod, node), 0);
  // A node that says no allocatable: nothing to divide by.
  EXPECT_EQ(EstimateOf(Term(Basis::kCpuRequests, 1), pod, Node()), 0);
}

// A limits basis reads the pod's limit where it has one, its requests
// where it has none, and says which.
TEST(UnseenLoadTest, LimitsOverAllocatableOrRequestsWithoutOne) {
  Node node;
  node.allocatable = {.milli_cpu = 4000, .memory = 8 << 20};
  PodInfo pod{.requests = {.milli_cpu = 500, .memory = 1 << 20},
              .limits = {.milli_cpu = 2000}};
  const MetricTerm cpu = Term(Basis::kCpuLimits, 0.85);
  PodEstimate limited = EstimatePod(cpu, pod, node, nullptr);
  EXPECT_EQ(limited.from, From::kLimits);
  EXPECT_DOUBLE_EQ(limited.value, 0.425);  // 0.85 x 2 cores of 4
  EXPECT_EQ(DescribeEstimate(cpu, limited), "limits");
  // No memory limit: its memory requests.
  MetricTerm memory = Term(Basis::kMemoryLimits, 1);
  memory.name = "memory";
  PodEstimate unlimited = EstimatePod(memory, pod, node, nullptr);
  EXPECT_EQ(unlimited.from, From::kRequests);
  EXPECT_DOUBLE_EQ(unlimited.value, 0.125);
  EXPECT_EQ(DescribeEstimate(memory, unlimited), "requests (no limit)");
  pod.limits.memory = 4 << 20;
  EXPECT_DOUBLE_EQ(EstimateOf(memory, pod, node), 0.5);
  // A requests basis never reads the limit.
  EXPECT_DOUBLE_EQ(EstimateOf(Term(Basis::kCpuRequests, 1), pod, node), 0.125);
  // Measured siblings come first, as with requests.
  MetricTerm learned = cpu;
  learned.estimate.siblings_query = "q";
  PodInfo web = pod;
  web.owner_uid = "rs-web";
  SiblingUsages usages = {{"rs-web", {.mean = 1.0, .pods = 2}}};
  EXPECT_EQ(EstimatePod(learned, web, node, &usages).from, From::kSiblings);
  EXPECT_EQ(DescribeEstimate(learned, EstimatePod(learned, pod, node, &usages)),
            "limits (no sibling measured yet)");
}

TEST(UnseenLoadTest, ThePodsAnnotationOverridesTheBasis) {
  Node node;
  node.allocatable.milli_cpu = 4000;
  PodInfo pod{.requests = {.milli_cpu = 500},
              .estimates = {{"cpu", "0.6"}, {"memory", "2"}}};
  EXPECT_EQ(EstimateOf(Term(Basis::kCpuRequests, 1), pod, node), 0.6);
  // Not a number: the basis.
  pod.estimates["cpu"] = "a lot";
  EXPECT_EQ(EstimateOf(Term(Basis::kCpuRequests, 1), pod, node), 0.125);
  // A term with no estimate takes none, annotated or not.
  pod.estimates["cpu"] = "0.6";
  EXPECT_EQ(EstimateOf(Term(Basis::kNone, 1), pod, node), 0);
}

TEST(UnseenLoadTest, AnAnnotationThatIsNoDecimalIsReported) {
  const std::vector<MetricTerm> terms = {Term(Basis::kCpuRequests, 1),
                                         {.name = "latency"}};
  EXPECT_EQ(InvalidEstimateAnnotations(
                terms, {{"cpu", "a lot"}, {"latency", "x"}, {"other", "y"}}),
            (std::vector<std::string>{
                "annotation estimate.metrics-scheduler.io/cpu: \"a lot\" is "
                "not a decimal; cpu is estimated as configured"}));
  EXPECT_TRUE(InvalidEstimateAnnotations(terms, {{"cpu", "0.25"}}).empty());
  EXPECT_EQ(InvalidEstimateAnnotations(terms, {{"cpu", "inf"}}).size(), 1u);
}

// A response time at utilisation 0.5 doubles when 0.25 more arrives:
// (1 - 0.5) / (1 - 0.75).
TEST(UnseenLoadTest, AQueueGrowsAsOneOverOneMinusItsUtilisation) {
  EXPECT_DOUBLE_EQ(QueueingGrowth(0.5, 0.25), 2);
  EXPECT_DOUBLE_EQ(QueueingGrowth(0.2, 0.4), 2);
  EXPECT_EQ(QueueingGrowth(0.5, 0), 1);
  // Held at 0.95: 0.1 / 0.05, not 0.1 / -0.4.
  EXPECT_NEAR(QueueingGrowth(0.9, 0.5), 2, 1e-9);
  // A sample already past 0.95 (a saturated node) grows no more.
  EXPECT_EQ(QueueingGrowth(1.3, 0.5), 1);
  // Below 0 counts as 0; a negative estimate (an annotation) as none.
  EXPECT_DOUBLE_EQ(QueueingGrowth(-0.1, 0.5), 2);
  EXPECT_EQ(QueueingGrowth(0.5, -0.2), 1);
  EXPECT_EQ(QueueingGrowth(NAN, 0.2), 1);
}

// A queue's response time S / (1 - u) gives back S: 30 ms at 0.4 is 18 ms.
TEST(UnseenLoadTest, UnloadedIsTheSampleTimesOneLessTheUtilisation) {
  EXPECT_DOUBLE_EQ(Unloaded(0.03, 0.4, 1), 0.018);
  EXPECT_DOUBLE_EQ(Unloaded(0.03, 40, 100), 0.018);  // a percentage
  // u / full held to [0, 0.9]: a saturated node keeps a tenth.
  EXPECT_DOUBLE_EQ(Unloaded(5, 1.3, 1), 0.5);
  EXPECT_DOUBLE_EQ(Unloaded(0.03, -0.1, 1), 0.03);
  EXPECT_TRUE(std::isnan(Unloaded(NAN, 0.4, 1)));
  EXPECT_TRUE(std::isnan(Unloaded(0.03, NAN, 1)));
}

TEST(UnseenLoadTest, AQueueingTermHasNoPodEstimateAndReadsNoAnnotation) {
  Node node;
  node.allocatable.milli_cpu = 4000;
  const MetricTerm latency{
      .name = "latency",
      .estimate = {.basis = Basis::kQueueing, .utilisation = "cpu"}};
  PodInfo pod{.requests = {.milli_cpu = 500}, .estimates = {{"latency", "x"}}};
  EXPECT_EQ(EstimateOf(latency, pod, node), 0);
  EXPECT_TRUE(InvalidEstimateAnnotations({latency}, pod.estimates).empty());
  EXPECT_EQ(ExplainEstimates({latency}, pod, node, {}),
            (std::vector<std::string>{
                "latency x (1 - u) / (1 - u - du), u = cpu as sampled, du = "
                "cpu's estimate with it"}));
}

TEST(UnseenLoadTest, ASampleShowsAPodOnceAWarmupAfterItsStart) {
  UnseenLoadEstimate e{.basis = Basis::kPerPod, .warmup_ms = 30000};
  EXPECT_FALSE(SampleShows(e, 1029999, 1000000));
  EXPECT_TRUE(SampleShows(e, 1030000, 1000000));
  EXPECT_EQ(UnseenPart(e, 999000, 1000000), 1);
  EXPECT_EQ(UnseenPart(e, 1029999, 1000000), 1);
  EXPECT_EQ(UnseenPart(e, 1030000, 1000000), 0);
}

// Fade linear: a sample a third of the warm-up after the start has seen a
// third of the pod.
TEST(UnseenLoadTest, ALinearFadeLeavesWhatTheSampleHasNotCovered) {
  UnseenLoadEstimate e{.basis = Basis::kCpuRequests,
                       .warmup_ms = 30000,
                       .fade = UnseenLoadEstimate::Fade::kLinear};
  EXPECT_EQ(UnseenPart(e, 990000, 1000000), 1);  // sampled before it started
  EXPECT_EQ(UnseenPart(e, 1000000, 1000000), 1);
  EXPECT_DOUBLE_EQ(UnseenPart(e, 1010000, 1000000), 2.0 / 3);
  EXPECT_DOUBLE_EQ(UnseenPart(e, 1027000, 1000000), 0.1);
  EXPECT_EQ(UnseenPart(e, 1030000, 1000000), 0);
  EXPECT_EQ(UnseenPart(e, 1090000, 1000000), 0);
}

// perPodShare: each pod adds a share of the node's value as sampled, so a
// pod adds more to a node that answers slowly. At 0.1, a pod started on a
// node whose p99 reads 0.3 s adds 0.1 x 0.3 = 0.03 s there, and 0.1 x 0.06
// = 0.006 s on one that reads 60 ms; with fade linear a sample taken half
// the warm-up after its start has seen half of it: 0.5 x 0.03 = 0.015.
TEST(UnseenLoadTest, APerPodShareIsAShareOfTheSampledValue) {
  MetricTerm term{.name = "latency",
                  .estimate = {.basis = Basis::kPerPodShare,
                               .factor = 0.1,
                               .warmup_ms = 60000}};
  const PodInfo pod{.requests = {.milli_cpu = 500}};
  const Node node;
  const PodEstimate e = EstimatePod(term, pod, node, nullptr);
  EXPECT_EQ(e.from, From::kPerPodShare);
  EXPECT_EQ(e.value, 0.1);
  EXPECT_DOUBLE_EQ(UnseenLoad(term, pod, node, nullptr, 1010000, 1000000, 0.3,
                              std::nullopt),
                   0.03);
  EXPECT_DOUBLE_EQ(UnseenLoad(term, pod, node, nullptr, 1010000, 1000000,
                              0.06, std::nullopt),
                   0.006);
  // Shown once a sample a warm-up after its start covers it.
  EXPECT_EQ(UnseenLoad(term, pod, node, nullptr, 1060000, 1000000, 0.3,
                       std::nullopt),
            0);
  // No share of a value that is not there, nor of one below 0.
  EXPECT_EQ(UnseenLoad(term, pod, node, nullptr, 1010000, 1000000, NAN,
                       std::nullopt),
            0);
  EXPECT_EQ(UnseenLoad(term, pod, node, nullptr, 1010000, 1000000, -1,
                       std::nullopt),
            0);
  term.estimate.fade = UnseenLoadEstimate::Fade::kLinear;
  EXPECT_DOUBLE_EQ(UnseenLoad(term, pod, node, nullptr, 1030000, 1000000, 0.3,
                              std::nullopt),
                   0.015);
  // The annotation is the pod's share: 0.5 x 0.3 = 0.15.
  const PodInfo annotated{.estimates = {{"latency", "0.5"}}};
  term.estimate.fade = UnseenLoadEstimate::Fade::kStep;
  EXPECT_DOUBLE_EQ(UnseenLoad(term, annotated, node, nullptr, 1010000, 1000000,
                              0.3, std::nullopt),
                   0.15);
  EXPECT_EQ(ExplainEstimates({term}, pod, node, {}),
            (std::vector<std::string>{
                "latency +10 % of its sample for 1m: perPodShare"}));
}

// Fade measured: a pod of 1 core on a 4-core node whose own sample shows
// 0.4 cores still adds 0.15; one whose sample shows more than its estimate
// adds nothing; without a sample of its own, all of it until a sample a
// warm-up later.
TEST(UnseenLoadTest, AMeasuredFadeLeavesTheEstimateLessThePodsOwnSample) {
  MetricTerm term = Term(Basis::kCpuRequests, 1);
  term.estimate.warmup_ms = 30000;
  term.estimate.fade = UnseenLoadEstimate::Fade::kMeasured;
  Node node;
  node.allocatable.milli_cpu = 4000;
  const PodInfo pod{.requests = {.milli_cpu = 1000}};
  // The node's sampled value (0.9) matters to perPodShare only.
  auto at = [&](int64_t sample_ms, std::optional<double> own) {
    return UnseenLoad(term, pod, node, nullptr, sample_ms, 1000000, 0.9, own);
  };
  EXPECT_DOUBLE_EQ(at(1010000, 0.4), 0.15);
  EXPECT_EQ(at(1010000, 1.2), 0);
  EXPECT_EQ(at(1010000, std::nullopt), 0.25);
  EXPECT_EQ(at(1030000, 0.4), 0);
  // Step ignores the pod's own sample.
  term.estimate.fade = UnseenLoadEstimate::Fade::kStep;
  EXPECT_EQ(at(1010000, 0.4), 0.25);
}

// A pod's own sample counts when finite and within maxStaleness of the
// time asked about, on either side.
TEST(UnseenLoadTest, APodsOwnSampleIsFreshAndFinite) {
  MetricTerm term{.name = "cpu", .max_staleness_ms = 60000};
  MetricsSnapshot metrics;
  metrics.metrics.push_back({.name = "cpu",
                             .by_pod = std::make_shared<const PodSamples>(
                                 PodSamples{{"ns/a", {0.4, 1000000}},
                                            {"ns/nan", {NAN, 1000000}},
                                            {"ns/unsampled", {0.4, 0}}})});
  EXPECT_EQ(OwnSample(&metrics, term, "ns/a", 1060000), 0.4);
  EXPECT_EQ(OwnSample(&metrics, term, "ns/a", 940000), 0.4);
  EXPECT_EQ(OwnSample(&metrics, term, "ns/a", 1060001), std::nullopt);
  EXPECT_EQ(OwnSample(&metrics, term, "ns/nan", 1000000), std::nullopt);
  EXPECT_EQ(OwnSample(&metrics, term, "ns/unsampled", 1000000), std::nullopt);
  EXPECT_EQ(OwnSample(&metrics, term, "ns/b", 1000000), std::nullopt);
  EXPECT_EQ(OwnSample(nullptr, term, "ns/a", 1000000), std::nullopt);
  term.name = "memory";  // no such metric
  EXPECT_EQ(OwnSample(&metrics, term, "ns/a", 1000000), std::nullopt);
}

// Siblings: a web ReplicaSet whose pods request 0.5 cores and use 1.5.
class SiblingsTest : public testing::Test {
 protected:
  static constexpr int64_t kNow = 10'000'000;

  void SetUp() override {
    estimate_ = {.basis = Basis::kCpuRequests,
                 .factor = 1,
                 .warmup_ms = 60'000,
                 .siblings_query = "usage"};
    // Started long ago; web-3 within its warm-up, web-4 not known started.
    pods_["shop/web-1"] = Pod("rs-web", kNow - 600'000);
    pods_["shop/web-2"] = Pod("rs-web", kNow - 600'000);
    pods_["shop/web-3"] = Pod("rs-web", kNow - 30'000);
    pods_["shop/web-4"] = Pod("rs-web", 0);
    pods_["shop/db-0"] = Pod("sts-db", kNow - 600'000);
    pods_["shop/lone"] = Pod("", kNow - 600'000);
    by_pod_ = {{"shop/web-1", {1.4, kNow - 10'000}},
               {"shop/web-2", {1.6, kNow - 10'000}},
               {"shop/web-3", {0.1, kNow - 10'000}},
               {"shop/web-4", {0.1, kNow - 10'000}},
               {"shop/db-0", {0.2, kNow - 10'000}},
               {"shop/lone", {3, kNow - 10'000}},
               {"shop/gone", {3, kNow - 10'000}}};
  }

  static PodInfo Pod(const std::string& owner, int64_t start_ms) {
    return {.requests = {.milli_cpu = 500},
            .start_time_ms = start_ms,
            .owner_uid = owner};
  }

  SiblingUsages Measure(int64_t max_staleness_ms = 120'000) const {
    return MeasureSiblings(
        estimate_, by_pod_,
        [this](const std::string& key) -> const PodInfo* {
          auto it = pods_.find(key);
          return it != pods_.end() ? &it->second : nullptr;
        },
        kNow, max_staleness_ms);
  }

  UnseenLoadEstimate estimate_;
  std::map<std::string, PodInfo> pods_;
  PodSamples by_pod_;
};

TEST_F(SiblingsTest, MeasuresEachControllersWarmedUpPods) {
  SiblingUsages usages = Measure();
  // web-3 is still warming up and web-4 is not known to have started;
  // lone has no controller and gone is no pod we know.
  ASSERT_EQ(usages.size(), 2u);
  EXPECT_EQ(usages["rs-web"].pods, 2);
  EXPECT_DOUBLE_EQ(usages["rs-web"].mean, 1.5);
  EXPECT_EQ(usages["sts-db"].pods, 1);
  EXPECT_DOUBLE_EQ(usages["sts-db"].mean, 0.2);
}

TEST_F(SiblingsTest, TheSiblingsOwnWarmupReplacesTheEstimates) {
  // web-3's sample was taken 20 s after its start: too soon for the
  // estimate's 60 s, not for a per-pod query trusted 20 s after a start.
  estimate_.siblings_warmup_ms = 20'000;
  SiblingUsages usages = Measure();
  EXPECT_EQ(usages["rs-web"].pods, 3);
  EXPECT_DOUBLE_EQ(usages["rs-web"].mean, (1.4 + 1.6 + 0.1) / 3);
  estimate_.siblings_warmup_ms = 20'001;
  EXPECT_EQ(Measure()["rs-web"].pods, 2);
}

TEST_F(SiblingsTest, StaleOrNonFiniteSamplesMeasureNothing) {
  EXPECT_TRUE(Measure(/*max_staleness_ms=*/5'000).empty());
  for (auto& [key, sample] : by_pod_) sample.value = NAN;
  EXPECT_TRUE(Measure().empty());
}

TEST_F(SiblingsTest, APodIsEstimatedFromItsSiblingsThenFromItsRequests) {
  MetricTerm term{.name = "cpu", .estimate = estimate_};
  Node node;
  node.allocatable.milli_cpu = 4000;
  SiblingUsages usages = Measure();
  // A new web pod: its siblings use 1.5 cores of 4, not the 0.5 it asks.
  PodEstimate web = EstimatePod(term, Pod("rs-web", 0), node, &usages);
  EXPECT_EQ(web.from, From::kSiblings);
  EXPECT_DOUBLE_EQ(web.value, 0.375);
  EXPECT_EQ(DescribeEstimate(term, web),
            "siblings' measured usage (2 pods, 1.5 cores each)");
  // No measured sibling, no controller, no measurements: its requests.
  for (const char* owner : {"rs-new", ""}) {
    PodEstimate other = EstimatePod(term, Pod(owner, 0), node, &usages);
    EXPECT_EQ(other.from, From::kRequests);
    EXPECT_DOUBLE_EQ(other.value, 0.125);
    EXPECT_EQ(DescribeEstimate(term, other),
              "requests (no sibling measured yet)");
  }
  EXPECT_EQ(EstimatePod(term, Pod("rs-web", 0), node, nullptr).from,
            From::kRequests);
  // The annotation still wins.
  PodInfo annotated = Pod("rs-web", 0);
  annotated.estimates["cpu"] = "0.9";
  PodEstimate a = EstimatePod(term, annotated, node, &usages);
  EXPECT_EQ(a.from, From::kAnnotation);
  EXPECT_EQ(a.value, 0.9);
}

// What a running pod takes off its node when it leaves: its own measured
// usage first, even over its annotation; else as EstimatePod.
TEST_F(SiblingsTest, APodTakesItsOwnMeasuredUsage) {
  MetricTerm term{.name = "cpu", .estimate = estimate_};
  Node node;
  node.allocatable.milli_cpu = 4000;
  SiblingUsages usages = Measure();
  PodInfo web = Pod("rs-web", kNow - 600'000);
  web.estimates["cpu"] = "0.9";
  PodEstimate own = PodTakes(term, web, node, &usages, 2.0);
  EXPECT_EQ(own.from, From::kOwn);
  EXPECT_DOUBLE_EQ(own.value, 0.5);
  EXPECT_EQ(DescribeEstimate(term, own), "its own measured usage (2 cores)");
  EXPECT_EQ(PodTakes(term, web, node, &usages, std::nullopt).from,
            From::kAnnotation);
  EXPECT_EQ(PodTakes(term, web, node, &usages, NAN).from, From::kAnnotation);
  web.estimates.clear();
  PodEstimate siblings = PodTakes(term, web, node, &usages, std::nullopt);
  EXPECT_EQ(siblings.from, From::kSiblings);
  EXPECT_DOUBLE_EQ(siblings.value, 0.375);
  // perPod has nothing to measure against.
  MetricTerm per_pod{.name = "cpu",
                     .estimate = {.basis = Basis::kPerPod, .factor = 0.1}};
  EXPECT_EQ(PodTakes(per_pod, web, node, nullptr, 2.0).value, 0.1);
}

TEST_F(SiblingsTest, ExplainSaysWhatThePodAddsAndWhy) {
  std::vector<MetricTerm> terms = {
      {.name = "cpu", .estimate = estimate_},
      {.name = "latency"},  // no estimate: no line
      {.name = "errors",
       .estimate = {
           .basis = Basis::kPerPod, .factor = 0.01, .warmup_ms = 90'000}}};
  Node node;
  node.allocatable.milli_cpu = 4000;
  SiblingUsages usages = Measure();
  EXPECT_EQ(ExplainEstimates(terms, Pod("rs-web", 0), node, {usages}),
            (std::vector<std::string>{
                "cpu +0.375 for 1m: siblings' measured usage (2 pods, 1.5 "
                "cores each)",
                "errors +0.01 for 1m30s: perPod"}));
  EXPECT_EQ(ExplainEstimates(terms, Pod("", 0), node, {})[0],
            "cpu +0.125 for 1m: requests (no sibling measured yet)");
  terms[0].estimate.fade = UnseenLoadEstimate::Fade::kLinear;
  EXPECT_EQ(ExplainEstimates(terms, Pod("", 0), node, {})[0],
            "cpu +0.125 fading to 0 over 1m: requests (no sibling measured "
            "yet)");
  terms[0].estimate.fade = UnseenLoadEstimate::Fade::kMeasured;
  EXPECT_EQ(ExplainEstimates(terms, Pod("", 0), node, {})[0],
            "cpu +0.125 for 1m less what its own sample shows: requests (no "
            "sibling measured yet)");
}

TEST_F(SiblingsTest, MemorySiblingsAreInBytes) {
  estimate_.basis = Basis::kMemoryRequests;
  for (auto& [key, sample] : by_pod_) sample.value *= 1 << 30;  // GiB
  MetricTerm term{.name = "memory", .estimate = estimate_};
  Node node;
  node.allocatable.memory = int64_t{6} << 30;
  SiblingUsages usages = Measure();
  PodEstimate web = EstimatePod(term, Pod("rs-web", 0), node, &usages);
  EXPECT_DOUBLE_EQ(web.value, 0.25);  // 1.5 GiB of 6
  EXPECT_EQ(DescribeEstimate(term, web),
            "siblings' measured usage (2 pods, 1.611e+09 bytes each)");
}

}  // namespace
}  // namespace ms
