#include "scoring/explanation.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ms {
namespace {

std::string FormatNumber(double v) {
  if (std::isnan(v)) return "n/a";
  if (v == std::floor(v) && std::abs(v) < 1e15) {
    return absl::StrFormat("%.0f", v);
  }
  if (std::abs(v) >= 1e-3 && std::abs(v) < 1e15) {
    // Three decimals, trailing zeros dropped: 61664.877, 1200.5, 0.012.
    std::string s = absl::StrFormat("%.3f", v);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
  }
  return absl::StrFormat("%.6g", v);
}

// The raw value, and what of it was estimated: "0.75 (+0.25 unseen)".
std::string Value(const TermResult& t) {
  if (t.unseen == 0 || std::isnan(t.raw)) return FormatNumber(t.raw);
  return absl::StrCat(FormatNumber(t.raw), " (+", FormatNumber(t.unseen),
                      " unseen)");
}

std::string Cell(const TermResult& t) {
  switch (t.state) {
    case TermState::kScored:
      return absl::StrFormat("%s -> %.2f", Value(t), t.score);
    case TermState::kMissing:
      return absl::StrFormat("%s -> %.2f (missing)", Value(t), t.score);
    case TermState::kSkipped:
      return absl::StrFormat("%s (skipped)", Value(t));
    case TermState::kUnused:
      return absl::StrFormat("%s (unused)", Value(t));
  }
  return "";
}

std::string FormatWeight(double w) { return absl::StrFormat("%g", w); }

}  // namespace

TermResult BuiltinTermRow(absl::string_view name, double raw, double score,
                          double weight) {
  TermResult r{.name = name, .raw = raw, .score = score};
  if (weight > 0) {
    r.weight = weight;
  } else {
    r.state = TermState::kUnused;
  }
  return r;
}

const char* ModeName(ScoringMode mode) {
  return mode == ScoringMode::kMetrics ? "metrics" : "fallback";
}

const char* FallbackReasonName(FallbackReason reason) {
  switch (reason) {
    case FallbackReason::kNone:
      return "";
    case FallbackReason::kNoMetrics:
      return "no metrics configured";
    case FallbackReason::kNoUsableData:
      return "no usable metric data";
    case FallbackReason::kForced:
      return "metrics cache not ready";
  }
  return "";
}

std::string FormatExplanation(const Explanation& e) {
  // Columns: node, total, then one per term (names from the first feasible
  // node; every feasible node has the same terms in the same order).
  std::vector<std::string> header = {"node", "total"};
  const NodeExplanation* first = nullptr;
  for (const NodeExplanation& n : e.nodes) {
    if (n.feasible) {
      first = &n;
      break;
    }
  }
  if (first != nullptr) {
    for (const TermResult& t : first->terms) {
      // Show the configured weight, even where this node did not count it.
      header.push_back(absl::StrCat(t.name));
    }
  }
  std::vector<const NodeExplanation*> order;
  for (const NodeExplanation& n : e.nodes) order.push_back(&n);
  std::stable_sort(order.begin(), order.end(),
                   [](const NodeExplanation* a, const NodeExplanation* b) {
                     if (a->feasible != b->feasible) return a->feasible;
                     return a->feasible && a->total > b->total;
                   });
  std::vector<std::vector<std::string>> rows;
  for (const NodeExplanation* n : order) {
    std::vector<std::string> row = {n->node};
    if (!n->feasible) {
      row.push_back("-");
      row.push_back(absl::StrCat("filtered: ", n->filter_reason));
    } else {
      row.push_back(absl::StrFormat("%.2f", n->total));
      for (const TermResult& t : n->terms) {
        std::string cell = Cell(t);
        if (t.weight > 0) absl::StrAppend(&cell, " (w=", FormatWeight(t.weight), ")");
        row.push_back(std::move(cell));
      }
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    // A filtered row's reason spans the remaining columns: not measured.
    if (row.size() == 3 && row[1] == "-") {
      width[0] = std::max(width[0], row[0].size());
      continue;
    }
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      line += row[c];
      if (c + 1 < row.size() && c < width.size()) {
        line.append(width[c] - std::min(width[c], row[c].size()), ' ');
      }
    }
    absl::StrAppend(&out, line, "\n");
  };
  emit(header);
  for (const auto& row : rows) emit(row);
  if (e.best >= 0 && static_cast<size_t>(e.best) < e.nodes.size()) {
    absl::StrAppend(&out, "best node: ", e.nodes[e.best].node,
                    " (mode: ", ModeName(e.mode));
    if (e.fallback_reason != FallbackReason::kNone) {
      absl::StrAppend(&out, ", ", FallbackReasonName(e.fallback_reason));
    }
    absl::StrAppend(&out, ")\n");
    for (const std::string& line : e.estimates) {
      absl::StrAppend(&out, "until sampled there, it counts as ", line, "\n");
    }
  } else {
    absl::StrAppend(&out, "no node: ", e.summary, "\n");
  }
  return out;
}

std::string SummarizeTerms(double total, ScoringMode mode,
                           const std::vector<TermResult>& terms) {
  std::vector<const TermResult*> counted;
  for (const TermResult& t : terms) {
    if (t.weight > 0) counted.push_back(&t);
  }
  std::stable_sort(counted.begin(), counted.end(),
                   [](const TermResult* a, const TermResult* b) {
                     return a->weight * a->score > b->weight * b->score;
                   });
  std::string out = absl::StrFormat("score %.1f (%s)", total, ModeName(mode));
  for (size_t i = 0; i < counted.size(); ++i) {
    const TermResult& t = *counted[i];
    absl::StrAppend(&out, i == 0 ? ": " : ", ", t.name, " ",
                    absl::StrFormat("%.1f", t.score), " (w=",
                    FormatWeight(t.weight));
    if (t.unseen != 0) {
      absl::StrAppend(&out, ", value ", Value(t));
    }
    out += ")";
  }
  return out;
}

}  // namespace ms
