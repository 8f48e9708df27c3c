#include "metrics/prometheus_decode.h"

#include <simdjson.h>

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

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

// The fields of the answer around its result.
struct Envelope {
  std::string status;       // "success" or "error"
  std::string error_type;   // errorType
  std::string error;        // the server's message
  std::string result_type;  // data.resultType
  bool saw_result = false;  // data.result is present
};

// Stores `value` as the candidate label `name`'s, when it is one.
void CandidateValue(std::string_view name, std::string_view value,
                    const PromDecodeOptions& options,
                    std::vector<absl::string_view>& values) {
  for (size_t i = 0; i < options.candidate_labels.size(); ++i) {
    if (AbslView(name) == options.candidate_labels[i]) {
      values[i] = AbslView(value);
      return;
    }
  }
}

// A series' "metric": the join label into `series`, the candidate labels'
// values into `candidates` (sized to them) and, with options.labels_text,
// every label into `labels_text` as {a="x", b="y"}.
void SeriesLabels(od::value metric, const PromDecodeOptions& options,
                  std::string_view join_label, PromSeries& series,
                  std::vector<absl::string_view>& candidates,
                  std::string& labels_text) {
  // assign(), not = "{": GCC 12's -Wrestrict misfires on that here.
  if (options.labels_text) labels_text.assign(1, '{');
  for (od::field lf : metric.get_object()) {
    std::string_view name = lf.unescaped_key();
    std::string_view value = lf.value().get_string();
    if (name == join_label) {
      series.has_label = true;
      series.label_value = AbslView(value);
    } else if (!options.namespace_label.empty() &&
               AbslView(name) == options.namespace_label) {
      series.has_namespace = true;
      series.namespace_value = AbslView(value);
    } else if (!candidates.empty()) {
      CandidateValue(name, value, options, candidates);
    }
    if (options.labels_text) {
      if (labels_text.size() > 1) labels_text += ", ";
      absl::StrAppend(&labels_text, AbslView(name), "=\"", AbslView(value),
                      "\"");
    }
  }
  if (options.labels_text) labels_text += "}";
}

// A series' "value", [time, "text"], as a sample.
MetricSample Sample(od::value value, absl::string_view metric_name) {
  double t = 0;
  std::string_view text;
  int index = 0;
  for (od::value element : value.get_array()) {
    if (index == 0) t = double(element);
    if (index == 1) text = element.get_string();
    ++index;
  }
  std::optional<double> v =
      index == 2 ? ParsePromValue(AbslView(text)) : std::nullopt;
  if (!v.has_value()) {
    throw DecodeFailure{absl::UnavailableError(
        absl::StrCat("metric ", metric_name, ": malformed sample value \"",
                     AbslView(text), "\""))};
  }
  return MetricSample{.value = *v, .time_ms = std::llround(t * 1000)};
}

// Per-thread storage a series' views point into, valid until the next
// series.
struct SeriesScratch {
  std::string labels_text;
  std::vector<absl::string_view> candidates;  // one per candidate label
};

// One series of a vector result, its views into `scratch`.
PromSeries Series(od::value item, const PromDecodeOptions& options,
                  std::string_view join_label, SeriesScratch& scratch) {
  if (item.type() != od::json_type::object) {
    throw DecodeFailure{NotAVector(options.metric_name, "scalar or string")};
  }
  PromSeries series;
  bool has_value = false;
  scratch.labels_text.clear();
  scratch.candidates.assign(options.candidate_labels.size(),
                            absl::string_view());
  for (od::field sf : item.get_object()) {
    std::string_view key = sf.unescaped_key();
    if (key == "metric") {
      SeriesLabels(sf.value(), options, join_label, series, scratch.candidates,
                   scratch.labels_text);
    } else if (key == "value") {
      series.sample = Sample(sf.value(), options.metric_name);
      has_value = true;
    } else if (key == "values" || key == "histogram" || key == "histograms") {
      throw DecodeFailure{
          NotAVector(options.metric_name,
                     key == "values" ? "matrix (range vector)" : "histogram")};
    }
  }
  if (!has_value) {
    throw DecodeFailure{absl::UnavailableError(
        absl::StrCat("metric ", options.metric_name,
                     ": a series of the result has no value"))};
  }
  series.labels_text = scratch.labels_text;
  series.candidate_values = scratch.candidates;
  return series;
}

