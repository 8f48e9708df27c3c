// Kubernetes resource quantities: `100m`, `0.5`, `2Ki`, `128Mi`, `1G`, `1e3`.
//
// Parsing is exact (integer arithmetic, no floating point) and follows the
// apiserver's canonical rules: an optional sign, a decimal number, then one
// suffix — binary (Ki Mi Gi Ti Pi Ei), decimal (n u m k M G T P E) or an
// exponent (e3, E-2). Anything else is rejected. Values are returned scaled
// and rounded up, as resource.Quantity's MilliValue() and Value() do.
// Pure functions; thread-safe.
#ifndef METRICS_SCHEDULER_MODEL_QUANTITY_H_
#define METRICS_SCHEDULER_MODEL_QUANTITY_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ms {

// The quantity in thousandths (`100m` -> 100, `2` -> 2000), rounded up.
// InvalidArgument for a malformed quantity, OutOfRange when it does not fit
// in int64.
absl::StatusOr<int64_t> ParseQuantityMilli(absl::string_view text);

// The quantity in whole units (`2Ki` -> 2048, `100m` -> 1), rounded up.
// Same errors as ParseQuantityMilli.
absl::StatusOr<int64_t> ParseQuantityValue(absl::string_view text);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_QUANTITY_H_
