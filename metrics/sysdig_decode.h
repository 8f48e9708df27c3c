// Decoding the Sysdig data API's answers (REFERENCE.md, "Sysdig data API").
//
// SysdigSource calls these on every response; the unit tests and the fuzz
// target call them on bodies of their own. No simdjson type leaves
// sysdig_decode.cc.
//
// Thread-safe: each thread decodes with a parser of its own.
#ifndef METRICS_SCHEDULER_METRICS_SYSDIG_DECODE_H_
#define METRICS_SCHEDULER_METRICS_SYSDIG_DECODE_H_

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ms::metrics {

// One row of a grouped answer; the view is valid during the callback only.
struct SysdigRow {
  bool has_host = false;
  absl::string_view host;
  bool has_value = false;  // false: the backend has no value (null)
  double value = 0;
  int64_t time_ms = 0;  // the row's `t`, else the answer's `end`
};

// Decodes a 2xx answer `{"start":..,"end":..,"data":[{"t":..,"d":[..]}]}`,
// calling `on_row` for each row, in order. Returns the number of rows.
// Unavailable (naming `metric_name`) when the body is not the data API's
// JSON; `on_row` may have been called for some rows already.
absl::StatusOr<int> DecodeSysdigRows(
    absl::string_view metric_name, absl::string_view body,
    absl::FunctionRef<void(const SysdigRow&)> on_row);

// The message of an error answer: the `errors[*].message` (and reason), or
// the top-level `message`, or the start of the body.
std::string SysdigErrorMessage(absl::string_view body);

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_SYSDIG_DECODE_H_
