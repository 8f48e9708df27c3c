// The placement-quality benchmark's results: the table on stdout,
// quality.json and quality.html (docs/quality.md, "Reading the report").
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_REPORT_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_REPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "bench/quality/figures.h"
#include "bench/quality/world.h"

namespace ms::quality {

struct PolicyResult {
  std::string policy;
  std::vector<Figures> runs;  // one per run
  // Of the last run, for the plots.
  UtilisationSeries series;
  std::vector<std::pair<double, double>> latency_samples;
};

struct TraceResult {
  std::string trace;
  double hot_threshold = 0.8;
  std::vector<PolicyResult> policies;
};

// Each figure's median over the runs (the lower middle for an even count).
Figures Median(const std::vector<Figures>& runs);

// `a` over `b`; NaN when b is 0 and a is not, 1 when both are.
double Ratio(double a, double b);

// One table per trace: each policy's medians, and the mean latency and
// hot-node-seconds as ratios to clairvoyant and to kube-scheduler (when
// they ran).
std::string RenderTable(const std::vector<TraceResult>& results);

// Every run's figures and the medians, with `meta` (a JSON object's
// members, e.g. the flags and the commit) first.
std::string RenderJson(const std::vector<TraceResult>& results,
                       const std::string& meta);

// A page with `summary` (preformatted text, e.g. the targets) first, then,
// per trace, the table, each policy's node utilisation over time, the
// experienced-latency CDFs, and the ratios, drawn as inline SVG.
std::string RenderHtml(const std::vector<TraceResult>& results,
                       const std::string& title, const std::string& summary);

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_REPORT_H_
