#include "config/config.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scoring/scoring_config.h"

namespace ms {
namespace {

// The two lines every configuration starts with; bodies below begin on
// line 3.
constexpr char kHeader[] =
    "apiVersion: metrics-scheduler/v1alpha1\n"
    "kind: MetricsSchedulerConfiguration\n";

absl::StatusOr<Config> Load(const std::string& body) {
  return LoadConfigString(absl::StrCat(kHeader, body), "file.yaml");
}

TEST(ParseDurationTest, Valid) {
  struct Case {
    const char* text;
    absl::Duration want;
  };
  for (const Case& c : std::vector<Case>{
           {"500ms", absl::Milliseconds(500)},
           {"15s", absl::Seconds(15)},
           {"2m", absl::Minutes(2)},
           {"1h", absl::Hours(1)},
           {"1h30m", absl::Minutes(90)},
           {"1.5s", absl::Milliseconds(1500)},
           {".5s", absl::Milliseconds(500)},
           {"250us", absl::Microseconds(250)},
           {"10ns", absl::Nanoseconds(10)},
           {"0", absl::ZeroDuration()},
           {"0s", absl::ZeroDuration()},
       }) {
    absl::StatusOr<absl::Duration> d = ParseDuration(c.text);
    ASSERT_TRUE(d.ok()) << c.text << ": " << d.status();
    EXPECT_EQ(*d, c.want) << c.text;
  }
}

TEST(ParseDurationTest, Invalid) {
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c : std::vector<Case>{
           {"", "empty"},
           {"15", "missing unit (ns, us, ms, s, m, h)"},
           {"-1s", "must not be signed"},
           {"+1s", "must not be signed"},
           {"1d", "unknown unit \"d\""},
           {"s", "expected a number"},
           {"1.s2", "missing unit (ns, us, ms, s, m, h)"},
           {"1 s", "unknown unit \" s\""},
           {"9999999999999999h", "too large"},
       }) {
    absl::StatusOr<absl::Duration> d = ParseDuration(c.text);
    ASSERT_FALSE(d.ok()) << c.text;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(d.status().message()),
              absl::StrCat("invalid duration \"", c.text, "\": ", c.why,
                           " (examples: 500ms, 15s, 2m, 1h30m)"));
  }
}

TEST(LoadConfigTest, MinimalGivesDefaults) {
  absl::StatusOr<Config> c = Load("");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->profiles[0].scheduler_name, "metrics-scheduler");
  EXPECT_EQ(c->backend.type, BackendType::kPrometheus);
  EXPECT_EQ(c->backend.url, "");
  EXPECT_EQ(c->backend.timeout, absl::Seconds(2));
  EXPECT_EQ(c->backend.token_file, "");
  EXPECT_EQ(c->backend.ca_file, "");
  EXPECT_FALSE(c->backend.insecure_skip_verify);
  EXPECT_EQ(c->backend.max_response_bytes, 64 * 1024 * 1024);
  EXPECT_EQ(c->backend.basic_auth.username, "");
  EXPECT_EQ(c->backend.sysdig.last, absl::Seconds(60));
  EXPECT_EQ(c->backend.sysdig.sampling, absl::Seconds(60));
  EXPECT_EQ(c->backend.sysdig.data_source_type, "host");
  EXPECT_EQ(c->cache.ttl, absl::Seconds(15));
  EXPECT_EQ(c->cache.max_staleness, absl::Minutes(2));
  EXPECT_EQ(c->cache.refresh_timeout, absl::Seconds(5));
  EXPECT_TRUE(c->profiles[0].metrics.empty());
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kLeastAllocated], 1);
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kBalancedAllocation], 1);
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kRecentPlacements], 1);
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kInterPodAffinity], 2);
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kPodTopologySpread], 2);
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kNodeAffinity], 2);
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kTaintToleration], 3);
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kImageLocality], 1);
  EXPECT_TRUE(c->node_affinity.added_required.empty());
  EXPECT_TRUE(c->node_affinity.added_preferred.empty());
  EXPECT_EQ(c->fallback.cold_cache_deadline, absl::Milliseconds(500));
  EXPECT_EQ(c->profiles[0].herd.penalty_per_placement, 10);
  EXPECT_EQ(c->profiles[0].herd.window, absl::Seconds(30));
  EXPECT_TRUE(c->preemption.enabled);
  EXPECT_EQ(c->preemption.min_candidate_nodes_percentage, 10);
  EXPECT_EQ(c->preemption.min_candidate_nodes_absolute, 100);
  EXPECT_TRUE(c->leader_election.enabled);
  EXPECT_EQ(c->leader_election.lease_name, "metrics-scheduler");
  EXPECT_EQ(c->leader_election.lease_namespace, "metrics-scheduler");
  EXPECT_EQ(c->leader_election.lease_duration, absl::Seconds(15));
  EXPECT_EQ(c->leader_election.renew_deadline, absl::Seconds(10));
  EXPECT_EQ(c->leader_election.retry_period, absl::Seconds(2));
  EXPECT_EQ(c->http.listen_address, ":10260");
}

TEST(LoadConfigTest, FullPrometheusExample) {
  absl::StatusOr<Config> c = Load(R"(schedulerName: fast-scheduler
backend:
  type: prometheus
  url: http://prometheus.monitoring:9090
  timeout: 3s
  tokenFile: /var/run/secrets/metrics/token
  caFile: /etc/ca.pem
  insecureSkipVerify: true
  maxResponseBytes: 16Mi
  basicAuth: {username: u, passwordFile: /pw}
cache: {ttl: 10s, maxStaleness: 1m, refreshTimeout: 4s}
metrics:
  - name: http_latency
    query: 'histogram_quantile(0.99, sum by (node, le) (rate(x[1m])))'
    weight: 3
    direction: lower
    normalization: {type: minmax}
    missing: neutral
    maxStaleness: 2m
    ttl: 15s
    join: {label: node}
  - name: cpu_idle
    query: avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m]))
    weight: 0.5
    direction: higher
    normalization: {type: range, min: 0, max: 1}
    missing: worst
    join: {label: instance, match: address}
  - name: errors
    query: sum by (host) (rate(errors[1m]))
    normalization: ratio
    missing: exclude
    join: {label: host, regex: '(.*)\.example\.com'}
  - name: io
    query: io
    normalization: {type: ratio}
    missing: skip
builtins: {leastAllocated: 2, balancedAllocation: 0, recentPlacements: 1.5}
fallback: {coldCacheDeadline: 250ms}
herd: {penaltyPerPlacement: 20, window: 1m}
preemption: {enabled: false, minCandidateNodesPercentage: 5, minCandidateNodesAbsolute: 0}
leaderElection: {enabled: false, leaseName: ms, leaseNamespace: kube-ms, leaseDuration: 20s, renewDeadline: 12s, retryPeriod: 3s}
http: {listenAddress: "127.0.0.1:8080"}
)");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->profiles[0].scheduler_name, "fast-scheduler");
  EXPECT_EQ(c->backend.url, "http://prometheus.monitoring:9090");
  EXPECT_EQ(c->backend.timeout, absl::Seconds(3));
  EXPECT_EQ(c->backend.token_file, "/var/run/secrets/metrics/token");
  EXPECT_EQ(c->backend.ca_file, "/etc/ca.pem");
  EXPECT_TRUE(c->backend.insecure_skip_verify);
  EXPECT_EQ(c->backend.max_response_bytes, 16 * 1024 * 1024);
  EXPECT_EQ(c->backend.basic_auth.username, "u");
  EXPECT_EQ(c->backend.basic_auth.password_file, "/pw");
  EXPECT_EQ(c->cache.ttl, absl::Seconds(10));
  EXPECT_EQ(c->cache.max_staleness, absl::Minutes(1));
  EXPECT_EQ(c->cache.refresh_timeout, absl::Seconds(4));
  ASSERT_EQ(c->profiles[0].metrics.size(), 4u);

  const MetricConfig& m0 = c->profiles[0].metrics[0];
  EXPECT_EQ(m0.name, "http_latency");
  EXPECT_EQ(m0.query,
            "histogram_quantile(0.99, sum by (node, le) (rate(x[1m])))");
  EXPECT_EQ(m0.weight, 3);
  EXPECT_EQ(m0.direction, Direction::kLower);
  EXPECT_EQ(m0.normalization.type, NormalizationType::kMinMax);
  EXPECT_EQ(m0.missing, MissingPolicy::kNeutral);
  EXPECT_EQ(m0.max_staleness, absl::Minutes(2));  // its own
  EXPECT_EQ(m0.ttl, absl::Seconds(15));           // its own
  EXPECT_EQ(m0.join.label, "node");
  EXPECT_EQ(m0.join.match, JoinMatch::kName);
  EXPECT_EQ(m0.join.regex, "");
  EXPECT_FALSE(m0.join.automatic);  // written, if as the default

  const MetricConfig& m1 = c->profiles[0].metrics[1];
  EXPECT_EQ(m1.weight, 0.5);
  EXPECT_EQ(m1.direction, Direction::kHigher);
  EXPECT_EQ(m1.normalization.type, NormalizationType::kRange);
  EXPECT_EQ(m1.normalization.min, 0);
  EXPECT_EQ(m1.normalization.max, 1);
  EXPECT_EQ(m1.missing, MissingPolicy::kWorst);
  EXPECT_EQ(m1.max_staleness, absl::Minutes(1));  // cache.maxStaleness
  EXPECT_EQ(m1.ttl, absl::Seconds(10));           // cache.ttl
  EXPECT_EQ(m1.join.label, "instance");
  EXPECT_EQ(m1.join.match, JoinMatch::kAddress);

  const MetricConfig& m2 = c->profiles[0].metrics[2];
  EXPECT_EQ(m2.weight, 1);  // default
  EXPECT_EQ(m2.normalization.type, NormalizationType::kRatio);
  EXPECT_EQ(m2.missing, MissingPolicy::kExclude);
  EXPECT_EQ(m2.join.regex, "(.*)\\.example\\.com");
  EXPECT_EQ(c->profiles[0].metrics[3].normalization.type,
            NormalizationType::kRatio);
  EXPECT_EQ(c->profiles[0].metrics[3].missing, MissingPolicy::kSkip);
  // Without `join`: detected per fetch, label and match the first candidate.
  EXPECT_TRUE(c->profiles[0].metrics[3].join.automatic);
  EXPECT_EQ(c->profiles[0].metrics[3].join.label, "node");
  EXPECT_EQ(c->profiles[0].metrics[3].join.match, JoinMatch::kName);

  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kLeastAllocated], 2);
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kBalancedAllocation], 0);
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kRecentPlacements], 1.5);
  EXPECT_EQ(c->fallback.cold_cache_deadline, absl::Milliseconds(250));
  EXPECT_EQ(c->profiles[0].herd.penalty_per_placement, 20);
  EXPECT_EQ(c->profiles[0].herd.window, absl::Minutes(1));
  EXPECT_FALSE(c->preemption.enabled);
  EXPECT_EQ(c->preemption.min_candidate_nodes_percentage, 5);
  EXPECT_EQ(c->preemption.min_candidate_nodes_absolute, 0);
  EXPECT_FALSE(c->leader_election.enabled);
  EXPECT_EQ(c->leader_election.lease_name, "ms");
  EXPECT_EQ(c->leader_election.lease_namespace, "kube-ms");
  EXPECT_EQ(c->leader_election.lease_duration, absl::Seconds(20));
  EXPECT_EQ(c->leader_election.renew_deadline, absl::Seconds(12));
  EXPECT_EQ(c->leader_election.retry_period, absl::Seconds(3));
  EXPECT_EQ(c->http.listen_address, "127.0.0.1:8080");
}

