// What the configuration accepts as a name or a URL, checked as the
// apiserver and HTTP check them. Private to config/.
#ifndef METRICS_SCHEDULER_CONFIG_VALIDATION_H_
#define METRICS_SCHEDULER_CONFIG_VALIDATION_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ms {

// The authority of an http(s) URL: what lies between "://" and the path.
absl::string_view UrlAuthority(absl::string_view url);

// The host of an http(s) URL, without brackets or port.
std::string UrlHost(absl::string_view url);

// localhost, ::1 or 127.*.
bool IsLoopbackHost(absl::string_view host);

// A DNS-1123 label: 1-63 of [a-z0-9-], alphanumeric at both ends.
bool IsDns1123Label(absl::string_view s);

// DNS-1123 labels joined by dots, at most 253 characters.
bool IsDns1123Subdomain(absl::string_view s);

// A label or annotation key: an optional DNS-1123 subdomain prefix and
// '/', then a name of 1-63 characters, alphanumeric at both ends and
// alphanumeric, '-', '_' or '.' between.
bool IsQualifiedName(absl::string_view s);

// A metric's name: [A-Za-z_][A-Za-z0-9_.:-]*.
bool IsMetricName(absl::string_view s);

// An HTTP header name: an RFC 9110 token.
bool IsHeaderName(absl::string_view s);

}  // namespace ms

#endif  // METRICS_SCHEDULER_CONFIG_VALIDATION_H_
