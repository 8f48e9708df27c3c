// How the metrics sources turn an HTTP error status into a status code,
// following MetricsSource's failure contract (metrics_source.h). Internal to
// metrics/.
#ifndef METRICS_SCHEDULER_METRICS_HTTP_ERRORS_H_
#define METRICS_SCHEDULER_METRICS_HTTP_ERRORS_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ms::metrics {

// The code a metrics backend's HTTP error status maps to:
// 401, 403: PermissionDenied. 400, 422: InvalidArgument (the query).
// 408, 504: DeadlineExceeded. 429, 5xx: Unavailable. Any other status
// (404 and the rest of 4xx, unexpected 1xx/3xx): FailedPrecondition.
// Not the apiserver's mapping (kube/decode.h's CodeForApiserverStatus):
// there a 404 is an object gone and a 409 a lost race; here such a status
// says the configuration or the backend needs fixing (MetricsSource's
// failure contract, metrics_source.h).
absl::StatusCode CodeForBackendStatus(long http_status);  // NOLINT(runtime/int)

// The status of a request the HTTP client failed, for `what` ("metric
// NAME", "listing PATH"): for an answer over backend.maxResponseBytes
// (common/http.h's IsResponseTooLarge), ResourceExhausted naming that
// setting and `max_response_bytes`; otherwise `status` with `what` before
// its message.
absl::Status RequestError(absl::string_view what, const absl::Status& status,
                          size_t max_response_bytes);

// The first `max` bytes of `body`, control characters replaced, for an
// error message.
std::string BodySnippet(absl::string_view body, size_t max = 200);

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_HTTP_ERRORS_H_