TEST(LoadConfigTest, SysdigExample) {
  absl::StatusOr<Config> c = Load(R"(backend:
  type: sysdig
  url: https://secure.sysdig.com
  sysdig: {last: 120s, sampling: 30s, dataSourceType: container}
metrics:
  - name: net.http.request.time
    query: net.http.request.time
    aggregations: {time: avg, group: max}
  - name: cpu
    query: cpu.used.percent
    join: {label: host.hostName, match: name}
)");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->backend.type, BackendType::kSysdig);
  EXPECT_EQ(c->backend.sysdig.last, absl::Seconds(120));
  EXPECT_EQ(c->backend.sysdig.sampling, absl::Seconds(30));
  EXPECT_EQ(c->backend.sysdig.data_source_type, "container");
  // sysdig's default join label, never detected
  EXPECT_EQ(c->profiles[0].metrics[0].join.label, "host.hostName");
  EXPECT_FALSE(c->profiles[0].metrics[0].join.automatic);
  EXPECT_EQ(c->profiles[0].metrics[0].aggregations.time, "avg");
  EXPECT_EQ(c->profiles[0].metrics[0].aggregations.group, "max");
  EXPECT_EQ(c->profiles[0].metrics[1].aggregations.time, "timeAvg");  // default
  EXPECT_EQ(c->profiles[0].metrics[1].aggregations.group, "avg");
}

TEST(LoadConfigTest, ATargetNormalizationReadsItsTargetMaxAndMin) {
  absl::StatusOr<Config> c = Load(R"(backend: {url: http://p:9090}
metrics:
  - name: cpu
    query: q
    normalization: {type: target, target: 0.6, max: 1}
  - name: load
    query: l
    normalization: {type: target, min: 1, target: 3, max: 5}
)");
  ASSERT_TRUE(c.ok()) << c.status();
  const NormalizationConfig& cpu = c->profiles[0].metrics[0].normalization;
  EXPECT_EQ(cpu.type, NormalizationType::kTarget);
  EXPECT_EQ(cpu.min, 0);  // default
  EXPECT_EQ(cpu.target, 0.6);
  EXPECT_EQ(cpu.max, 1);
  const NormalizationConfig& load = c->profiles[0].metrics[1].normalization;
  EXPECT_EQ(load.type, NormalizationType::kTarget);
  EXPECT_EQ(load.min, 1);
  EXPECT_EQ(load.target, 3);
  EXPECT_EQ(load.max, 5);
}

TEST(LoadConfigTest, AnEstimateReadsItsBasisFactorWarmupAndSiblings) {
  absl::StatusOr<Config> c = Load(R"(backend: {url: http://p:9090}
metrics:
  - name: cpu
    query: q
    estimate:
      from: cpuRequests
      factor: 1.5
      warmup: 90s
      fade: linear
      siblings: {query: 'sum by (namespace, pod) (rate(u[2m]))'}
  - name: latency
    query: l
    estimate: {from: perPod, factor: 0.02}
  - name: p99
    query: p
    estimate: {from: queueing, utilisation: cpu, full: 100}
  - name: memory
    query: mem
    estimate: {from: memoryLimits, factor: 0.7}
  - name: p95
    query: p95
    estimate: {from: perPodShare, factor: 0.1, warmup: 2m, fade: linear}
  - name: cpu_fast
    query: q2
    estimate:
      from: cpuRequests
      warmup: 2m
      siblings: {query: 'sum by (namespace, pod) (rate(u[1m]))', warmup: 80s}
)");
  ASSERT_TRUE(c.ok()) << c.status();
  using Basis = UnseenLoadEstimate::Basis;
  const std::vector<MetricConfig>& m = c->profiles[0].metrics;
  EXPECT_EQ(m[0].estimate,
            (UnseenLoadEstimate{
                .basis = Basis::kCpuRequests,
                .factor = 1.5,
                .warmup_ms = 90000,
                .siblings_query = "sum by (namespace, pod) (rate(u[2m]))",
                .fade = UnseenLoadEstimate::Fade::kLinear}));
  EXPECT_EQ(m[1].estimate,
            (UnseenLoadEstimate{.basis = Basis::kPerPod, .factor = 0.02}));
  EXPECT_EQ(m[2].estimate,
            (UnseenLoadEstimate{
                .basis = Basis::kQueueing, .utilisation = "cpu", .full = 100}));
  EXPECT_EQ(m[3].estimate,
            (UnseenLoadEstimate{.basis = Basis::kMemoryLimits, .factor = 0.7}));
  EXPECT_TRUE(m[3].estimate.on_memory());
  EXPECT_EQ(m[4].estimate,
            (UnseenLoadEstimate{.basis = Basis::kPerPodShare,
                                .factor = 0.1,
                                .warmup_ms = 120000,
                                .fade = UnseenLoadEstimate::Fade::kLinear}));
  // The siblings' own warm-up; unset (m[0]), the estimate's.
  EXPECT_EQ(m[5].estimate.sibling_warmup_ms(), 80000);
  EXPECT_EQ(m[5].estimate.warmup_ms, 120000);
  EXPECT_EQ(m[0].estimate.sibling_warmup_ms(), 90000);
}

// The metrics below are what `rebalance.hot` may name: a query better
// lower, estimated from requests.
constexpr char kRebalanceMetrics[] = R"(backend: {url: http://p:9090}
metrics:
  - name: cpu
    query: q
    estimate: {from: cpuRequests}
  - name: latency
    query: l
)";

TEST(LoadConfigTest, RebalanceIsOffByDefault) {
  absl::StatusOr<Config> c = Load("");
  ASSERT_TRUE(c.ok()) << c.status();
  const RebalanceConfig& r = c->rebalance;
  EXPECT_EQ(r.mode, RebalanceMode::kOff);
  EXPECT_EQ(r.interval, absl::Seconds(30));
  EXPECT_TRUE(r.hot.empty());
  EXPECT_TRUE(r.pods.scheduler_names.empty());
  EXPECT_EQ(r.pods.exclude_namespaces, std::vector<std::string>{"kube-system"});
  EXPECT_EQ(r.pods.max_priority, 1000000000);
  EXPECT_EQ(r.pods.min_age, absl::Minutes(5));
  EXPECT_FALSE(r.pods.local_storage);
  EXPECT_EQ(r.limits.per_node, 1);
  EXPECT_EQ(r.limits.total, 5);
  EXPECT_EQ(r.limits.cool_down, absl::Minutes(10));
}

TEST(LoadConfigTest, RebalanceReadsEveryKey) {
  absl::StatusOr<Config> c = Load(absl::StrCat(kRebalanceMetrics, R"(rebalance:
  mode: evict
  interval: 1m
  hot:
    - {metric: cpu, high: 0.85, aboveMean: 0.2, samples: 4, low: 0.7,
       settle: 45s}
  pods:
    schedulerNames: [metrics-scheduler]
    namespaces: [shop]
    excludeNamespaces: []
    matchLabels: {tier: web}
    maxPriority: 100
    minAge: 30s
    localStorage: true
  limits: {perNode: 2, perNamespace: 3, perWorkload: 4, total: 6, coolDown: 0s}
)"));
  ASSERT_TRUE(c.ok()) << c.status();
  const RebalanceConfig& r = c->rebalance;
  EXPECT_EQ(r.mode, RebalanceMode::kEvict);
  EXPECT_EQ(r.interval, absl::Minutes(1));
  ASSERT_EQ(r.hot.size(), 1u);
  EXPECT_EQ(r.hot[0].metric, "cpu");
  EXPECT_EQ(r.hot[0].high, 0.85);
  EXPECT_EQ(r.hot[0].above_mean, 0.2);
  EXPECT_EQ(r.hot[0].samples, 4);
  EXPECT_EQ(r.hot[0].low, 0.7);
  EXPECT_EQ(r.hot[0].settle, absl::Seconds(45));
  EXPECT_EQ(r.pods.scheduler_names,
            std::vector<std::string>{"metrics-scheduler"});
  EXPECT_EQ(r.pods.namespaces, std::vector<std::string>{"shop"});
  EXPECT_TRUE(r.pods.exclude_namespaces.empty());
  ASSERT_TRUE(r.pods.labels.has_value());
  EXPECT_EQ(r.pods.labels->match_labels.at("tier"), "web");
  EXPECT_EQ(r.pods.max_priority, 100);
  EXPECT_EQ(r.pods.min_age, absl::Seconds(30));
  EXPECT_TRUE(r.pods.local_storage);
  EXPECT_EQ(r.limits.per_node, 2);
  EXPECT_EQ(r.limits.per_namespace, 3);
  EXPECT_EQ(r.limits.per_workload, 4);
  EXPECT_EQ(r.limits.total, 6);
  EXPECT_EQ(r.limits.cool_down, absl::ZeroDuration());
}

// A share of the sample says nothing of what a pod takes away when it
// leaves: rebalancing cannot judge a node hot by it.
TEST(LoadConfigTest, RebalancingRefusesAPerPodShare) {
  absl::StatusOr<Config> c = Load(R"(backend: {url: http://p:9090}
metrics:
  - name: latency
    query: l
    estimate: {from: perPodShare, factor: 0.1}
rebalance: {hot: [{metric: latency, high: 0.8, low: 0.5}]}
)");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(),
            "file.yaml:8:28: rebalance.hot[0].metric: \"latency\" needs an "
            "estimate from cpuRequests, memoryRequests, cpuLimits, "
            "memoryLimits or perPod: it is what says how much a pod takes "
            "away when it leaves");
}

