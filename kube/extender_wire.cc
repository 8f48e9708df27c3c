#include "kube/extender_wire.h"

#include <simdjson.h>

#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/json.h"

namespace ms::kube {
namespace {

namespace od = simdjson::ondemand;

bool Is(std::string_view key, absl::string_view name) {
  return absl::EqualsIgnoreCase(absl::string_view(key.data(), key.size()),
                                name);
}

std::string String(od::value v) {
  if (v.type() != od::json_type::string) return "";
  return std::string(std::string_view(v.get_string()));
}

}  // namespace

absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(absl::string_view body) {
  thread_local od::parser parser;
  simdjson::padded_string padded(body.data(), body.size());
  ExtenderArgs out;
  try {
    od::document doc = parser.iterate(padded);
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      od::value v = f.value();
      if (v.is_null()) continue;
      if (Is(key, "Pod")) {
        for (od::field p : v.get_object()) {
          std::string_view pkey = p.unescaped_key();
          od::value pv = p.value();
          if (pv.is_null()) continue;
          if (pkey == "spec") {
            for (od::field s : pv.get_object()) {
              std::string_view skey = s.unescaped_key();
              if (skey != "priority") continue;
              od::value priority = s.value();
              if (!priority.is_null()) {
                out.pod_priority = static_cast<int32_t>(int64_t(priority));
              }
            }
            continue;
          }
          if (pkey != "metadata") continue;
          for (od::field m : pv.get_object()) {
            std::string_view mkey = m.unescaped_key();
            if (mkey == "namespace") out.pod_namespace = String(m.value());
            if (mkey == "name") out.pod_name = String(m.value());
            if (mkey == "labels") {
              od::value labels = m.value();
              if (labels.is_null()) continue;
              for (od::field l : labels.get_object()) {
                std::string label(std::string_view(l.unescaped_key()));
                out.pod_labels.emplace(std::move(label), String(l.value()));
              }
            }
          }
        }
      } else if (Is(key, "NodeNames")) {
        for (od::value name : v.get_array()) {
          out.node_names.push_back(std::string(std::string_view(name.get_string())));
        }
      } else if (Is(key, "Nodes")) {
        out.with_nodes = true;
        for (od::field l : v.get_object()) {
          std::string_view lkey = l.unescaped_key();
          if (lkey != "items") continue;
          od::value items = l.value();
          if (items.is_null()) continue;
          for (od::value node : items.get_array()) {
            std::string name;
            for (od::field n : node.get_object()) {
              std::string_view nkey = n.unescaped_key();
              if (nkey != "metadata") continue;
              for (od::field m : n.value().get_object()) {
                std::string_view mkey = m.unescaped_key();
                if (mkey == "name") name = String(m.value());
              }
            }
            out.node_names.push_back(std::move(name));
          }
        }
      }
    }
  } catch (const simdjson::simdjson_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an ExtenderArgs object: ", e.what()));
  }
  return out;
}

std::string EncodeFilterResult(
    const std::vector<std::string>& passed,
    const std::vector<std::pair<std::string, std::string>>& failed,
    const std::string& error) {
  std::string out = "{\"NodeNames\":[";
  for (size_t i = 0; i < passed.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? "," : "", JsonQuote(passed[i]));
  }
  out += "],\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{";
  for (size_t i = 0; i < failed.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? "," : "", JsonQuote(failed[i].first), ":",
                    JsonQuote(failed[i].second));
  }
  absl::StrAppend(&out, "},\"Error\":", JsonQuote(error), "}");
  return out;
}

std::string EncodeHostPriorities(
    const std::vector<std::pair<std::string, int64_t>>& scores) {
  std::string out = "[";
  for (size_t i = 0; i < scores.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? "," : "", "{\"Host\":",
                    JsonQuote(scores[i].first), ",\"Score\":", scores[i].second,
                    "}");
  }
  return out + "]";
}

}  // namespace ms::kube
