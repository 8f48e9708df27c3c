#include "metrics/http_errors.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/http.h"

namespace ms::metrics {

absl::Status RequestError(absl::string_view what, const absl::Status& status,
                          size_t max_response_bytes) {
  if (IsResponseTooLarge(status)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": the answer is larger than ", max_response_bytes,
        " bytes, the most backend.maxResponseBytes allows: refused"));
  }
  return absl::Status(status.code(),
                      absl::StrCat(what, ": ", status.message()));
}

absl::StatusCode CodeForBackendStatus(
    long http_status) {  // NOLINT(runtime/int)
  switch (http_status) {
    case 401:
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 400:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 408:
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    case 429:
      return absl::StatusCode::kUnavailable;
    default:
      break;
  }
  if (http_status >= 500 && http_status <= 599) {
    return absl::StatusCode::kUnavailable;
  }
  return absl::StatusCode::kFailedPrecondition;
}

std::string BodySnippet(absl::string_view body, size_t max) {
  std::string out(body.substr(0, max));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  if (body.size() > max) out += "...";
  return out;
}

}  // namespace ms::metrics