TEST(LoadConfigTest, RebalanceErrors) {
  struct Case {
    std::string rebalance;  // from line 10 on, after kRebalanceMetrics
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {"rebalance: {mode: on}\n",
            "file.yaml:10:19: rebalance.mode: must be one of off, dryRun, "
            "evict; got \"on\""},
           {"rebalance: {mode: dryRun}\n",
            "file.yaml:10:12: rebalance.hot: needs at least one metric when "
            "mode is dryRun (the default with this section) or evict: "
            "nothing says when a node is hot"},
           {"rebalance: {interval: 1m}\n",
            "file.yaml:10:12: rebalance.hot: needs at least one metric when "
            "mode is dryRun (the default with this section) or evict: "
            "nothing says when a node is hot"},
           {"rebalance: {interval: 0s}\n",
            "file.yaml:10:23: rebalance.interval: must be > 0"},
           {"rebalance: {hot: [{metric: cpu, high: 0.8, low: 0.9}]}\n",
            "file.yaml:10:49: rebalance.hot[0].low: must be <= high (0.8)"},
           {"rebalance: {hot: [{metric: cpu, low: 0.5}]}\n",
            "file.yaml:10:19: rebalance.hot[0]: needs high, aboveMean or "
            "both: what makes a node hot"},
           {"rebalance: {hot: [{metric: cpu, high: 0.8}]}\n",
            "file.yaml:10:19: rebalance.hot[0].low: required: the value "
            "moving pods must bring the node to"},
           {"rebalance: {hot: [{metric: mem, high: 0.8, low: 0.5}]}\n",
            "file.yaml:10:28: rebalance.hot[0].metric: no metric is named "
            "\"mem\""},
           {"rebalance: {hot: [{metric: latency, high: 0.8, low: 0.5}]}\n",
            "file.yaml:10:28: rebalance.hot[0].metric: \"latency\" needs an "
            "estimate from cpuRequests, memoryRequests, cpuLimits, "
            "memoryLimits or perPod: it is what says how much a pod takes "
            "away when it leaves"},
           {"rebalance: {hot: [{metric: cpu, aboveMean: -1, low: 0}]}\n",
            "file.yaml:10:44: rebalance.hot[0].aboveMean: must be >= 0"},
           {"rebalance: {hot: [{metric: cpu, high: 1, low: 0, samples: 0}]}\n",
            "file.yaml:10:59: rebalance.hot[0].samples: must be an integer in "
            "[1, 100], got \"0\""},
           {"rebalance:\n  hot:\n    - {metric: cpu, high: 1, low: 0}\n"
            "    - {metric: cpu, high: 2, low: 0}\n",
            "file.yaml:13:16: rebalance.hot[1].metric: \"cpu\" is listed "
            "twice"},
           {"rebalance: {mode: off, pods: {schedulerNames: "
            "[default-scheduler]}}\n",
            "file.yaml:10:48: rebalance.pods.schedulerNames[0]: "
            "\"default-scheduler\" is not a profile's schedulerName "
            "(metrics-scheduler): only pods this scheduler places again "
            "move"},
           {"rebalance: {mode: off, pods: {namespaces: [Shop]}}\n",
            "file.yaml:10:44: rebalance.pods.namespaces[0]: \"Shop\" must be "
            "a namespace name"},
           {"rebalance: {mode: off, pods: {minAge: 5}}\n",
            "file.yaml:10:39: rebalance.pods.minAge: invalid duration \"5\": "
            "missing unit (ns, us, ms, s, m, h) (examples: 500ms, 15s, 2m, "
            "1h30m)"},
           {"rebalance: {mode: off, limits: {perNode: 0}}\n",
            "file.yaml:10:42: rebalance.limits.perNode: must be an integer in "
            "[1, 2147483647], got \"0\""},
           {"rebalance: {limit: {}}\n",
            "file.yaml:10:13: rebalance.limit: unknown key (did you mean "
            "limits?)"},
       }) {
    absl::StatusOr<Config> got =
        Load(absl::StrCat(kRebalanceMetrics, c.rebalance));
    ASSERT_FALSE(got.ok()) << c.rebalance;
    EXPECT_EQ(std::string(got.status().message()), c.want) << c.rebalance;
  }
}

// A metric better higher says nothing of a node too busy.
TEST(LoadConfigTest, RebalanceRefusesAMetricBetterHigher) {
  absl::StatusOr<Config> c = Load(R"(backend: {url: http://p:9090}
metrics:
  - {name: free, query: q, direction: higher, estimate: {from: perPod}}
rebalance: {hot: [{metric: free, high: 1, low: 0}]}
)");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(std::string(c.status().message()),
            "file.yaml:6:28: rebalance.hot[0].metric: \"free\" is better "
            "higher; a hot node is one whose value is too high");
}

TEST(LoadConfigTest, NullMeansDefault) {
  absl::StatusOr<Config> c = Load("backend:\n  timeout:\ncache:\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->backend.timeout, absl::Seconds(2));
}

// A metric body with a valid URL, so metric errors are the only ones.
std::string WithMetric(const std::string& metric_lines) {
  return absl::StrCat("backend: {url: http://p:9090}\nmetrics:\n  - name: m\n",
                      "    query: q\n", metric_lines);
}

// `text` `times` times over.
std::string Repeat(absl::string_view text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) absl::StrAppend(&out, text);
  return out;
}

TEST(LoadConfigTest, UnloadedNamesItsUtilisation) {
  absl::StatusOr<Config> c = Load(R"(backend: {url: http://p:9090}
metrics:
  - name: p99
    query: p
    unloaded: {utilisation: busy, full: 100}
  - name: busy
    query: b
)");
  ASSERT_TRUE(c.ok()) << c.status();
  const std::vector<MetricConfig>& m = c->profiles[0].metrics;
  EXPECT_EQ(m[0].unloaded, (UnloadedValue{.utilisation = "busy", .full = 100}));
  EXPECT_TRUE(m[0].unloaded.enabled());
  EXPECT_FALSE(m[1].unloaded.enabled());
}

