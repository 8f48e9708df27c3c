// ExpandMetricShorthands (config/preset_expansion.h): `preset` and `risk`
// read from a metric's mapping and written back into it as the keys they
// stand for (config/presets.h).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/yaml.h"
#include "config/config.h"
#include "config/preset_expansion.h"
#include "config/presets.h"
#include "config/yaml_reader.h"

namespace ms {
namespace {

const char* BackendName(BackendType type) {
  switch (type) {
    case BackendType::kPrometheus:
      return "prometheus";
    case BackendType::kSysdig:
      return "sysdig";
    case BackendType::kMetricsServer:
      return "metricsServer";
  }
  return "?";
}

// The presets for `backend`, by stack: "kube-prometheus/{cpu, memory}, ...".
std::string PresetList(BackendType backend) {
  std::vector<std::string> stacks;
  std::string stack;
  std::vector<std::string> whats;
  auto flush = [&] {
    if (!whats.empty()) {
      stacks.push_back(
          absl::StrCat(stack, "/{", absl::StrJoin(whats, ", "), "}"));
    }
    whats.clear();
  };
  for (const MetricPreset& p : MetricPresets()) {
    if (p.backend != backend) continue;
    if (p.stack != stack) flush();
    stack = p.stack;
    whats.push_back(p.what);
  }
  flush();
  return absl::StrJoin(stacks, ", ");
}

// `text` parsed as YAML with its nodes placed at `mark`, where the key
// that brought it is, for error messages.
YNode ParseAt(const std::string& text, const YAML::Mark& mark) {
  return LoadYaml(absl::StrCat(std::string(std::max(mark.line, 0), '\n'),
                               std::string(std::max(mark.column, 0), ' '),
                               text));
}

std::string Quoted(const std::string& s) {
  YAML::Emitter out;
  out << YAML::DoubleQuoted << s;
  return out.c_str();
}

// Sets `key` of `metric` to `text` unless the user wrote a value for it.
void Supply(const YNode& metric, const char* key, const std::string& text,
            const YAML::Mark& mark) {
  if (YamlReader::Find(metric, key).IsDefined()) return;
  YNode m = metric;  // the same mapping: YNode has reference semantics
  m.remove(key);     // a null value, if any
  m.force_insert(key, ParseAt(text, mark));
}

bool WholeMilliseconds(absl::Duration d) {
  return d % absl::Milliseconds(1) == absl::ZeroDuration();
}

absl::Status ReadRisk(const YamlReader& r, const YNode& node,
                      const std::string& path, RiskParams* out) {
  RETURN_IF_ERROR(r.CheckMap(node, path, {"k", "window", "step"}));
  YNode k, window, step;
  RETURN_IF_ERROR(r.GetDouble(node, path, "k", &out->k, &k));
  if (!std::isfinite(out->k) || out->k < 0) {
    return r.Error(k, Child(path, "k"), "must be a finite number >= 0");
  }
  RETURN_IF_ERROR(
      r.GetPositiveDuration(node, path, "window", &out->window, &window));
  RETURN_IF_ERROR(r.GetPositiveDuration(node, path, "step", &out->step, &step));
  for (const auto& [at, key, d] :
       {std::tuple{window, "window", out->window}, {step, "step", out->step}}) {
    if (!WholeMilliseconds(d)) {
      return r.Error(at.IsDefined() ? at : node, Child(path, key),
                     "must be a whole number of milliseconds");
    }
  }
  if (out->step > out->window) {
    return r.Error(step.IsDefined() ? step : node, Child(path, "step"),
                   absl::StrCat("must be <= window (",
                                absl::FormatDuration(out->window), ")"));
  }
  return absl::OkStatus();
}

// `risk` wraps a PromQL query in a subquery: a query metric, prometheus.
absl::Status CheckRiskFits(const YamlReader& r, const YNode& metric,
                           const YNode& risk, const std::string& path,
                           BackendType backend) {
  if (backend != BackendType::kPrometheus) {
    return r.Error(risk, path,
                   absl::StrCat("needs backend type prometheus (it wraps a "
                                "PromQL query in a subquery); the backend "
                                "type is ",
                                BackendName(backend)));
  }
  if (YamlReader::Find(metric, "source").IsDefined()) {
    return r.Error(risk, path,
                   "only for a metric with a query; a node attribute has no "
                   "history to take a mean over");
  }
  return absl::OkStatus();
}

// The histogram of a latency preset: a metric name, without _bucket.
absl::Status ReadHistogram(const YamlReader& r, const YNode& node,
                           const std::string& path, const MetricPreset& preset,
                           PresetParams* out) {
  YNode v(YAML::NodeType::Undefined);
  if (node.IsMap()) {
    RETURN_IF_ERROR(r.GetString(node, path, "histogram", &out->histogram, &v));
  }
  if (!v.IsDefined()) {
    return r.Error(
        node, Child(path, "histogram"),
        absl::StrCat("required by ", preset.name(),
                     ": the histogram's name, e.g. {name: ", preset.name(),
                     ", histogram: http_request_duration_seconds}"));
  }
  if (!IsPromMetricName(out->histogram) ||
      absl::EndsWith(out->histogram, "_bucket")) {
    return r.Error(v, Child(path, "histogram"),
                   absl::StrCat("must be a metric name without the _bucket "
                                "suffix ([a-zA-Z_:][a-zA-Z0-9_:]*), got ",
                                Quote(out->histogram)));
  }
  YNode q;
  RETURN_IF_ERROR(r.GetDouble(node, path, "quantile", &out->quantile, &q));
  if (!(out->quantile > 0 && out->quantile < 1)) {
    return r.Error(q, Child(path, "quantile"), "must be > 0 and < 1");
  }
  RETURN_IF_ERROR(r.GetString(node, path, "matchers", &out->matchers, &v));
  if (absl::Status s = CheckLabelMatchers(out->matchers);
      v.IsDefined() && !s.ok()) {
    return r.Error(v, Child(path, "matchers"), s.message());
  }
  return absl::OkStatus();
}

// The parameters of the mapping form, each the preset's default unless
// given.
absl::Status ReadParams(const YamlReader& r, const YNode& node,
                        const std::string& path, const MetricPreset& preset,
                        PresetParams* out) {
  out->window = preset.window;
  if (node.IsMap()) {
    std::vector<const char*> keys = {"name"};
    if (preset.params.window) keys.push_back("window");
    if (preset.params.histogram) {
      for (const char* key : {"histogram", "quantile", "matchers"}) {
        keys.push_back(key);
      }
    }
    RETURN_IF_ERROR(r.CheckMap(node, path, keys));
    YNode w;
    RETURN_IF_ERROR(
        r.GetPositiveDuration(node, path, "window", &out->window, &w));
    if (!WholeMilliseconds(out->window)) {
      return r.Error(w, Child(path, "window"),
                     "must be a whole number of milliseconds");
    }
  }
  if (!preset.params.histogram) return absl::OkStatus();
  return ReadHistogram(r, node, path, preset, out);
}

// The preset `node` names, checked against the backend, and its
// parameters.
absl::Status ReadPreset(const YamlReader& r, const YNode& node,
                        const std::string& path, BackendType backend,
                        const MetricPreset** preset, PresetParams* params) {
  std::string name;
  YNode at = node;
  if (node.IsMap()) {
    RETURN_IF_ERROR(r.GetString(node, path, "name", &name, &at));
    if (!at.IsDefined()) return r.Error(node, Child(path, "name"), "required");
  } else if (!node.IsScalar()) {
    return r.Error(node, path,
                   "must be a preset's name, or a mapping of its name and "
                   "parameters");
  } else {
    name = node.Scalar();
  }
  const std::string at_path = node.IsMap() ? Child(path, "name") : path;
  *preset = FindMetricPreset(name);
  if (*preset == nullptr) {
    return r.Error(
        at, at_path,
        absl::StrCat("unknown preset ", Quote(name), "; with backend type ",
                     BackendName(backend), ": ", PresetList(backend)));
  }
  if ((*preset)->backend != backend) {
    return r.Error(at, at_path,
                   absl::StrCat(name, " needs backend type ",
                                BackendName((*preset)->backend),
                                "; the backend type is ", BackendName(backend),
                                ", whose presets are ", PresetList(backend)));
  }
  return ReadParams(r, node, path, **preset, params);
}

// The metric keys `preset` stands for, each unless the user wrote it.
void SupplyPresetKeys(const YNode& metric, const YNode& at,
                      const MetricPreset& preset, const PresetParams& params,
                      const std::optional<RiskParams>& risk) {
  const YAML::Mark mark = at.Mark();
  Supply(metric, "name", Quoted(PresetMetricName(preset, params)), mark);
  Supply(metric, "query", Quoted(preset.query(params)), mark);
  if (preset.join_label != nullptr) {
    Supply(
        metric, "join",
        absl::StrCat(
            "{label: ", preset.join_label, ", match: ",
            preset.join_match == JoinMatch::kAddress ? "address" : "name", "}"),
        mark);
  } else if (preset.backend == BackendType::kPrometheus) {
    // A tested query's join is known: not left to detection.
    Supply(metric, "join", "{label: node, match: name}", mark);
  }
  if (preset.normalization == NormalizationType::kRatio) {
    Supply(metric, "normalization", "ratio", mark);
    return;
  }
  // With risk, the mean plus k deviations of a value in [0, max] reaches
  // (1 + k) max.
  const double max = preset.range_max * (1 + (risk ? risk->k : 0));
  Supply(metric, "normalization",
         absl::StrCat("{type: range, min: 0, max: ", FormatNumber(max), "}"),
         mark);
}

// `node`: the `preset` value of the metric at `path`.
absl::Status ApplyPreset(const YamlReader& r, const YNode& metric,
                         const YNode& node, const std::string& path,
                         BackendType backend,
                         const std::optional<RiskParams>& risk) {
  const MetricPreset* preset = nullptr;
  PresetParams params;
  RETURN_IF_ERROR(
      ReadPreset(r, node, Child(path, "preset"), backend, &preset, &params));
  if (YNode s = YamlReader::Find(metric, "source"); s.IsDefined()) {
    return r.Error(s, Child(path, "source"),
                   "not used with preset, which is a query");
  }
  SupplyPresetKeys(metric, node, *preset, params, risk);
  return absl::OkStatus();
}

// Replaces the query with its risk: left alone when there is no string
// query (the loader reports that).
void WrapQuery(const YNode& metric, const RiskParams& risk) {
  YNode q = YamlReader::Find(metric, "query");
  if (!q.IsScalar()) return;
  YNode wrapped = ParseAt(Quoted(RiskQuery(q.Scalar(), risk)), q.Mark());
  YNode m = metric;
  m.remove("query");
  m.force_insert("query", wrapped);
}

}  // namespace

absl::Status ExpandMetricShorthands(const YamlReader& reader,
                                    const YNode& metric,
                                    const std::string& path,
                                    BackendType backend) {
  if (!metric.IsMap()) return absl::OkStatus();
  std::optional<RiskParams> risk;
  if (YNode n = YamlReader::Find(metric, "risk"); n.IsDefined()) {
    const std::string p = Child(path, "risk");
    RETURN_IF_ERROR(CheckRiskFits(reader, metric, n, p, backend));
    RETURN_IF_ERROR(ReadRisk(reader, n, p, &risk.emplace()));
  }
  if (YNode n = YamlReader::Find(metric, "preset"); n.IsDefined()) {
    RETURN_IF_ERROR(ApplyPreset(reader, metric, n, path, backend, risk));
  }
  if (risk) WrapQuery(metric, *risk);
  return absl::OkStatus();
}

}  // namespace ms