// data.result, a vector: each series handed to `on_series` and counted.
void VectorResult(od::value result, const PromDecodeOptions& options,
                  absl::FunctionRef<void(const PromSeries&)> on_series,
                  PromQueryInfo& info) {
  thread_local SeriesScratch scratch;
  if (result.is_null()) return;
  if (result.type() != od::json_type::array) {
    throw DecodeFailure{NotAVector(options.metric_name, "non-vector")};
  }
  const std::string_view join_label(options.join_label.data(),
                                    options.join_label.size());
  for (od::value item : result.get_array()) {
    PromSeries series = Series(item, options, join_label, scratch);
    ++info.series;
    on_series(series);
  }
}

// "data": its resultType, and its result when that may be a vector.
void Data(od::value data, const PromDecodeOptions& options,
          absl::FunctionRef<void(const PromSeries&)> on_series,
          Envelope& envelope, PromQueryInfo& info) {
  if (data.is_null()) return;
  for (od::field d : data.get_object()) {
    std::string_view key = d.unescaped_key();
    if (key == "resultType") {
      envelope.result_type = String(d.value());
    } else if (key == "result") {
      envelope.saw_result = true;
      // Any other result type is refused once the whole answer is read.
      if (!envelope.result_type.empty() && envelope.result_type != "vector") {
        continue;
      }
      VectorResult(d.value(), options, on_series, info);
    }
  }
}

// The answer's fields: the envelope, the warnings, the data's series.
void Answer(od::document& doc, const PromDecodeOptions& options,
            absl::FunctionRef<void(const PromSeries&)> on_series,
            Envelope& envelope, PromQueryInfo& info) {
  for (od::field f : doc.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "status") {
      envelope.status = String(f.value());
    } else if (key == "errorType") {
      envelope.error_type = String(f.value());
    } else if (key == "error") {
      envelope.error = String(f.value());
    } else if (key == "warnings") {
      od::value w = f.value();
      if (w.is_null()) continue;
      for (od::value item : w.get_array()) {
        info.warnings.push_back(String(item));
      }
    } else if (key == "data") {
      Data(f.value(), options, on_series, envelope, info);
    }
  }
}

bool IsHttpOk(long http_status) {  // NOLINT(runtime/int)
  return http_status >= 200 && http_status < 300;
}

// A body that is not JSON (or not the API's): Unavailable from a 2xx,
// else what the HTTP status says.
absl::Status Unreadable(long http_status,  // NOLINT(runtime/int)
                        absl::string_view body,
                        const PromDecodeOptions& options,
                        const simdjson::simdjson_error& e) {
  const bool http_ok = IsHttpOk(http_status);
  std::string what = absl::StrCat(
      "metric ", options.metric_name, ": ",
      http_ok ? "malformed response" : absl::StrCat("HTTP ", http_status), " (",
      e.what(), "): ", BodySnippet(body));
  return absl::Status(http_ok ? absl::StatusCode::kUnavailable
                              : CodeForBackendStatus(http_status),
                      what);
}

// What the answer says, once read: OK for a vector result, else why not.
absl::Status Outcome(long http_status,  // NOLINT(runtime/int)
                     absl::string_view body, const PromDecodeOptions& options,
                     const Envelope& envelope) {
  if (envelope.status == "error" || !IsHttpOk(http_status)) {
    return absl::Status(
        CodeForErrorType(envelope.error_type, http_status),
        absl::StrCat(
            "metric ", options.metric_name, ": query failed (HTTP ",
            http_status, envelope.error_type.empty() ? "" : ", ",
            envelope.error_type, "): ",
            envelope.error.empty() ? BodySnippet(body) : envelope.error));
  }
  if (envelope.status != "success" || !envelope.saw_result) {
    return absl::UnavailableError(absl::StrCat(
        "metric ", options.metric_name,
        ": response is not a Prometheus query result: ", BodySnippet(body)));
  }
  if (!envelope.result_type.empty() && envelope.result_type != "vector") {
    return NotAVector(options.metric_name, envelope.result_type);
  }
  return absl::OkStatus();
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
  simdjson::padded_string padded(body.data(), body.size());
  PromQueryInfo info;
  Envelope envelope;
  try {
    od::document doc = parser.iterate(padded);
    Answer(doc, options, on_series, envelope, info);
  } catch (const DecodeFailure& failure) {
    return failure.status;
  } catch (const simdjson::simdjson_error& e) {
    return Unreadable(http_status, body, options, e);
  }
  if (absl::Status outcome = Outcome(http_status, body, options, envelope);
      !outcome.ok()) {
    return outcome;
  }
  return info;
}

}  // namespace ms::metrics