// A utilisation queried for another metric's `unloaded` alone scores
// nothing itself.
TEST(LoadConfigTest, AWeightOfZeroIsAllowed) {
  absl::StatusOr<Config> c = Load(WithMetric("    weight: 0\n"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->profiles[0].metrics[0].weight, 0);
}

TEST(LoadConfigTest, Errors) {
  struct Case {
    std::string body;  // after the two header lines (line 3 onwards)
    std::string want;
  };
  const std::vector<Case> cases = {
      // Top level.
      {"schedulerName: Bad_Name\n",
       "file.yaml:3:16: schedulerName: must be a lowercase DNS-1123 subdomain "
       "(a-z, 0-9, '-', '.')"},
      {"schedulerNam: x\n",
       "file.yaml:3:1: schedulerNam: unknown key (did you mean "
       "schedulerName?)"},
      {"zzz: 1\n", "file.yaml:3:1: zzz: unknown key"},
      {"http: {listenAddress: ':1'}\nhttp: {listenAddress: ':2'}\n",
       "file.yaml:4:1: http: duplicate key"},
      {"metrics: {name: m}\n", "file.yaml:3:10: metrics: must be a list"},
      {"backend: [1]\n", "file.yaml:3:10: backend: must be a mapping"},
      // backend.
      {"backend: {type: graphite}\n",
       "file.yaml:3:17: backend.type: must be one of prometheus, sysdig, "
       "metricsServer; got \"graphite\""},
      {"backend: {url: 'ftp://x'}\n",
       "file.yaml:3:16: backend.url: must start with http:// or https://, got "
       "\"ftp://x\""},
      {"backend: {timeout: 0s}\n",
       "file.yaml:3:20: backend.timeout: must be > 0"},
      {"backend: {timeout: 2}\n",
       "file.yaml:3:20: backend.timeout: invalid duration \"2\": missing unit "
       "(ns, us, ms, s, m, h) (examples: 500ms, 15s, 2m, 1h30m)"},
      {"backend: {tokenFile: [a]}\n",
       "file.yaml:3:22: backend.tokenFile: must be a string"},
      {"backend: {caFile: {a: b}}\n",
       "file.yaml:3:19: backend.caFile: must be a string"},
      {"backend: {insecureSkipVerify: yes}\n",
       "file.yaml:3:31: backend.insecureSkipVerify: must be true or false, got "
       "\"yes\""},
      {"backend: {maxResponseBytes: 1.5Mi}\n",
       "file.yaml:3:29: backend.maxResponseBytes: must be a positive size "
       "such as 67108864 or 64Mi, got \"1.5Mi\""},
      {"backend: {maxResponseBytes: 0}\n",
       "file.yaml:3:29: backend.maxResponseBytes: must be a positive size "
       "such as 67108864 or 64Mi, got \"0\""},
      {"backend: {maxResponseBytes: 99999999999Gi}\n",
       "file.yaml:3:29: backend.maxResponseBytes: must be a positive size "
       "such as 67108864 or 64Mi, got \"99999999999Gi\""},
      {"backend:\n  basicAuth: {username: u}\n",
       "file.yaml:4:14: backend.basicAuth.passwordFile: required when username "
       "is set"},
      {"backend:\n  basicAuth: {passwordFile: /p}\n",
       "file.yaml:4:14: backend.basicAuth.username: required when passwordFile "
       "is set"},
      {"backend:\n  basicAuth: {usename: u}\n",
       "file.yaml:4:15: backend.basicAuth.usename: unknown key (did you mean "
       "username?)"},
      {"backend:\n  type: sysdig\n  basicAuth: {username: u}\n",
       "file.yaml:5:14: backend.basicAuth: only valid with type prometheus"},
      {"backend:\n  sysdig: {last: 60s}\n",
       "file.yaml:4:11: backend.sysdig: only valid with type sysdig"},
      {"backend:\n  type: sysdig\n  sysdig: {last: 1500ms}\n",
       "file.yaml:5:18: backend.sysdig.last: must be a whole number of "
       "seconds"},
      {"backend:\n  type: sysdig\n  sysdig: {sampling: 0s}\n",
       "file.yaml:5:22: backend.sysdig.sampling: must be > 0"},
      {"backend:\n  type: sysdig\n  sysdig: {dataSourceType: ''}\n",
       "file.yaml:5:28: backend.sysdig.dataSourceType: must not be empty"},
      {"backend:\n  type: sysdig\n  sysdig: {foo: 1}\n",
       "file.yaml:5:12: backend.sysdig.foo: unknown key"},
      {"metrics:\n  - name: m\n    query: q\n",
       "file.yaml:1:1: backend.url: required when a metric has a query"},
      {"backend: {}\nmetrics:\n  - name: m\n    query: q\n",
       "file.yaml:3:10: backend.url: required when a metric has a query"},
      // backend: client certificate, headers, proxy.
      {"backend: {url: http://p, certFile: /c}\n",
       "file.yaml:3:36: backend.keyFile: required when certFile is set"},
      {"backend: {url: http://p, headers: {Authorization: x}}\n",
       "file.yaml:3:36: backend.headers.Authorization: Authorization is set "
       "by the scheduler (use tokenFile or basicAuth)"},
      {"backend: {url: http://p, headers: {X-A: a, x-a: b}}\n",
       "file.yaml:3:44: backend.headers.x-a: duplicate header (names ignore "
       "case)"},
      {"backend: {url: http://p, headers: {'X A': a}}\n",
       "file.yaml:3:36: backend.headers.X A: must be an HTTP header name"},
      {"backend: {url: http://p, headers: {X-A: {valueFile: }}}\n",
       "file.yaml:3:41: backend.headers.X-A.valueFile: required"},
      {"backend: {url: http://p, proxyURL: proxy:3128}\n",
       "file.yaml:3:36: backend.proxyURL: must start with http://, https:// "
       "or socks5://, got \"proxy:3128\""},
      // cache.
      {"cache: {ttl: 0s}\n", "file.yaml:3:14: cache.ttl: must be > 0"},
      {"cache: {maxStaleness: 10s}\n",
       "file.yaml:3:23: cache.maxStaleness: must be >= cache.ttl (15s)"},
      {"cache: {refreshTimeout: -1s}\n",
       "file.yaml:3:25: cache.refreshTimeout: invalid duration \"-1s\": must "
       "not be signed (examples: 500ms, 15s, 2m, 1h30m)"},
      {"cache: {tll: 1s}\n",
       "file.yaml:3:9: cache.tll: unknown key (did you mean ttl?)"},
      // metrics[i].
      {"backend: {url: http://p}\nmetrics:\n  - query: q\n",
       "file.yaml:5:5: metrics[0].name: required"},
      {"backend: {url: http://p}\nmetrics:\n  - name: m\n",
       "file.yaml:5:5: metrics[0].query: required (or a source: "
       "nodeAnnotation or nodeLabel)"},
      // metrics[i].filter and metrics[i].source.
      {WithMetric("    filter: {max: 1, min: 2}\n"),
       "file.yaml:7:27: metrics[0].filter.min: must be <= max (1)"},
      {WithMetric("    filter: {}\n"),
       "file.yaml:7:13: metrics[0].filter: needs max, min or both, or "
       "scopes"},
      {WithMetric("    filter: {max: .inf}\n"),
       "file.yaml:7:19: metrics[0].filter.max: must be a finite number, got "
       "\".inf\""},
      // metrics[i].filter.scopes.
      {WithMetric("    filter:\n"
                  "      scopes:\n"
                  "        - pods: {minPriority: 1}\n"
                  "          max: 1\n"
                  "        - max: 2\n"),
       "file.yaml:11:11: metrics[0].filter.scopes[1]: needs nodes, pods or "
       "both"},
      {WithMetric("    filter: {scopes: [{max: 1}]}\n"),
       "file.yaml:7:23: metrics[0].filter.scopes[0]: needs nodes, pods or "
       "both"},
      {WithMetric("    filter: {scopes: [{pods: {}}]}\n"),
       "file.yaml:7:23: metrics[0].filter.scopes[0]: needs max, min or both"},
      {WithMetric("    filter: {scopes: [{pods: {}, max: 1, min: 2}]}\n"),
       "file.yaml:7:47: metrics[0].filter.scopes[0].min: must be <= max (1)"},
      {WithMetric("    filter: {scopes: [{pods: {minPriority: 10, "
                  "maxPriority: 5}, max: 1}]}\n"),
       "file.yaml:7:44: metrics[0].filter.scopes[0].pods.minPriority: must be "
       "<= maxPriority (5)"},
      {WithMetric("    filter: {scopes: [{pods: {minPriority: high}, max: "
                  "1}]}\n"),
       "file.yaml:7:44: metrics[0].filter.scopes[0].pods.minPriority: must be "
       "an integer in [-2147483648, 2147483647], got \"high\""},
      {WithMetric("    filter: {scopes: []}\n"),
       "file.yaml:7:22: metrics[0].filter.scopes: must be a non-empty list"},
      {WithMetric("    filter: {max: 1, scope: []}\n"),
       "file.yaml:7:22: metrics[0].filter.scope: unknown key (did you mean "
       "scopes?)"},
      {WithMetric("    filter: {scopes: [{pod: {}, max: 1}]}\n"),
       "file.yaml:7:24: metrics[0].filter.scopes[0].pod: unknown key (did you "
       "mean pods?)"},
      {WithMetric("    filter: {scopes: [{pods: {minPriorty: 1}, max: 1}]}\n"),
       "file.yaml:7:31: metrics[0].filter.scopes[0].pods.minPriorty: unknown "
       "key (did you mean minPriority?)"},
      {WithMetric("    filter: {scopes: [{nodes: {matchLabel: {a: b}}, max: "
                  "1}]}\n"),
       "file.yaml:7:32: metrics[0].filter.scopes[0].nodes.matchLabel: unknown "
       "key (did you mean matchLabels?)"},
      {WithMetric("    filter: {scopes: [{nodes: {matchLabels: {'a b': x}}, "
                  "max: 1}]}\n"),
       "file.yaml:7:46: metrics[0].filter.scopes[0].nodes.matchLabels.a b: "
       "must be a valid label key ([prefix/]name), got \"a b\""},
      {WithMetric("    filter: {scopes: [{nodes: {matchExpressions: [{key: "
                  "pool, operator: Gt, values: ['1']}]}, max: 1}]}\n"),
       "file.yaml:7:73: metrics[0].filter.scopes[0].nodes.matchExpressions[0]."
       "operator: must be one of In, NotIn, Exists, DoesNotExist; got \"Gt\""},
      {WithMetric("    filter: {scopes: [{nodes: {matchExpressions: [{key: "
                  "pool, operator: In}]}, max: 1}]}\n"),
       "file.yaml:7:51: metrics[0].filter.scopes[0].nodes.matchExpressions[0]."
       "values: must not be empty for In and NotIn"},
      {WithMetric("    filter: {scopes: [{nodes: {matchExpressions: [{key: "
                  "pool, operator: Exists, values: [a]}]}, max: 1}]}\n"),
       "file.yaml:7:89: metrics[0].filter.scopes[0].nodes.matchExpressions[0]."
       "values: must be empty for Exists and DoesNotExist"},
      // 65 scopes: the 65th starts after "    filter: {scopes: [" (22
      // characters) and 64 of "{pods: {}, max: 1}, " (20 each): column
      // 22 + 64 * 20 + 1 = 1303.
      {WithMetric(absl::StrCat("    filter: {scopes: [",
                               Repeat("{pods: {}, max: 1}, ", 64),
                               "{pods: {}, max: 1}]}\n")),
       "file.yaml:7:1303: metrics[0].filter.scopes[64]: at most 64 scopes per "
       "metric"},
      // metrics[i].unloaded.
      {WithMetric("    unloaded: {full: 2}\n"),
       "file.yaml:7:15: metrics[0].unloaded.utilisation: required: the metric "
       "whose value is the node's utilisation"},
      {WithMetric("    unloaded: {utilisation: m}\n"),
       "file.yaml:7:29: metrics[0].unloaded.utilisation: names this metric; "
       "name its utilisation"},
      {WithMetric("    unloaded: {utilisation: nope}\n"),
       "file.yaml:7:29: metrics[0].unloaded.utilisation: no metric \"nope\" "
       "in this list"},
      {WithMetric("    unloaded: {utilisation: l, full: 0}\n"
                  "  - name: l\n    query: q2\n"),
       "file.yaml:7:38: metrics[0].unloaded.full: must be a finite number > "
       "0"},
      {WithMetric("    estimate: {from: perPod}\n"
                  "    unloaded: {utilisation: l}\n"
                  "  - name: l\n    query: q2\n"),
       "file.yaml:8:15: metrics[0].unloaded: not with estimate: the load the "
       "samples have not seen is the utilisation metric's to estimate"},
      {WithMetric("    unloaded: {utilisation: l}\n"
                  "  - name: l\n    query: q2\n"
                  "    unloaded: {utilisation: m}\n"),
       "file.yaml:7:29: metrics[0].unloaded.utilisation: \"l\" is unloaded "
       "itself; name a metric read as sampled"},
      // metrics[i].estimate.
      {WithMetric("    estimate: {factor: 2}\n"),
       "file.yaml:7:15: metrics[0].estimate.from: required"},
      {WithMetric("    estimate: {from: cpuLimit}\n"),
       "file.yaml:7:22: metrics[0].estimate.from: must be one of none, "
       "cpuRequests, memoryRequests, cpuLimits, memoryLimits, perPod, "
       "perPodShare, queueing; got \"cpuLimit\""},
      {WithMetric("    estimate: {from: queueing}\n"),
       "file.yaml:7:15: metrics[0].estimate.utilisation: required with from "
       "queueing: the metric whose value is the node's utilisation"},
      {WithMetric(
           "    estimate: {from: queueing, utilisation: cpu, factor: 2}\n"),
       "file.yaml:7:58: metrics[0].estimate.factor: not with from queueing: "
       "the metric named by utilisation estimates the load"},
      {WithMetric("    estimate: {from: perPod, utilisation: cpu}\n"),
       "file.yaml:7:43: metrics[0].estimate.utilisation: only with from "
       "queueing"},
      {WithMetric("    estimate: {from: queueing, utilisation: m}\n"),
       "file.yaml:7:45: metrics[0].estimate.utilisation: names this metric; "
       "name its utilisation"},
      {WithMetric("    estimate: {from: queueing, utilisation: l}\n"
                  "  - name: l\n    query: q2\n"),
       "file.yaml:7:45: metrics[0].estimate.utilisation: \"l\" has no "
       "estimate from a pod's CPU or memory, so no unseen load to grow "
       "with"},
      {WithMetric(
           "    estimate: {from: queueing, utilisation: cpu, full: 0}\n"),
       "file.yaml:7:56: metrics[0].estimate.full: must be a finite number > "
       "0"},
      {WithMetric("    estimate: {from: queueing, utilisation: cpu, fade: "
                  "linear}\n"),
       "file.yaml:7:56: metrics[0].estimate.fade: not with from queueing: "
       "the metric named by utilisation estimates the load"},
      {WithMetric("    estimate: {from: perPod, fade: smooth}\n"),
       "file.yaml:7:36: metrics[0].estimate.fade: must be one of step, "
       "linear, measured; got \"smooth\""},
      {WithMetric("    estimate: {from: cpuRequests, fade: measured}\n"),
       "file.yaml:7:41: metrics[0].estimate.fade: measured reads the pod's "
       "own sample of the siblings query: needs siblings"},
      {WithMetric("    estimate: {from: perPod, full: 100}\n"),
       "file.yaml:7:36: metrics[0].estimate.full: only with from queueing"},
      {WithMetric("    estimate: {from: queueing, utilisation: nope}\n"),
       "file.yaml:7:45: metrics[0].estimate.utilisation: no metric \"nope\" "
       "in this list"},
      {WithMetric("    estimate: {from: perPod, warmup: -1s}\n"),
       "file.yaml:7:38: metrics[0].estimate.warmup: invalid duration "
       "\"-1s\": must not be signed (examples: 500ms, 15s, 2m, 1h30m)"},
      {WithMetric("    estimate: {from: perPod, factor: .nan}\n"),
       "file.yaml:7:38: metrics[0].estimate.factor: must be a finite number, "
       "got \".nan\""},
      {WithMetric("    estimate: {from: perPod, siblings: {query: u}}\n"),
       "file.yaml:7:40: metrics[0].estimate.siblings: siblings' usage "
       "replaces a pod's requests or limits: needs from cpuRequests, "
       "memoryRequests, cpuLimits or memoryLimits"},
      {WithMetric("    estimate: {from: cpuRequests, siblings: {}}\n"),
       "file.yaml:7:45: metrics[0].estimate.siblings.query: required, a query "
       "with one series per pod labelled namespace and pod"},
      {WithMetric("    estimate: {from: cpuRequests, siblings: {query: u, "
                  "warmup: soon}}\n"),
       "file.yaml:7:64: metrics[0].estimate.siblings.warmup: invalid duration "
       "\"soon\": expected a number (examples: 500ms, 15s, 2m, 1h30m)"},
      {WithMetric("    estimate: {from: cpuRequests, siblings: {qurey: u}}\n"),
       "file.yaml:7:46: metrics[0].estimate.siblings.qurey: unknown key (did "
       "you mean query?)"},
      {"backend: {type: metricsServer}\nmetrics:\n  - name: cpu\n"
       "    query: cpu\n"
       "    estimate: {from: cpuRequests, siblings: {query: u}}\n",
       "file.yaml:7:45: metrics[0].estimate.siblings: per-pod usage is "
       "queried with PromQL: needs backend type prometheus"},
      {"metrics:\n  - name: m\n    source: {nodeLabel: a}\n"
       "    estimate: {from: perPod}\n",
       "file.yaml:6:15: metrics[0].estimate: only a query's values lag "
       "behind placements; a node attribute takes no estimate"},
      {"metrics:\n  - name: m\n    source: {nodeLabel: a}\n    query: q\n",
       "file.yaml:6:12: metrics[0].query: only for a metric with a query, "
       "not with source"},
      {"metrics:\n  - name: m\n    source: {nodeLabel: a}\n    ttl: 5s\n",
       "file.yaml:6:10: metrics[0].ttl: only for a metric with a query, not "
       "with source"},
      {"metrics:\n  - name: m\n    source: {nodeLabel: a, nodeAnnotation: "
       "b}\n",
       "file.yaml:5:13: metrics[0].source: needs exactly one of "
       "nodeAnnotation, nodeLabel"},
      {"metrics:\n  - name: m\n    source: {nodeLabel: }\n",
       "file.yaml:5:13: metrics[0].source: needs exactly one of "
       "nodeAnnotation, nodeLabel"},
      {"metrics:\n  - name: m\n    source: {nodeAnnotation: 'a b'}\n",
       "file.yaml:5:30: metrics[0].source.nodeAnnotation: must be a valid key "
       "([prefix/]name), got \"a b\""},
      {"metrics:\n  - name: m\n    source: {nodeLabel: Example.com/x}\n",
       "file.yaml:5:25: metrics[0].source.nodeLabel: must be a valid key "
       "([prefix/]name), got \"Example.com/x\""},
      {WithMetric("    weight: -2\n"),
       "file.yaml:7:13: metrics[0].weight: must be >= 0"},
      {WithMetric("    weight: heavy\n"),
       "file.yaml:7:13: metrics[0].weight: must be a finite number, got "
       "\"heavy\""},
      {WithMetric("    weight: .inf\n"),
       "file.yaml:7:13: metrics[0].weight: must be a finite number, got "
       "\".inf\""},
      {WithMetric("    direction: up\n"),
       "file.yaml:7:16: metrics[0].direction: must be one of lower, higher; "
       "got \"up\""},
      {WithMetric("    missing: zero\n"),
       "file.yaml:7:14: metrics[0].missing: must be one of neutral, worst, "
       "exclude, skip; got \"zero\""},
      {WithMetric("    normalization: {type: log}\n"),
       "file.yaml:7:27: metrics[0].normalization.type: must be one of minmax, "
       "range, ratio, target; got \"log\""},
      {WithMetric("    normalization: log\n"),
       "file.yaml:7:20: metrics[0].normalization: must be one of minmax, "
       "range, ratio, target; got \"log\""},
      {WithMetric("    normalization: range\n"),
       "file.yaml:7:20: metrics[0].normalization: range needs min and max: "
       "{type: range, min: LO, max: HI}"},
      {WithMetric("    normalization: {min: 0}\n"),
       "file.yaml:7:20: metrics[0].normalization.type: required"},
      {WithMetric("    normalization: {type: range, max: 1}\n"),
       "file.yaml:7:20: metrics[0].normalization.min: required with type "
       "range"},
      {WithMetric("    normalization: {type: range, min: 1}\n"),
       "file.yaml:7:20: metrics[0].normalization.max: required with type "
       "range"},
      {WithMetric("    normalization: {type: range, min: 1, max: 1}\n"),
       "file.yaml:7:47: metrics[0].normalization.max: must be > min (1)"},
      {WithMetric("    normalization: {type: minmax, min: 1}\n"),
       "file.yaml:7:40: metrics[0].normalization.min: only valid with type "
       "range or target"},
      {WithMetric("    normalization: {type: ratio, max: 1}\n"),
       "file.yaml:7:39: metrics[0].normalization.max: only valid with type "
       "range or target"},
      {WithMetric("    normalization: {type: range, min: 0, max: 1, target: "
                  "0.5}\n"),
       "file.yaml:7:58: metrics[0].normalization.target: only valid with type "
       "target"},
      // metrics[i].normalization of type target.
      {WithMetric("    normalization: target\n"),
       "file.yaml:7:20: metrics[0].normalization: target needs target and "
       "max: {type: target, target: X, max: HI} (min: LO is optional, "
       "default 0)"},
      {WithMetric("    normalization: {type: target, max: 1}\n"),
       "file.yaml:7:20: metrics[0].normalization.target: required with type "
       "target"},
      {WithMetric("    normalization: {type: target, target: 0.7}\n"),
       "file.yaml:7:20: metrics[0].normalization.max: required with type "
       "target"},
      {WithMetric("    normalization: {type: target, target: 0, max: 1}\n"),
       "file.yaml:7:43: metrics[0].normalization.target: must be > min (0)"},
      {WithMetric("    normalization: {type: target, min: 0.5, target: 0.2, "
                  "max: 1}\n"),
       "file.yaml:7:53: metrics[0].normalization.target: must be > min (0.5)"},
      {WithMetric("    normalization: {type: target, target: 1, max: 1}\n"),
       "file.yaml:7:51: metrics[0].normalization.max: must be > target (1)"},
      {WithMetric("    normalization: {type: target, target: .nan, max: 1}\n"),
       "file.yaml:7:43: metrics[0].normalization.target: must be a finite "
       "number, got \".nan\""},
      // Any direction, even the default written out, would be ignored.
      {WithMetric("    normalization: {type: target, target: 0.7, max: 1}\n"
                  "    direction: higher\n"),
       "file.yaml:8:16: metrics[0].direction: a target normalization scores "
       "by distance from its target; direction does not apply"},
      {WithMetric("    direction: lower\n"
                  "    normalization: {type: target, target: 0.7, max: 1}\n"),
       "file.yaml:7:16: metrics[0].direction: a target normalization scores "
       "by distance from its target; direction does not apply"},
      {WithMetric("    maxStaleness: 5s\n"),
       "file.yaml:7:19: metrics[0].maxStaleness: must be >= the metric's ttl "
       "(15s)"},
      {WithMetric("    ttl: 5m\n"),
       "file.yaml:7:10: metrics[0].ttl: must be <= the metric's maxStaleness "
       "(2m)"},
      {WithMetric("    ttl: 0s\n"),
       "file.yaml:7:10: metrics[0].ttl: must be > 0"},
      {WithMetric("    join: {label: ''}\n"),
       "file.yaml:7:19: metrics[0].join.label: must not be empty"},
      {WithMetric("    join: {match: ip}\n"),
       "file.yaml:7:19: metrics[0].join.match: must be one of name, address; "
       "got \"ip\""},
      {WithMetric("    join: {regex: '(a'}\n"),
       "file.yaml:7:19: metrics[0].join.regex: invalid regular expression: "
       "missing ): (a (RE2 syntax: no lookaround, no backreferences)"},
      {WithMetric("    join: {regex: '(a)\\1'}\n"),
       "file.yaml:7:19: metrics[0].join.regex: invalid regular expression: "
       "invalid escape sequence: \\1 (RE2 syntax: no lookaround, no "
       "backreferences)"},
      {WithMetric("    join: {lable: x}\n"),
       "file.yaml:7:12: metrics[0].join.lable: unknown key (did you mean "
       "label?)"},
      {WithMetric("    aggregations: {time: avg}\n"),
       "file.yaml:7:19: metrics[0].aggregations: only valid with backend type "
       "sysdig"},
      {"backend: {type: sysdig, url: http://s}\nmetrics:\n  - name: m\n"
       "    query: q\n    aggregations: {time: median}\n",
       "file.yaml:7:26: metrics[0].aggregations.time: must be one of avg, "
       "timeAvg, sum, min, max, count, concat, distinct; got \"median\""},
      {"backend: {type: sysdig, url: http://s}\nmetrics:\n  - name: m\n"
       "    query: q\n    aggregations: {group: p99}\n",
       "file.yaml:7:27: metrics[0].aggregations.group: must be one of avg, "
       "timeAvg, sum, min, max, count, concat, distinct; got \"p99\""},
      {WithMetric("    qurey: q\n"),
       "file.yaml:7:5: metrics[0].qurey: unknown key (did you mean query?)"},
      {WithMetric("  - name: m\n    query: q2\n"),
       "file.yaml:7:11: metrics[1].name: duplicate metric name \"m\""},
      {WithMetric("  - name: n\n    query: q2\n    weight: -0.5\n"),
       "file.yaml:9:13: metrics[1].weight: must be >= 0"},
      {WithMetric("  - name: 1bad\n    query: q\n"),
       "file.yaml:7:11: metrics[1].name: must match [A-Za-z_][A-Za-z0-9_.:-]*, "
       "got \"1bad\""},
      {WithMetric("  - name: leastAllocated\n    query: q\n"),
       "file.yaml:7:11: metrics[1].name: \"leastAllocated\" is a built-in term "
       "name"},
      {WithMetric("  - name: n\n    query: '  '\n"),
       "file.yaml:8:12: metrics[1].query: must not be empty"},
      {"backend: {url: http://p}\nmetrics:\n  - name\n",
       "file.yaml:5:5: metrics[0]: must be a mapping"},
      // builtins, fallback, herd.
      {"builtins: {leastAllocated: -1}\n",
       "file.yaml:3:28: builtins.leastAllocated: must be >= 0"},
      {"builtins: {balancedAllocation: -0.5}\n",
       "file.yaml:3:32: builtins.balancedAllocation: must be >= 0"},
      {"builtins: {recentPlacements: x}\n",
       "file.yaml:3:30: builtins.recentPlacements: must be a finite number, "
       "got \"x\""},
      {"builtins: {leastRequested: 1}\n",
       "file.yaml:3:12: builtins.leastRequested: unknown key"},
      {"fallback: {coldCacheDeadline: 1x}\n",
       "file.yaml:3:31: fallback.coldCacheDeadline: invalid duration \"1x\": "
       "unknown unit \"x\" (examples: 500ms, 15s, 2m, 1h30m)"},
      {"fallback: {deadline: 1s}\n",
       "file.yaml:3:12: fallback.deadline: unknown key"},
      {"herd: {penaltyPerPlacement: 101}\n",
       "file.yaml:3:29: herd.penaltyPerPlacement: must be in [0, 100]"},
      {"herd: {penaltyPerPlacement: -1}\n",
       "file.yaml:3:29: herd.penaltyPerPlacement: must be in [0, 100]"},
      {"herd: {window: 0s}\n", "file.yaml:3:16: herd.window: must be > 0"},
      // preemption.
      {"preemption: {minCandidateNodesPercentage: 101}\n",
       "file.yaml:3:43: preemption.minCandidateNodesPercentage: must be an "
       "integer in [0, 100], got \"101\""},
      {"preemption: {minCandidateNodesAbsolute: 1.5}\n",
       "file.yaml:3:41: preemption.minCandidateNodesAbsolute: must be an "
       "integer in [0, 2147483647], got \"1.5\""},
      {"preemption: {minCandidateNodesPercentage: 0, "
       "minCandidateNodesAbsolute: 0}\n",
       "file.yaml:3:13: preemption: minCandidateNodesPercentage and "
       "minCandidateNodesAbsolute cannot both be 0"},
      {"preemption: {enable: false}\n",
       "file.yaml:3:14: preemption.enable: unknown key (did you mean "
       "enabled?)"},
      // leaderElection, http.
      {"leaderElection: {enabled: 1}\n",
       "file.yaml:3:27: leaderElection.enabled: must be true or false, got "
       "\"1\""},
      {"leaderElection: {leaseName: Lease}\n",
       "file.yaml:3:29: leaderElection.leaseName: must be a lowercase DNS-1123 "
       "subdomain (a-z, 0-9, '-', '.')"},
      {"leaderElection: {leaseNamespace: a.b}\n",
       "file.yaml:3:34: leaderElection.leaseNamespace: must be a lowercase "
       "DNS-1123 label (a-z, 0-9, '-')"},
      {"leaderElection: {leaseDuration: 10s}\n",
       "file.yaml:3:33: leaderElection.renewDeadline: must be < leaseDuration "
       "(10s)"},
      {"leaderElection: {renewDeadline: 2s}\n",
       "file.yaml:3:33: leaderElection.retryPeriod: must be < renewDeadline "
       "(2s)"},
      {"leaderElection: {retryPeriod: 0s}\n",
       "file.yaml:3:31: leaderElection.retryPeriod: must be > 0"},
      {"leaderElection: {leaseDurration: 1s}\n",
       "file.yaml:3:18: leaderElection.leaseDurration: unknown key (did you "
       "mean leaseDuration?)"},
      {"http: {listenAddress: '10260'}\n",
       "file.yaml:3:23: http.listenAddress: must be [host]:port with port in "
       "[0, 65535], got \"10260\""},
      {"http: {listenAddress: ':70000'}\n",
       "file.yaml:3:23: http.listenAddress: must be [host]:port with port in "
       "[0, 65535], got \":70000\""},
      {"http: {port: 1}\n", "file.yaml:3:8: http.port: unknown key"},
      // nodeAffinity.addedAffinity.
      {"nodeAffinity: {added: {}}\n",
       "file.yaml:3:16: nodeAffinity.added: unknown key"},
      {"nodeAffinity:\n  addedAffinity:\n"
       "    requiredDuringSchedulingIgnoredDuringExecution: "
       "{nodeSelectorTerms: []}\n",
       "file.yaml:5:73: nodeAffinity.addedAffinity."
       "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: must "
       "be a list of at least one term"},
      {"nodeAffinity:\n  addedAffinity:\n"
       "    requiredDuringSchedulingIgnoredDuringExecution:\n"
       "      nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: "
       "Near}]}]\n",
       "file.yaml:6:69: nodeAffinity.addedAffinity."
       "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchExpressions[0].operator: must be one of In, NotIn, Exists, "
       "DoesNotExist, Gt, Lt; got \"Near\""},
      {"nodeAffinity:\n  addedAffinity:\n"
       "    requiredDuringSchedulingIgnoredDuringExecution:\n"
       "      nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: "
       "In}]}]\n",
       "file.yaml:6:47: nodeAffinity.addedAffinity."
       "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchExpressions[0].values: must not be empty for In and NotIn"},
      {"nodeAffinity:\n  addedAffinity:\n"
       "    preferredDuringSchedulingIgnoredDuringExecution:\n"
       "      - {weight: 101, preference: {matchExpressions: [{key: a, "
       "operator: Exists}]}}\n",
       "file.yaml:6:18: nodeAffinity.addedAffinity."
       "preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be an "
       "integer in [1, 100]"},
      {"nodeAffinity:\n  addedAffinity:\n"
       "    preferredDuringSchedulingIgnoredDuringExecution:\n"
       "      - {weight: 1, preference: {matchFields: [{key: metadata.labels, "
       "operator: In, values: [a]}]}}\n",
       "file.yaml:6:54: nodeAffinity.addedAffinity."
       "preferredDuringSchedulingIgnoredDuringExecution[0].preference."
       "matchFields[0].key: must be metadata.name, the only field a node "
       "selector may match"},
      {"nodeAffinity:\n  addedAffinity:\n"
       "    preferredDuringSchedulingIgnoredDuringExecution:\n"
       "      - {weight: 1, preference: {matchExpressions: [{key: n, operator: "
       "Gt, values: [x]}]}}\n",
       "file.yaml:6:84: nodeAffinity.addedAffinity."
       "preferredDuringSchedulingIgnoredDuringExecution[0].preference."
       "matchExpressions[0].values: must hold exactly one integer for Gt and "
       "Lt"},
      {"builtins: {taintToleration: -1}\n",
       "file.yaml:3:29: builtins.taintToleration: must be >= 0"},
      {"metrics: [{name: imageLocality, query: q}]\nbackend: {url: "
       "'http://x'}\n",
       "file.yaml:3:18: metrics[0].name: \"imageLocality\" is a built-in term "
       "name"},
      // YAML syntax.
      {"backend: {url: x\n",
       "file.yaml:4:1: invalid YAML: end of map flow not found"},
      {"---\nbackend: {}\n---\nhttp: {}\n",
       // The header is the first document; the second starts on line 4.
       "file.yaml:4:1: expected one YAML document, found several"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Config> config = Load(c.body);
    ASSERT_FALSE(config.ok()) << c.body;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument)
        << c.body;
    EXPECT_EQ(std::string(config.status().message()), c.want) << c.body;
  }
}

// Debian's yaml-cpp 0.7's LoadAll never returns on a document that starts
// with a token its parser has no rule for, such as ',' (common/yaml.h):
// found by tests/fuzz/config_fuzz. The loader reports it where it is.
TEST(LoadConfigTest, BackendCertificateHeadersAndProxy) {
  absl::StatusOr<Config> config = Load(
      "backend:\n"
      "  url: https://mimir:8080/prometheus\n"
      "  certFile: /tls/tls.crt\n"
      "  keyFile: /tls/tls.key\n"
      "  headers:\n"
      "    X-Scope-OrgID: tenant-a\n"
      "    X-Secret: {valueFile: /etc/secret}\n"
      "  proxyURL: http://proxy:3128\n");
  ASSERT_TRUE(config.ok()) << config.status();
  const BackendConfig& b = config->backend;
  EXPECT_EQ(b.cert_file, "/tls/tls.crt");
  EXPECT_EQ(b.key_file, "/tls/tls.key");
  ASSERT_EQ(b.headers.size(), 2u);
  EXPECT_EQ(b.headers[0].name, "X-Scope-OrgID");
  EXPECT_EQ(b.headers[0].value, "tenant-a");
  EXPECT_EQ(b.headers[1].name, "X-Secret");
  EXPECT_EQ(b.headers[1].value_file, "/etc/secret");
  EXPECT_EQ(b.proxy_url, "http://proxy:3128");
}

// A metric read from the Node needs no backend; its filter is kept.
TEST(LoadConfigTest, NodeAttributeMetricsAndFilters) {
  absl::StatusOr<Config> config = Load(
      "metrics:\n"
      "  - name: price\n"
      "    source: {nodeAnnotation: example.com/hourly-cost}\n"
      "    weight: 2\n"
      "    filter: {max: 3}\n"
      "  - name: tier\n"
      "    source: {nodeLabel: example.com/tier}\n"
      "    filter: {min: -1.5, max: 7}\n"
      "  - name: cost2\n"
      "    source: {nodeAnnotation: example.com/hourly-cost}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->profiles[0].metrics.size(), 3u);
  const MetricConfig& price = config->profiles[0].metrics[0];
  EXPECT_EQ(price.origin, (MetricOrigin{MetricOrigin::Kind::kNodeAnnotation,
                                        "example.com/hourly-cost"}));
  EXPECT_EQ(price.weight, 2);
  EXPECT_EQ(price.filter.max, 3);
  EXPECT_FALSE(price.filter.min.has_value());
  EXPECT_TRUE(price.query.empty());
  const MetricConfig& tier = config->profiles[0].metrics[1];
  EXPECT_EQ(tier.origin, (MetricOrigin{MetricOrigin::Kind::kNodeLabel,
                                       "example.com/tier"}));
  EXPECT_EQ(tier.filter.min, -1.5);
  EXPECT_EQ(tier.filter.max, 7);
  EXPECT_TRUE(QueryMetrics(*config).empty());
  // The attribute's annotation once, and each filtered metric's bounds.
  EXPECT_EQ(NodeAnnotationKeys(*config),
            (std::vector<std::string>{"example.com/hourly-cost",
                                      "max.filter.metrics-scheduler.io/price",
                                      "min.filter.metrics-scheduler.io/price",
                                      "max.filter.metrics-scheduler.io/tier",
                                      "min.filter.metrics-scheduler.io/tier"}));

  // Mixed: only the query goes to the backend.
  config = Load(WithMetric("") +
                "  - name: price\n"
                "    source: {nodeLabel: price}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  std::vector<MetricConfig> queried = QueryMetrics(*config);
  ASSERT_EQ(queried.size(), 1u);
  EXPECT_EQ(queried[0].name, "m");
  EXPECT_TRUE(NodeAnnotationKeys(*config).empty());
}

// Thresholds scoped by pod class and node pool: each scope's sides and
// bounds as written; a bound a scope leaves out is none; a filter may have
// scopes alone.
TEST(LoadConfigTest, FilterScopes) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  absl::StatusOr<Config> config = Load(
      "backend: {url: http://p:9090}\n"
      "metrics:\n"
      "  - name: cpu\n"
      "    query: q\n"
      "    filter:\n"
      "      max: 0.85\n"
      "      scopes:\n"
      "        - pods: {minPriority: 1000}\n"
      "          max: 0.7\n"
      "        - nodes: {matchLabels: {pool: batch}}\n"
      "          max: 0.95\n"
      "        - pods: {matchLabels: {tier: batch}}\n"
      "          nodes:\n"
      "            matchExpressions:\n"
      "              - {key: pool, operator: In, values: [batch, spot]}\n"
      "          max: 0.98\n"
      "  - name: memory\n"
      "    query: q2\n"
      "    filter:\n"
      "      scopes:\n"
      "        - pods:\n"
      "            maxPriority: -1\n"
      "            matchExpressions: [{key: tier, operator: DoesNotExist}]\n"
      "          min: 0.1\n");
  ASSERT_TRUE(config.ok()) << config.status();
  const MetricThreshold& cpu = config->profiles[0].metrics[0].filter;
  EXPECT_EQ(cpu.max, 0.85);
  EXPECT_FALSE(cpu.min.has_value());
  ASSERT_EQ(cpu.scopes.size(), 3u);
  EXPECT_EQ(cpu.scopes[0],
            (ThresholdScope{.pods = PodClass{.min_priority = 1000},
                            .bounds = {.max = 0.7, .min = -kInf}}));
  EXPECT_EQ(cpu.scopes[1],
            (ThresholdScope{
                .nodes = LabelSelector{.match_labels = {{"pool", "batch"}}},
                .bounds = {.max = 0.95, .min = -kInf}}));
  EXPECT_EQ(
      cpu.scopes[2],
      (ThresholdScope{
          .nodes = LabelSelector{.match_expressions = {{
                                     .key = "pool",
                                     .op = LabelOperator::kIn,
                                     .values = {"batch", "spot"},
                                 }}},
          .pods =
              PodClass{.labels =
                           LabelSelector{.match_labels = {{"tier", "batch"}}}},
          .bounds = {.max = 0.98, .min = -kInf}}));
  const MetricThreshold& memory = config->profiles[0].metrics[1].filter;
  EXPECT_FALSE(memory.max.has_value());
  EXPECT_FALSE(memory.min.has_value());
  ASSERT_EQ(memory.scopes.size(), 1u);
  EXPECT_EQ(
      memory.scopes[0],
      (ThresholdScope{
          .pods =
              PodClass{.labels =
                           LabelSelector{.match_expressions = {{
                                             .key = "tier",
                                             .op = LabelOperator::kDoesNotExist,
                                         }}},
                       .max_priority = -1},
          .bounds = {.max = kInf, .min = 0.1}}));
  // Each metric with a filter has its nodes' bound annotations kept.
  EXPECT_EQ(
      NodeAnnotationKeys(*config),
      (std::vector<std::string>{"max.filter.metrics-scheduler.io/cpu",
                                "min.filter.metrics-scheduler.io/cpu",
                                "max.filter.metrics-scheduler.io/memory",
                                "min.filter.metrics-scheduler.io/memory"}));
}

// The resource metrics API needs no URL: it is read through the apiserver.
TEST(LoadConfigTest, MetricsServerBackend) {
  absl::StatusOr<Config> config = Load(
      "backend: {type: metricsServer, timeout: 3s}\n"
      "metrics:\n"
      "  - name: cpu\n"
      "    query: cpuUtilization\n"
      "    filter: {max: 0.9}\n"
      "  - {name: mem, query: memoryUtilization}\n"
      "  - {name: cores, query: cpu}\n"
      "  - {name: bytes, query: memory}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->backend.type, BackendType::kMetricsServer);
  EXPECT_EQ(config->backend.timeout, absl::Seconds(3));
  EXPECT_TRUE(config->backend.url.empty());
  ASSERT_EQ(QueryMetrics(*config).size(), 4u);
  EXPECT_EQ(config->profiles[0].metrics[0].query, "cpuUtilization");

  const std::pair<std::string, std::string> errors[] = {
      {"backend: {type: metricsServer}\nmetrics:\n  - {name: m, query: "
       "'rate(x[1m])'}\n",
       "file.yaml:5:22: metrics[0].query: with backend type metricsServer, "
       "one of cpu, memory, cpuUtilization, memoryUtilization; got "
       "\"rate(x[1m])\""},
      {"backend: {type: metricsServer, url: 'https://p'}\n",
       "file.yaml:3:37: backend.url: not used by type metricsServer, which "
       "reads through the scheduler's own apiserver connection"},
      {"backend: {type: metricsServer, tokenFile: /t}\n",
       "file.yaml:3:43: backend.tokenFile: not used by type metricsServer, "
       "which reads through the scheduler's own apiserver connection"},
      {"backend: {type: metricsServer}\nmetrics:\n  - name: m\n"
       "    query: cpu\n    join: {label: node}\n",
       "file.yaml:7:11: metrics[0].join: not used with backend type "
       "metricsServer, whose items name their node"},
  };
  for (const auto& [body, want] : errors) {
    absl::StatusOr<Config> c = Load(body);
    EXPECT_EQ(c.status().message(), want) << body;
  }
}

// The issue's two-profile example: each profile its own metrics,
// weights, thresholds and herd; a query metric named alike is one series,
// fetched once for both.
TEST(LoadConfigTest, Profiles) {
  absl::StatusOr<Config> c = Load(
      "backend: {url: http://prometheus:9090}\n"
      "profiles:\n"
      "  - schedulerName: metrics-scheduler\n"
      "    metrics:\n"
      "      - name: latency\n"
      "        query: http_latency_seconds\n"
      "      - name: cost\n"
      "        source: {nodeAnnotation: example.com/cost}\n"
      "  - schedulerName: latency-first\n"
      "    metrics:\n"
      "      - name: latency\n"
      "        query: http_latency_seconds\n"
      "        weight: 5\n"
      "        filter: {max: 0.8}\n"
      "      - name: errors\n"
      "        query: error_rate\n"
      "      - name: zone_cost\n"
      "        source: {nodeAnnotation: example.com/zone-cost}\n"
      "    builtins: {leastAllocated: 0}\n"
      "    herd: {penaltyPerPlacement: 20, window: 1m}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->profiles.size(), 2u);
  EXPECT_EQ(SchedulerNames(*c),
            (std::vector<std::string>{"metrics-scheduler", "latency-first"}));
  const ProfileConfig& first = c->profiles[0];
  const ProfileConfig& second = c->profiles[1];
  EXPECT_EQ(FindProfile(*c, "latency-first"), &second);
  EXPECT_EQ(FindProfile(*c, "default-scheduler"), nullptr);
  EXPECT_EQ(first.builtins[BuiltinTerm::kLeastAllocated], 1);
  EXPECT_EQ(first.herd.window, absl::Seconds(30));
  EXPECT_EQ(second.builtins[BuiltinTerm::kLeastAllocated], 0);
  EXPECT_EQ(second.herd.penalty_per_placement, 20);
  EXPECT_EQ(second.herd.window, absl::Minutes(1));
  EXPECT_EQ(first.metrics[0].weight, 1);
  EXPECT_FALSE(first.metrics[0].filter.max.has_value());
  EXPECT_EQ(second.metrics[0].weight, 5);
  EXPECT_EQ(second.metrics[0].filter.max, 0.8);

  std::vector<std::string> fetched;
  for (const MetricConfig& m : QueryMetrics(*c)) fetched.push_back(m.name);
  EXPECT_EQ(fetched, (std::vector<std::string>{"latency", "errors"}));
  // Attribute annotations, and the bounds of the metric with a filter.
  EXPECT_EQ(
      NodeAnnotationKeys(*c),
      (std::vector<std::string>{
          "example.com/cost", "max.filter.metrics-scheduler.io/latency",
          "min.filter.metrics-scheduler.io/latency", "example.com/zone-cost"}));
  EXPECT_TRUE(ConfigWarnings(*c).empty());
}

// One query under two names is legal, but fetched twice: said once.
TEST(LoadConfigTest, OneQueryUnderTwoNamesIsAWarning) {
  absl::StatusOr<Config> c = Load(
      "backend: {url: http://prometheus:9090}\n"
      "profiles:\n"
      "  - schedulerName: a\n"
      "    metrics: [{name: latency, query: http_latency_seconds}]\n"
      "  - schedulerName: b\n"
      "    metrics: [{name: lat, query: http_latency_seconds}]\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(QueryMetrics(*c).size(), 2u);
  EXPECT_THAT(ConfigWarnings(*c),
              ::testing::ElementsAre(
                  "metrics \"latency\" and \"lat\" fetch the same query: "
                  "give them one name to fetch it once"));
}

TEST(LoadConfigTest, ExtenderListenAddress) {
  absl::StatusOr<Config> config = Load("extender: {listenAddress: ':10262'}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->extender.listen_address, ":10262");
  EXPECT_EQ(Load("")->extender.listen_address, "");  // off by default
  EXPECT_EQ(std::string(Load("extender: {listenAddress: '10262'}\n").status().message()),
            "file.yaml:3:27: extender.listenAddress: must be [host]:port with "
            "port in [0, 65535], got \"10262\"");
  EXPECT_EQ(Load("extender: {port: 1}\n").status().message(),
            "file.yaml:3:12: extender.port: unknown key");
}

TEST(LoadConfigTest, AddedAffinity) {
  absl::StatusOr<Config> c = Load(R"(
builtins: {nodeAffinity: 5, taintToleration: 0, imageLocality: 0.5}
nodeAffinity:
  addedAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions: [{key: pool, operator: In, values: [web, api]}]
        - matchFields: [{key: metadata.name, operator: In, values: [n1]}]
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 30
        preference:
          matchExpressions: [{key: lifecycle, operator: NotIn, values: [spot]},
                             {key: cores, operator: Gt, values: ["8"]}]
)");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kNodeAffinity], 5);
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kTaintToleration], 0);
  EXPECT_EQ(c->profiles[0].builtins[BuiltinTerm::kImageLocality], 0.5);
  const NodeAffinityConfig& a = c->node_affinity;
  ASSERT_EQ(a.added_required.size(), 2u);
  EXPECT_EQ(a.added_required[0].match_expressions[0],
            (NodeSelectorRequirement{"pool", SelectorOperator::kIn, {"web", "api"}}));
  EXPECT_EQ(a.added_required[1].match_fields[0].values,
            std::vector<std::string>{"n1"});
  ASSERT_EQ(a.added_preferred.size(), 1u);
  EXPECT_EQ(a.added_preferred[0].weight, 30);
  EXPECT_EQ(a.added_preferred[0].preference.match_expressions[1],
            (NodeSelectorRequirement{"cores", SelectorOperator::kGt, {"8"}}));
}

TEST(LoadConfigTest, TextThatHangsTheYamlParserIsAnError) {
  struct Case {
    std::string text;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {",", "file.yaml:1:1: invalid YAML: unexpected ','"},
           {std::string(",\0s", 3),
            "file.yaml:1:2: invalid YAML: control character 0x00 is not "
            "allowed in YAML"},
           {std::string("\0,1.1+5s \0s", 11),
            "file.yaml:1:1: invalid YAML: control character 0x00 is not "
            "allowed in YAML"},
           {"!+,5s", "file.yaml:1:3: invalid YAML: unexpected ','"},
           {"# c\n--- &a ,", "file.yaml:2:8: invalid YAML: unexpected ','"},
           {"&a x\n, z", "file.yaml:2:1: invalid YAML: unexpected ','"},
           {absl::StrCat(kHeader, "---\n  ,x"),
            "file.yaml:4:3: invalid YAML: unexpected ','"},
       }) {
    absl::StatusOr<Config> config = LoadConfigString(c.text, "file.yaml");
    ASSERT_FALSE(config.ok()) << c.text;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(config.status().message()), c.want);
  }
  // A ',' anywhere else is left to the parser.
  EXPECT_TRUE(Load("schedulerName: a,b\n").status().message().find(
                  "invalid YAML") == absl::string_view::npos);
}

TEST(LoadConfigTest, ApiVersionAndKind) {
  struct Case {
    std::string text;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {"", "file.yaml:1:1: empty configuration; expected apiVersion: "
                "metrics-scheduler/v1alpha1"},
           {"- a\n", "file.yaml:1:1: must be a mapping"},
           {"kind: MetricsSchedulerConfiguration\n",
            "file.yaml:1:1: apiVersion: required; expected "
            "metrics-scheduler/v1alpha1"},
           {"apiVersion: v1\nkind: MetricsSchedulerConfiguration\n",
            "file.yaml:1:13: apiVersion: must be metrics-scheduler/v1alpha1, "
            "got \"v1\""},
           {"apiVersion: metrics-scheduler/v1alpha1\n",
            "file.yaml:1:1: kind: required; expected "
            "MetricsSchedulerConfiguration"},
           {"apiVersion: metrics-scheduler/v1alpha1\nkind: Pod\n",
            "file.yaml:2:7: kind: must be MetricsSchedulerConfiguration, got "
            "\"Pod\""},
       }) {
    absl::StatusOr<Config> config = LoadConfigString(c.text, "file.yaml");
    ASSERT_FALSE(config.ok()) << c.text;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(config.status().message()), c.want);
  }
}

