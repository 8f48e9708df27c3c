#include "scoring/decide.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/image_names.h"
#include "scoring/explanation.h"
#include "scoring/filter.h"
#include "scoring/internal/kernels.h"
#include "scoring/metric_table.h"
#include "scoring/plugins/balanced_allocation.h"
#include "scoring/plugins/metric_terms.h"
#include "scoring/plugins/node_resources_fit.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::Column;
using ::ms::testing::kGi;
using ::ms::testing::kMi;
using ::ms::testing::kNow;
using ::ms::testing::MakeNode;
using ::ms::testing::MakePod;
using ::ms::testing::MetricsOnly;
using ::ms::testing::Term;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Only metric terms count unless a test turns the built-ins on.
struct Fixture {
  std::vector<NodeInfo> nodes;
  std::vector<MetricColumn> columns;
  std::vector<int32_t> placements;
  std::vector<std::vector<double>> unseen;  // per metric, per node
  Pod pod = MakePod().Req(100, 100 * kMi);
  Workspace ws;
  bool prepare = false;  // pass a MetricTable, as the scheduler does
  MetricTable prepared;
  const DeviceClassResources* device_resources = nullptr;
  // The last configuration decided with: a Decision's term names are views
  // into it, so it must outlive the Decision, as the scheduler's does.
  ScoringConfig config;

  Decision Run(ScoringConfig cfg, uint64_t seed = 1, bool explain = true,
               bool force_fallback = false) {
    config = std::move(cfg);
    if (prepare) prepared.Build(columns, nodes.size());
    DecideInput in{
        .pod = &pod,
        .nodes = &nodes,
        .metrics = &columns,
        .metric_table = prepare ? &prepared : nullptr,
        .unseen = unseen.empty() ? nullptr : &unseen,
        .recent_placements = placements.empty() ? nullptr : &placements,
        .device_resources = device_resources,
        .now_ms = kNow,
        .seed = seed,
        .force_fallback = force_fallback,
        .explain = explain};
    return Decide(in, config, ws);
  }
};

std::vector<NodeInfo> ThreeNodes() {
  return {MakeNode("n1"), MakeNode("n2"), MakeNode("n3")};
}

TEST(DecideTest, LowerIsBetterPicksTheLowestValue) {
  Fixture f;
  f.nodes = ThreeNodes();
  f.columns = {Column({0.3, 0.1, 0.2})};
  Decision d = f.Run(MetricsOnly({Term("latency")}));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.node_index, 1);
  EXPECT_EQ(d.mode, ScoringMode::kMetrics);
  EXPECT_EQ(d.fallback_reason, FallbackReason::kNone);
  EXPECT_DOUBLE_EQ(d.score, 100);
  ASSERT_TRUE(d.explanation.has_value());
  // minmax over [0.1, 0.3]: n1 (0.3 - 0.3) * 100 / 0.2 = 0;
  // n3 (0.3 - 0.2) * 100 / 0.2 = 50.
  EXPECT_NEAR(d.explanation->nodes[0].total, 0, 1e-9);
  EXPECT_NEAR(d.explanation->nodes[2].total, 50, 1e-9);
}

TEST(DecideTest, WeightedSumOfTerms) {
  Fixture f;
  f.nodes = ThreeNodes();
  // latency (lower, w=3) and throughput (higher, w=1).
  f.columns = {Column({10, 20, 30}), Column({5, 15, 10})};
  Decision d = f.Run(MetricsOnly(
      {Term("latency", 3), Term("throughput", 1, Direction::kHigher)}));
  ASSERT_TRUE(d.ok());
  // n1: latency 100, throughput (5 - 5) * 100 / 10 = 0 -> (300 + 0) / 4 = 75
  // n2: latency 50, throughput 100 -> (150 + 100) / 4 = 62.5
  // n3: latency 0, throughput 50 -> 50 / 4 = 12.5
  EXPECT_EQ(d.node_index, 0);
  EXPECT_DOUBLE_EQ(d.score, 75);
  EXPECT_NEAR(d.explanation->nodes[1].total, 62.5, 1e-9);
  EXPECT_NEAR(d.explanation->nodes[2].total, 12.5, 1e-9);
  // The winner's terms, for the Scheduled event.
  ASSERT_EQ(d.terms.size(), 5u);  // 2 metrics + 3 built-ins
  EXPECT_EQ(d.terms[0].name, "latency");
  EXPECT_EQ(d.terms[0].raw, 10);
  EXPECT_EQ(d.terms[0].score, 100);
  EXPECT_EQ(d.terms[0].weight, 3);
  EXPECT_EQ(d.terms[2].state, TermState::kUnused);  // leastAllocated, w=0
  EXPECT_EQ(SummarizeTerms(d.score, d.mode, d.terms),
            "score 75.0 (metrics): latency 100.0 (w=3), throughput 0.0 (w=1)");
}

// A metric of weight 0 (another's `unloaded` utilisation, or a filter
// alone) filters and is explained, but scores nothing.
TEST(DecideTest, AWeightOfZeroFiltersButScoresNothing) {
  Fixture f;
  f.nodes = ThreeNodes();
  f.columns = {Column({10, 20, 30}), Column({0.8, 0.95, 0.1})};
  MetricTerm busy = Term("busy", 0);
  busy.filter_max = 0.9;
  Decision d = f.Run(MetricsOnly({Term("latency", 1), busy}));
  ASSERT_TRUE(d.ok());
  // n2 is above busy's bound; latency over n1 and n3 alone: n1 100, n3 0,
  // though n3 is the least busy.
  EXPECT_EQ(d.num_feasible, 2);
  EXPECT_EQ(d.node_index, 0);
  EXPECT_DOUBLE_EQ(d.score, 100);
  EXPECT_NEAR(d.explanation->nodes[2].total, 0, 1e-9);
  EXPECT_EQ(d.terms[1].state, TermState::kUnused);
  EXPECT_EQ(d.terms[1].raw, 0.8);
  EXPECT_EQ(SummarizeTerms(d.score, d.mode, d.terms),
            "score 100.0 (metrics): latency 100.0 (w=1)");
}

MetricTerm TargetTerm(const std::string& name, double target, double max,
                      MissingPolicy missing = MissingPolicy::kNeutral) {
  MetricTerm t = Term(name, 1, Direction::kLower, missing);
  t.normalization = {.type = NormalizationType::kTarget,
                     .min = 0,
                     .max = max,
                     .target = target};
  return t;
}

// target 0.7 over [0, 1] (t = 70): the node at the target wins, and one
// below it beats one as far above it, since above the target the score
// starts from t, not 100.
TEST(DecideTest, ATargetPicksTheNodeAtTheTarget) {
  Fixture f;
  f.nodes = ThreeNodes();
  f.columns = {Column({0.2, 0.7, 0.95})};
  for (bool prepare : {false, true}) {
    f.prepare = prepare;
    Decision d = f.Run(MetricsOnly({TargetTerm("cpu", 0.7, 1)}));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d.node_index, 1);
    EXPECT_EQ(d.score, 100);
    // n1: (100 - 70) * 20 / 70 + 70 = 78.57; n3: 70 * (100 - 95) / 30 =
    // 11.67.
    EXPECT_NEAR(d.explanation->nodes[0].total, 78.571428571428571, 1e-9);
    EXPECT_NEAR(d.explanation->nodes[2].total, 11.666666666666667, 1e-9);
  }
  // Without n2, n1 (0.5 below) beats n3 (0.25 above).
  f.columns = {Column({0.2, 1.5, 0.95})};
  EXPECT_EQ(f.Run(MetricsOnly({TargetTerm("cpu", 0.7, 1)})).node_index, 0);
}

