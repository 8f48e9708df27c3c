// Every PromQL preset (config/presets.h) run by Debian's real Prometheus
// over series shaped as the exporters and the stacks' relabellings shape
// them: node-exporter's `instance` an address (kube-prometheus-stack,
// VictoriaMetrics) on n1 and n3 and the node's name (kube-prometheus,
// OpenShift) on n2; the kubelet's series with `node` and `metrics_path`;
// kube-state-metrics' kube_pod_info; an application's histogram with
// `namespace` and `pod`. Each preset must give one value per node, joined
// to the right node, with the value worked out below.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "config/config.h"
#include "config/presets.h"
#include "gtest/gtest.h"
#include "metrics/prometheus_source.h"
#include "tests/metrics/source_test_util.h"
#include "tests/testing/prometheus.h"

namespace ms::metrics {
namespace {

using ms::testing::PrometheusServer;
using ms::testing::RemoteSeries;
using Labels = std::vector<std::pair<std::string, std::string>>;

constexpr double kGiB = 1024.0 * 1024 * 1024;

// Per node: its node-exporter `instance`, the share of CPU time busy, the
// memory in use, and the PSI "some" share of time stalled for CPU (memory
// half of it, IO a quarter).
struct NodeShape {
  const char* name;
  const char* address;
  const char* instance;
  double busy;
  double memory;
  double pressure;
};
constexpr NodeShape kNodes[] = {
    {"n1", "10.0.0.7", "10.0.0.7:9100", 0.75, 0.75, 0.3},
    {"n2", "10.0.0.8", "n2", 0.25, 0.25, 0.1},
    {"n3", "10.0.0.9", "10.0.0.9:9100", 0.5, 0.5, 0.2},
};

// Requests per second of each pod of `web`, by bucket upper bound: web-1
// (on n1) answers all within 0.1 s, web-2 (n2) all between 0.1 and 0.5 s,
// n3 runs one of each (web-3 fast, web-4 slow).
struct PodShape {
  const char* pod;
  const char* node;
  double le_01, le_05, le_inf;
};
constexpr PodShape kPods[] = {{"web-1", "n1", 10, 10, 10},
                              {"web-2", "n2", 0, 10, 10},
                              {"web-3", "n3", 10, 10, 10},
                              {"web-4", "n3", 0, 10, 10}};

// The value each preset gives each node (by the preset's `what`).
//   cpu, memory, memory-working-set: the node's busy / memory share.
//   latency (p95): n1 0 + 0.1 x 0.95 = 0.095; n2 0.1 + 0.4 x 0.95 = 0.48;
//   n3: rank 0.95 x 20 = 19 of 20 requests/s, 10 below 0.1 s, so
//   0.1 + 0.4 x (19 - 10) / (20 - 10) = 0.46.
std::map<std::string, double> Want(const std::string& what) {
  if (what == "latency") return {{"n1", 0.095}, {"n2", 0.48}, {"n3", 0.46}};
  std::map<std::string, double> out;
  for (const NodeShape& n : kNodes) {
    double v = n.busy;
    if (what == "cpu-pressure") v = n.pressure;
    if (what == "memory-pressure") v = n.pressure / 2;
    if (what == "io-pressure") v = n.pressure / 4;
    if (what == "memory" || what == "memory-working-set") v = n.memory;
    out[n.name] = v;
  }
  return out;
}

// Counters grow linearly with `s`, the seconds since they started;
// gauges hold still.
std::vector<RemoteSeries> NodeSamples(const NodeShape& n, absl::Time t,
                                      double s) {
  const Labels exporter = {{"instance", n.instance}, {"job", "node-exporter"}};
  auto with = [](Labels l, const Labels& more) {
    l.insert(l.end(), more.begin(), more.end());
    return l;
  };
  std::vector<RemoteSeries> out = {
      // One CPU at the node's busy share, with iowait counted as idle...
      {"node_cpu_seconds_total",
       with(exporter, {{"cpu", "0"}, {"mode", "idle"}}),
       s * (1 - n.busy - 0.05), t},
      {"node_cpu_seconds_total",
       with(exporter, {{"cpu", "0"}, {"mode", "iowait"}}), s * 0.05, t},
      {"node_cpu_seconds_total",
       with(exporter, {{"cpu", "0"}, {"mode", "user"}}), s * n.busy, t},
      // ... and a second 0.1 busier and a third 0.1 idler (steal idle): the
      // average is the node's share.
      {"node_cpu_seconds_total",
       with(exporter, {{"cpu", "1"}, {"mode", "idle"}}), s * (0.9 - n.busy), t},
      {"node_cpu_seconds_total",
       with(exporter, {{"cpu", "1"}, {"mode", "user"}}), s * (n.busy + 0.1), t},
      {"node_cpu_seconds_total",
       with(exporter, {{"cpu", "2"}, {"mode", "steal"}}), s * (1.1 - n.busy),
       t},
      {"node_cpu_seconds_total",
       with(exporter, {{"cpu", "2"}, {"mode", "system"}}), s * (n.busy - 0.1),
       t},
      {"node_memory_MemTotal_bytes", exporter, 8 * kGiB, t},
      {"node_memory_MemAvailable_bytes", exporter, 8 * kGiB * (1 - n.memory),
       t},
      {"node_pressure_cpu_waiting_seconds_total", exporter, s * n.pressure, t},
      {"node_pressure_memory_waiting_seconds_total", exporter,
       s * n.pressure / 2, t},
      {"node_pressure_io_waiting_seconds_total", exporter, s * n.pressure / 4,
       t},
  };
  // The kubelet's: `node` from its Endpoints' target, `metrics_path`.
  const Labels kubelet = {{"instance", absl::StrCat(n.address, ":10250")},
                          {"job", "kubelet"},
                          {"node", n.name}};
  const Labels cadvisor =
      with(kubelet, {{"metrics_path", "/metrics/cadvisor"}});
  out.insert(out.end(),
             {{"container_memory_working_set_bytes",
               with(cadvisor, {{"id", "/"}}), 8 * kGiB * n.memory, t},
              {"container_memory_working_set_bytes",
               with(cadvisor, {{"id", "/kubepods.slice"}}), 5 * kGiB, t},
              {"machine_memory_bytes", cadvisor, 8 * kGiB, t},
              {"node_memory_working_set_bytes",
               with(kubelet, {{"metrics_path", "/metrics/resource"}}),
               8 * kGiB * n.memory, t}});
  return out;
}

std::vector<RemoteSeries> PodSamples(const PodShape& p, absl::Time t,
                                     double s) {
  const Labels ksm = {{"instance", "10.1.0.5:8080"},
                      {"job", "kube-state-metrics"},
                      {"namespace", "shop"},
                      {"node", p.node},
                      {"pod", p.pod}};
  auto bucket = [&](const char* le) {
    return Labels{
        {"job", "web"}, {"le", le}, {"namespace", "shop"}, {"pod", p.pod}};
  };
  return {
      {"kube_pod_info", ksm, 1, t},
      {"http_request_duration_seconds_bucket", bucket("0.1"), s * p.le_01, t},
      {"http_request_duration_seconds_bucket", bucket("0.5"), s * p.le_05, t},
      {"http_request_duration_seconds_bucket", bucket("+Inf"), s * p.le_inf,
       t}};
}

class PresetQueriesTest : public ::testing::Test {
 protected:
  // Samples every 15 s from 6.5 minutes ago, as a scrape would leave them:
  // enough for the 5-minute latency window and a risk subquery of 4
  // minutes over 2-minute rates.
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<PrometheusServer>> s =
        PrometheusServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    prom_ = s->release();
    start_ = absl::Now() - absl::Seconds(390);
    last_ = absl::InfinitePast();
    WriteUntilNow();
  }

