// JoinDetector: how a query's series name nodes, when the metric does not
// say (JoinConfig::automatic: a prometheus metric without `join`).
//
// Users' queries name nodes in several ways: a `node` label (kube-state-
// metrics, kubelet targets), `instance` as the node's IP and port
// (node-exporter) or as the node name (kube-prometheus relabels it so), a
// host-name label. PrometheusSource decodes the answer with every
// candidate's label (PromDecodeOptions::candidate_labels), hands each
// series to Add(), and once the answer is read Finish():
//
//   1. counts, per candidate, the distinct nodes its label names;
//   2. picks the candidate that names the most; ties go to the earlier in
//      kJoinCandidates (node; instance; kubernetes_node, nodename,
//      hostname, host);
//   3. joins every series by it, as a configured join would: the first
//      series naming a node wins, the others are duplicates; the series it
//      matches to no node are unmatched, with examples.
//
// When no candidate names any node, every series is unmatched and
// FetchResult::detected_join is empty.
//
// Each candidate matches exactly as the same `join` written in the
// configuration (Joiner, without short names), so setting the detected
// join keeps the outcome.
//
// Cost: per series, one Joiner::Match per candidate label it carries, and
// a sample and kJoinCandidates.size() pointers kept until Finish().
//
//   ASSIGN_OR_RETURN(JoinDetector detector, JoinDetector::Create(nodes));
//   DecodeInstantQuery(status, body, {..., .candidate_labels =
//                      JoinCandidateLabels()}, [&](const PromSeries& s) {
//     detector.Add(s);
//   });
//   FetchResult out = std::move(detector).Finish();
//
// Thread-compatible: one detector per fetch.
#ifndef METRICS_SCHEDULER_METRICS_JOIN_DETECT_H_
#define METRICS_SCHEDULER_METRICS_JOIN_DETECT_H_

#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "config/config.h"
#include "metrics/join.h"
#include "metrics/metrics_source.h"
#include "metrics/node_set.h"
#include "metrics/prometheus_decode.h"
#include "model/metrics.h"

namespace ms::metrics {

struct JoinCandidate {
  absl::string_view label;
  JoinMatch match;
};

// In the order ties are broken.
inline constexpr std::array<JoinCandidate, 6> kJoinCandidates = {{
    {"node", JoinMatch::kName},
    {"instance", JoinMatch::kAddress},
    {"kubernetes_node", JoinMatch::kName},
    {"nodename", JoinMatch::kName},
    {"hostname", JoinMatch::kName},
    {"host", JoinMatch::kName},
}};

// The candidates' labels, in kJoinCandidates order.
absl::Span<const absl::string_view> JoinCandidateLabels();

// How messages name a join: "instance (address)", "node (name)".
std::string DescribeJoin(absl::string_view label, JoinMatch match);

// Every candidate, described and in order: "node (name), instance
// (address), ...".
std::string DescribeJoinCandidates();

// What messages say of a fetch's detected join (FetchResult::
// detected_join): "series name nodes by instance (address)", or, for "",
// "no series names a node by any candidate join (tried node (name), ...)".
std::string DescribeDetectedJoin(absl::string_view detected_join);

class JoinDetector {
 public:
  // `nodes` must outlive the detector. Fails only as Joiner::Create does,
  // which a candidate (no regex) never makes it.
  static absl::StatusOr<JoinDetector> Create(const NodeSet& nodes);

  // One series of the answer, decoded with JoinCandidateLabels().
  void Add(const PromSeries& series);

  // The series joined by the candidate that names the most nodes:
  // by_node, unmatched, duplicates, unmatched_examples and detected_join
  // ("" when no candidate names a node). series and warnings are left to
  // the caller.
  FetchResult Finish() &&;

 private:
  static constexpr size_t kCount = kJoinCandidates.size();

  struct Row {
    MetricSample sample;
    std::array<const std::string*, kCount> node{};  // per candidate
  };

  JoinDetector(const NodeSet& nodes, std::vector<Joiner> joiners)
      : nodes_(nodes), joiners_(std::move(joiners)) {}

  // The candidate naming the most distinct nodes; kCount when none does.
  size_t Winner() const;

  const NodeSet& nodes_;
  std::vector<Joiner> joiners_;  // one per candidate
  std::vector<Row> rows_;
  std::array<absl::flat_hash_set<const std::string*>, kCount> named_;
  // Per candidate: the label sets of the first series it names no node of.
  std::array<std::vector<std::string>, kCount> examples_;
};

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_JOIN_DETECT_H_