// The vectorised kernels score a target term as the reference
// NormalizeValue does, exactly: over three blocks of nodes (the last one
// partial), for one complete term, a pair of complete terms (scored in one
// pass), and a term with missing values under each policy.
TEST(DecideTest, TheKernelsScoreATargetAsTheReference) {
  constexpr size_t kNodes = 600;
  Fixture f;
  for (size_t i = 0; i < kNodes; ++i) {
    f.nodes.push_back(MakeNode(absl::StrCat("n", i)));
  }
  // From -0.1 to 1.4 in steps of 1/400: min, the target and max are among
  // them.
  std::vector<double> values(kNodes), other(kNodes), gaps(kNodes);
  for (size_t i = 0; i < kNodes; ++i) {
    values[i] = (static_cast<double>(i) - 40) / 400;
    other[i] = values[kNodes - 1 - i];
    gaps[i] = i % 7 == 3 ? kNaN : values[i];
  }
  const NormalizationConfig norm = TargetTerm("", 0.7, 1).normalization;
  auto reference = [&](double v) {
    return NormalizeValue(Direction::kLower, norm, {}, v);
  };
  for (bool prepare : {false, true}) {
    f.prepare = prepare;
    // One term, weight 1: each total is the term's score.
    f.columns = {Column(values)};
    Decision one = f.Run(MetricsOnly({TargetTerm("cpu", 0.7, 1)}));
    ASSERT_TRUE(one.ok());
    for (size_t i = 0; i < kNodes; ++i) {
      const NodeExplanation& ne = one.explanation->nodes[i];
      EXPECT_EQ(ne.total, reference(values[i])) << "node " << i;
      EXPECT_EQ(ne.terms[0].score, reference(values[i])) << "node " << i;
    }
    EXPECT_EQ(one.score, 100);
    EXPECT_EQ(one.node_index, 320);  // (320 - 40) / 400 = 0.7
    // Two complete terms, weight 1 each: (s1 + s2) / 2.
    f.columns = {Column(values), Column(other)};
    Decision two = f.Run(
        MetricsOnly({TargetTerm("cpu", 0.7, 1), TargetTerm("memory", 0.7, 1)}));
    ASSERT_TRUE(two.ok());
    for (size_t i = 0; i < kNodes; ++i) {
      EXPECT_EQ(two.explanation->nodes[i].total,
                (reference(values[i]) + reference(other[i])) * 0.5)
          << "node " << i;
    }
    // Values missing on every seventh node: neutral scores them 50, skip
    // leaves the term out (no term left: 0).
    f.columns = {Column(gaps)};
    for (MissingPolicy missing :
         {MissingPolicy::kNeutral, MissingPolicy::kSkip}) {
      Decision d = f.Run(MetricsOnly({TargetTerm("cpu", 0.7, 1, missing)}));
      ASSERT_TRUE(d.ok());
      for (size_t i = 0; i < kNodes; ++i) {
        const double want = !std::isnan(gaps[i]) ? reference(gaps[i])
                            : missing == MissingPolicy::kNeutral ? 50
                                                                 : 0;
        EXPECT_EQ(d.explanation->nodes[i].total, want) << "node " << i;
      }
    }
  }
}

// What estimates of load not yet sampled added to a value is said beside
// it, in the Scheduled event's summary and the explanation.
TEST(DecideTest, TheEstimatedPartOfAValueIsExplained) {
  Fixture f;
  f.nodes = ThreeNodes();
  f.columns = {Column({0.75, 0.9, 0.8})};
  f.unseen = {{0.25, 0, 0}};
  Decision d = f.Run(MetricsOnly({Term("cpu")}));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.node_index, 0);
  EXPECT_EQ(d.terms[0].unseen, 0.25);
  EXPECT_EQ(SummarizeTerms(d.score, d.mode, d.terms),
            "score 100.0 (metrics): cpu 100.0 (w=1, value 0.75 (+0.25 "
            "unseen))");
  EXPECT_THAT(FormatExplanation(*d.explanation),
              HasSubstr("0.75 (+0.25 unseen) -> 100.00"));
  EXPECT_EQ(d.explanation->nodes[1].terms[0].unseen, 0);
}

TEST(DecideTest, MissingPolicies) {
  // n2 has no value (NaN); n1 = 10, n3 = 20, lower is better:
  // n1 100, n3 0 (minmax over the usable values).
  struct Case {
    MissingPolicy policy;
    std::vector<double> want_totals;  // NaN = filtered out
    int want_feasible;
  };
  for (const Case& c : std::vector<Case>{
           // neutral: n2 scores 50.
           {MissingPolicy::kNeutral, {100, 50, 0}, 3},
           // worst: n2 scores 0.
           {MissingPolicy::kWorst, {100, 0, 0}, 3},
           // exclude: n2 is filtered out.
           {MissingPolicy::kExclude, {100, kNaN, 0}, 2},
       }) {
    Fixture f;
    f.nodes = ThreeNodes();
    f.columns = {Column({10, kNaN, 20})};
    Decision d = f.Run(MetricsOnly({Term("m", 1, Direction::kLower, c.policy)}));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d.num_feasible, c.want_feasible);
    for (size_t i = 0; i < 3; ++i) {
      const NodeExplanation& ne = d.explanation->nodes[i];
      if (std::isnan(c.want_totals[i])) {
        EXPECT_FALSE(ne.feasible);
        EXPECT_EQ(ne.filter_reason, "node(s) had no usable value for metric m");
      } else {
        EXPECT_NEAR(ne.total, c.want_totals[i], 1e-9) << i;
      }
    }
  }
}

// filter: {max: 0.9} removes a node whose fresh value is above 0.9; a
// node without a value, or with a stale one, stays (its `missing` policy
// scores it).
TEST(DecideTest, AThresholdFiltersFreshValuesOnly) {
  Fixture f;
  f.nodes = {MakeNode("n1"), MakeNode("n2"), MakeNode("n3"), MakeNode("n4")};
  MetricColumn cpu = Column({0.5, 0.95, kNaN, 0.99});
  cpu.time_ms[3] = kNow - 61000;  // stale: older than maxStaleness
  f.columns = {cpu};
  MetricTerm term = Term("cpu");
  term.filter_max = 0.9;
  for (bool prepare : {false, true}) {
    f.prepare = prepare;
    Decision d = f.Run(MetricsOnly({term}));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d.num_feasible, 3);
    EXPECT_EQ(d.explanation->nodes[1].filter_reason,
              "node(s) had cpu above 0.9");
    EXPECT_TRUE(d.explanation->nodes[0].feasible);
    EXPECT_TRUE(d.explanation->nodes[2].feasible);
    EXPECT_TRUE(d.explanation->nodes[3].feasible);
    EXPECT_EQ(d.node_index, 0);
  }
  // At the bound is within it.
  f.columns = {Column({0.9, 0.95, 0.1, 0.2})};
  EXPECT_EQ(f.Run(MetricsOnly({term})).num_feasible, 3);
}

// When every node is over a bound the pod is unschedulable, the reasons
// counted as kube-scheduler counts them; preemption cannot help.
TEST(DecideTest, ThresholdsOnEveryNodeMakeThePodUnschedulable) {
  Fixture f;
  f.nodes = ThreeNodes();
  f.columns = {Column({0.95, 0.05, 0.99}), Column({1, 2, 3})};
  MetricTerm cpu = Term("cpu");
  cpu.filter_max = 0.9;
  cpu.filter_min = 0.1;
  MetricTerm other = Term("other");
  other.filter_max = 2;  // n3 fails it too, but cpu comes first
  ScoringConfig cfg = MetricsOnly({cpu, other});
  Decision d = f.Run(cfg);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.filter_summary,
            "0/3 nodes are available: 1 node(s) had cpu below 0.1, 2 node(s) "
            "had cpu above 0.9.");
  EXPECT_EQ(d.explanation->nodes[2].filter_reason,
            "node(s) had cpu above 0.9");

  DecideInput in{.pod = &f.pod,
                 .nodes = &f.nodes,
                 .metrics = &f.columns,
                 .preempt = true,
                 .now_ms = kNow};
  d = Decide(in, cfg, f.ws);
  ASSERT_FALSE(d.ok());
  ASSERT_TRUE(d.preemption.has_value());
  EXPECT_THAT(d.filter_summary,
              HasSubstr("preemption: 0/3 nodes are available: 3 Preemption "
                        "is not helpful for scheduling."));
}

