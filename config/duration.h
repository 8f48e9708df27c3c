// Go-style durations, as the configuration and kube-scheduler's flags
// write them.
#ifndef METRICS_SCHEDULER_CONFIG_DURATION_H_
#define METRICS_SCHEDULER_CONFIG_DURATION_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ms {

// Parses a Go-style duration: a sequence of number+unit, units ns, us, ms,
// s, m, h (`500ms`, `15s`, `2m`, `1h30m`, `1.5s`); bare `0` is zero; at
// most 100 years. InvalidArgument for anything else, including negative
// durations.
absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text);

}  // namespace ms

#endif  // METRICS_SCHEDULER_CONFIG_DURATION_H_
