#include "scheduler/cycle/rebalance_planner.h"

#include <cmath>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_format.h"
#include "glog/logging.h"
#include "scoring/unseen_load.h"

namespace ms {
namespace {

std::vector<std::string> RebalancedNames(
    const RebalanceConfig& config,
    const std::vector<RebalanceProfile>& profiles) {
  if (!config.pods.scheduler_names.empty()) return config.pods.scheduler_names;
  std::vector<std::string> names;
  for (const RebalanceProfile& p : profiles) names.push_back(p.name);
  return names;
}

}  // namespace

RebalancePlanner::RebalancePlanner(const RebalanceConfig& config,
                                   std::vector<RebalanceProfile> profiles)
    : config_(config),
      profiles_(std::move(profiles)),
      names_(RebalancedNames(config_, profiles_)) {
  for (const HotBound& bound : config_.hot) {
    BoundTerm found;
    for (const RebalanceProfile& p : profiles_) {
      for (size_t t = 0; t < p.scoring->metrics.size(); ++t) {
        if (p.scoring->metrics[t].name == bound.metric) {
          found = {.scoring = p.scoring, .term = t};
          break;
        }
      }
      if (found.scoring != nullptr) break;
    }
    CHECK(found.scoring != nullptr)
        << "rebalance.hot names " << bound.metric << ", no profile's metric";
    bound_terms_.push_back(found);
  }
}

const MetricTerm& RebalancePlanner::Term(size_t bound) const {
  return bound_terms_[bound].scoring->metrics[bound_terms_[bound].term];
}

int64_t RebalancePlanner::SettleMs(size_t bound) const {
  const std::optional<absl::Duration>& settle = config_.hot[bound].settle;
  return settle ? absl::ToInt64Milliseconds(*settle)
                : Term(bound).estimate.warmup_ms;
}

const RebalanceProfile* RebalancePlanner::ProfileNamed(
    const std::string& name) const {
  for (const RebalanceProfile& p : profiles_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string RebalancePlanner::WhyHot(const HotNode& hot) const {
  std::string why = absl::StrFormat(
      "%s %.4g above %.4g for %d sample%s", config_.hot[hot.bound].metric,
      hot.value, hot.threshold, hot.samples, hot.samples == 1 ? "" : "s");
  if (hot.moved_off > 0) {
    absl::StrAppendFormat(&why, " (sampled %.4g, less %.4g moved off)",
                          hot.value + hot.moved_off, hot.moved_off);
  }
  return why;
}

void RebalancePlanner::Observe(HotTracker& tracker, const ClusterState& state,
                               const MetricsSnapshot* snapshot,
                               int64_t now_ms) const {
  const std::vector<std::string> nodes = state.NodeNames();
  for (size_t b = 0; b < config_.hot.size(); ++b) {
    const MetricTerm& term = Term(b);
    const MetricValues* values =
        snapshot == nullptr ? nullptr : snapshot->Find(term.name);
    tracker.Observe(
        b, nodes,
        AlignMetric(values != nullptr ? *values : MetricValues{}, nodes),
        now_ms, term.max_staleness_ms);
  }
}

std::vector<NodeRebalance> RebalancePlanner::Plan(
    const std::vector<HotNode>& hot,
    absl::FunctionRef<std::vector<Pod>(const std::string& node)> pods_on,
    ClusterState& state, const std::shared_ptr<const MetricsSnapshot>& snapshot,
    MoveLimits& limits, int64_t now_ms, uint64_t seed,
    Workspace& workspace) const {
  std::vector<NodeRebalance> out;
  std::set<std::string> handled;
  // What the round sends to each node, over every hot node's plan.
  std::unordered_map<std::string, double> taken;
  for (const HotNode& h : hot) {
    if (!handled.insert(h.node).second) continue;
    const BoundTerm& bt = bound_terms_[h.bound];
    NodeRebalance& r = out.emplace_back();
    r.hot = h;
    r.pods = pods_on(h.node);
    r.takes_why.resize(r.pods.size());
    std::vector<MoveCandidate> candidates;
    for (size_t i = 0; i < r.pods.size(); ++i) {
      const Unmovable why =
          WhyUnmovable(r.pods[i], config_.pods, names_, now_ms);
      if (why != Unmovable::kMovable) {
        r.unmovable.push_back({i, why});
        continue;
      }
      const PodEstimate takes =
          state.Takes(*bt.scoring, snapshot, bt.term, r.pods[i]);
      if (!std::isfinite(takes.value) || takes.value <= 0) {
        r.unknown_load.push_back(i);
        continue;
      }
      r.takes_why[i] = DescribeEstimate(Term(h.bound), takes);
      candidates.push_back({.pod = i, .takes = takes.value});
    }
    auto workload = [&](size_t i) {
      return r.pods[i].controller ? r.pods[i].controller->uid : std::string();
    };
    r.plan = PlanMoves(
        h, std::move(candidates),
        [&](size_t i) {
          return limits.Allows(h.node, r.pods[i].namespace_, workload(i),
                               now_ms);
        },
        [&](size_t i) -> Replacement {
          const RebalanceProfile* profile =
              ProfileNamed(r.pods[i].scheduler_name);
          if (profile == nullptr) return {};
          // Its replacement: the same pod, not bound yet (its own charge
          // on its node is left out of the decision).
          Pod replacement = r.pods[i];
          replacement.node_name.clear();
          std::string node;
          state.DecideAndAssume({.pod = &replacement,
                                 .config = profile->scoring,
                                 .metrics = snapshot,
                                 .seed = seed + i,
                                 .assume = false},
                                workspace, &node);
          if (node.empty()) return {};
          return {node, state.ValueWith(*bt.scoring, snapshot, bt.term, node,
                                        r.pods[i])};
        },
        [&](size_t i) {
          limits.Record(h.node, r.pods[i].namespace_, workload(i), now_ms);
        },
        &taken);
  }
  return out;
}

}  // namespace ms