// In fallback mode (here forced, as for a cold cache) no bound applies.
TEST(DecideTest, ThresholdsDoNotApplyInFallbackMode) {
  Fixture f;
  f.nodes = ThreeNodes();
  f.columns = {Column({0.95, 0.97, 0.99})};
  MetricTerm cpu = Term("cpu");
  cpu.filter_max = 0.9;
  Decision d = f.Run(MetricsOnly({cpu}), 1, true, /*force_fallback=*/true);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.mode, ScoringMode::kFallback);
  EXPECT_EQ(d.num_feasible, 3);
}

TEST(DecideTest, SkipRenormalisesTheWeights) {
  Fixture f;
  f.nodes = ThreeNodes();
  // a (w=1, skip): n1 10, n2 missing, n3 20. b (w=3): n1 0, n2 0, n3 10,
  // higher is better.
  f.columns = {Column({10, kNaN, 20}), Column({0, 0, 10})};
  Decision d = f.Run(MetricsOnly(
      {Term("a", 1, Direction::kLower, MissingPolicy::kSkip),
       Term("b", 3, Direction::kHigher)}));
  ASSERT_TRUE(d.ok());
  // n1: (1 * 100 + 3 * 0) / 4 = 25
  // n2: a skipped -> (3 * 0) / 3 = 0
  // n3: (1 * 0 + 3 * 100) / 4 = 75
  EXPECT_EQ(d.node_index, 2);
  EXPECT_NEAR(d.explanation->nodes[0].total, 25, 1e-9);
  EXPECT_NEAR(d.explanation->nodes[1].total, 0, 1e-9);
  EXPECT_NEAR(d.explanation->nodes[2].total, 75, 1e-9);
  EXPECT_EQ(d.explanation->nodes[1].terms[0].state, TermState::kSkipped);
  EXPECT_EQ(d.explanation->nodes[1].terms[0].weight, 0);
}

TEST(DecideTest, StaleAndNonFiniteValuesCountAsMissing) {
 for (bool prepare : {false, true}) {
  Fixture f;
  f.prepare = prepare;
  f.nodes = {MakeNode("n1"), MakeNode("n2"), MakeNode("n3"), MakeNode("n4")};
  f.columns = {Column({1, 2, 3, 4})};
  f.columns[0].time_ms[0] = kNow - 60001;  // older than maxStaleness 60s
  f.columns[0].values[1] = std::numeric_limits<double>::infinity();
  f.columns[0].time_ms[2] = 0;  // no sample
  Decision d = f.Run(MetricsOnly({Term("m", 1, Direction::kLower,
                                       MissingPolicy::kWorst)}));
  ASSERT_TRUE(d.ok());
  // Only n4 is usable: the best (and worst) of one value scores 100.
  EXPECT_EQ(d.node_index, 3);
  EXPECT_EQ(d.explanation->nodes[0].terms[0].state, TermState::kMissing);
  EXPECT_EQ(d.explanation->nodes[0].total, 0);
  // Exactly at the limit is still fresh.
  f.columns[0].time_ms[0] = kNow - 60000;
  d = f.Run(MetricsOnly({Term("m", 1, Direction::kLower,
                              MissingPolicy::kWorst)}));
  EXPECT_EQ(d.node_index, 0);  // 1 < 4
  // -Inf and NaN are missing too; so is everything 1 ms past the limit.
  f.columns[0].values = {-std::numeric_limits<double>::infinity(), kNaN, 3, 4};
  f.columns[0].time_ms = {kNow, kNow, kNow - 60001, kNow - 60001};
  d = f.Run(MetricsOnly({Term("m", 1, Direction::kLower,
                              MissingPolicy::kWorst)}));
  EXPECT_EQ(d.fallback_reason, FallbackReason::kNoUsableData) << prepare;
  // Only n3 exactly at the limit: fresh, the others are not.
  f.columns[0].time_ms[2] = kNow - 60000;
  d = f.Run(MetricsOnly({Term("m", 1, Direction::kLower,
                              MissingPolicy::kWorst)}));
  EXPECT_EQ(d.mode, ScoringMode::kMetrics);
  EXPECT_EQ(d.node_index, 2);
  EXPECT_EQ(d.explanation->nodes[3].terms[0].state, TermState::kMissing);
 }
}

TEST(DecideTest, FallbackModes) {
  ScoringConfig cfg;  // built-ins at weight 1
  cfg.metrics = {Term("m")};
  Fixture f;
  // n1 half full, n2 empty: leastAllocated prefers n2.
  f.nodes = {MakeNode("n1").Requested(2000, 4 * kGi), MakeNode("n2")};
  f.columns = {Column({kNaN, kNaN})};
  Decision d = f.Run(cfg);
  EXPECT_EQ(d.mode, ScoringMode::kFallback);
  EXPECT_EQ(d.fallback_reason, FallbackReason::kNoUsableData);
  EXPECT_EQ(d.node_index, 1);

  f.columns = {Column({1, 2})};  // n1 is better by the metric
  d = f.Run(cfg, 1, true, /*force_fallback=*/true);
  EXPECT_EQ(d.mode, ScoringMode::kFallback);
  EXPECT_EQ(d.fallback_reason, FallbackReason::kForced);
  EXPECT_EQ(d.node_index, 1);
  EXPECT_EQ(d.terms[0].state, TermState::kUnused);

  ScoringConfig no_metrics;
  d = f.Run(no_metrics);
  EXPECT_EQ(d.fallback_reason, FallbackReason::kNoMetrics);

  // No columns at all from the caller: no usable data.
  f.columns.clear();
  d = f.Run(cfg);
  EXPECT_EQ(d.fallback_reason, FallbackReason::kNoUsableData);
}

TEST(DecideTest, BuiltinTermsUseKubeSchedulerFormulas) {
  Fixture f;
  f.pod = MakePod().Req(1000, 1 * kGi);
  f.nodes = {MakeNode("n1").Capacity(4000, 8 * kGi).Requested(2000, 1 * kGi)};
  ScoringConfig cfg;
  cfg.builtins[BuiltinTerm::kRecentPlacements] = 0;
  cfg.kube = KubeVersion{.minor = 35};
  Decision d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  // leastAllocated: cpu (4000 - 3000) * 100 / 4000 = 25,
  // memory (8Gi - 2Gi) * 100 / 8Gi = 75 -> (25 + 75) / 2 = 50.
  EXPECT_EQ(d.terms[0].name, BuiltinTermName(BuiltinTerm::kLeastAllocated));
  EXPECT_EQ(d.terms[0].score, 50);
  // balancedAllocation, 1.35: 3000/4000 = 0.75, 2Gi/8Gi = 0.25,
  // std = 0.25 -> (1 - 0.25) * 100 = 75.
  EXPECT_EQ(d.terms[1].score, 75);
  EXPECT_DOUBLE_EQ(d.score, 62.5);  // (50 + 75) / 2
  // 1.36 on (the default): without the pod 2000/4000 = 0.5 and 1Gi/8Gi =
  // 0.125, std 0.1875 -> 81.25 -> 81; 50 + (50 + 75 - 81) / 2 = 72.
  cfg.kube = KubeVersion{};
  d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.terms[0].score, 50);
  EXPECT_EQ(d.terms[1].score, 72);
  EXPECT_DOUBLE_EQ(d.score, 61);  // (50 + 72) / 2
}