  // Each test first extends the 15 s grid of samples up to now. A rate
  // extrapolates to the edges of its window only from samples less than
  // 1.1 intervals from them: with the grid regular and its last point
  // less than 15 s old, the rates come out exact however long the tests
  // before took.
  void SetUp() override {
    ASSERT_NE(prom_, nullptr);
    WriteUntilNow();
  }

  // The grid's points after the last written, up to now.
  static void WriteUntilNow() {
    const absl::Time now = absl::Now();
    for (absl::Time t = start_; t <= now; t += absl::Seconds(15)) {
      if (t <= last_) continue;
      absl::Status written = prom_->Write(SamplesAt(t));
      ASSERT_TRUE(written.ok()) << written;
      last_ = t;
    }
  }

  static std::vector<RemoteSeries> SamplesAt(absl::Time t) {
    // Counters far from 0, as a real one is after a while.
    const double seconds = 1000 + absl::ToDoubleSeconds(t - start_);
    std::vector<RemoteSeries> all;
    for (const NodeShape& n : kNodes) {
      for (RemoteSeries& r : NodeSamples(n, t, seconds)) all.push_back(r);
    }
    for (const PodShape& p : kPods) {
      for (RemoteSeries& r : PodSamples(p, t, seconds)) all.push_back(r);
    }
    return all;
  }