TEST(LoadConfigFileTest, ReadsFileAndNamesItInErrors) {
  std::string path = ::testing::TempDir() + "/config_test_" +
                     std::to_string(getpid()) + ".yaml";
  {
    std::ofstream out(path);
    out << kHeader << "metrics:\n  - name: m\n    query: q\n    weight: -1\n";
  }
  absl::StatusOr<Config> config = LoadConfigFile(path);
  std::remove(path.c_str());
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(config.status().message()),
            path + ":6:13: metrics[0].weight: must be >= 0");
}

TEST(LoadConfigFileTest, MissingFileIsNotFound) {
  absl::StatusOr<Config> config = LoadConfigFile("/nonexistent/ms.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(std::string(config.status().message()),
            "cannot open config file /nonexistent/ms.yaml: No such file or "
            "directory");
}

TEST(LoadConfigFileTest, ValidFile) {
  std::string path = ::testing::TempDir() + "/config_ok_" +
                     std::to_string(getpid()) + ".yaml";
  {
    std::ofstream out(path);
    out << kHeader << "schedulerName: s1\n";
  }
  absl::StatusOr<Config> config = LoadConfigFile(path);
  std::remove(path.c_str());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->profiles[0].scheduler_name, "s1");
}

}  // namespace
}  // namespace ms
