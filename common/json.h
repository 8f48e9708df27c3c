// Writing JSON text: the one string escaper the project uses, for request
// bodies (Bindings, Events, patches, Sysdig queries) and JSON log lines.
#ifndef METRICS_SCHEDULER_COMMON_JSON_H_
#define METRICS_SCHEDULER_COMMON_JSON_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ms {

// `s` as a quoted JSON string: "a\"b" for a"b. Quotes, backslashes and
// control characters are escaped; valid UTF-8 is copied; each byte that is
// not part of a valid UTF-8 sequence becomes \ufffd (as Go's encoding/json
// does), so the result is always valid JSON.
std::string JsonQuote(absl::string_view s);

// The same, appended to `out`.
void AppendJsonQuoted(std::string& out, absl::string_view s);

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_JSON_H_
