// Numbers as the benchmark writes them (traces, exposition, reports): the
// shortest text that reads back as the same double.
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_NUMBER_TEXT_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_NUMBER_TEXT_H_

#include <charconv>
#include <string>

namespace ms::quality {

inline std::string NumberText(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_NUMBER_TEXT_H_
