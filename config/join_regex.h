// The join regex of a metric (JoinConfig::regex): one syntax, checked in one
// place.
//
// The regex is applied to label values that come from the metrics backend,
// of any length, so it is RE2's (linear time, no recursion): Perl-like, but
// without lookaround or backreferences. config/ checks it when the file is
// loaded; metrics/ compiles it with the same options.
#ifndef METRICS_SCHEDULER_CONFIG_JOIN_REGEX_H_
#define METRICS_SCHEDULER_CONFIG_JOIN_REGEX_H_

#include <string>

#include "absl/status/status.h"
#include "re2/re2.h"

namespace ms {

// Options for every join regex: RE2's defaults, no logging of errors
// (they are returned).
re2::RE2::Options JoinRegexOptions();

// OK, or InvalidArgument saying why the pattern is not a valid RE2 regex.
absl::Status CheckJoinRegex(const std::string& pattern);

}  // namespace ms

#endif  // METRICS_SCHEDULER_CONFIG_JOIN_REGEX_H_
