#include "metrics/http_errors.h"

#include <string>

namespace ms::metrics {

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
