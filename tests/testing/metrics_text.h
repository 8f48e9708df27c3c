// Reading the scheduler's own metrics in tests: one series' value in the
// Prometheus text a Registry renders (scheduler/telemetry/self_metrics.h).
#ifndef METRICS_SCHEDULER_TESTS_TESTING_METRICS_TEXT_H_
#define METRICS_SCHEDULER_TESTS_TESTING_METRICS_TEXT_H_

#include <string>

namespace ms::testing {

// The value of `series` (name and labels as rendered, e.g.
// `metrics_scheduler_pending_pods{queue="gated"}`) in `text`; -1 when it is
// absent.
inline double SeriesValue(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_METRICS_TEXT_H_
