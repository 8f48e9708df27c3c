// The targets placement quality is held to (docs/quality.md, "Targets"),
// checked on a run's medians for one policy, so that the benchmark says
// itself which are met.
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_TARGETS_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_TARGETS_H_

#include <string>
#include <vector>

#include "bench/quality/report.h"

namespace ms::quality {

struct TargetCheck {
  enum class Result { kMet, kMissed, kNotRun };

  std::string target;    // e.g. "heterogeneous: mean <= 1.10x clairvoyant"
  std::string measured;  // e.g. "1.56x"; "" when not run
  Result result = Result::kNotRun;
};

// Each target for `policy`: not run when a trace or a policy it compares
// with is missing from `results`.
std::vector<TargetCheck> CheckTargets(const std::vector<TraceResult>& results,
                                      const std::string& policy);

// "met", "missed" or "not run".
const char* ResultName(TargetCheck::Result result);

// A line per target, for stdout and the HTML report.
std::string RenderTargets(const std::vector<TargetCheck>& checks,
                          const std::string& policy);

// A JSON array of {"target","measured","result"}.
std::string TargetsJson(const std::vector<TargetCheck>& checks);

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_TARGETS_H_
