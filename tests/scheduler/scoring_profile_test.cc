#include "scheduler/cycle/scoring_profile.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(ScoringProfileTest, TakesTheProfilesPolicyAndTheSharedSettings) {
  absl::StatusOr<Config> c = LoadConfigString(
      "apiVersion: metrics-scheduler/v1alpha1\n"
      "kind: MetricsSchedulerConfiguration\n"
      "backend: {url: http://prometheus:9090}\n"
      "preemption: {minCandidateNodesAbsolute: 7}\n"
      "nodeAffinity:\n"
      "  addedAffinity:\n"
      "    preferredDuringSchedulingIgnoredDuringExecution:\n"
      "      - {weight: 3, preference: {matchExpressions: [{key: zone, "
      "operator: In, values: [a]}]}}\n"
      "profiles:\n"
      "  - schedulerName: metrics-scheduler\n"
      "  - schedulerName: latency-first\n"
      "    metrics:\n"
      "      - name: latency\n"
      "        query: http_latency_seconds\n"
      "        weight: 5\n"
      "        filter: {max: 0.8}\n"
      "        maxStaleness: 1m\n"
      "    builtins: {leastAllocated: 0, taintToleration: 4}\n"
      "    herd: {penaltyPerPlacement: 20, window: 1m}\n",
      "config.yaml");
  ASSERT_TRUE(c.ok()) << c.status();

  const ScoringConfig first = MakeScoringConfig(*c, c->profiles[0]);
  EXPECT_TRUE(first.metrics.empty());
  EXPECT_EQ(first.builtins, BuiltinWeights());

  const ScoringConfig second = MakeScoringConfig(*c, c->profiles[1]);
  ASSERT_EQ(second.metrics.size(), 1u);
  EXPECT_EQ(second.metrics[0].name, "latency");
  EXPECT_EQ(second.metrics[0].weight, 5);
  EXPECT_EQ(second.metrics[0].filter_max, 0.8);
  EXPECT_FALSE(std::isfinite(second.metrics[0].filter_min));  // no min
  EXPECT_EQ(second.metrics[0].max_staleness_ms, 60000);
  EXPECT_EQ(second.builtins[BuiltinTerm::kLeastAllocated], 0);
  EXPECT_EQ(second.builtins[BuiltinTerm::kTaintToleration], 4);
  EXPECT_EQ(second.builtins[BuiltinTerm::kImageLocality],
            BuiltinTermOf(BuiltinTerm::kImageLocality).default_weight);
  EXPECT_EQ(second.penalty_per_placement, 20);
  EXPECT_EQ(second.herd_window_ms, 60000);
  // What every profile shares.
  ASSERT_EQ(second.added_preferred_affinity.size(), 1u);
  EXPECT_EQ(second.added_preferred_affinity[0].weight, 3);
  EXPECT_EQ(second.preemption.min_candidate_nodes_absolute, 7);
  EXPECT_EQ(first.preemption.min_candidate_nodes_absolute, 7);
}

// A filter's scopes go to scoring as written; every metric with a filter
// reads its nodes' bound annotations (which the informer keeps).
TEST(ScoringProfileTest, TakesTheFiltersScopesAndReadsNodeAnnotations) {
  absl::StatusOr<Config> c = LoadConfigString(
      "apiVersion: metrics-scheduler/v1alpha1\n"
      "kind: MetricsSchedulerConfiguration\n"
      "backend: {url: http://prometheus:9090}\n"
      "metrics:\n"
      "  - name: cpu\n"
      "    query: q\n"
      "    filter:\n"
      "      max: 0.85\n"
      "      scopes: [{pods: {minPriority: 1000}, max: 0.7}]\n"
      "  - name: memory\n"
      "    query: q2\n",
      "config.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  const ScoringConfig scoring = MakeScoringConfig(*c, c->profiles[0]);
  ASSERT_EQ(scoring.metrics.size(), 2u);
  const MetricTerm& cpu = scoring.metrics[0];
  EXPECT_EQ(cpu.filter_max, 0.85);
  EXPECT_EQ(cpu.filter_scopes, c->profiles[0].metrics[0].filter.scopes);
  EXPECT_TRUE(cpu.has_scoped_filter());
  // No filter: nothing to override, no annotation read.
  EXPECT_FALSE(scoring.metrics[1].has_filter());
  EXPECT_FALSE(scoring.metrics[1].has_scoped_filter());
}

}  // namespace
}  // namespace ms
