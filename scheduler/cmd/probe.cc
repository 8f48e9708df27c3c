#include "scheduler/cmd/probe.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "metrics/join_detect.h"
#include "scheduler/cycle/cluster_state.h"

namespace ms {
namespace {

// Of the nodes the cache counts without data (`missing`), those with a
// sample (too old, or not finite: stale) and those without (none).
struct Missing {
  std::vector<std::string> stale;
  std::vector<std::string> none;
};

Missing Split(const std::vector<std::string>& missing,
              const MetricValues* values) {
  Missing out;
  for (const std::string& node : missing) {
    bool sampled = false;
    if (values != nullptr) {
      auto it = values->by_node.find(node);
      sampled = it != values->by_node.end() && it->second.time_ms != 0;
    }
    (sampled ? out.stale : out.none).push_back(node);
  }
  return out;
}

// Up to three names, then how many more.
std::string Some(const std::vector<std::string>& names) {
  constexpr size_t kShown = 3;
  std::vector<std::string> shown(
      names.begin(), names.begin() + std::min(names.size(), kShown));
  std::string out = absl::StrJoin(shown, ", ");
  if (names.size() > kShown) {
    absl::StrAppend(&out, " and ", names.size() - kShown, " more");
  }
  return out;
}

// The join metric `m`'s series were matched by, for the unmatched line:
// "label node", "detected instance (address)", "none detected".
std::string JoinUsed(const MetricConfig& m, const metrics::MetricStats& s) {
  if (!m.join.automatic) return absl::StrCat("label ", m.join.label);
  if (s.detected_join.empty()) return "none detected";
  return absl::StrCat("detected ", s.detected_join);
}

// The lines under the table about metric `m`: what failed, the join
// detected, what matched no node, where values are stale or absent, the
// fetch's warnings.
std::vector<std::string> Details(const MetricConfig& m,
                                 const metrics::MetricStats& s,
                                 const Missing& missing) {
  std::vector<std::string> out;
  if (!s.last_status.ok()) {
    out.push_back(
        absl::StrCat(m.name, ": not fetched: ", s.last_status.ToString()));
  }
  if (m.join.automatic && s.series > 0) {
    out.push_back(absl::StrCat(m.name, ": ",
                               metrics::DescribeDetectedJoin(s.detected_join),
                               "; set join to fix it"));
  }
  if (s.unmatched > 0) {
    out.push_back(absl::StrCat(m.name, ": series that match no node, e.g. ",
                               absl::StrJoin(s.unmatched_examples, "; "),
                               " (join: ", JoinUsed(m, s), ")"));
  }
  if (!missing.stale.empty()) {
    out.push_back(absl::StrCat(m.name, ": stale on ", Some(missing.stale)));
  }
  if (!missing.none.empty()) {
    out.push_back(absl::StrCat(m.name, ": no value on ", Some(missing.none)));
  }
  for (const std::string& w : s.warnings) {
    out.push_back(absl::StrCat(m.name, ": ", w));
  }
  if (!m.estimate.siblings_query.empty()) {
    out.push_back(s.last_pod_status.ok()
                      ? absl::StrCat(m.name, ": estimate.siblings measured ",
                                     s.pods_measured, " pods")
                      : absl::StrCat(m.name,
                                     ": estimate.siblings not fetched: ",
                                     s.last_pod_status.ToString()));
  }
  return out;
}

}  // namespace

ProbeReport FormatProbe(const std::vector<MetricConfig>& metrics,
                        const std::vector<metrics::MetricStats>& stats,
                        const MetricsSnapshot& snapshot,
                        const std::string& backend, double min_coverage) {
  ProbeReport report;
  report.text = absl::StrCat("metrics from ", backend, "\n");
  absl::StrAppend(&report.text,
                  absl::StrFormat("%-20s %-16s %7s %14s %6s %8s\n", "metric",
                                  "nodes with data", "series", "match no node",
                                  "stale", "no value"));
  std::vector<std::string> details;
  for (const MetricConfig& m : metrics) {
    const metrics::MetricStats* s = nullptr;
    for (const metrics::MetricStats& candidate : stats) {
      if (candidate.name == m.name) s = &candidate;
    }
    if (s == nullptr) continue;
    const Missing missing = Split(s->nodes_missing, snapshot.Find(m.name));
    const double coverage =
        s->nodes_known > 0
            ? static_cast<double>(s->nodes_with_data) / s->nodes_known
            : 0;
    absl::StrAppend(
        &report.text,
        absl::StrFormat("%-20s %-16s %7d %14d %6d %8d\n", m.name,
                        absl::StrFormat("%d/%d (%.0f%%)", s->nodes_with_data,
                                        s->nodes_known, 100 * coverage),
                        s->series, s->unmatched, missing.stale.size(),
                        missing.none.size()));
    for (std::string& d : Details(m, *s, missing)) {
      details.push_back(std::move(d));
    }
    if (coverage < min_coverage) report.below.push_back(m.name);
  }
  for (const std::string& d : details) absl::StrAppend(&report.text, d, "\n");
  if (!report.below.empty()) {
    absl::StrAppend(
        &report.text,
        absl::StrFormat("coverage below %.0f%%: ", 100 * min_coverage),
        absl::StrJoin(report.below, ", "), "\n");
  }
  return report;
}

absl::StatusOr<ProbeReport> Probe(const Config& config,
                                  kube::KubeClient& client,
                                  metrics::MetricsSource* source,
                                  double min_coverage) {
  std::vector<MetricConfig> queried = QueryMetrics(config);
  if (queried.empty() || source == nullptr) {
    return absl::FailedPreconditionError(
        "the configuration has no query metric to probe");
  }
  absl::StatusOr<kube::ObjectList<Node>> nodes = client.ListNodes({});
  if (!nodes.ok()) return nodes.status();
  std::vector<metrics::NodeAddresses> addresses;
  for (const Node& node : nodes->items) {
    addresses.push_back(NodeAddressesOf(node));
  }
  metrics::MetricsCache cache(
      source, queried,
      metrics::CacheOptions{.refresh_timeout = config.cache.refresh_timeout});
  cache.SetNodes(std::move(addresses));
  cache.RefreshAll();
  const std::vector<metrics::MetricStats> stats = cache.Stats();
  const std::string backend = config.backend.type == BackendType::kMetricsServer
                                  ? std::string("the resource metrics API")
                                  : config.backend.url;
  if (std::none_of(
          stats.begin(), stats.end(),
          [](const metrics::MetricStats& s) { return s.last_status.ok(); })) {
    std::vector<std::string> failures;
    for (const metrics::MetricStats& s : stats) {
      failures.push_back(absl::StrCat(s.name, ": ", s.last_status.ToString()));
    }
    return absl::UnavailableError(absl::StrCat(
        "metrics backend ", backend,
        ": no metric could be fetched: ", absl::StrJoin(failures, "; ")));
  }
  return FormatProbe(queried, stats, *cache.Snapshot(), backend, min_coverage);
}

}  // namespace ms
