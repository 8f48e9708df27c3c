// Metric presets: tested queries, with the join and normalisation that go
// with them, that a metric names instead of writing its own
// (`preset: kube-prometheus/cpu`), and the risk wrapper
// (`risk: {k, window, step}`) that scores a query by its mean plus k
// standard deviations over a window.
//
// A preset is named `<stack>/<what>`. The stack says how the series are
// scraped and labelled, and so which backend type it needs: for
// `prometheus`, kube-prometheus (also kube-prometheus-stack), openshift
// and victoriametrics; `metrics-server` for metricsServer; `sysdig`. The
// loader (config/load_preset.cc) expands a preset into the metric keys
// `name`, `query`, `join` and `normalization`; a key the user writes
// beside `preset` replaces the preset's. docs/configuration.md, "Presets",
// lists them with their queries and sources.
//
// Pure functions over constant tables; thread-safe.
#ifndef METRICS_SCHEDULER_CONFIG_PRESETS_H_
#define METRICS_SCHEDULER_CONFIG_PRESETS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "config/config.h"

namespace ms {

// The parameters of a preset's mapping form
// (`preset: {name: kube-prometheus/latency, histogram: h, window: 2m}`).
struct PresetParams {
  // The rate window of a query over counters; default: the preset's.
  absl::Duration window;
  // A histogram's name without the `_bucket` suffix (latency presets;
  // required there).
  std::string histogram;
  double quantile = 0.95;  // latency presets; 0 < quantile < 1
  // Label matchers added to the histogram's selector, PromQL syntax
  // (`job="web", namespace=~"shop|cart"`); "": none.
  std::string matchers;
};

// Which PresetParams a preset takes.
struct PresetParamSet {
  bool window = false;
  bool histogram = false;  // and then quantile and matchers too
};

struct MetricPreset {
  const char* stack;  // "kube-prometheus"
  const char* what;   // "cpu"
  BackendType backend;
  const char* summary;  // what the value is, one line
  // The query, from parameters whose defaults are filled in.
  std::string (*query)(const PresetParams& params);
  // The metric's default name; nullptr: the histogram's with _p<quantile>.
  const char* metric_name;
  // The join, when not the backend's default (`node`, or Sysdig's
  // host.hostName); nullptr: the default.
  const char* join_label;
  JoinMatch join_match;
  // kRange over [0, range_max], or kRatio.
  NormalizationType normalization;
  double range_max;
  PresetParamSet params;
  absl::Duration window;  // `window`'s default when params.window

  std::string name() const;  // "<stack>/<what>"
};

// Every preset, stack by stack.
const std::vector<MetricPreset>& MetricPresets();

// The preset named `name`; nullptr when there is none.
const MetricPreset* FindMetricPreset(absl::string_view name);

// The metric name a preset gives: metric_name, or for a latency preset
// the histogram's with the quantile (`http_request_duration_seconds_p95`).
std::string PresetMetricName(const MetricPreset& preset,
                             const PresetParams& params);

// `risk`: a query scored by its mean plus k standard deviations over a
// window (Trimaran's LoadVariationRiskBalancing).
struct RiskParams {
  double k = 1;                               // finite, >= 0
  absl::Duration window = absl::Minutes(15);  // whole milliseconds, > 0
  absl::Duration step = absl::Minutes(1);     // whole ms, in (0, window]
};

// avg_over_time((Q)[w:s]) + k * stddev_over_time((Q)[w:s]), with w and s
// the window and step (avg_over_time alone when k is 0).
std::string RiskQuery(absl::string_view query, const RiskParams& risk);

// A PromQL duration (`15m`, `90s`, `1500ms`) for a positive duration of
// whole milliseconds.
std::string PromDuration(absl::Duration d);

// The shortest decimal form that reads back as `v` (`0.95`, `2`).
std::string FormatNumber(double v);

// Whether `name` is a valid Prometheus metric name
// ([a-zA-Z_:][a-zA-Z0-9_:]*).
bool IsPromMetricName(absl::string_view name);

// OK when `matchers` is a comma-separated list of PromQL label matchers
// (`job="web", code!~"5.."`); InvalidArgument saying what is expected
// otherwise. Checked with RE2: the text comes from the configuration.
absl::Status CheckLabelMatchers(absl::string_view matchers);

}  // namespace ms

#endif  // METRICS_SCHEDULER_CONFIG_PRESETS_H_
