// Why a node won: the per-term results of a decision, and their printing.
// Each plugin (scoring/plugins/) builds its own TermResult row; Decide
// gathers them.
//
// Decide always fills Decision::terms for the chosen node (a handful of
// entries, for the Scheduled event); it fills a full Explanation, one row
// per node, only when DecideInput::explain is set, so the hot path builds no
// strings per node. Term names are views of the ScoringConfig's names (or of
// static built-in names): keep the ScoringConfig alive while reading them.
#ifndef METRICS_SCHEDULER_SCORING_EXPLANATION_H_
#define METRICS_SCHEDULER_SCORING_EXPLANATION_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ms {

// Every term scores a node in [0, kMaxNodeScore], as kube-scheduler's
// plugins do.
inline constexpr double kMaxNodeScore = 100;

enum class ScoringMode {
  kMetrics,   // at least one metric term had usable data
  kFallback,  // only the built-in terms scored
};

enum class FallbackReason {
  kNone,                // mode is kMetrics
  kNoMetrics,           // no metric is configured
  kNoUsableData,        // no metric had a fresh, finite value on any node
  kForced,              // the caller asked (cold cache past its deadline)
};

const char* ModeName(ScoringMode mode);          // "metrics" | "fallback"
const char* FallbackReasonName(FallbackReason);  // "no metrics configured"...

enum class TermState {
  kScored,   // a usable value, normalised
  kMissing,  // no usable value: the missing policy's score (neutral, worst)
  kSkipped,  // no usable value and policy skip: left out, weight 0
  kUnused,   // the term is off for this decision (no data on any node,
             // fallback mode, or a best-effort pod for balancedAllocation)
};

struct TermResult {
  absl::string_view name;
  // The metric value (NaN when missing); for leastAllocated and
  // balancedAllocation the kube-scheduler score itself; for
  // recentPlacements the number of placements.
  double raw = 0;
  // Of a metric's raw value, what estimates of load not yet sampled added
  // (scoring/unseen_load.h); 0 for the others.
  double unseen = 0;
  double score = 0;   // normalised, in [0, 100]
  double weight = 0;  // the weight it counted with; 0 when not counted
  TermState state = TermState::kScored;
};

// A built-in term's row: raw and score as given, counted with `weight`
// when it is > 0, else unused.
TermResult BuiltinTermRow(absl::string_view name, double raw, double score,
                          double weight);

struct NodeExplanation {
  std::string node;
  bool feasible = false;
  std::string filter_reason;  // when !feasible: "Insufficient cpu, ..."
  std::vector<TermResult> terms;  // when feasible: metrics, then built-ins
  double total = 0;               // when feasible
};

struct Explanation {
  ScoringMode mode = ScoringMode::kFallback;
  FallbackReason fallback_reason = FallbackReason::kNone;
  std::vector<NodeExplanation> nodes;  // in the caller's node order
  int best = -1;                       // index into nodes; -1: none
  std::string summary;  // FailedScheduling message when no node fits
  // What the pod will add to each estimated metric on the best node until
  // a sample shows it, and why (ExplainEstimates, scoring/unseen_load.h).
  std::vector<std::string> estimates;
};

// The explanation as a table, nodes by descending total, then the
// filtered nodes, then "best node: NAME (mode: metrics)":
//
//   node         total  http_latency (w=3)   leastAllocated (w=1)  ...
//   kubeworker2  91.25  0.012 -> 100.00      75 -> 75.00
//   kubeworker1  61.70  0.120 -> 45.10       60 -> 60.00
//   kubeworker3  -      filtered: Insufficient cpu
//   best node: kubeworker2 (mode: metrics)
std::string FormatExplanation(const Explanation& explanation);

// For the Scheduled event: "score 91.3 (metrics): http_latency 100.0 (w=3),
// leastAllocated 75.0 (w=1), ...": every term that counted (weight > 0),
// those that contributed most first.
std::string SummarizeTerms(double total, ScoringMode mode,
                           const std::vector<TermResult>& terms);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_EXPLANATION_H_
