// Writing JSON text: the one string escaper the project uses to build
// request bodies (Bindings, Events, patches, Sysdig queries).
#ifndef METRICS_SCHEDULER_COMMON_JSON_H_
#define METRICS_SCHEDULER_COMMON_JSON_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ms {

// `s` as a quoted JSON string: "a\"b" for a"b. Control characters are
// escaped; bytes >= 0x80 are copied (the input is expected to be UTF-8).
std::string JsonQuote(absl::string_view s);

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_JSON_H_
