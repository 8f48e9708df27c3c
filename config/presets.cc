#include "config/presets.h"

#include <cstdlib>
#include <initializer_list>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "re2/re2.h"

namespace ms {
namespace {

// Where the label conventions below come from (read in each project's
// repository):
//
// - node-exporter (prometheus/node_exporter, collector/cpu_linux.go,
//   meminfo.go, pressure_linux.go): node_cpu_seconds_total{cpu, mode},
//   node_memory_MemAvailable_bytes, node_memory_MemTotal_bytes,
//   node_pressure_{cpu,memory,io}_waiting_seconds_total (PSI "some": the
//   seconds at least one task waited).
// - Its `instance`: kube-prometheus' ServiceMonitor
//   (manifests/nodeExporter-serviceMonitor.yaml) and OpenShift's
//   (openshift/cluster-monitoring-operator,
//   assets/node-exporter/service-monitor.yaml) relabel it to the node's
//   name (__meta_kubernetes_pod_node_name); kube-prometheus-stack's
//   (prometheus-node-exporter chart, relabelings: [] by default) and
//   victoria-metrics-k8s-stack's leave the target's address, the node's
//   IP and port 9100 (the DaemonSet runs on the host network). A join
//   {label: instance, match: address} matches both: the address against
//   the Node's addresses, then the name.
// - kubelet and cAdvisor: prometheus-operator gives every target of an
//   Endpoints address whose target is a Node a `node` label
//   (pkg/prometheus/promcfg.go, "Node;(.*)"), and the kubelet's Endpoints
//   point at Nodes (pkg/kubelet/controller.go); the VictoriaMetrics
//   operator's VMNodeScrape sets `node` from __meta_kubernetes_node_name
//   (vmscrapes/nodescrape.go). All four stacks copy __metrics_path__ into
//   `metrics_path`. victoria-metrics-k8s-stack drops cAdvisor's `id` label
//   (labeldrop (id|name)) and scrapes the kubelet's /metrics/resource,
//   whose node_memory_working_set_bytes is the root cgroup's working set.
// - kube-state-metrics' kube_pod_info{namespace, pod, node}, scraped with
//   honorLabels; the pod-to-node join is kubernetes-mixin's
//   (node_namespace_pod_container:container_cpu_usage_seconds_total:
//   sum_irate in kube-prometheus' rules).

std::string Window(const PresetParams& p) { return PromDuration(p.window); }

// Busy share of the node's CPUs, 0..1: node-mixin's
// instance:node_cpu_utilisation (idle, iowait and steal are not busy).
std::string NodeCpu(const PresetParams& p) {
  return absl::StrCat(
      "1 - avg by (instance) (sum without (mode) "
      "(rate(node_cpu_seconds_total{mode=~\"idle|iowait|steal\"}[",
      Window(p), "])))");
}

// Memory in use, 0..1: 1 - MemAvailable / MemTotal (node-mixin's
// instance:node_memory_utilisation:ratio). Sums per instance, so that a
// node scraped by two jobs keeps its ratio.
std::string NodeMemory(const PresetParams&) {
  return "1 - sum by (instance) (node_memory_MemAvailable_bytes) / "
         "sum by (instance) (node_memory_MemTotal_bytes)";
}

std::string Pressure(const char* resource, const PresetParams& p) {
  return absl::StrCat("max by (instance) (rate(node_pressure_", resource,
                      "_waiting_seconds_total[", Window(p), "]))");
}
std::string CpuPressure(const PresetParams& p) { return Pressure("cpu", p); }
std::string MemoryPressure(const PresetParams& p) {
  return Pressure("memory", p);
}
std::string IoPressure(const PresetParams& p) { return Pressure("io", p); }

// The root cgroup's working set over the machine's memory, 0..1: what the
// kubelet's memory.available eviction signal and metrics-server see.
std::string CadvisorWorkingSet(const PresetParams&) {
  return "sum by (node) (container_memory_working_set_bytes"
         "{metrics_path=\"/metrics/cadvisor\", id=\"/\"}) / "
         "sum by (node) (machine_memory_bytes"
         "{metrics_path=\"/metrics/cadvisor\"})";
}

// The same from the kubelet's /metrics/resource, for stacks that drop
// cAdvisor's `id` label.
std::string ResourceWorkingSet(const PresetParams&) {
  return "sum by (node) (node_memory_working_set_bytes"
         "{metrics_path=\"/metrics/resource\"}) / "
         "sum by (node) (machine_memory_bytes"
         "{metrics_path=\"/metrics/cadvisor\"})";
}

// A quantile of an application's histogram per node: its pods' series
// carry `namespace` and `pod` (prometheus-operator's target labels), and
// kube_pod_info says which node each pod runs on.
std::string Latency(const PresetParams& p) {
  std::string selector = absl::StrCat(p.histogram, "_bucket");
  if (!p.matchers.empty()) absl::StrAppend(&selector, "{", p.matchers, "}");
  return absl::StrCat(
      "histogram_quantile(", FormatNumber(p.quantile),
      ", sum by (node, le) "
      "(rate(",
      selector, "[", Window(p),
      "]) * on (namespace, pod) "
      "group_left (node) topk by (namespace, pod) (1, max by (namespace, "
      "pod, node) (kube_pod_info{node!=\"\"}))))");
}

// metrics/metrics_server_source.h's queries, by node name.
std::string MetricsServerCpu(const PresetParams&) { return "cpuUtilization"; }
std::string MetricsServerMemory(const PresetParams&) {
  return "memoryUtilization";
}
// Sysdig metric ids, grouped by host.hostName (the backend's default join).
std::string SysdigCpu(const PresetParams&) { return "cpu.used.percent"; }
std::string SysdigMemory(const PresetParams&) { return "memory.used.percent"; }

constexpr PresetParamSet kRate{.window = true};
constexpr PresetParamSet kNone{};
constexpr PresetParamSet kHistogram{.window = true, .histogram = true};
constexpr BackendType kProm = BackendType::kPrometheus;
constexpr NormalizationType kRange = NormalizationType::kRange;
constexpr JoinMatch kAddress = JoinMatch::kAddress;
constexpr JoinMatch kName = JoinMatch::kName;

// One preset of a stack; the stack is filled in by Build().
constexpr MetricPreset Spec(const char* what, BackendType backend,
                            const char* summary,
                            std::string (*query)(const PresetParams&),
                            const char* metric_name, const char* join_label,
                            JoinMatch match, double range_max,
                            PresetParamSet params, absl::Duration window) {
  return {nullptr,    what,  backend, summary,   query,  metric_name,
          join_label, match, kRange,  range_max, params, window};
}

constexpr MetricPreset kCpu =
    Spec("cpu", kProm, "busy share of the node's CPUs (node-exporter)", NodeCpu,
         "cpu", "instance", kAddress, 1, kRate, absl::Minutes(2));
constexpr MetricPreset kMemory = Spec(
    "memory", kProm,
    "memory in use, 1 - MemAvailable / MemTotal (node-exporter)", NodeMemory,
    "memory", "instance", kAddress, 1, kNone, absl::ZeroDuration());
constexpr MetricPreset kCadvisorWorkingSet =
    Spec("memory-working-set", kProm,
         "root cgroup's working set over the machine's memory (cAdvisor)",
         CadvisorWorkingSet, "memory_working_set", "node", kName, 1, kNone,
         absl::ZeroDuration());
constexpr MetricPreset kResourceWorkingSet = Spec(
    "memory-working-set", kProm,
    "node working set over the machine's memory (kubelet /metrics/resource)",
    ResourceWorkingSet, "memory_working_set", "node", kName, 1, kNone,
    absl::ZeroDuration());
constexpr MetricPreset kCpuPressure =
    Spec("cpu-pressure", kProm,
         "share of time some task waited for a CPU (PSI, node-exporter)",
         CpuPressure, "cpu_pressure", "instance", kAddress, 1, kRate,
         absl::Minutes(2));
constexpr MetricPreset kMemoryPressure =
    Spec("memory-pressure", kProm,
         "share of time some task waited for memory (PSI, node-exporter)",
         MemoryPressure, "memory_pressure", "instance", kAddress, 1, kRate,
         absl::Minutes(2));
constexpr MetricPreset kIoPressure = Spec(
    "io-pressure", kProm,
    "share of time some task waited for IO (PSI, node-exporter)", IoPressure,
    "io_pressure", "instance", kAddress, 1, kRate, absl::Minutes(2));

constexpr MetricPreset Ratio(MetricPreset p) {
  p.normalization = NormalizationType::kRatio;
  return p;
}
constexpr MetricPreset kLatency = Ratio(
    Spec("latency", kProm,
         "a quantile of an application's histogram per node, its pods joined "
         "to their nodes by kube_pod_info",
         Latency, nullptr, "node", kName, 0, kHistogram, absl::Minutes(5)));

constexpr MetricPreset kMetricsServerCpu = Spec(
    "cpu", BackendType::kMetricsServer, "CPU in use over allocatable",
    MetricsServerCpu, "cpu", nullptr, kName, 1, kNone, absl::ZeroDuration());
constexpr MetricPreset kMetricsServerMemory =
    Spec("memory", BackendType::kMetricsServer,
         "memory (working set) in use over allocatable", MetricsServerMemory,
         "memory", nullptr, kName, 1, kNone, absl::ZeroDuration());
constexpr MetricPreset kSysdigCpu =
    Spec("cpu", BackendType::kSysdig, "cpu.used.percent, 0..100", SysdigCpu,
         "cpu", nullptr, kName, 100, kNone, absl::ZeroDuration());
constexpr MetricPreset kSysdigMemory = Spec(
    "memory", BackendType::kSysdig, "memory.used.percent, 0..100", SysdigMemory,
    "memory", nullptr, kName, 100, kNone, absl::ZeroDuration());

std::vector<MetricPreset> Build() {
  std::vector<MetricPreset> out;
  auto add = [&out](const char* stack,
                    std::initializer_list<MetricPreset> presets) {
    for (MetricPreset p : presets) {
      p.stack = stack;
      out.push_back(p);
    }
  };
  // kube-prometheus and OpenShift label alike (node-exporter's instance
  // is the node's name, cAdvisor keeps `id`); so does
  // kube-prometheus-stack, but for instance (an address), which the join
  // covers.
  for (const char* stack : {"kube-prometheus", "openshift"}) {
    add(stack, {kCpu, kMemory, kCadvisorWorkingSet, kCpuPressure,
                kMemoryPressure, kIoPressure, kLatency});
  }
  add("victoriametrics", {kCpu, kMemory, kResourceWorkingSet, kCpuPressure,
                          kMemoryPressure, kIoPressure, kLatency});
  add("metrics-server", {kMetricsServerCpu, kMetricsServerMemory});
  add("sysdig", {kSysdigCpu, kSysdigMemory});
  return out;
}

// Label matchers: name, operator, a quoted value; comma-separated.
constexpr char kMatcher[] =
    R"re(\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(?:=~|!~|!=|=)\s*)re"
    R"re((?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*)re";

}  // namespace

std::string MetricPreset::name() const {
  return absl::StrCat(stack, "/", what);
}

const std::vector<MetricPreset>& MetricPresets() {
  static const auto* presets = new std::vector<MetricPreset>(Build());
  return *presets;
}

const MetricPreset* FindMetricPreset(absl::string_view name) {
  for (const MetricPreset& p : MetricPresets()) {
    if (p.name() == name) return &p;
  }
  return nullptr;
}

std::string PresetMetricName(const MetricPreset& preset,
                             const PresetParams& params) {
  if (preset.metric_name != nullptr) return preset.metric_name;
  return absl::StrCat(params.histogram, "_p",
                      FormatNumber(params.quantile * 100));
}

std::string RiskQuery(absl::string_view query, const RiskParams& risk) {
  std::string q(absl::StripAsciiWhitespace(query));
  // A PromQL comment runs to the end of its line: it must not swallow the
  // closing parenthesis.
  if (absl::StrContains(q, '#')) q += "\n";
  const std::string range = absl::StrCat("[", PromDuration(risk.window), ":",
                                         PromDuration(risk.step), "]");
  std::string mean = absl::StrCat("avg_over_time((", q, ")", range, ")");
  if (risk.k == 0) return mean;
  return absl::StrCat(mean, " + ", FormatNumber(risk.k),
                      " * stddev_over_time((", q, ")", range, ")");
}

std::string PromDuration(absl::Duration d) {
  const int64_t ms = absl::ToInt64Milliseconds(d);
  if (ms % 3'600'000 == 0) return absl::StrCat(ms / 3'600'000, "h");
  if (ms % 60'000 == 0) return absl::StrCat(ms / 60'000, "m");
  if (ms % 1000 == 0) return absl::StrCat(ms / 1000, "s");
  return absl::StrCat(ms, "ms");
}

std::string FormatNumber(double v) {
  for (int precision = 1; precision < 17; ++precision) {
    std::string s = absl::StrFormat("%.*g", precision, v);
    if (std::strtod(s.c_str(), nullptr) == v) return s;
  }
  return absl::StrFormat("%.17g", v);
}

bool IsPromMetricName(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != ':') return false;
  }
  return true;
}

absl::Status CheckLabelMatchers(absl::string_view matchers) {
  static const auto* re = new re2::RE2(
      absl::StrCat("(?:", kMatcher, ")(?:,(?:", kMatcher, "))*,?\\s*"));
  if (re2::RE2::FullMatch(re2::StringPiece(matchers.data(), matchers.size()),
                          *re)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      "must be PromQL label matchers separated by commas, such as "
      "job=\"web\", namespace=~\"shop|cart\"");
}

}  // namespace ms