// Every plugin that scores is in the Scheduled event's summary, pod
// affinity and topology spread among them.
TEST(DecideTest, SummaryNamesEveryPluginThatScored) {
  constexpr char kHost[] = "kubernetes.io/hostname";
  const Pod web = MakePod("web-0").Label("app", "web");
  Fixture f;
  f.nodes = {MakeNode("n1").Label(kHost, "n1").Placed(web),
             MakeNode("n2").Label(kHost, "n2")};
  f.pod = MakePod("web-1")
              .Label("app", "web")
              .Req(100, 100 * kMi)
              .PreferPodAntiAffinity(50, testing::Term("app", "web", kHost))
              .Spread(1, kHost, UnsatisfiableAction::kScheduleAnyway, "app",
                      "web");
  ScoringConfig cfg;
  cfg.builtins[BuiltinTerm::kRecentPlacements] = 0;
  Decision d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "n2");
  const std::string summary = SummarizeTerms(d.score, d.mode, d.terms);
  for (const char* term : {"interPodAffinity 100.0 (w=2)",
                           "podTopologySpread 100.0 (w=2)", "leastAllocated",
                           "balancedAllocation"}) {
    EXPECT_THAT(summary, HasSubstr(term));
  }
}

// "Spot nodes first, then on-demand": a preferred node affinity outweighs
// leastAllocated, as in kube-scheduler (NodeAffinity weight 2, normalised
// to 100 on the preferred nodes).
TEST(DecideTest, PreferredNodeAffinityFillsPreferredNodesFirst) {
  Fixture f;
  f.nodes = {MakeNode("spot-1").Label("lifecycle", "spot").Requested(3000, 0),
             MakeNode("od-1").Label("lifecycle", "on-demand"),
             MakeNode("od-2").Label("lifecycle", "on-demand")};
  NodeSelectorTerm spot;
  spot.match_expressions.push_back(
      {"lifecycle", SelectorOperator::kIn, {"spot"}});
  f.pod.preferred_node_affinity = {{.weight = 1, .preference = spot}};
  ScoringConfig cfg;
  cfg.builtins[BuiltinTerm::kRecentPlacements] = 0;
  Decision d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "spot-1");
  EXPECT_THAT(SummarizeTerms(d.score, d.mode, d.terms),
              HasSubstr("nodeAffinity 100.0 (w=2)"));
  // Weight 0 turns it off: the emptier on-demand nodes win.
  cfg.builtins[BuiltinTerm::kNodeAffinity] = 0;
  d = f.Run(cfg);
  EXPECT_NE(f.nodes[d.node_index].node.name, "spot-1");
}

// The configured addedAffinity applies to every pod: its required terms
// filter with their own reason, its preferred terms score.
TEST(DecideTest, AddedAffinityAppliesToEveryPod) {
  Fixture f;
  f.nodes = {MakeNode("a").Label("pool", "batch"),
             MakeNode("b").Label("pool", "web"),
             MakeNode("c").Label("pool", "web").Label("disk", "ssd")};
  ScoringConfig cfg;
  cfg.builtins[BuiltinTerm::kRecentPlacements] = 0;
  NodeSelectorTerm web;
  web.match_expressions.push_back({"pool", SelectorOperator::kIn, {"web"}});
  cfg.added_affinity = {web};
  NodeSelectorTerm ssd;
  ssd.match_expressions.push_back({"disk", SelectorOperator::kExists, {}});
  cfg.added_preferred_affinity = {{.weight = 10, .preference = ssd}};
  Decision d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "c");
  EXPECT_EQ(d.explanation->nodes[0].filter_reason,
            "node(s) didn't match scheduler-enforced node affinity");
}

// PreferNoSchedule taints: avoided while another node fits, counted and
// normalised in reverse as kube-scheduler does; tolerated ones do not count.
TEST(DecideTest, PreferNoScheduleTaintsAreAvoided) {
  Fixture f;
  f.nodes = {MakeNode("leaving").Taint("autoscaler/scale-down", "",
                                       TaintEffect::kPreferNoSchedule),
             MakeNode("staying").Requested(2000, 0)};
  ScoringConfig cfg;
  cfg.builtins[BuiltinTerm::kRecentPlacements] = 0;
  Decision d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "staying");
  const NodeExplanation& leaving = d.explanation->nodes[0];
  ASSERT_TRUE(leaving.feasible);
  bool found = false;
  for (const TermResult& t : leaving.terms) {
    if (t.name != "taintToleration") continue;
    found = true;
    EXPECT_EQ(t.raw, 1);
    EXPECT_EQ(t.score, 0);
    EXPECT_EQ(t.weight, 3);
  }
  EXPECT_TRUE(found);
  // Still placed there when nothing else fits.
  f.nodes[1] = MakeNode("staying").Requested(4000, 0);
  d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "leaving");
  // A pod that tolerates the taint has no reason to avoid it.
  f.nodes[1] = MakeNode("staying").Requested(2000, 0);
  f.pod = MakePod().Req(100, 100 * kMi).Tolerate(
      "autoscaler/scale-down", TolerationOperator::kExists, "",
      TaintEffect::kPreferNoSchedule);
  d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "leaving");
  EXPECT_THAT(SummarizeTerms(d.score, d.mode, d.terms),
              Not(HasSubstr("taintToleration")));
}

TEST(DecideTest, ImageLocalityPrefersNodesThatHoldTheImage) {
  Fixture f;
  f.nodes = {MakeNode("cold"), MakeNode("warm")};
  f.nodes[1].node.images.push_back(
      InternImageName("decide-test/app:1", int64_t{900} << 20));
  f.pod.containers[0].image = "decide-test/app:1";
  ScoringConfig cfg;
  cfg.builtins[BuiltinTerm::kRecentPlacements] = 0;
  Decision d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(f.nodes[d.node_index].node.name, "warm");
  // 900 MB held by 1 of 2 nodes: 450 MB, 100 * (450 - 23) / 977 = 43.
  EXPECT_THAT(SummarizeTerms(d.score, d.mode, d.terms),
              HasSubstr("imageLocality 43.0 (w=1)"));
}

TEST(DecideTest, BalancedAllocationIsSkippedForBestEffortPods) {
  ScoringConfig cfg;
  cfg.builtins[BuiltinTerm::kRecentPlacements] = 0;
  Fixture f;
  f.pod = MakePod();  // no requests
  f.nodes = {MakeNode("n1").Capacity(4000, 8 * kGi).Requested(2000, 1 * kGi)};
  Decision d = f.Run(cfg);
  ASSERT_TRUE(d.ok());
  // leastAllocated over non-zero requests: cpu 2000 + 100 default,
  // (4000 - 2100) * 100 / 4000 = 47; memory 1Gi + 200Mi,
  // (8192 - 1224) * 100 / 8192 = 85 -> (47 + 85) / 2 = 66.
  EXPECT_EQ(d.terms[0].score, 66);
  EXPECT_EQ(d.terms[1].state, TermState::kUnused);
  EXPECT_DOUBLE_EQ(d.score, 66);  // balancedAllocation left out
}

// balancedAllocation alone, by the cluster's release: 1.35 scores the
// balance with the pod, 1.36 how much the pod improves it.
TEST(DecideTest, BalancedAllocationFollowsTheClusterRelease) {
  Fixture f;
  f.pod = MakePod().Req(1000, 4 * kGi);
  f.nodes = {MakeNode("empty"), MakeNode("cpu-heavy").Requested(3000, 0)};
  for (int minor : {35, 36}) {
    ScoringConfig cfg;
    cfg.builtins[BuiltinTerm::kLeastAllocated] = 0;
    cfg.builtins[BuiltinTerm::kRecentPlacements] = 0;
    cfg.kube = KubeVersion{.minor = minor};
    Decision d = f.Run(cfg);
    ASSERT_TRUE(d.ok());
    // empty: with the pod 1000/4000 = 0.25 and 4Gi/8Gi = 0.5 -> std 0.125
    // -> 87; without 100. cpu-heavy: with 4000/4000 = 1 and 0.5 -> std
    // 0.25 -> 75; without 0.75 and 0 -> std 0.375 -> 62.
    // 1.35: 87 and 75. 1.36: 50 + (50 + 87 - 100) / 2 = 68 and
    // 50 + (50 + 75 - 62) / 2 = 81.
    const bool change = minor >= 36;
    EXPECT_EQ(f.nodes[d.node_index].node.name, change ? "cpu-heavy" : "empty")
        << "1." << minor;
    ASSERT_TRUE(d.explanation.has_value());
    EXPECT_EQ(d.explanation->nodes[0].total, change ? 68 : 87);
    EXPECT_EQ(d.explanation->nodes[1].total, change ? 81 : 75);
  }
}

