#include "metrics/prometheus_decode.h"

#include <simdjson.h>

#include <cmath>
#include <limits>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "metrics/http_errors.h"

namespace ms::metrics {
namespace {

namespace od = simdjson::ondemand;

absl::string_view AbslView(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// Thrown inside the decoder only; DecodeInstantQuery returns it as a status.
struct DecodeFailure {
  absl::Status status;
};

std::string String(od::value v) { return std::string(std::string_view(v)); }

absl::StatusCode CodeForErrorType(absl::string_view error_type,
                                  long http_status) {  // NOLINT(runtime/int)
  if (error_type == "bad_data" || error_type == "execution") {
    return absl::StatusCode::kInvalidArgument;
  }
  if (error_type == "timeout") return absl::StatusCode::kDeadlineExceeded;
  if (error_type == "canceled" || error_type == "internal" ||
      error_type == "unavailable") {
    return absl::StatusCode::kUnavailable;
  }
  if (http_status >= 200 && http_status < 300) {
    return absl::StatusCode::kUnavailable;
  }
  return CodeForBackendStatus(http_status);
}

absl::Status NotAVector(absl::string_view metric_name,
                        absl::string_view result_type) {
  return absl::InvalidArgumentError(absl::StrCat(
      "metric ", metric_name, ": the query returned a ", result_type,
      " result; a metric query must return an instant vector with one "
      "series per node (no range selector such as [5m] at the top level, "
      "no bare number or string)"));
}

}  // namespace

std::optional<double> ParsePromValue(absl::string_view text) {
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "+Inf" || text == "Inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (text == "-Inf") return -std::numeric_limits<double>::infinity();
  double v;
  if (text.empty() || !absl::SimpleAtod(text, &v)) return std::nullopt;
  return v;
}

absl::StatusOr<PromQueryInfo> DecodeInstantQuery(
    long http_status,  // NOLINT(runtime/int)
    absl::string_view body, const PromDecodeOptions& options,
    absl::FunctionRef<void(const PromSeries&)> on_series) {
  thread_local od::parser parser;
  thread_local std::string labels_text;
  const std::string_view join_label(options.join_label.data(),
                                    options.join_label.size());
  const bool http_ok = http_status >= 200 && http_status < 300;
  simdjson::padded_string padded(body.data(), body.size());
  PromQueryInfo info;
  std::string status, error_type, error, result_type;
  bool saw_result = false;
  try {
    od::document doc = parser.iterate(padded);
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "status") {
        status = String(f.value());
      } else if (key == "errorType") {
        error_type = String(f.value());
      } else if (key == "error") {
        error = String(f.value());
      } else if (key == "warnings") {
        od::value w = f.value();
        if (w.is_null()) continue;
        for (od::value item : w.get_array()) {
          info.warnings.push_back(String(item));
        }
      } else if (key == "data") {
        od::value data = f.value();
        if (data.is_null()) continue;
        for (od::field d : data.get_object()) {
          std::string_view dkey = d.unescaped_key();
          if (dkey == "resultType") {
            result_type = String(d.value());
            continue;
          }
          if (dkey != "result") continue;
          saw_result = true;
          if (!result_type.empty() && result_type != "vector") continue;
          od::value result = d.value();
          if (result.is_null()) continue;
          if (result.type() != od::json_type::array) {
            throw DecodeFailure{NotAVector(options.metric_name, "non-vector")};
          }
          for (od::value item : result.get_array()) {
            if (item.type() != od::json_type::object) {
              throw DecodeFailure{
                  NotAVector(options.metric_name, "scalar or string")};
            }
            PromSeries series;
            bool has_value = false;
            labels_text.clear();
            for (od::field sf : item.get_object()) {
              std::string_view skey = sf.unescaped_key();
              if (skey == "metric") {
                if (options.labels_text) labels_text = "{";
                for (od::field lf : sf.value().get_object()) {
                  std::string_view name = lf.unescaped_key();
                  std::string_view value = lf.value().get_string();
                  if (name == join_label) {
                    series.has_label = true;
                    series.label_value = AbslView(value);
                  }
                  if (options.labels_text) {
                    if (labels_text.size() > 1) labels_text += ", ";
                    absl::StrAppend(&labels_text, AbslView(name), "=\"",
                                    AbslView(value), "\"");
                  }
                }
                if (options.labels_text) labels_text += "}";
              } else if (skey == "value") {
                double t = 0;
                std::string_view text;
                int index = 0;
                for (od::value element : sf.value().get_array()) {
                  if (index == 0) t = double(element);
                  if (index == 1) text = element.get_string();
                  ++index;
                }
                std::optional<double> v = index == 2
                                              ? ParsePromValue(AbslView(text))
                                              : std::nullopt;
                if (!v.has_value()) {
                  throw DecodeFailure{absl::UnavailableError(absl::StrCat(
                      "metric ", options.metric_name,
                      ": malformed sample value \"", AbslView(text), "\""))};
                }
                series.sample.value = *v;
                series.sample.time_ms = std::llround(t * 1000);
                has_value = true;
              } else if (skey == "values" || skey == "histogram" ||
                         skey == "histograms") {
                throw DecodeFailure{NotAVector(
                    options.metric_name,
                    skey == "values" ? "matrix (range vector)" : "histogram")};
              }
            }
            if (!has_value) {
              throw DecodeFailure{absl::UnavailableError(
                  absl::StrCat("metric ", options.metric_name,
                               ": a series of the result has no value"))};
            }
            series.labels_text = labels_text;
            ++info.series;
            on_series(series);
          }
        }
      }
    }
  } catch (const DecodeFailure& failure) {
    return failure.status;
  } catch (const simdjson::simdjson_error& e) {
    std::string what = absl::StrCat(
        "metric ", options.metric_name, ": ",
        http_ok ? "malformed response" : absl::StrCat("HTTP ", http_status),
        " (", e.what(), "): ", BodySnippet(body));
    return absl::Status(http_ok ? absl::StatusCode::kUnavailable
                                : CodeForBackendStatus(http_status),
                        what);
  }
  if (status == "error" || !http_ok) {
    return absl::Status(
        CodeForErrorType(error_type, http_status),
        absl::StrCat("metric ", options.metric_name, ": query failed (HTTP ",
                     http_status, error_type.empty() ? "" : ", ", error_type,
                     "): ", error.empty() ? BodySnippet(body) : error));
  }
  if (status != "success" || !saw_result) {
    return absl::UnavailableError(
        absl::StrCat("metric ", options.metric_name,
                     ": response is not a Prometheus query result: ",
                     BodySnippet(body)));
  }
  if (!result_type.empty() && result_type != "vector") {
    return NotAVector(options.metric_name, result_type);
  }
  return info;
}

}  // namespace ms::metrics
