// URL helpers: the one percent-encoder of the project (query strings of
// the Kubernetes client, Prometheus queries, form bodies).
#ifndef METRICS_SCHEDULER_COMMON_URL_H_
#define METRICS_SCHEDULER_COMMON_URL_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ms {

// Percent-encodes everything but RFC 3986's unreserved characters, for a
// query-string or form value.
std::string UrlEncode(absl::string_view s);

// `base` without trailing slashes, then `path` (which starts with '/').
std::string JoinUrl(absl::string_view base, absl::string_view path);

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_URL_H_
