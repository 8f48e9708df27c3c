#include "metrics/metrics_server_decode.h"

#include <simdjson.h>

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "model/quantity.h"

namespace ms::metrics {
namespace {

namespace od = simdjson::ondemand;

absl::string_view AbslView(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

std::optional<double> Cores(std::string_view text) {
  absl::StatusOr<int64_t> milli = ParseQuantityMilli(AbslView(text));
  if (!milli.ok()) return std::nullopt;
  return static_cast<double>(*milli) / 1000;
}

std::optional<double> Bytes(std::string_view text) {
  absl::StatusOr<int64_t> value = ParseQuantityValue(AbslView(text));
  if (!value.ok()) return std::nullopt;
  return static_cast<double>(*value);
}

// One element of `items`; false when it has no name or no timestamp.
bool DecodeItem(od::value item, NodeUsage* out) {
  bool has_time = false;
  for (od::field f : item.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "metadata") {
      for (od::field m : f.value().get_object()) {
        std::string_view mkey = m.unescaped_key();
        od::value v = m.value();
        if (mkey == "name" && v.type() == od::json_type::string) {
          out->name = std::string(std::string_view(v.get_string()));
        }
      }
    } else if (key == "timestamp") {
      od::value v = f.value();
      if (v.type() != od::json_type::string) continue;
      absl::Time t;
      std::string err;
      has_time =
          absl::ParseTime(absl::RFC3339_full, AbslView(v.get_string()), &t, &err);
      out->time_ms = absl::ToUnixMillis(t);
    } else if (key == "usage") {
      for (od::field u : f.value().get_object()) {
        std::string_view resource = u.unescaped_key();
        od::value v = u.value();
        if (v.type() != od::json_type::string) continue;
        if (resource == "cpu") {
          out->cpu_cores = Cores(v.get_string());
        } else if (resource == "memory") {
          out->memory_bytes = Bytes(v.get_string());
        }
      }
    }
  }
  return !out->name.empty() && has_time;
}

}  // namespace

absl::StatusOr<std::vector<NodeUsage>> DecodeNodeMetricsList(
    absl::string_view body) {
  thread_local od::parser parser;
  simdjson::padded_string padded(body.data(), body.size());
  std::vector<NodeUsage> out;
  try {
    od::document doc = parser.iterate(padded);
    bool saw_kind = false;
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "kind") {
        std::string_view kind = f.value().get_string();
        if (kind != "NodeMetricsList") {
          return absl::InvalidArgumentError(absl::StrCat(
              "the resource metrics API answered a ", AbslView(kind),
              ", not a NodeMetricsList"));
        }
        saw_kind = true;
      } else if (key == "items") {
        od::value items = f.value();
        if (items.is_null()) continue;
        for (od::value item : items.get_array()) {
          NodeUsage usage;
          if (DecodeItem(item, &usage)) out.push_back(std::move(usage));
        }
      }
    }
    if (!saw_kind) {
      return absl::InvalidArgumentError(
          "the resource metrics API's answer has no kind: not a "
          "NodeMetricsList");
    }
  } catch (const simdjson::simdjson_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("the resource metrics API's answer is not valid JSON: ",
                     e.what()));
  }
  return out;
}

}  // namespace ms::metrics
