// Traces of the placement-quality benchmark: a fleet and the pods that
// arrive on it, in JSON lines (docs/quality.md, "Trace format"), and the
// six seeded traces the benchmark ships.
//
// One JSON object per line, each with a "kind":
//   {"kind":"trace","name":"heterogeneous","duration_s":300}   (first line)
//   {"kind":"node","name":"slow-1","cores":8,"speed":0.5,...}  (NodeSpec)
//   {"kind":"pod","name":"p-0001","arrival_s":1.5,"usage":1.5,
//    "owner":"web",...}                                         (PodSpec)
// Fields left out keep NodeSpec's and PodSpec's defaults; unknown fields
// and kinds are errors, so a misspelt field is never silently ignored.
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_TRACE_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bench/quality/load_model.h"

namespace ms::quality {

struct Trace {
  std::string name;
  double duration_s = 300;  // pods arrive within it; the run lasts it
  std::vector<NodeSpec> nodes;
  std::vector<PodSpec> pods;  // by arrival
};

// The trace in `text`; errors name `source` (a file name), the line and
// the field.
absl::StatusOr<Trace> ParseTrace(absl::string_view text,
                                 absl::string_view source);

// `trace` as JSON lines: ParseTrace(WriteTrace(t)) gives `t` back.
std::string WriteTrace(const Trace& trace);

// The traces the benchmark ships (docs/quality.md, "Traces").
enum class TraceKind {
  kHeterogeneous,    // fast, slow and noisy nodes; steady arrivals
  kIdentical,        // identical nodes: do no harm
  kBursts,           // arrivals in bursts faster than the metrics' lag
  kDegrading,        // a node slows down a third of the way in
  kOtherScheduler,   // part of the pods placed by another scheduler
  kFarFromRequests,  // usage 3x or 0.2x the requests, by owner
  kShifting,         // a quarter of the pods triple their usage mid-way
};
inline constexpr TraceKind kAllTraceKinds[] = {
    TraceKind::kHeterogeneous,  TraceKind::kIdentical,
    TraceKind::kBursts,         TraceKind::kDegrading,
    TraceKind::kOtherScheduler, TraceKind::kFarFromRequests,
    TraceKind::kShifting};

// "heterogeneous", "identical", "bursts", "degrading", "other-scheduler",
// "far-from-requests", "shifting".
const char* TraceKindName(TraceKind kind);
absl::StatusOr<TraceKind> ParseTraceKind(absl::string_view name);

struct GenerateOptions {
  uint64_t seed = 1;
  double duration_s = 300;
  int nodes = 8;
  // The fleet's mean demand, as a fraction of its capacity, once arrivals
  // and departures balance.
  double target_load = 0.6;
  // The scheduler of the pods not placed by the policy under test
  // (kOtherScheduler).
  std::string other_scheduler = "default-scheduler";
};

// The trace of `kind`: the same options give the same trace.
Trace GenerateTrace(TraceKind kind, const GenerateOptions& options);

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_TRACE_H_
