#include "scoring/plugins/node_affinity.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "scoring/plugins/default_normalize.h"

namespace ms {
namespace {

constexpr char kMetadataName[] = "metadata.name";

// Go's strconv.ParseInt(s, 10, 64): optional sign, digits, nothing else.
bool ParseInt64(const std::string& s, int64_t* out) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    negative = s[i] == '-';
    ++i;
  }
  if (i == s.size()) return false;
  // Accumulate negatively: the range of int64 is wider below zero.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    int digit = s[i] - '0';
    if (v < (kMin + digit) / 10) return false;
    v = v * 10 - digit;
  }
  if (!negative) {
    if (v == kMin) return false;
    v = -v;
  }
  *out = v;
  return true;
}

// One label requirement; *valid is cleared when the requirement is malformed
// (the term it belongs to then matches nothing, as in kube-scheduler).
bool MatchesLabel(const NodeSelectorRequirement& r,
                  const std::map<std::string, std::string>& labels,
                  bool* valid) {
  auto it = labels.find(r.key);
  bool has = it != labels.end();
  switch (r.op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn: {
      if (r.values.empty()) {
        *valid = false;
        return false;
      }
      bool in = has && std::find(r.values.begin(), r.values.end(),
                                 it->second) != r.values.end();
      return r.op == SelectorOperator::kIn ? in : !in;
    }
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      if (!r.values.empty()) {
        *valid = false;
        return false;
      }
      return r.op == SelectorOperator::kExists ? has : !has;
    case SelectorOperator::kGt:
    case SelectorOperator::kLt: {
      int64_t want;
      if (r.values.size() != 1 || !ParseInt64(r.values[0], &want)) {
        *valid = false;
        return false;
      }
      int64_t got;
      if (!has || !ParseInt64(it->second, &got)) return false;
      return r.op == SelectorOperator::kGt ? got > want : got < want;
    }
  }
  return false;
}

bool MatchesField(const NodeSelectorRequirement& r, const Node& node,
                  bool* valid) {
  if (r.key != kMetadataName || r.values.size() != 1 ||
      (r.op != SelectorOperator::kIn && r.op != SelectorOperator::kNotIn)) {
    *valid = false;
    return false;
  }
  bool eq = node.name == r.values[0];
  return r.op == SelectorOperator::kIn ? eq : !eq;
}

// `node` null: the node's name is unknown, so matchFields are checked for
// form only (a PersistentVolume's node affinity, see below).
bool MatchesTerm(const NodeSelectorTerm& term, const Labels& labels,
                 const Node* node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) {
    return false;
  }
  static const Node* const kUnnamed = new Node();
  bool valid = true;
  bool match = true;
  for (const NodeSelectorRequirement& r : term.match_expressions) {
    if (!MatchesLabel(r, labels, &valid)) match = false;
  }
  for (const NodeSelectorRequirement& r : term.match_fields) {
    if (!MatchesField(r, node != nullptr ? *node : *kUnnamed, &valid) &&
        node != nullptr) {
      match = false;
    }
  }
  return valid && match;
}

bool MatchesTerm(const NodeSelectorTerm& term, const Node& node) {
  return MatchesTerm(term, node.labels, &node);
}

}  // namespace

bool MatchesNodeAffinity(const Pod& pod, const Node& node) {
  for (const auto& [key, value] : pod.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  if (!pod.required_node_affinity.has_value()) return true;
  return MatchesNodeSelectorTerms(*pod.required_node_affinity, node);
}

bool MatchesNodeSelectorTerms(const std::vector<NodeSelectorTerm>& terms,
                              const Node& node) {
  for (const NodeSelectorTerm& term : terms) {
    if (MatchesTerm(term, node)) return true;
  }
  return false;
}

bool MatchesVolumeNodeAffinity(
    const std::optional<std::vector<NodeSelectorTerm>>& terms,
    const Labels& labels) {
  if (!terms.has_value()) return true;
  for (const NodeSelectorTerm& term : *terms) {
    if (MatchesTerm(term, labels, nullptr)) return true;
  }
  return false;
}

int64_t NodeAffinityScore(const Pod& pod,
                          const std::vector<PreferredNodeTerm>& added,
                          const Node& node) {
  int64_t score = 0;
  for (const auto* terms : {&added, &pod.preferred_node_affinity}) {
    for (const PreferredNodeTerm& t : *terms) {
      // An empty preference matches nothing (MatchesTerm), as
      // NewPreferredSchedulingTerms leaves such terms out.
      if (t.weight != 0 && MatchesTerm(t.preference, node)) score += t.weight;
    }
  }
  return score;
}

namespace {

class NodeAffinityPlugin final : public NormalizedScorePlugin {
 public:
  NodeAffinityPlugin() : NormalizedScorePlugin(BuiltinTerm::kNodeAffinity) {}

  bool PreScore(const ScoreContext& ctx) override {
    const std::vector<PreferredNodeTerm>& added =
        ctx.config->added_preferred_affinity;
    if (!ScoresNodeAffinity(*ctx.pod, added)) return false;
    const std::vector<NodeInfo>& nodes = *ctx.nodes;
    const size_t n = nodes.size();
    Reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (ctx.feasible[i] != 0) {
        raw_[i] = NodeAffinityScore(*ctx.pod, added, nodes[i].node);
      }
    }
    DefaultNormalizeScore(raw_.data(), ctx.feasible, n, /*reverse=*/false,
                          scores_.data());
    return true;
  }
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeNodeAffinityPlugin() {
  return std::make_unique<NodeAffinityPlugin>();
}

}  // namespace ms
