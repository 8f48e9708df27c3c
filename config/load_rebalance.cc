// `rebalance`: when a node is hot, which pods may move off it, and how many
// at once (RebalanceConfig, config/config.h).
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "config/config.h"
#include "config/loader.h"
#include "config/validation.h"

namespace ms {
namespace {

// The term of the first profile with a metric named `name`; null when none.
const MetricConfig* FirstTerm(const Config& config, const std::string& name) {
  for (const ProfileConfig& profile : config.profiles) {
    for (const MetricConfig& m : profile.metrics) {
      if (m.name == name) return &m;
    }
  }
  return nullptr;
}

// Why `m` cannot say when a node is hot and what a pod takes away; "" when
// it can.
std::string CannotRebalanceOn(const MetricConfig& m) {
  if (!m.origin.is_query()) {
    return "is a node attribute; rebalancing reads a query's samples";
  }
  if (m.direction != Direction::kLower) {
    return "is better higher; a hot node is one whose value is too high";
  }
  if (m.estimate.on_resources() ||
      m.estimate.basis == UnseenLoadEstimate::Basis::kPerPod) {
    return "";
  }
  return "needs an estimate from cpuRequests, memoryRequests, cpuLimits, "
         "memoryLimits or perPod: it is what says how much a pod takes away "
         "when it leaves";
}

}  // namespace

absl::Status Loader::LoadRebalance(const YNode& node, const std::string& path,
                                   Config* config) {
  RETURN_IF_ERROR(
      CheckMap(node, path, {"mode", "interval", "hot", "pods", "limits"}));
  RebalanceConfig& r = config->rebalance;
  // The section turns it on, in a dry run unless it says otherwise.
  r.mode = RebalanceMode::kDryRun;
  RETURN_IF_ERROR(GetEnum<RebalanceMode>(node, path, "mode",
                                         {{"off", RebalanceMode::kOff},
                                          {"dryRun", RebalanceMode::kDryRun},
                                          {"evict", RebalanceMode::kEvict}},
                                         &r.mode));
  RETURN_IF_ERROR(GetPositiveDuration(node, path, "interval", &r.interval));

  YNode hot = Find(node, "hot");
  const std::string hot_path = Child(path, "hot");
  if (hot.IsDefined() && !hot.IsNull()) {
    if (!hot.IsSequence()) return Error(hot, hot_path, "must be a list");
    std::set<std::string> seen;
    for (size_t i = 0; i < hot.size(); ++i) {
      const std::string at = absl::StrCat(hot_path, "[", i, "]");
      HotBound bound;
      RETURN_IF_ERROR(LoadHotBound(hot[i], at, *config, &bound));
      if (!seen.insert(bound.metric).second) {
        return Error(Find(hot[i], "metric"), Child(at, "metric"),
                     absl::StrCat(Quote(bound.metric), " is listed twice"));
      }
      r.hot.push_back(std::move(bound));
    }
  }
  if (r.mode != RebalanceMode::kOff && r.hot.empty()) {
    return Error(hot.IsDefined() ? hot : node, hot_path,
                 "needs at least one metric when mode is dryRun (the "
                 "default with this section) or evict: nothing says when a "
                 "node is hot");
  }
  if (YNode pods = Find(node, "pods"); pods.IsDefined()) {
    RETURN_IF_ERROR(
        LoadRebalancePods(pods, Child(path, "pods"), *config, &r.pods));
  }
  if (YNode limits = Find(node, "limits"); limits.IsDefined()) {
    const std::string at = Child(path, "limits");
    RETURN_IF_ERROR(CheckMap(
        limits, at,
        {"perNode", "perNamespace", "perWorkload", "total", "coolDown"}));
    constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
    RETURN_IF_ERROR(GetInt(limits, at, "perNode", 1, kMax, &r.limits.per_node));
    RETURN_IF_ERROR(
        GetInt(limits, at, "perNamespace", 1, kMax, &r.limits.per_namespace));
    RETURN_IF_ERROR(
        GetInt(limits, at, "perWorkload", 1, kMax, &r.limits.per_workload));
    RETURN_IF_ERROR(GetInt(limits, at, "total", 1, kMax, &r.limits.total));
    YNode d;
    RETURN_IF_ERROR(
        GetDuration(limits, at, "coolDown", &r.limits.cool_down, &d));
    if (r.limits.cool_down < absl::ZeroDuration()) {
      return Error(d, Child(at, "coolDown"), "must be >= 0");
    }
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadHotBound(const YNode& node, const std::string& path,
                                  const Config& config, HotBound* out) {
  RETURN_IF_ERROR(CheckMap(
      node, path, {"metric", "high", "aboveMean", "samples", "low", "settle"}));
  YNode metric;
  RETURN_IF_ERROR(GetString(node, path, "metric", &out->metric, &metric));
  if (!metric.IsDefined())
    return Error(node, Child(path, "metric"), "required");
  const MetricConfig* term = FirstTerm(config, out->metric);
  if (term == nullptr) {
    return Error(metric, Child(path, "metric"),
                 absl::StrCat("no metric is named ", Quote(out->metric)));
  }
  if (std::string why = CannotRebalanceOn(*term); !why.empty()) {
    return Error(metric, Child(path, "metric"),
                 absl::StrCat(Quote(out->metric), " ", why));
  }
  YNode high, above, low;
  double value = 0;
  RETURN_IF_ERROR(GetDouble(node, path, "high", &value, &high));
  if (high.IsDefined()) out->high = value;
  RETURN_IF_ERROR(GetDouble(node, path, "aboveMean", &value, &above));
  if (above.IsDefined()) {
    if (value < 0)
      return Error(above, Child(path, "aboveMean"), "must be >= 0");
    out->above_mean = value;
  }
  if (!out->high && !out->above_mean) {
    return Error(node, path,
                 "needs high, aboveMean or both: what makes a node hot");
  }
  RETURN_IF_ERROR(GetInt(node, path, "samples", 1, 100, &out->samples));
  RETURN_IF_ERROR(GetDouble(node, path, "low", &out->low, &low));
  if (!low.IsDefined()) {
    return Error(node, Child(path, "low"),
                 "required: the value moving pods must bring the node to");
  }
  if (out->high && out->low > *out->high) {
    return Error(low, Child(path, "low"),
                 absl::StrCat("must be <= high (", *out->high, ")"));
  }
  if (Find(node, "settle").IsDefined()) {
    YNode d;
    absl::Duration settle;
    RETURN_IF_ERROR(GetDuration(node, path, "settle", &settle, &d));
    if (settle < absl::ZeroDuration()) {
      return Error(d, Child(path, "settle"), "must be >= 0");
    }
    out->settle = settle;
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadRebalancePods(const YNode& node,
                                       const std::string& path,
                                       const Config& config,
                                       RebalancePods* out) {
  RETURN_IF_ERROR(CheckMap(
      node, path,
      {"schedulerNames", "namespaces", "excludeNamespaces", "matchLabels",
       "matchExpressions", "maxPriority", "minAge", "localStorage"}));
  const std::vector<std::string> ours = SchedulerNames(config);
  RETURN_IF_ERROR(GetStringList(
      node, path, "schedulerNames", &out->scheduler_names,
      [&](const std::string& name) -> std::string {
        for (const std::string& s : ours) {
          if (s == name) return "";
        }
        return absl::StrCat("is not a profile's schedulerName (",
                            absl::StrJoin(ours, ", "),
                            "): only pods this scheduler places again move");
      }));
  for (const auto& [key, list] :
       {std::pair<const char*, std::vector<std::string>*>{"namespaces",
                                                          &out->namespaces},
        {"excludeNamespaces", &out->exclude_namespaces}}) {
    RETURN_IF_ERROR(GetStringList(
        node, path, key, list, [](const std::string& name) -> std::string {
          return IsDns1123Label(name) ? "" : "must be a namespace name";
        }));
  }
  if (Find(node, "matchLabels").IsDefined() ||
      Find(node, "matchExpressions").IsDefined()) {
    RETURN_IF_ERROR(LoadLabelSelector(node, path, &out->labels.emplace()));
  }
  RETURN_IF_ERROR(
      GetInt(node, path, "maxPriority", std::numeric_limits<int32_t>::min(),
             std::numeric_limits<int32_t>::max(), &out->max_priority));
  YNode d;
  RETURN_IF_ERROR(GetDuration(node, path, "minAge", &out->min_age, &d));
  if (out->min_age < absl::ZeroDuration()) {
    return Error(d, Child(path, "minAge"), "must be >= 0");
  }
  return GetBool(node, path, "localStorage", &out->local_storage);
}

absl::Status Loader::GetStringList(
    const YNode& map, const std::string& path, const char* key,
    std::vector<std::string>* out,
    absl::FunctionRef<std::string(const std::string&)> invalid) {
  YNode list = Find(map, key);
  if (!list.IsDefined()) return absl::OkStatus();
  const std::string at = Child(path, key);
  if (!list.IsSequence()) return Error(list, at, "must be a list");
  out->clear();
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = absl::StrCat(at, "[", i, "]");
    std::string item;
    RETURN_IF_ERROR(Scalar(list[i], item_path, &item));
    if (std::string why = invalid(item); !why.empty()) {
      return Error(list[i], item_path, absl::StrCat(Quote(item), " ", why));
    }
    out->push_back(std::move(item));
  }
  return absl::OkStatus();
}

}  // namespace ms
