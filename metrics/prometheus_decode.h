// Decoding the Prometheus HTTP API's answer to an instant query.
//
// PrometheusSource calls DecodeInstantQuery on every response; the
// benchmark and the unit tests call it on recorded bodies. The decoder
// hands each series of an instant-vector result to a callback with the one
// label the metric joins on (or, while the join is being detected, each
// candidate label), so a 5,000-series answer is decoded without keeping
// every label. No simdjson type leaves prometheus_decode.cc.
//
// Thread-safe: each thread decodes with a parser of its own.
#ifndef METRICS_SCHEDULER_METRICS_PROMETHEUS_DECODE_H_
#define METRICS_SCHEDULER_METRICS_PROMETHEUS_DECODE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "model/metrics.h"

namespace ms::metrics {

// One series of a vector result. The views are valid during the callback
// only.
struct PromSeries {
  bool has_label = false;         // whether the join label is present
  absl::string_view label_value;  // its value, unescaped
  // The series' labels as `{a="x", b="y"}`, for messages; filled only
  // when PromDecodeOptions::labels_text is set.
  absl::string_view labels_text;
  // PromDecodeOptions::namespace_label's value, when asked for and present.
  bool has_namespace = false;
  absl::string_view namespace_value;
  // The value of each PromDecodeOptions::candidate_labels[i], in that
  // order; "" where the series lacks it (Prometheus drops empty labels).
  // Empty when no candidate label is asked for.
  absl::Span<const absl::string_view> candidate_values;
  MetricSample sample;  // value (NaN and +-Inf as sent); time of evaluation
};

struct PromQueryInfo {
  int series = 0;
  std::vector<std::string> warnings;
};

struct PromDecodeOptions {
  absl::string_view metric_name;  // for messages: "metric cpu: ..."
  absl::string_view join_label;   // the label handed to the callback
  // A second label handed to it (a per-pod query's "namespace"); "": none.
  absl::string_view namespace_label;
  // Fill PromSeries::labels_text (a few appends per series).
  bool labels_text = false;
  // Labels whose values fill PromSeries::candidate_values (join detection,
  // join_detect.h); distinct, none of them join_label or namespace_label.
  // Empty (the configured-join path): no per-label cost.
  absl::Span<const absl::string_view> candidate_labels;
};

// Decodes `body`, the answer with HTTP status `http_status`, calling
// `on_series` for each series of a vector result, in order.
//
// Errors (the message names the metric and carries the server's own):
// - status "error" or a non-2xx HTTP status: the code follows errorType
//   (bad_data, execution: InvalidArgument; timeout: DeadlineExceeded;
//   canceled, internal, unavailable: Unavailable) or, without one, the HTTP
//   status (http_errors.h);
// - a scalar, matrix or string result: InvalidArgument;
// - a body that is not the API's JSON: Unavailable (2xx) or per HTTP status.
// On error `on_series` may have been called for some series already.
absl::StatusOr<PromQueryInfo> DecodeInstantQuery(
    long http_status,  // NOLINT(runtime/int)
    absl::string_view body, const PromDecodeOptions& options,
    absl::FunctionRef<void(const PromSeries&)> on_series);

// A sample value as Prometheus writes it: "0.12", "1e+06", "NaN", "+Inf",
// "-Inf". nullopt for anything else.
std::optional<double> ParsePromValue(absl::string_view text);

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_PROMETHEUS_DECODE_H_
