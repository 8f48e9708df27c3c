#include "metrics/sysdig_decode.h"

#include <simdjson.h>

#include <cmath>
#include <string_view>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "metrics/http_errors.h"

namespace ms::metrics {
namespace {

namespace od = simdjson::ondemand;

absl::string_view AbslView(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// A time as the data API writes it: epoch seconds. Microseconds and
// milliseconds (some API versions) are recognised by their size.
int64_t TimeMs(double t) {
  if (t > 1e14) return std::llround(t / 1000);
  if (t > 1e11) return std::llround(t);
  return std::llround(t * 1000);
}

}  // namespace

absl::StatusOr<int> DecodeSysdigRows(
    absl::string_view metric_name, absl::string_view body,
    absl::FunctionRef<void(const SysdigRow&)> on_row) {
  thread_local od::parser parser;
  simdjson::padded_string padded(body.data(), body.size());
  int rows = 0;
  try {
    od::document doc = parser.iterate(padded);
    int64_t end_ms = 0;
    bool saw_data = false;
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "end") {
        end_ms = TimeMs(double(f.value()));
      } else if (key == "data") {
        saw_data = true;
        od::value data = f.value();
        if (data.is_null()) continue;
        for (od::value item : data.get_array()) {
          SysdigRow row;
          row.time_ms = end_ms;
          for (od::field rf : item.get_object()) {
            std::string_view rkey = rf.unescaped_key();
            if (rkey == "t") {
              row.time_ms = TimeMs(double(rf.value()));
            } else if (rkey == "d") {
              int index = 0;
              for (od::value element : rf.value().get_array()) {
                if (index == 0 && !element.is_null()) {
                  row.has_host = true;
                  row.host = AbslView(element.get_string());
                } else if (index == 1) {
                  od::json_type type = element.type();
                  if (type == od::json_type::number) {
                    row.value = double(element);
                    row.has_value = true;
                  } else if (type == od::json_type::string) {
                    row.has_value = absl::SimpleAtod(
                        AbslView(element.get_string()), &row.value);
                  }
                }
                ++index;
              }
            }
          }
          ++rows;
          on_row(row);
        }
      }
    }
    if (!saw_data) {
      return absl::UnavailableError(
          absl::StrCat("metric ", metric_name,
                       ": response has no \"data\": ", BodySnippet(body)));
    }
  } catch (const simdjson::simdjson_error& e) {
    return absl::UnavailableError(absl::StrCat("metric ", metric_name,
                                               ": malformed response (",
                                               e.what(), "): ",
                                               BodySnippet(body)));
  }
  return rows;
}

std::string SysdigErrorMessage(absl::string_view body) {
  thread_local od::parser parser;
  simdjson::padded_string padded(body.data(), body.size());
  std::string out;
  try {
    od::document doc = parser.iterate(padded);
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "message" && out.empty()) {
        out = std::string(std::string_view(f.value()));
      } else if (key == "errors") {
        std::string joined;
        for (od::value e : f.value().get_array()) {
          std::string message, reason;
          for (od::field ef : e.get_object()) {
            std::string_view ekey = ef.unescaped_key();
            if (ekey == "message") message = std::string_view(ef.value());
            if (ekey == "reason") reason = std::string_view(ef.value());
          }
          if (!joined.empty()) joined += "; ";
          joined += message;
          if (!reason.empty()) absl::StrAppend(&joined, " (", reason, ")");
        }
        if (!joined.empty()) out = std::move(joined);
      }
    }
  } catch (const simdjson::simdjson_error&) {
    out.clear();
  }
  return out.empty() ? BodySnippet(body) : out;
}

}  // namespace ms::metrics
