#include "metrics/join_detect.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ms::metrics {
namespace {

constexpr std::array<absl::string_view, kJoinCandidates.size()> Labels() {
  std::array<absl::string_view, kJoinCandidates.size()> out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = kJoinCandidates[i].label;
  return out;
}

constexpr std::array<absl::string_view, kJoinCandidates.size()> kLabels =
    Labels();

}  // namespace

absl::Span<const absl::string_view> JoinCandidateLabels() { return kLabels; }

std::string DescribeJoin(absl::string_view label, JoinMatch match) {
  return absl::StrCat(label,
                      match == JoinMatch::kAddress ? " (address)" : " (name)");
}

std::string DescribeJoinCandidates() {
  std::string out;
  for (const JoinCandidate& c : kJoinCandidates) {
    if (!out.empty()) out += ", ";
    out += DescribeJoin(c.label, c.match);
  }
  return out;
}

std::string DescribeDetectedJoin(absl::string_view detected_join) {
  if (detected_join.empty()) {
    return absl::StrCat("no series names a node by any candidate join (tried ",
                        DescribeJoinCandidates(), ")");
  }
  return absl::StrCat("series name nodes by ", detected_join);
}

absl::StatusOr<JoinDetector> JoinDetector::Create(const NodeSet& nodes) {
  std::vector<Joiner> joiners;
  joiners.reserve(kCount);
  for (const JoinCandidate& c : kJoinCandidates) {
    ASSIGN_OR_RETURN(
        Joiner joiner,
        Joiner::Create(
            JoinConfig{.label = std::string(c.label), .match = c.match}, {}));
    joiners.push_back(std::move(joiner));
  }
  return JoinDetector(nodes, std::move(joiners));
}

void JoinDetector::Add(const PromSeries& series) {
  Row& row = rows_.emplace_back();
  row.sample = series.sample;
  for (size_t i = 0; i < kCount; ++i) {
    absl::string_view value = i < series.candidate_values.size()
                                  ? series.candidate_values[i]
                                  : absl::string_view();
    const std::string* node =
        value.empty() ? nullptr : joiners_[i].Match(value, nodes_);
    row.node[i] = node;
    if (node != nullptr) {
      named_[i].insert(node);
    } else if (examples_[i].size() < FetchResult::kMaxExamples) {
      examples_[i].emplace_back(series.labels_text);
    }
  }
}

size_t JoinDetector::Winner() const {
  size_t best = kCount;
  for (size_t i = 0; i < kCount; ++i) {
    if (named_[i].empty()) continue;
    if (best == kCount || named_[i].size() > named_[best].size()) best = i;
  }
  return best;
}

FetchResult JoinDetector::Finish() && {
  FetchResult out;
  const size_t winner = Winner();
  if (winner == kCount) {
    out.unmatched = static_cast<int>(rows_.size());
    out.unmatched_examples = std::move(examples_[0]);
    return out;
  }
  const JoinCandidate& join = kJoinCandidates[winner];
  out.detected_join = DescribeJoin(join.label, join.match);
  for (const Row& row : rows_) {
    const std::string* node = row.node[winner];
    if (node == nullptr) {
      ++out.unmatched;
    } else if (!out.by_node.emplace(*node, row.sample).second) {
      ++out.duplicates;
    }
  }
  out.unmatched_examples = std::move(examples_[winner]);
  return out;
}

}  // namespace ms::metrics
