// Metric presets and risk (config/presets.h): what each expands to, worked
// out; every preset loads with its backend; keys beside a preset replace
// its own; errors name the file, line and column.
#include "config/presets.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ms {
namespace {

using ::testing::HasSubstr;

// The two lines every configuration starts with; bodies begin on line 3.
constexpr char kHeader[] =
    "apiVersion: metrics-scheduler/v1alpha1\n"
    "kind: MetricsSchedulerConfiguration\n";
// Line 3: a Prometheus backend; metrics' items start on line 5.
constexpr char kPrometheus[] =
    "backend: {url: http://prometheus:9090}\nmetrics:\n";

absl::StatusOr<Config> Load(const std::string& body) {
  return LoadConfigString(absl::StrCat(kHeader, body), "file.yaml");
}

// The only metric of a configuration with a Prometheus backend.
MetricConfig LoadOne(const std::string& metrics) {
  absl::StatusOr<Config> c = Load(absl::StrCat(kPrometheus, metrics));
  EXPECT_TRUE(c.ok()) << c.status();
  if (!c.ok() || c->profiles[0].metrics.size() != 1) return {};
  return c->profiles[0].metrics[0];
}

const char kCpuQuery[] =
    "1 - avg by (instance) (sum without (mode) "
    "(rate(node_cpu_seconds_total{mode=~\"idle|iowait|steal\"}[2m])))";

TEST(PresetTest, CpuExpandsToItsQueryJoinAndRange) {
  MetricConfig m = LoadOne("  - preset: kube-prometheus/cpu\n");
  EXPECT_EQ(m.name, "cpu");
  EXPECT_EQ(m.query, kCpuQuery);
  EXPECT_EQ(m.join.label, "instance");
  EXPECT_EQ(m.join.match, JoinMatch::kAddress);
  EXPECT_EQ(m.normalization.type, NormalizationType::kRange);
  EXPECT_EQ(m.normalization.min, 0);
  EXPECT_EQ(m.normalization.max, 1);
  // Everything else is a metric's default.
  EXPECT_EQ(m.weight, 1);
  EXPECT_EQ(m.direction, Direction::kLower);
  EXPECT_EQ(m.missing, MissingPolicy::kNeutral);
  EXPECT_FALSE(m.filter.any());
}

TEST(PresetTest, EachStackQueriesItsOwnLabels) {
  // kube-prometheus and OpenShift: cAdvisor's root cgroup (`id="/"`);
  // victoria-metrics-k8s-stack drops `id`: the kubelet's
  // /metrics/resource instead. Both join by the kubelet target's `node`.
  for (const char* stack : {"kube-prometheus", "openshift"}) {
    MetricConfig m =
        LoadOne(absl::StrCat("  - preset: ", stack, "/memory-working-set\n"));
    EXPECT_EQ(m.query,
              "sum by (node) (container_memory_working_set_bytes"
              "{metrics_path=\"/metrics/cadvisor\", id=\"/\"}) / sum by "
              "(node) (machine_memory_bytes{metrics_path=\"/metrics/"
              "cadvisor\"})")
        << stack;
    EXPECT_EQ(m.join.label, "node");
    EXPECT_EQ(m.join.match, JoinMatch::kName);
    // A tested query's join is written out, never detected.
    EXPECT_FALSE(m.join.automatic);
  }
  MetricConfig vm = LoadOne("  - preset: victoriametrics/memory-working-set\n");
  EXPECT_EQ(vm.name, "memory_working_set");
  EXPECT_EQ(vm.query,
            "sum by (node) (node_memory_working_set_bytes{metrics_path=\"/"
            "metrics/resource\"}) / sum by (node) (machine_memory_bytes"
            "{metrics_path=\"/metrics/cadvisor\"})");
  // The node-exporter presets are the same everywhere.
  EXPECT_EQ(LoadOne("  - preset: victoriametrics/cpu\n").query, kCpuQuery);
  EXPECT_EQ(LoadOne("  - preset: openshift/cpu\n").query, kCpuQuery);
  EXPECT_EQ(LoadOne("  - preset: kube-prometheus/memory\n").query,
            "1 - sum by (instance) (node_memory_MemAvailable_bytes) / sum by "
            "(instance) (node_memory_MemTotal_bytes)");
}

TEST(PresetTest, PressureTakesAWindow) {
  MetricConfig m =
      LoadOne("  - preset: {name: kube-prometheus/io-pressure, window: 5m}\n");
  EXPECT_EQ(m.name, "io_pressure");
  EXPECT_EQ(m.query,
            "max by (instance) "
            "(rate(node_pressure_io_waiting_seconds_total[5m]))");
  EXPECT_EQ(LoadOne("  - preset: kube-prometheus/memory-pressure\n").query,
            "max by (instance) "
            "(rate(node_pressure_memory_waiting_seconds_total[2m]))");
  EXPECT_EQ(LoadOne("  - preset: kube-prometheus/cpu-pressure\n").name,
            "cpu_pressure");
}

TEST(PresetTest, LatencyJoinsPodsToTheirNodes) {
  MetricConfig m = LoadOne(
      "  - preset:\n"
      "      name: kube-prometheus/latency\n"
      "      histogram: http_request_duration_seconds\n");
  EXPECT_EQ(m.name, "http_request_duration_seconds_p95");
  EXPECT_EQ(m.query,
            "histogram_quantile(0.95, sum by (node, le) "
            "(rate(http_request_duration_seconds_bucket[5m]) * on "
            "(namespace, pod) group_left (node) topk by (namespace, pod) (1, "
            "max by (namespace, pod, node) (kube_pod_info{node!=\"\"}))))");
  EXPECT_EQ(m.join.label, "node");
  EXPECT_EQ(m.normalization.type, NormalizationType::kRatio);

  // Every parameter: the quantile names the metric (0.999 -> p99.9).
  m = LoadOne(
      "  - preset: {name: openshift/latency, histogram: rpc_seconds, "
      "quantile: 0.999, window: 90s, matchers: 'job=\"web\", "
      "code!~\"5..\"'}\n");
  EXPECT_EQ(m.name, "rpc_seconds_p99.9");
  EXPECT_THAT(m.query, HasSubstr("histogram_quantile(0.999, sum by (node, le) "
                                 "(rate(rpc_seconds_bucket{job=\"web\", "
                                 "code!~\"5..\"}[90s]) * on"));
}

TEST(PresetTest, KeysBesideThePresetReplaceItsOwn) {
  MetricConfig m = LoadOne(
      "  - preset: kube-prometheus/cpu\n"
      "    name: node_cpu\n"
      "    weight: 3\n"
      "    filter: {max: 0.8}\n"
      "    normalization: {type: target, target: 0.6, max: 1}\n"
      "    join: {label: instance, regex: '(.*):9100'}\n"
      "    query: 'avg by (instance) (cpu_busy)'\n");
  EXPECT_EQ(m.name, "node_cpu");
  EXPECT_EQ(m.weight, 3);
  EXPECT_EQ(m.filter.max, 0.8);
  EXPECT_EQ(m.normalization.type, NormalizationType::kTarget);
  EXPECT_EQ(m.normalization.target, 0.6);
  // A key is replaced whole: the join's match is its default again.
  EXPECT_EQ(m.join.label, "instance");
  EXPECT_EQ(m.join.match, JoinMatch::kName);
  EXPECT_EQ(m.join.regex, "(.*):9100");
  EXPECT_EQ(m.query, "avg by (instance) (cpu_busy)");

  // An explicit null is not written: the preset's value holds.
  m = LoadOne("  - preset: kube-prometheus/cpu\n    name:\n    join:\n");
  EXPECT_EQ(m.name, "cpu");
  EXPECT_EQ(m.join.label, "instance");
}

TEST(PresetTest, RiskIsTheMeanPlusKDeviationsOverTheWindow) {
  // Mean + 1 sigma of utilisation in [0, 1] reaches 2: the preset's range
  // grows to [0, 2], so the score is 100 (1 - (mean + sigma) / 2),
  // LoadVariationRiskBalancing's with margin 1.
  MetricConfig m = LoadOne(
      "  - preset: kube-prometheus/cpu\n"
      "    risk: {k: 1, window: 10m, step: 1m}\n");
  EXPECT_EQ(m.query, absl::StrCat("avg_over_time((", kCpuQuery,
                                  ")[10m:1m]) + 1 * stddev_over_time((",
                                  kCpuQuery, ")[10m:1m])"));
  EXPECT_EQ(m.normalization.type, NormalizationType::kRange);
  EXPECT_EQ(m.normalization.max, 2);
  EXPECT_EQ(m.name, "cpu");

  // Defaults k 1, window 15m, step 1m; a written normalization stays.
  m = LoadOne(
      "  - preset: kube-prometheus/memory\n"
      "    risk: {}\n"
      "    normalization: minmax\n");
  EXPECT_THAT(m.query, HasSubstr(")[15m:1m]) + 1 * stddev_over_time(("));
  EXPECT_EQ(m.normalization.type, NormalizationType::kMinMax);

  // Any PromQL query; k = 0 is the mean alone; k = 0.5 reaches 1.5 x 100.
  EXPECT_EQ(LoadOne("  - {name: q, query: 'up', risk: {k: 0, window: 90s, "
                    "step: 1500ms}}\n")
                .query,
            "avg_over_time((up)[90s:1500ms])");
  m = LoadOne("  - {preset: kube-prometheus/cpu, risk: {k: 0.5}}\n");
  EXPECT_EQ(m.normalization.max, 1.5);
  EXPECT_THAT(m.query, HasSubstr(" + 0.5 * stddev_over_time(("));
}

TEST(PresetTest, RiskKeepsAQueryCommentAwayFromItsParenthesis) {
  EXPECT_EQ(
      RiskQuery("up # all\n",
                {.k = 2, .window = absl::Hours(1), .step = absl::Minutes(5)}),
      "avg_over_time((up # all\n)[1h:5m]) + 2 * "
      "stddev_over_time((up # all\n)[1h:5m])");
}

TEST(PresetTest, OtherBackendsHaveTheirOwnPresets) {
  absl::StatusOr<Config> c = Load(
      "backend: {type: metricsServer}\n"
      "metrics:\n"
      "  - preset: metrics-server/cpu\n"
      "  - {preset: metrics-server/memory, filter: {max: 0.9}}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  const std::vector<MetricConfig>& ms = c->profiles[0].metrics;
  EXPECT_EQ(ms[0].name, "cpu");
  EXPECT_EQ(ms[0].query, "cpuUtilization");
  EXPECT_EQ(ms[1].query, "memoryUtilization");
  EXPECT_EQ(ms[1].normalization.max, 1);

  c = Load(
      "backend: {type: sysdig, url: https://sysdig}\n"
      "metrics:\n"
      "  - preset: sysdig/memory\n");
  ASSERT_TRUE(c.ok()) << c.status();
  const MetricConfig& m = c->profiles[0].metrics[0];
  EXPECT_EQ(m.query, "memory.used.percent");
  EXPECT_EQ(m.join.label, "host.hostName");
  EXPECT_EQ(m.normalization.max, 100);
}

// The configuration `preset` alone loads with, for its backend.
std::string ConfigFor(const MetricPreset& p) {
  std::string preset =
      p.params.histogram
          ? absl::StrCat("{name: ", p.name(), ", histogram: h_seconds}")
          : p.name();
  std::string backend = "backend: {url: http://prometheus:9090}\n";
  if (p.backend == BackendType::kSysdig) {
    backend = "backend: {type: sysdig, url: https://sysdig}\n";
  } else if (p.backend == BackendType::kMetricsServer) {
    backend = "backend: {type: metricsServer}\n";
  }
  return absl::StrCat(backend, "metrics:\n  - preset: ", preset, "\n");
}

TEST(PresetTest, EveryPresetLoadsWithItsBackendAndWithRisk) {
  ASSERT_GE(MetricPresets().size(), 25u);
  for (const MetricPreset& p : MetricPresets()) {
    absl::StatusOr<Config> c = Load(ConfigFor(p));
    ASSERT_TRUE(c.ok()) << p.name() << ": " << c.status();
    const MetricConfig& m = c->profiles[0].metrics[0];
    EXPECT_FALSE(m.query.empty()) << p.name();
    EXPECT_EQ(m.name,
              p.metric_name != nullptr ? p.metric_name : "h_seconds_p95");
    if (p.backend != BackendType::kPrometheus) continue;
    c = Load(absl::StrCat(ConfigFor(p), "    risk: {k: 1}\n"));
    ASSERT_TRUE(c.ok()) << p.name() << ": " << c.status();
    EXPECT_THAT(c->profiles[0].metrics[0].query,
                HasSubstr("[15m:1m]) + 1 * stddev_over_time(("));
  }
}

TEST(PresetTest, OnePresetInTwoProfilesIsOneFetch) {
  absl::StatusOr<Config> c = Load(
      "backend: {url: http://prometheus:9090}\n"
      "profiles:\n"
      "  - schedulerName: a\n"
      "    metrics: [{preset: kube-prometheus/cpu, weight: 2}]\n"
      "  - schedulerName: b\n"
      "    metrics: [{preset: kube-prometheus/cpu, filter: {max: 0.7}}]\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(QueryMetrics(*c).size(), 1u);
}

TEST(PresetTest, Errors) {
  struct Case {
    std::string metrics;  // from line 5
    std::string want;
  };
  const std::string kPromList =
      "kube-prometheus/{cpu, memory, memory-working-set, cpu-pressure, "
      "memory-pressure, io-pressure, latency}, openshift/{cpu, memory, "
      "memory-working-set, cpu-pressure, memory-pressure, io-pressure, "
      "latency}, victoriametrics/{cpu, memory, memory-working-set, "
      "cpu-pressure, memory-pressure, io-pressure, latency}";
  const std::vector<Case> cases = {
      {"  - preset: kube-prometheus/cpus\n",
       "file.yaml:5:13: metrics[0].preset: unknown preset "
       "\"kube-prometheus/cpus\"; with backend type prometheus: " +
           kPromList},
      {"  - preset: sysdig/cpu\n",
       "file.yaml:5:13: metrics[0].preset: sysdig/cpu needs backend type "
       "sysdig; the backend type is prometheus, whose presets are " +
           kPromList},
      {"  - preset: [kube-prometheus/cpu]\n",
       "file.yaml:5:13: metrics[0].preset: must be a preset's name, or a "
       "mapping of its name and parameters"},
      {"  - preset: {window: 2m}\n",
       "file.yaml:5:13: metrics[0].preset.name: required"},
      {"  - preset: {name: kube-prometheus/memory, window: 2m}\n",
       "file.yaml:5:44: metrics[0].preset.window: unknown key"},
      {"  - preset: {name: kube-prometheus/cpu, windw: 2m}\n",
       "file.yaml:5:41: metrics[0].preset.windw: unknown key (did you mean "
       "window?)"},
      {"  - preset: {name: kube-prometheus/cpu, window: 0s}\n",
       "file.yaml:5:49: metrics[0].preset.window: must be > 0"},
      {"  - preset: kube-prometheus/latency\n",
       "file.yaml:5:13: metrics[0].preset.histogram: required by "
       "kube-prometheus/latency: the histogram's name, e.g. {name: "
       "kube-prometheus/latency, histogram: http_request_duration_seconds}"},
      {"  - preset: {name: kube-prometheus/latency, histogram: h_bucket}\n",
       "file.yaml:5:56: metrics[0].preset.histogram: must be a metric name "
       "without the _bucket suffix ([a-zA-Z_:][a-zA-Z0-9_:]*), got "
       "\"h_bucket\""},
      {"  - preset: {name: kube-prometheus/latency, histogram: 'a-b'}\n",
       "file.yaml:5:56: metrics[0].preset.histogram: must be a metric name "
       "without the _bucket suffix ([a-zA-Z_:][a-zA-Z0-9_:]*), got \"a-b\""},
      {"  - preset: {name: kube-prometheus/latency, histogram: h, "
       "quantile: 1}\n",
       "file.yaml:5:69: metrics[0].preset.quantile: must be > 0 and < 1"},
      {"  - preset: {name: kube-prometheus/latency, histogram: h, "
       "matchers: 'job=web'}\n",
       "file.yaml:5:69: metrics[0].preset.matchers: must be PromQL label "
       "matchers separated by commas, such as job=\"web\", "
       "namespace=~\"shop|cart\""},
      {"  - preset: kube-prometheus/cpu\n    source: {nodeLabel: a}\n",
       "file.yaml:6:13: metrics[0].source: not used with preset, which is a "
       "query"},
      {"  - presets: kube-prometheus/cpu\n",
       "file.yaml:5:5: metrics[0].presets: unknown key (did you mean "
       "preset?)"},
      // A name the preset gave points at the preset.
      {"  - preset: kube-prometheus/cpu\n  - preset: openshift/cpu\n",
       "file.yaml:6:13: metrics[1].name: duplicate metric name \"cpu\""},
      // risk.
      {"  - preset: kube-prometheus/cpu\n    risk: {k: -1}\n",
       "file.yaml:6:15: metrics[0].risk.k: must be a finite number >= 0"},
      {"  - preset: kube-prometheus/cpu\n    risk: {window: 1m, step: 2m}\n",
       "file.yaml:6:30: metrics[0].risk.step: must be <= window (1m)"},
      {"  - preset: kube-prometheus/cpu\n    risk: {step: 1.5ms}\n",
       "file.yaml:6:18: metrics[0].risk.step: must be a whole number of "
       "milliseconds"},
      {"  - preset: kube-prometheus/cpu\n    risk: {sigma: 1}\n",
       "file.yaml:6:12: metrics[0].risk.sigma: unknown key"},
      {"  - preset: kube-prometheus/cpu\n    risk: 1\n",
       "file.yaml:6:11: metrics[0].risk: must be a mapping"},
      {"  - {name: m, source: {nodeLabel: a}, risk: {}}\n",
       "file.yaml:5:45: metrics[0].risk: only for a metric with a query; a "
       "node attribute has no history to take a mean over"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Config> config = Load(absl::StrCat(kPrometheus, c.metrics));
    ASSERT_FALSE(config.ok()) << c.metrics;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(config.status().message()), c.want) << c.metrics;
  }
}

TEST(PresetTest, APresetOrRiskForAnotherBackendIsAnError) {
  const std::pair<std::string, std::string> cases[] = {
      {"backend: {type: sysdig, url: https://sysdig}\nmetrics:\n"
       "  - preset: kube-prometheus/cpu\n",
       "file.yaml:5:13: metrics[0].preset: kube-prometheus/cpu needs backend "
       "type prometheus; the backend type is sysdig, whose presets are "
       "sysdig/{cpu, memory}"},
      {"backend: {type: metricsServer}\nmetrics:\n"
       "  - preset: victoriametrics/memory\n",
       "file.yaml:5:13: metrics[0].preset: victoriametrics/memory needs "
       "backend type prometheus; the backend type is metricsServer, whose "
       "presets are metrics-server/{cpu, memory}"},
      {"backend: {type: sysdig, url: https://sysdig}\nmetrics:\n"
       "  - preset: sysdig/cpu\n    risk: {k: 1}\n",
       "file.yaml:6:11: metrics[0].risk: needs backend type prometheus (it "
       "wraps a PromQL query in a subquery); the backend type is sysdig"},
  };
  for (const auto& [body, want] : cases) {
    absl::StatusOr<Config> c = Load(body);
    EXPECT_EQ(c.status().message(), want) << body;
  }
}

TEST(PresetTest, Formatting) {
  EXPECT_EQ(PromDuration(absl::Minutes(15)), "15m");
  EXPECT_EQ(PromDuration(absl::Hours(2)), "2h");
  EXPECT_EQ(PromDuration(absl::Seconds(90)), "90s");
  EXPECT_EQ(PromDuration(absl::Milliseconds(1500)), "1500ms");
  EXPECT_EQ(FormatNumber(0.95), "0.95");
  EXPECT_EQ(FormatNumber(2), "2");
  EXPECT_EQ(FormatNumber(0.1 + 0.2), "0.30000000000000004");
  EXPECT_TRUE(CheckLabelMatchers("a=\"1\", b!~'x|y' ,c=~`z`,").ok());
  EXPECT_FALSE(CheckLabelMatchers("a=\"1\"}) or vector(1").ok());
  EXPECT_FALSE(CheckLabelMatchers("").ok());
}

}  // namespace
}  // namespace ms