TEST(DecideTest, RecentPlacementsSpreadABurst) {
  ScoringConfig cfg = MetricsOnly({Term("m")});
  cfg.builtins[BuiltinTerm::kRecentPlacements] = 1;
  cfg.penalty_per_placement = 30;
  Fixture f;
  f.nodes = ThreeNodes();
  f.columns = {Column({1, 2, 3})};
  f.placements = {2, 0, 0};
  Decision d = f.Run(cfg);
  // n1: (100 + (100 - 2 * 30)) / 2 = 70; n2: (50 + 100) / 2 = 75.
  EXPECT_EQ(d.node_index, 1);
  EXPECT_DOUBLE_EQ(d.score, 75);
  EXPECT_NEAR(d.explanation->nodes[0].total, 70, 1e-9);
}

TEST(DecideTest, NoFeasibleNodeGivesTheKubeSchedulerMessage) {
  Fixture f;
  f.pod = MakePod().Req(3000, kGi).NodeSelector("zone", "a");
  f.nodes = {MakeNode("a").Label("zone", "a").Requested(2000, 0),
             MakeNode("b").Label("zone", "a").Requested(2000, 0),
             MakeNode("c").Label("zone", "a").Requested(2000, 0),
             MakeNode("d").Label("zone", "b"), MakeNode("e")};
  Decision d = f.Run(MetricsOnly({}));
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.node_index, -1);
  EXPECT_EQ(d.num_feasible, 0);
  // Reasons sorted as strings, as kube-scheduler sorts them.
  EXPECT_EQ(d.filter_summary,
            "0/5 nodes are available: 2 node(s) didn't match Pod's node "
            "affinity/selector, 3 Insufficient cpu.");
}

TEST(DecideTest, NoFeasibleNodeMixedReasons) {
  Fixture f;
  f.pod = MakePod().Req(3000, kGi);
  f.nodes = {MakeNode("a").Requested(2000, 0), MakeNode("b").Requested(2000, 0),
             MakeNode("c").Requested(2000, 0), MakeNode("d").Unschedulable(),
             MakeNode("e").NotReady()};
  Decision d = f.Run(MetricsOnly({}));
  EXPECT_EQ(d.filter_summary,
            "0/5 nodes are available: 1 node(s) had untolerated taint(s), 1 "
            "node(s) were unschedulable, 3 Insufficient cpu.");
  EXPECT_EQ(d.explanation->nodes[0].filter_reason, "Insufficient cpu");
  EXPECT_THAT(FormatExplanation(*d.explanation),
              HasSubstr("no node: 0/5 nodes are available"));
}

TEST(DecideTest, UnsupportedConstraintsAreNeverPlaced) {
  Fixture f;
  f.nodes = ThreeNodes();
  f.pod.has_resource_claims = true;
  Decision d = f.Run(MetricsOnly({}));
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.filter_summary,
            "0/3 nodes are available: pod requires dynamic resource "
            "allocation (spec.resourceClaims), which this scheduler does not "
            "support yet.");
}

// A request only a DeviceClass could meet (1.36 on) keeps the pod off
// the nodes that do not advertise it; one whose device plugin does takes
// it.
TEST(DecideTest, DeviceClassResourcesOnlyWhereAdvertised) {
  Fixture f;
  f.nodes = {MakeNode("a"), MakeNode("b").Scalar("example.com/gpu", 1, 0),
             MakeNode("c")};
  f.pod = MakePod().Req(100, 100 * kMi).Scalar("example.com/gpu", 1);
  const DeviceClassResources classes = IndexDeviceClasses(
      {{"gpu", DeviceClass{.name = "gpu",
                           .extended_resource_name = "example.com/gpu"}}});
  f.device_resources = &classes;
  Decision d = f.Run(MetricsOnly({}));
  ASSERT_TRUE(d.ok()) << d.filter_summary;
  EXPECT_EQ(f.nodes[d.node_index].node.name, "b");
  EXPECT_EQ(d.num_feasible, 1);
  f.nodes[1] = MakeNode("b");
  d = f.Run(MetricsOnly({}));
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.filter_summary,
            "0/3 nodes are available: 3 node(s) could provide example.com/gpu "
            "only through DeviceClass gpu (dynamic resource allocation is not "
            "supported by this scheduler yet).");
}

TEST(DecideTest, ExplanationTable) {
  Fixture f;
  f.nodes = {MakeNode("kubeworker1"), MakeNode("kubeworker2"),
             MakeNode("kubeworker3").Unschedulable()};
  f.columns = {Column({61664.877, 1200.5, 10})};
  ScoringConfig cfg = MetricsOnly({Term("net.http.request.time", 2)});
  cfg.builtins[BuiltinTerm::kLeastAllocated] = 1;
  Decision d = f.Run(cfg);
  std::string table = FormatExplanation(*d.explanation);
  // kubeworker2: (2 * 100 + 1 * 97) / 3 = 99; kubeworker1: (0 + 97) / 3.
  // leastAllocated: cpu (4000 - 100) * 100 / 4000 = 97,
  // memory (8192Mi - 100Mi) * 100 / 8192Mi = 98 -> (97 + 98) / 2 = 97.
  // balancedAllocation (1.36 on, the default): with the pod 100/4000 =
  // 0.025 and 100Mi/8192Mi = 0.0122, std 0.0064 -> 99.36 -> 99; without
  // 100; 50 + (50 + 99 - 100) / 2 = 74.
  EXPECT_EQ(table,
            "node         total  net.http.request.time    leastAllocated     "
            "balancedAllocation  recentPlacements\n"
            "kubeworker2  99.00  1200.5 -> 100.00 (w=2)   97 -> 97.00 (w=1)  "
            "74 (unused)         0 (unused)\n"
            "kubeworker1  32.33  61664.877 -> 0.00 (w=2)  97 -> 97.00 (w=1)  "
            "74 (unused)         0 (unused)\n"
            "kubeworker3  -      filtered: node(s) were unschedulable\n"
            "best node: kubeworker2 (mode: metrics)\n");
}

TEST(DecideTest, WithoutExplainNoExplanation) {
  Fixture f;
  f.nodes = ThreeNodes();
  f.columns = {Column({1, 2, 3})};
  Decision d = f.Run(MetricsOnly({Term("m")}), 1, /*explain=*/false);
  EXPECT_TRUE(d.ok());
  EXPECT_FALSE(d.explanation.has_value());
}

TEST(NodeTableTest, UpdateMatchesRebuild) {
  std::vector<NodeInfo> nodes = ThreeNodes();
  NodeTable table;
  table.Build(nodes);
  nodes[1].AddPod(MakePod().Req(500, kGi), KubeVersion{});
  nodes[1].node.taints.push_back({"k", "v", TaintEffect::kNoExecute});
  table.Update(1, nodes[1]);
  NodeTable fresh;
  fresh.Build(nodes);
  EXPECT_EQ(table.fit_columns().free_cpu[1], fresh.fit_columns().free_cpu[1]);
  EXPECT_EQ(table.fit_columns().free_cpu[1], 3500);
  EXPECT_EQ(table.flags()[1], NodeTable::kHardTaints);
  EXPECT_EQ(table.score_columns().free100_cpu[1],
            fresh.score_columns().free100_cpu[1]);
  EXPECT_EQ(table.score_columns().free100_cpu[1],
            (nodes[1].node.allocatable.milli_cpu - 500) * 100.0);
  EXPECT_EQ(table.score_columns().balance[1], fresh.score_columns().balance[1]);
  EXPECT_EQ(table.score_columns().balance[0], 100);  // empty
  // 500/4000 = 0.125 and 1Gi/8Gi = 0.125: balanced.
  EXPECT_EQ(table.score_columns().balance[1], 100);
  nodes[1].AddPod(MakePod().Req(1500, 0), KubeVersion{});
  table.Update(1, nodes[1]);
  // 2000/4000 = 0.5 and 0.125: std 0.1875 -> 81.25 -> 81.
  EXPECT_EQ(table.score_columns().balance[1], 81);
}