  static void TearDownTestSuite() {
    delete prom_;
    prom_ = nullptr;
  }

  // The metric `preset_yaml` stands for, loaded as the scheduler loads it.
  static MetricConfig Load(const std::string& preset_yaml) {
    absl::StatusOr<Config> c = LoadConfigString(
        absl::StrCat("apiVersion: metrics-scheduler/v1alpha1\n"
                     "kind: MetricsSchedulerConfiguration\n"
                     "backend: {url: '",
                     prom_->url(), "'}\nmetrics:\n  - ", preset_yaml, "\n"),
        "presets.yaml");
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? c->profiles[0].metrics[0] : MetricConfig{};
  }

  static absl::StatusOr<FetchResult> Fetch(const MetricConfig& metric) {
    BackendConfig backend;
    backend.url = prom_->url();
    backend.timeout = absl::Seconds(5);
    absl::StatusOr<std::unique_ptr<PrometheusSource>> source =
        PrometheusSource::Create(backend);
    if (!source.ok()) return source.status();
    NodeSet nodes(
        {{"n1", {"10.0.0.7"}}, {"n2", {"10.0.0.8"}}, {"n3", {"10.0.0.9"}}});
    return (*source)->Fetch(metric, nodes, absl::Seconds(5));
  }

  static void ExpectOneValuePerNode(const std::string& what,
                                    const std::string& preset_yaml) {
    SCOPED_TRACE(preset_yaml);
    MetricConfig metric = Load(preset_yaml);
    absl::StatusOr<FetchResult> r = Fetch(metric);
    ASSERT_TRUE(r.ok()) << r.status() << "\n" << metric.query;
    EXPECT_EQ(r->series, 3) << metric.query;
    EXPECT_EQ(r->unmatched, 0);
    EXPECT_EQ(r->duplicates, 0);
    std::map<std::string, double> got = ValuesOf(*r);
    std::map<std::string, double> want = Want(what);
    ASSERT_EQ(got.size(), want.size()) << metric.query;
    for (const auto& [node, value] : want) {
      EXPECT_NEAR(got[node], value, 1e-9) << node << ": " << metric.query;
    }
  }

  static PrometheusServer* prom_;
  static absl::Time start_;  // the counters' origin
  static absl::Time last_;   // of the latest samples written
};

PrometheusServer* PresetQueriesTest::prom_ = nullptr;
absl::Time PresetQueriesTest::start_;
absl::Time PresetQueriesTest::last_;

TEST_F(PresetQueriesTest, EveryPromqlPresetGivesEachNodeItsValue) {
  int tested = 0;
  for (const MetricPreset& p : MetricPresets()) {
    if (p.backend != BackendType::kPrometheus) continue;
    const std::string yaml =
        p.params.histogram
            ? absl::StrCat("preset: {name: ", p.name(),
                           ", histogram: http_request_duration_seconds}")
            : absl::StrCat("preset: ", p.name());
    ExpectOneValuePerNode(p.what, yaml);
    ++tested;
  }
  EXPECT_EQ(tested, 21);
}

TEST_F(PresetQueriesTest, ParametersAndRiskRunToo) {
  // Loads that hold still have no deviation: the risk is their mean.
  ExpectOneValuePerNode(
      "cpu",
      "{preset: kube-prometheus/cpu, risk: {k: 1, window: 4m, "
      "step: 30s}}");
  ExpectOneValuePerNode(
      "cpu-pressure",
      "{preset: {name: victoriametrics/cpu-pressure, window: 1m}, risk: {k: "
      "2, window: 3m, step: 1m}}");
  ExpectOneValuePerNode(
      "latency",
      "preset: {name: openshift/latency, histogram: "
      "http_request_duration_seconds, quantile: 0.95, window: 3m, matchers: "
      "'job=\"web\", namespace=~\"shop|cart\"'}");
}

}  // namespace
}  // namespace ms::metrics
