// RETURN_IF_ERROR and ASSIGN_OR_RETURN for absl::Status / absl::StatusOr.
//
// Abseil as packaged in Debian 12 has neither, so the project keeps this one
// small header:
//
//   RETURN_IF_ERROR(WriteFile(path));
//   ASSIGN_OR_RETURN(Config config, LoadConfig(path));
#ifndef METRICS_SCHEDULER_COMMON_STATUS_MACROS_H_
#define METRICS_SCHEDULER_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define MS_STATUS_CONCAT_INNER(a, b) a##b
#define MS_STATUS_CONCAT(a, b) MS_STATUS_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                     \
  do {                                            \
    ::absl::Status ms_status_ = (expr);           \
    if (!ms_status_.ok()) return ms_status_;      \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr) \
  MS_ASSIGN_OR_RETURN_IMPL(MS_STATUS_CONCAT(ms_statusor_, __LINE__), lhs, expr)

#define MS_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                             \
  if (!statusor.ok()) return statusor.status();       \
  lhs = std::move(statusor).value()

#endif  // METRICS_SCHEDULER_COMMON_STATUS_MACROS_H_