// ---- Properties over generated clusters ---------------------------------

struct Generated {
  std::vector<NodeInfo> nodes;
  std::vector<MetricColumn> columns;
  std::vector<int32_t> placements;
  ScoringConfig cfg;
  Pod pod;
};

Generated Generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  Generated g;
  int n = uniform(1, 40);
  int m = uniform(0, 4);
  for (int i = 0; i < n; ++i) {
    auto b = MakeNode(absl::StrCat("node-", i))
                 .Capacity(uniform(1, 16) * 1000, uniform(1, 64) * kGi,
                           uniform(1, 30));
    int pods = uniform(0, 10);
    b.Requested(uniform(0, 16000), uniform(0, 64) * kGi, pods);
    b.NonZeroRequested(uniform(0, 16000), uniform(0, 64) * kGi);
    if (uniform(0, 9) == 0) b.Unschedulable();
    if (uniform(0, 9) == 0) b.Taint("k", "v");
    if (uniform(0, 19) == 0) b.NotReady();
    b.Label("zone", uniform(0, 1) ? "a" : "b");
    g.nodes.push_back(b);
  }
  const MissingPolicy policies[] = {MissingPolicy::kNeutral,
                                    MissingPolicy::kWorst,
                                    MissingPolicy::kExclude,
                                    MissingPolicy::kSkip};
  for (int j = 0; j < m; ++j) {
    MetricTerm t = Term(absl::StrCat("m", j), uniform(1, 5),
                        uniform(0, 1) ? Direction::kLower : Direction::kHigher,
                        policies[uniform(0, 3)]);
    int norm = uniform(0, 3);
    t.normalization.type = norm == 0   ? NormalizationType::kMinMax
                           : norm == 1 ? NormalizationType::kRatio
                           : norm == 2 ? NormalizationType::kRange
                                       : NormalizationType::kTarget;
    t.normalization.min = 0;
    t.normalization.max = 100;
    t.normalization.target = 60;
    g.cfg.metrics.push_back(t);
    MetricColumn col;
    for (int i = 0; i < n; ++i) {
      int r = uniform(0, 19);
      col.values.push_back(r == 0 ? kNaN : uniform(0, 120) + uniform(0, 9) / 10.0);
      col.time_ms.push_back(r == 1 ? kNow - 3600000 : kNow - 1000);
    }
    g.columns.push_back(col);
  }
  g.cfg.builtins[BuiltinTerm::kLeastAllocated] = uniform(0, 2);
  g.cfg.builtins[BuiltinTerm::kBalancedAllocation] = uniform(0, 2);
  g.cfg.builtins[BuiltinTerm::kRecentPlacements] = uniform(0, 2);
  for (int i = 0; i < n; ++i) g.placements.push_back(uniform(0, 3));
  g.pod = MakePod().Req(uniform(0, 4) * 250, uniform(0, 4) * 256 * kMi);
  if (uniform(0, 4) == 0) g.pod.node_selector = {{"zone", "a"}};
  // Every supported release's rules, from the seed (the draws above stay
  // those of earlier seeds).
  g.cfg.kube.minor = KubeVersion::kOldestMinor +
                     static_cast<int>(seed % (KubeVersion::kNewestMinor -
                                              KubeVersion::kOldestMinor + 1));
  return g;
}

Decision RunGenerated(const Generated& g, uint64_t seed, Workspace& ws,
             const NodeTable* table = nullptr) {
  DecideInput in{.pod = &g.pod,
                 .nodes = &g.nodes,
                 .table = table,
                 .metrics = &g.columns,
                 .recent_placements = &g.placements,
                 .now_ms = kNow,
                 .seed = seed,
                 .explain = true};
  return Decide(in, g.cfg, ws);
}

TEST(DecidePropertyTest, ScoresInRangeAndTotalsMatchTheTerms) {
  Workspace ws;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Generated g = Generate(seed);
    Decision d = RunGenerated(g, seed, ws);
    ASSERT_TRUE(d.explanation.has_value());
    for (const NodeExplanation& ne : d.explanation->nodes) {
      if (!ne.feasible) continue;
      EXPECT_GE(ne.total, 0) << seed;
      EXPECT_LE(ne.total, 100) << seed;
      // The fast path's total equals the weighted mean of the reference
      // terms (the plugins' references), built-ins included.
      double sum = 0, weights = 0;
      for (const TermResult& t : ne.terms) {
        EXPECT_GE(t.score, 0);
        EXPECT_LE(t.score, 100);
        sum += t.weight * t.score;
        weights += t.weight;
      }
      EXPECT_NEAR(ne.total, weights > 0 ? sum / weights : 0, 1e-9)
          << "seed " << seed << " node " << ne.node;
    }
    if (d.ok()) {
      // The winner has the highest total.
      for (const NodeExplanation& ne : d.explanation->nodes) {
        if (ne.feasible) {
          EXPECT_LE(ne.total, d.score) << seed;
        }
      }
    }
  }
}

TEST(DecidePropertyTest, ChoiceDoesNotDependOnNodeOrder) {
  Workspace ws;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Generated g = Generate(seed);
    Decision d = RunGenerated(g, seed, ws);
    // Reverse and rotate the node list (and its aligned columns).
    Generated p = g;
    std::vector<size_t> order(g.nodes.size());
    std::iota(order.begin(), order.end(), 0);
    std::reverse(order.begin(), order.end());
    std::rotate(order.begin(), order.begin() + order.size() / 3, order.end());
    for (size_t i = 0; i < order.size(); ++i) {
      p.nodes[i] = g.nodes[order[i]];
      p.placements[i] = g.placements[order[i]];
      for (size_t m = 0; m < g.columns.size(); ++m) {
        p.columns[m].values[i] = g.columns[m].values[order[i]];
        p.columns[m].time_ms[i] = g.columns[m].time_ms[order[i]];
      }
    }
    Decision q = RunGenerated(p, seed, ws);
    ASSERT_EQ(d.ok(), q.ok()) << seed;
    if (!d.ok()) {
      EXPECT_EQ(d.filter_summary, q.filter_summary);
      continue;
    }
    EXPECT_EQ(g.nodes[d.node_index].node.name, p.nodes[q.node_index].node.name)
        << seed;
    EXPECT_EQ(d.score, q.score);
  }
}

TEST(DecidePropertyTest, TiesBreakBySeed) {
  Fixture f;
  for (int i = 0; i < 8; ++i) f.nodes.push_back(MakeNode(absl::StrCat("n", i)));
  std::set<int> chosen;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    Decision a = f.Run(MetricsOnly({}), seed, false);
    Decision b = f.Run(MetricsOnly({}), seed, false);
    EXPECT_EQ(a.node_index, b.node_index);  // same seed, same choice
    chosen.insert(a.node_index);
  }
  EXPECT_GT(chosen.size(), 4u);  // different seeds spread the choice
}

