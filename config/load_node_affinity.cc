#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "config/config.h"
#include "config/loader.h"
#include "config/validation.h"

namespace ms {

absl::Status Loader::LoadNodeAffinity(const YNode& node,
                                      const std::string& path,
                                      NodeAffinityConfig* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"addedAffinity"}));
  YNode added = Find(node, "addedAffinity");
  if (!added.IsDefined()) return absl::OkStatus();
  const std::string added_path = Child(path, "addedAffinity");
  constexpr char kRequired[] = "requiredDuringSchedulingIgnoredDuringExecution";
  constexpr char kPreferred[] =
      "preferredDuringSchedulingIgnoredDuringExecution";
  RETURN_IF_ERROR(CheckMap(added, added_path, {kRequired, kPreferred}));
  if (YNode required = Find(added, kRequired); required.IsDefined()) {
    const std::string p = Child(added_path, kRequired);
    RETURN_IF_ERROR(CheckMap(required, p, {"nodeSelectorTerms"}));
    YNode terms = Find(required, "nodeSelectorTerms");
    const std::string tp = Child(p, "nodeSelectorTerms");
    if (!terms.IsDefined() || !terms.IsSequence() || terms.size() == 0) {
      return Error(terms.IsDefined() ? terms : required, tp,
                   "must be a list of at least one term");
    }
    for (size_t i = 0; i < terms.size(); ++i) {
      NodeSelectorTerm term;
      RETURN_IF_ERROR(LoadTerm(terms[i], absl::StrCat(tp, "[", i, "]"), &term));
      out->added_required.push_back(std::move(term));
    }
  }
  if (YNode preferred = Find(added, kPreferred); preferred.IsDefined()) {
    const std::string p = Child(added_path, kPreferred);
    if (!preferred.IsSequence()) return Error(preferred, p, "must be a list");
    for (size_t i = 0; i < preferred.size(); ++i) {
      const std::string ip = absl::StrCat(p, "[", i, "]");
      RETURN_IF_ERROR(CheckMap(preferred[i], ip, {"weight", "preference"}));
      double weight = 0;
      YNode w;
      RETURN_IF_ERROR(GetDouble(preferred[i], ip, "weight", &weight, &w));
      if (!w.IsDefined())
        return Error(preferred[i], Child(ip, "weight"), "required");
      if (weight != std::floor(weight) || weight < 1 || weight > 100) {
        return Error(w, Child(ip, "weight"), "must be an integer in [1, 100]");
      }
      YNode pref = Find(preferred[i], "preference");
      if (!pref.IsDefined()) {
        return Error(preferred[i], Child(ip, "preference"), "required");
      }
      PreferredNodeTerm term{.weight = static_cast<int32_t>(weight)};
      RETURN_IF_ERROR(
          LoadTerm(pref, Child(ip, "preference"), &term.preference));
      out->added_preferred.push_back(std::move(term));
    }
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadTerm(const YNode& node, const std::string& path,
                              NodeSelectorTerm* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"matchExpressions", "matchFields"}));
  if (YNode n = Find(node, "matchExpressions"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadRequirements(n, Child(path, "matchExpressions"),
                                     /*fields=*/false,
                                     &out->match_expressions));
  }
  if (YNode n = Find(node, "matchFields"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadRequirements(n, Child(path, "matchFields"),
                                     /*fields=*/true, &out->match_fields));
  }
  if (out->match_expressions.empty() && out->match_fields.empty()) {
    return Error(node, path,
                 "needs matchExpressions or matchFields (an empty term "
                 "matches no node)");
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadRequirements(
    const YNode& node, const std::string& path, bool fields,
    std::vector<NodeSelectorRequirement>* out) {
  if (!node.IsSequence()) return Error(node, path, "must be a list");
  for (size_t i = 0; i < node.size(); ++i) {
    const YNode& item = node[i];
    const std::string ip = absl::StrCat(path, "[", i, "]");
    RETURN_IF_ERROR(CheckMap(item, ip, {"key", "operator", "values"}));
    NodeSelectorRequirement r;
    YNode key;
    RETURN_IF_ERROR(GetString(item, ip, "key", &r.key, &key));
    if (!key.IsDefined() || r.key.empty()) {
      return Error(key.IsDefined() ? key : item, Child(ip, "key"), "required");
    }
    if (fields && r.key != "metadata.name") {
      return Error(key, Child(ip, "key"),
                   "must be metadata.name, the only field a node selector "
                   "may match");
    }
    YNode op;
    RETURN_IF_ERROR(GetEnum<SelectorOperator>(
        item, ip, "operator",
        {{"In", SelectorOperator::kIn},
         {"NotIn", SelectorOperator::kNotIn},
         {"Exists", SelectorOperator::kExists},
         {"DoesNotExist", SelectorOperator::kDoesNotExist},
         {"Gt", SelectorOperator::kGt},
         {"Lt", SelectorOperator::kLt}},
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
    switch (r.op) {
      case SelectorOperator::kIn:
      case SelectorOperator::kNotIn:
        if (r.values.empty())
          return Error(at, vp, "must not be empty for In and NotIn");
        if (fields && r.values.size() != 1) {
          return Error(at, vp, "must hold exactly one node name");
        }
        break;
      case SelectorOperator::kExists:
      case SelectorOperator::kDoesNotExist:
        if (fields) {
          return Error(op, Child(ip, "operator"),
                       "must be In or NotIn for matchFields");
        }
        if (!r.values.empty()) {
          return Error(at, vp, "must be empty for Exists and DoesNotExist");
        }
        break;
      case SelectorOperator::kGt:
      case SelectorOperator::kLt: {
        if (fields) {
          return Error(op, Child(ip, "operator"),
                       "must be In or NotIn for matchFields");
        }
        int64_t unused;
        if (r.values.size() != 1 || !absl::SimpleAtoi(r.values[0], &unused)) {
          return Error(at, vp, "must hold exactly one integer for Gt and Lt");
        }
        break;
      }
    }
    out->push_back(std::move(r));
  }
  return absl::OkStatus();
}

}  // namespace ms
