// A metric's `filter`: its default bounds and the scopes that replace them
// for some pods and nodes (model/threshold_scope.h).
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "config/config.h"
#include "config/loader.h"
#include "config/validation.h"

namespace ms {
namespace {

// The message for bounds that cross: `min` must be <= `max`.
std::string MinAboveMax(double max) {
  return absl::StrCat("must be <= max (", max, ")");
}

}  // namespace

absl::Status Loader::LoadThreshold(const YNode& node, const std::string& path,
                                   MetricThreshold* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"max", "min", "scopes"}));
  YNode max_node, min_node;
  double max = 0, min = 0;
  RETURN_IF_ERROR(GetDouble(node, path, "max", &max, &max_node));
  RETURN_IF_ERROR(GetDouble(node, path, "min", &min, &min_node));
  YNode scopes = Find(node, "scopes");
  if (!max_node.IsDefined() && !min_node.IsDefined() && !scopes.IsDefined()) {
    return Error(node, path, "needs max, min or both, or scopes");
  }
  if (max_node.IsDefined()) out->max = max;
  if (min_node.IsDefined()) out->min = min;
  if (out->max && out->min && *out->min > *out->max) {
    return Error(min_node, Child(path, "min"), MinAboveMax(*out->max));
  }
  if (!scopes.IsDefined()) return absl::OkStatus();
  const std::string scopes_path = Child(path, "scopes");
  if (!scopes.IsSequence() || scopes.size() == 0) {
    return Error(scopes, scopes_path, "must be a non-empty list");
  }
  for (size_t i = 0; i < scopes.size(); ++i) {
    const std::string at = absl::StrCat(scopes_path, "[", i, "]");
    if (i == kMaxThresholdScopes) {
      return Error(
          scopes[i], at,
          absl::StrCat("at most ", kMaxThresholdScopes, " scopes per metric"));
    }
    ThresholdScope scope;
    RETURN_IF_ERROR(LoadThresholdScope(scopes[i], at, &scope));
    out->scopes.push_back(std::move(scope));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadThresholdScope(const YNode& node,
                                        const std::string& path,
                                        ThresholdScope* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"nodes", "pods", "max", "min"}));
  YNode nodes = Find(node, "nodes");
  YNode pods = Find(node, "pods");
  if (!nodes.IsDefined() && !pods.IsDefined()) {
    return Error(node, path, "needs nodes, pods or both");
  }
  if (nodes.IsDefined()) {
    const std::string p = Child(path, "nodes");
    RETURN_IF_ERROR(CheckMap(nodes, p, {"matchLabels", "matchExpressions"}));
    RETURN_IF_ERROR(LoadLabelSelector(nodes, p, &out->nodes.emplace()));
  }
  if (pods.IsDefined()) {
    RETURN_IF_ERROR(LoadPodClass(pods, Child(path, "pods"), &out->pods));
  }
  YNode max_node, min_node;
  double max = 0, min = 0;
  RETURN_IF_ERROR(GetDouble(node, path, "max", &max, &max_node));
  RETURN_IF_ERROR(GetDouble(node, path, "min", &min, &min_node));
  if (!max_node.IsDefined() && !min_node.IsDefined()) {
    return Error(node, path, "needs max, min or both");
  }
  if (max_node.IsDefined()) out->bounds.max = max;
  if (min_node.IsDefined()) out->bounds.min = min;
  if (out->bounds.min > out->bounds.max) {
    return Error(min_node, Child(path, "min"), MinAboveMax(out->bounds.max));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadPodClass(const YNode& node, const std::string& path,
                                  std::optional<PodClass>* out) {
  RETURN_IF_ERROR(CheckMap(
      node, path,
      {"matchLabels", "matchExpressions", "minPriority", "maxPriority"}));
  PodClass& pods = out->emplace();
  if (Find(node, "matchLabels").IsDefined() ||
      Find(node, "matchExpressions").IsDefined()) {
    RETURN_IF_ERROR(LoadLabelSelector(node, path, &pods.labels.emplace()));
  }
  constexpr int64_t kLowest = std::numeric_limits<int32_t>::min();
  constexpr int64_t kHighest = std::numeric_limits<int32_t>::max();
  for (const auto& [key, field] :
       {std::pair<const char*, std::optional<int32_t>*>{"minPriority",
                                                        &pods.min_priority},
        {"maxPriority", &pods.max_priority}}) {
    int32_t priority = 0;
    if (!Find(node, key).IsDefined()) continue;
    RETURN_IF_ERROR(GetInt(node, path, key, kLowest, kHighest, &priority));
    *field = priority;
  }
  if (pods.min_priority && pods.max_priority &&
      *pods.min_priority > *pods.max_priority) {
    return Error(
        Find(node, "minPriority"), Child(path, "minPriority"),
        absl::StrCat("must be <= maxPriority (", *pods.max_priority, ")"));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadLabelSelector(const YNode& node,
                                       const std::string& path,
                                       LabelSelector* out) {
  if (YNode labels = Find(node, "matchLabels"); labels.IsDefined()) {
    const std::string p = Child(path, "matchLabels");
    if (!labels.IsMap()) return Error(labels, p, "must be a mapping");
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      // Copies: `it->first` and `it->second` live in a proxy destroyed
      // with this statement.
      const YNode key = it->first;
      const YNode value = it->second;
      std::string k, v;
      RETURN_IF_ERROR(Scalar(key, p, &k));
      if (!IsQualifiedName(k)) {
        return Error(key, Child(p, k),
                     absl::StrCat("must be a valid label key ([prefix/]name), "
                                  "got ",
                                  Quote(k)));
      }
      RETURN_IF_ERROR(Scalar(value, Child(p, k), &v));
      if (!out->match_labels.emplace(k, v).second) {
        return Error(key, Child(p, k), "duplicate key");
      }
    }
  }
  YNode expressions = Find(node, "matchExpressions");
  if (!expressions.IsDefined()) return absl::OkStatus();
  const std::string p = Child(path, "matchExpressions");
  if (!expressions.IsSequence()) return Error(expressions, p, "must be a list");
  for (size_t i = 0; i < expressions.size(); ++i) {
    const YNode& item = expressions[i];
    const std::string ip = absl::StrCat(p, "[", i, "]");
    RETURN_IF_ERROR(CheckMap(item, ip, {"key", "operator", "values"}));
    LabelRequirement r;
    YNode key;
    RETURN_IF_ERROR(GetString(item, ip, "key", &r.key, &key));
    if (!key.IsDefined()) return Error(item, Child(ip, "key"), "required");
    if (!IsQualifiedName(r.key)) {
      return Error(key, Child(ip, "key"),
                   absl::StrCat("must be a valid label key ([prefix/]name), "
                                "got ",
                                Quote(r.key)));
    }
    YNode op;
    RETURN_IF_ERROR(
        GetEnum<LabelOperator>(item, ip, "operator",
                               {{"In", LabelOperator::kIn},
                                {"NotIn", LabelOperator::kNotIn},
                                {"Exists", LabelOperator::kExists},
                                {"DoesNotExist", LabelOperator::kDoesNotExist}},
                               &r.op, &op));
    if (!op.IsDefined()) return Error(item, Child(ip, "operator"), "required");
    YNode values = Find(item, "values");
    const std::string vp = Child(ip, "values");
    if (values.IsDefined()) {
      if (!values.IsSequence()) return Error(values, vp, "must be a list");
      for (size_t j = 0; j < values.size(); ++j) {
        std::string v;
        RETURN_IF_ERROR(Scalar(values[j], absl::StrCat(vp, "[", j, "]"), &v));
        r.values.push_back(std::move(v));
      }
    }
    const YNode& at = values.IsDefined() ? values : item;
    const bool listed =
        r.op == LabelOperator::kIn || r.op == LabelOperator::kNotIn;
    if (listed && r.values.empty()) {
      return Error(at, vp, "must not be empty for In and NotIn");
    }
    if (!listed && !r.values.empty()) {
      return Error(at, vp, "must be empty for Exists and DoesNotExist");
    }
    out->match_expressions.push_back(std::move(r));
  }
  return absl::OkStatus();
}

}  // namespace ms