TEST(DecidePropertyTest, ImprovingAMetricNeverLowersTheRank) {
  Workspace ws;
  std::mt19937_64 rng(7);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Generated g = Generate(seed);
    if (g.columns.empty()) continue;
    Decision before = RunGenerated(g, seed, ws);
    if (!before.ok()) continue;
    auto rank = [](const Decision& d, size_t node) {
      const auto& nodes = d.explanation->nodes;
      int better = 0;
      for (const NodeExplanation& ne : nodes) {
        if (ne.feasible && ne.total > nodes[node].total) ++better;
      }
      return better;
    };
    size_t node = rng() % g.nodes.size();
    if (!before.explanation->nodes[node].feasible) continue;
    size_t m = rng() % g.columns.size();
    // A target has no better direction: moving towards it raises the
    // score, and past it lowers it.
    if (g.cfg.metrics[m].normalization.type == NormalizationType::kTarget) {
      continue;
    }
    double& v = g.columns[m].values[node];
    if (std::isnan(v) || g.columns[m].time_ms[node] < kNow - 60000) continue;
    int r0 = rank(before, node);
    v += g.cfg.metrics[m].direction == Direction::kLower ? -7.5 : 7.5;
    Decision after = RunGenerated(g, seed, ws);
    ASSERT_TRUE(after.explanation->nodes[node].feasible);
    EXPECT_LE(rank(after, node), r0) << "seed " << seed;
  }
}

TEST(DecidePropertyTest, FitNeverExceedsAllocatable) {
  // Place pods one after another, charging the chosen node, until none fits:
  // no node's requests ever exceed its allocatable.
  Workspace ws;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    Generated g = Generate(seed);
    for (NodeInfo& n : g.nodes) {
      n.requested = {};
      n.non_zero_requested = {};
    }
    NodeTable table;
    table.Build(g.nodes);
    std::mt19937_64 rng(seed);
    for (int round = 0; round < 400; ++round) {
      g.pod = MakePod().Req(static_cast<int64_t>(rng() % 2000),
                            static_cast<int64_t>(rng() % (4 * kGi)));
      Decision d = RunGenerated(g, seed + round, ws, &table);
      if (!d.ok()) break;
      NodeInfo& n = g.nodes[d.node_index];
      n.AddPod(g.pod, g.cfg.kube);
      table.Update(d.node_index, n);
      EXPECT_LE(n.requested.milli_cpu, n.node.allocatable.milli_cpu);
      EXPECT_LE(n.requested.memory, n.node.allocatable.memory);
      EXPECT_LE(n.requested.pods, n.node.allocatable.pods);
    }
  }
}

// Decide keeps each block's resource scores for the last pod shape and
// computes a block again when one of its rows changed or the table was
// built again: bursts of pods of three shapes, each charged to its node,
// decide exactly as a workspace that keeps nothing.
TEST(DecidePropertyTest, KeptResourceScoresFollowTheTable) {
  std::mt19937_64 rng(11);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % n); };
  std::vector<NodeInfo> nodes;
  for (int i = 0; i < 600; ++i) {  // three blocks of rows
    nodes.push_back(MakeNode(absl::StrCat("n", i))
                        .Capacity(4000 + pick(60000), (4 + pick(250)) * kGi));
  }
  NodeTable table;
  table.Build(nodes);
  const ScoringConfig cfg;  // the built-ins only
  const Pod shapes[] = {MakePod().Req(100, 128 * kMi),
                        MakePod().Req(1500, 3 * kGi),
                        MakePod().Req(700, 128 * kMi)};
  Workspace kept;
  int decided = 0;
  for (int round = 0; round < 300; ++round) {
    if (round == 150) {  // a change the table hears of only by a Build
      nodes[0].node.allocatable.milli_cpu *= 2;
      table.Build(nodes);
    }
    const Pod& pod = shapes[round / 7 % 3];
    const DecideInput in{.pod = &pod,
                         .nodes = &nodes,
                         .table = &table,
                         .now_ms = kNow,
                         .seed = static_cast<uint64_t>(round)};
    const Decision d = Decide(in, cfg, kept);
    Workspace fresh;
    const Decision want = Decide(in, cfg, fresh);
    ASSERT_EQ(d.node_index, want.node_index) << "round " << round;
    ASSERT_EQ(d.score, want.score) << "round " << round;
    if (!d.ok()) break;
    ++decided;
    NodeInfo& n = nodes[d.node_index];
    n.AddPod(pod, cfg.kube);
    table.Update(d.node_index, n);
  }
  EXPECT_EQ(decided, 300);
}

TEST(DecidePropertyTest, FastFilterAgreesWithCheckNode) {
  Workspace ws;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Generated g = Generate(seed);
    NodeTable table;
    table.Build(g.nodes);
    Decision d = RunGenerated(g, seed, ws, &table);
    PodFilter pf = MakePodFilter(g.pod, g.cfg.kube);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      bool fits = CheckNode(pf, g.nodes, i).feasible();
      bool excluded = absl::StrContains(
          d.explanation->nodes[i].filter_reason, "no usable value");
      EXPECT_EQ(d.explanation->nodes[i].feasible, fits && !excluded)
          << "seed " << seed << " node " << i;
    }
  }
}

// The scores of the metric terms equal the reference NormalizeValue and
// MissingScore (plugins/metric_terms.h) over stats computed here from the raw columns,
// with or without a prepared MetricTable, and the decision is the same.
TEST(DecidePropertyTest, MetricScoresMatchTheReference) {
  Workspace ws, ws_prepared;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Generated g = Generate(seed);
    // Some columns all fresh (the prepared columns' shortcut), some sampled
    // a little earlier: partly stale at the boundary.
    if (seed % 3 == 1) {
      for (MetricColumn& col : g.columns) {
        for (int64_t& ts : col.time_ms) ts = kNow - 1000;
      }
    }
    if (seed % 3 == 0) {
      for (MetricColumn& col : g.columns) {
        for (size_t i = 0; i < col.time_ms.size(); i += 2) {
          col.time_ms[i] = kNow - 60000 - static_cast<int64_t>(i % 4 == 0);
        }
      }
    }
    Decision d = RunGenerated(g, seed, ws);
    MetricTable prepared;
    prepared.Build(g.columns, g.nodes.size());
    DecideInput in{.pod = &g.pod,
                   .nodes = &g.nodes,
                   .metrics = &g.columns,
                   .metric_table = &prepared,
                   .recent_placements = &g.placements,
                   .now_ms = kNow,
                   .seed = seed,
                   .explain = true};
    Decision q = Decide(in, g.cfg, ws_prepared);
    ASSERT_EQ(d.node_index, q.node_index) << seed;
    EXPECT_EQ(d.score, q.score) << seed;
    EXPECT_EQ(d.filter_summary, q.filter_summary) << seed;
    if (!d.ok() || d.mode != ScoringMode::kMetrics) continue;
    const std::vector<NodeExplanation>& nodes = d.explanation->nodes;
    for (size_t m = 0; m < g.cfg.metrics.size(); ++m) {
      const MetricTerm& t = g.cfg.metrics[m];
      auto usable = [&](size_t i) {
        double v = g.columns[m].values[i];
        int64_t ts = g.columns[m].time_ms[i];
        return std::isfinite(v) && ts != 0 && ts >= kNow - t.max_staleness_ms;
      };
      ColumnStats st;
      st.min = std::numeric_limits<double>::infinity();
      st.max = -st.min;
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (!nodes[i].feasible || !usable(i)) continue;
        ++st.usable;
        st.min = std::min(st.min, g.columns[m].values[i]);
        st.max = std::max(st.max, g.columns[m].values[i]);
      }
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (!nodes[i].feasible) continue;
        const TermResult& r = nodes[i].terms[m];
        EXPECT_EQ(q.explanation->nodes[i].terms[m].score, r.score);
        EXPECT_EQ(q.explanation->nodes[i].total, nodes[i].total);
        if (st.usable == 0) {
          EXPECT_EQ(r.state, TermState::kUnused) << seed;
        } else if (usable(i)) {
          EXPECT_EQ(r.state, TermState::kScored);
          EXPECT_EQ(r.score, NormalizeValue(t.direction, t.normalization, st,
                                            g.columns[m].values[i]))
              << "seed " << seed << " metric " << m << " node " << i;
        } else if (t.missing == MissingPolicy::kExclude) {
          ADD_FAILURE() << "seed " << seed << ": node " << i
                        << " lacks metric " << m << " and was not excluded";
        } else if (t.missing == MissingPolicy::kSkip) {
          EXPECT_EQ(r.state, TermState::kSkipped);
        } else {
          EXPECT_EQ(r.state, TermState::kMissing);
          EXPECT_EQ(r.score, MissingScore(t.missing)) << seed;
        }
      }
    }
  }
}

