#include "kube/manifest.h"

#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/json.h"
#include "common/yaml.h"
#include "kube/decode.h"
#include "yaml-cpp/yaml.h"

namespace ms::kube {
namespace {

// Keys whose values are resource lists: their scalars are quantities.
bool IsResourceList(const std::string& key) {
  return key == "requests" || key == "limits" || key == "overhead";
}

// A plain (unquoted) scalar as JSON: YAML 1.2's core schema, as the
// apiserver's YAML decoder reads it.
std::string PlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    return "null";
  }
  if (s == "true" || s == "True" || s == "TRUE") return "true";
  if (s == "false" || s == "False" || s == "FALSE") return "false";
  int64_t i = 0;
  if (absl::SimpleAtoi(s, &i) && s.find_first_of(" +") == std::string::npos) {
    return absl::StrCat(i);
  }
  double d = 0;
  bool numeric = absl::SimpleAtod(s, &d) && std::isfinite(d) &&
                 s.find_first_not_of("0123456789+-.eE") == std::string::npos;
  if (numeric) {
    // As written when JSON can say it so (not ".5", "5." or "+5").
    bool json_form = (std::isdigit(static_cast<unsigned char>(s.front())) ||
                      (s.front() == '-' && s.size() > 1 &&
                       std::isdigit(static_cast<unsigned char>(s[1])))) &&
                     std::isdigit(static_cast<unsigned char>(s.back())) &&
                     s.find(".e") == std::string::npos &&
                     s.find(".E") == std::string::npos;
    return json_form ? s : absl::StrCat(d);
  }
  return JsonQuote(s);
}

void AppendJson(const YAML::Node& node, bool quantities, std::string* out) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out->append("null");
      return;
    case YAML::NodeType::Scalar:
      if (quantities || node.Tag() == "!") {
        out->append(JsonQuote(node.Scalar()));
      } else {
        out->append(PlainScalar(node.Scalar()));
      }
      return;
    case YAML::NodeType::Sequence: {
      out->push_back('[');
      bool first = true;
      for (const YAML::Node& item : node) {
        if (!first) out->push_back(',');
        first = false;
        AppendJson(item, false, out);
      }
      out->push_back(']');
      return;
    }
    case YAML::NodeType::Map: {
      out->push_back('{');
      bool first = true;
      for (const auto& kv : node) {
        if (!first) out->push_back(',');
        first = false;
        std::string key = kv.first.Scalar();
        absl::StrAppend(out, JsonQuote(key), ":");
        AppendJson(kv.second, quantities || IsResourceList(key), out);
      }
      out->push_back('}');
      return;
    }
  }
}

std::string Str(const YAML::Node& node) {
  return node && node.IsScalar() ? node.Scalar() : "";
}

// map[key] when `map` is a mapping, else an undefined node. (yaml-cpp
// throws when a key is looked up in a missing node or a scalar.)
YAML::Node At(const YAML::Node& map, const char* key) {
  if (!map || !map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node value = map[key];
  return value ? value : YAML::Node(YAML::NodeType::Undefined);
}

// The pod template of a workload, or an undefined node.
YAML::Node TemplateOf(const YAML::Node& doc, const std::string& kind) {
  if (kind == "Deployment" || kind == "ReplicaSet" || kind == "StatefulSet" ||
      kind == "DaemonSet" || kind == "Job" ||
      kind == "ReplicationController") {
    return At(At(doc, "spec"), "template");
  }
  if (kind == "CronJob") {
    return At(At(At(At(doc, "spec"), "jobTemplate"), "spec"), "template");
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

absl::Status YamlError(const YAML::Exception& e) {
  return absl::InvalidArgumentError(
      absl::StrCat("line ", e.mark.line + 1, ", column ", e.mark.column + 1,
                   ": ", e.msg));
}

}  // namespace

absl::StatusOr<std::string> YamlToJson(absl::string_view yaml) {
  try {
    YAML::Node node = LoadYaml(yaml);
    std::string out;
    AppendJson(node, false, &out);
    return out;
  } catch (const YAML::Exception& e) {
    return YamlError(e);
  }
}

absl::StatusOr<Pod> DecodePodManifest(absl::string_view text) {
  std::vector<YAML::Node> docs;
  try {
    docs = LoadAllYaml(text);
  } catch (const YAML::Exception& e) {
    return YamlError(e);
  }
  for (const YAML::Node& doc : docs) {
    if (!doc.IsMap()) continue;
    std::string kind = Str(doc["kind"]);
    YAML::Node pod;
    if (kind == "Pod") {
      pod = doc;
    } else if (YAML::Node t = TemplateOf(doc, kind); t && t.IsMap()) {
      // The template's pod, named after its workload.
      pod = YAML::Clone(t);
      if (pod["metadata"] && !pod["metadata"].IsMap()) continue;
      YAML::Node meta = pod["metadata"];
      const YAML::Node workload_meta = At(doc, "metadata");
      if (Str(At(meta, "name")).empty()) {
        meta["name"] = Str(At(workload_meta, "name"));
      }
      if (Str(At(meta, "namespace")).empty() &&
          !Str(At(workload_meta, "namespace")).empty()) {
        meta["namespace"] = Str(At(workload_meta, "namespace"));
      }
    } else {
      continue;
    }
    // The namespace is needed before decoding: pod affinity terms that name
    // none apply to it.
    if (!At(pod, "metadata")) pod["metadata"] = YAML::Node(YAML::NodeType::Map);
    if (YAML::Node meta = pod["metadata"];
        meta.IsMap() && Str(At(meta, "namespace")).empty()) {
      meta["namespace"] = "default";
    }
    std::string json;
    try {
      AppendJson(pod, false, &json);
    } catch (const YAML::Exception& e) {
      return YamlError(e);
    }
    absl::StatusOr<Pod> decoded = DecodePod(json);
    if (!decoded.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(kind, " ", Str(At(At(doc, "metadata"), "name")), ": ",
                       decoded.status().message()));
    }
    return decoded;
  }
  return absl::InvalidArgumentError(
      "no Pod, and no workload with a pod template (Deployment, ReplicaSet, "
      "StatefulSet, DaemonSet, Job, CronJob), in the manifest");
}

}  // namespace ms::kube