// The vectorised built-ins against the plugins' scalar references, node by
// node, under both balancedAllocation rules: random allocatables (0
// included), requests past allocatable, empty nodes, random weights. A
// node the kernel flags suspect is recomputed by Decide from the
// references, so only the others must agree; few of the nodes the pod
// fits may be flagged (where both fractions reach 1 the balance is 100
// exactly, and flagged).
TEST(DecidePropertyTest, DenseBuiltinsMatchThePluginReferences) {
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t hi) {  // uniform in [0, hi]
    return static_cast<int64_t>(rng() % static_cast<uint64_t>(hi + 1));
  };
  const double weights[] = {0, 0.5, 1, 2, 3};
  size_t fitting = 0, fitting_suspects = 0;
  for (int round = 0; round < 40; ++round) {
    std::vector<NodeInfo> nodes;
    for (int i = 0; i < 256; ++i) {
      const int64_t cpu = pick(9) == 0 ? 0 : 1 + pick(64000);
      const int64_t mem = pick(9) == 0 ? 0 : 1 + pick(int64_t{256} << 30);
      auto node = MakeNode(absl::StrCat("n", i)).Capacity(cpu, mem);
      if (pick(4) != 0) {  // else empty
        const int64_t rc = pick(cpu + cpu / 2 + 1000);
        const int64_t rm = pick(mem + mem / 2 + kGi);
        node.Requested(rc, rm).NonZeroRequested(rc + 100 * pick(1),
                                                rm + 200 * kMi * pick(1));
      }
      nodes.push_back(node);
    }
    NodeTable table;
    table.Build(nodes);
    // Not best-effort: balancedAllocation skips those.
    Resources pod;
    pod.milli_cpu = 1 + pick(8000);
    pod.memory = 1 + pick(int64_t{32} << 30);
    if (pick(3) == 0) pod.milli_cpu = 0;
    if (pick(3) == 0 && pod.milli_cpu != 0) pod.memory = 0;
    Resources nz = pod;
    if (nz.milli_cpu == 0) nz.milli_cpu = 100;
    if (nz.memory == 0) nz.memory = 200 * kMi;
    for (int minor : {35, 36}) {
      const KubeVersion kube{.minor = minor};
      const double w_la = weights[pick(4)], w_ba = weights[pick(4)];
      std::vector<double> out(nodes.size()), suspect(nodes.size());
      internal::DenseBuiltins(
          table.score_columns(), nodes.size(),
          static_cast<double>(nz.milli_cpu), static_cast<double>(nz.memory),
          static_cast<double>(pod.milli_cpu), static_cast<double>(pod.memory),
          w_la, w_ba, BalancedAllocationScoresChange(kube), out.data(),
          suspect.data());
      for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeInfo& n = nodes[i];
        const Resources& a = n.node.allocatable;
        if (n.requested.milli_cpu + pod.milli_cpu <= a.milli_cpu &&
            n.requested.memory + pod.memory <= a.memory) {
          ++fitting;
          fitting_suspects += suspect[i] != 0;
        }
        if (suspect[i] != 0) continue;
        const int64_t la = LeastAllocatedScore(
            a.milli_cpu, n.non_zero_requested.milli_cpu + nz.milli_cpu,
            a.memory, n.non_zero_requested.memory + nz.memory);
        const int64_t ba = BalancedAllocationScore(kube, a, n.requested, pod);
        EXPECT_EQ(out[i], w_la * static_cast<double>(la) +
                              w_ba * static_cast<double>(ba))
            << "1." << minor << " round " << round << " node " << i << ": la "
            << la << " ba " << ba;
      }
    }
  }
  EXPECT_LT(fitting_suspects, fitting / 100);
}

// The vectorised built-ins equal kube-scheduler's integer formulas,
// including where (allocatable - requested) * 100 / allocatable is an
// integer, around it, and for amounts past the range the fast path is
// proven for.
TEST(DecidePropertyTest, BuiltinsMatchTheIntegerFormulas) {
  // 49, 98, 196, 103: a * (1 / c) rounds below the integer a / c.
  const int64_t caps[] = {1, 7, 49, 98, 103, 196, 1000, 3000, 4000, 16000, 64 * kGi,
                          (int64_t{1} << 40) + 3, int64_t{1} << 42,
                          (int64_t{1} << 42) + 1, int64_t{1} << 50};
  std::mt19937_64 rng(3);
  for (int64_t cap_cpu : caps) {
    Fixture f;
    for (int64_t cap_mem : caps) {
      for (int k : {0, 1, 25, 33, 50, 99, 100}) {
        for (int64_t off : {-1, 0, 1}) {
          int64_t rc = std::max<int64_t>(0, cap_cpu / 100 * k + off);
          int64_t rm = std::max<int64_t>(
              0, static_cast<int64_t>(rng() % static_cast<uint64_t>(cap_mem)));
          if (k == 50) rm = cap_mem / 2 + off;
          f.nodes.push_back(
              MakeNode(absl::StrCat("n", f.nodes.size()))
                  .Capacity(cap_cpu, cap_mem)
                  .Requested(rc, std::max<int64_t>(0, rm)));
        }
      }
    }
    // The last pod's request is past the range: every node in integers.
    for (const Pod& pod : {Pod(MakePod().Req(100, 100 * kMi)), Pod(MakePod()),
                           Pod(MakePod().Req(1, 1)),
                           Pod(MakePod().Req(1, int64_t{1} << 43))}) {
      for (int minor : {35, 36}) {
        f.pod = pod;
        ScoringConfig cfg;
        cfg.builtins[BuiltinTerm::kRecentPlacements] = 0;
        cfg.kube = KubeVersion{.minor = minor};
        Decision d = f.Run(cfg);
        ASSERT_TRUE(d.explanation.has_value());
        const Resources nz = PodNonZeroRequests(pod, cfg.kube);
        const Resources req = PodRequests(pod, cfg.kube);
        const bool best_effort = req.milli_cpu == 0 && req.memory == 0;
        for (size_t i = 0; i < f.nodes.size(); ++i) {
          const NodeExplanation& ne = d.explanation->nodes[i];
          if (!ne.feasible) continue;
          const NodeInfo& n = f.nodes[i];
          const Resources& a = n.node.allocatable;
          int64_t la = LeastAllocatedScore(
              a.milli_cpu, n.non_zero_requested.milli_cpu + nz.milli_cpu,
              a.memory, n.non_zero_requested.memory + nz.memory);
          int64_t with_pod = ResourceBalanceScore(
              a.milli_cpu, n.requested.milli_cpu + req.milli_cpu, a.memory,
              n.requested.memory + req.memory);
          int64_t without_pod = ResourceBalanceScore(
              a.milli_cpu, n.requested.milli_cpu, a.memory, n.requested.memory);
          int64_t ba =
              minor >= 36 ? 50 + (50 + with_pod - without_pod) / 2 : with_pod;
          double want = best_effort ? static_cast<double>(la)
                                    : static_cast<double>(la + ba) / 2;
          EXPECT_EQ(ne.total, want)
              << "1." << minor << " cpu " << a.milli_cpu << "/"
              << n.requested.milli_cpu << " memory " << a.memory << "/"
              << n.requested.memory;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ms
