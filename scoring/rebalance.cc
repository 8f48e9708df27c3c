#include "scoring/rebalance.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "model/pod_affinity.h"

namespace ms {

HotTracker::HotTracker(std::vector<HotBound> bounds)
    : bounds_(std::move(bounds)),
      streaks_(bounds_.size()),
      left_(bounds_.size()) {}

void HotTracker::ReadLessWhatLeft(Streak& s, std::vector<Departure>& left,
                                  int64_t sample_ms) {
  std::erase_if(left,
                [&](const Departure& d) { return d.until_ms <= sample_ms; });
  s.moved_off = 0;
  for (const Departure& d : left) s.moved_off += d.takes;
  if (!(s.value() > s.threshold)) s.count = 0;
}

void HotTracker::Observe(size_t bound, const std::vector<std::string>& nodes,
                         const MetricColumn& column, int64_t now_ms,
                         int64_t max_staleness_ms) {
  const HotBound& b = bounds_[bound];
  auto fresh = [&](size_t i) {
    return i < column.values.size() && std::isfinite(column.values[i]) &&
           column.time_ms[i] != 0 &&
           now_ms - column.time_ms[i] <= max_staleness_ms;
  };
  // The fleet's mean over the fresh values, for aboveMean.
  double sum = 0;
  int n = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (fresh(i)) {
      sum += column.values[i];
      ++n;
    }
  }
  double threshold = b.high.value_or(HUGE_VAL);
  double target = b.low;
  if (b.above_mean && n > 0) {
    const double relative = sum / n + *b.above_mean;
    threshold = std::min(threshold, relative);
    target = std::min(target, relative);
  }

  std::unordered_map<std::string, Streak> next;
  std::unordered_map<std::string, std::vector<Departure>> next_left;
  next.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    Streak s;
    if (auto it = streaks_[bound].find(nodes[i]); it != streaks_[bound].end()) {
      s = it->second;
    }
    std::vector<Departure> left;
    if (auto it = left_[bound].find(nodes[i]); it != left_[bound].end()) {
      left = std::move(it->second);
    }
    if (!fresh(i)) {
      s.count = 0;
    } else {
      const bool newer = column.time_ms[i] > s.last_sample_ms;
      if (newer) {
        s.last_sample_ms = column.time_ms[i];
        s.sample = column.values[i];
        ++s.count;  // undone below when the value is not above
      }
      s.threshold = threshold;
      s.target = target;
      ReadLessWhatLeft(s, left, s.last_sample_ms);
    }
    next.emplace(nodes[i], s);
    if (!left.empty()) next_left.emplace(nodes[i], std::move(left));
  }
  // Nodes that are gone are forgotten, what left them too.
  streaks_[bound] = std::move(next);
  left_[bound] = std::move(next_left);
}

void HotTracker::Left(size_t bound, const std::string& node, double takes,
                      int64_t until_ms) {
  std::vector<Departure>& left = left_[bound][node];
  left.push_back({.takes = takes, .until_ms = until_ms});
  if (auto it = streaks_[bound].find(node); it != streaks_[bound].end()) {
    ReadLessWhatLeft(it->second, left, it->second.last_sample_ms);
  }
}

std::vector<HotNode> HotTracker::Hot() const {
  std::vector<HotNode> hot;
  for (size_t b = 0; b < bounds_.size(); ++b) {
    for (const auto& [node, s] : streaks_[b]) {
      if (s.count < bounds_[b].samples) continue;
      hot.push_back({.bound = b,
                     .node = node,
                     .value = s.value(),
                     .threshold = s.threshold,
                     .target = s.target,
                     .samples = s.count,
                     .moved_off = s.moved_off});
    }
  }
  std::sort(hot.begin(), hot.end(), [](const HotNode& a, const HotNode& b) {
    const double over_a = a.value - a.threshold, over_b = b.value - b.threshold;
    if (over_a != over_b) return over_a > over_b;
    return std::tie(a.node, a.bound) < std::tie(b.node, b.bound);
  });
  return hot;
}

absl::string_view UnmovableName(Unmovable why) {
  switch (why) {
    case Unmovable::kMovable:
      return "";
    case Unmovable::kOtherScheduler:
      return "other-scheduler";
    case Unmovable::kNamespace:
      return "namespace";
    case Unmovable::kLabels:
      return "labels";
    case Unmovable::kPriority:
      return "priority";
    case Unmovable::kNotRunning:
      return "not-running";
    case Unmovable::kTooYoung:
      return "too-young";
    case Unmovable::kLocalStorage:
      return "local-storage";
    case Unmovable::kMirror:
      return "mirror";
    case Unmovable::kNoController:
      return "no-controller";
    case Unmovable::kDaemonSet:
      return "daemonset";
  }
  return "";
}

Unmovable WhyUnmovable(const Pod& pod, const RebalancePods& rules,
                       const std::vector<std::string>& scheduler_names,
                       int64_t now_ms) {
  auto listed = [](const std::vector<std::string>& list, const std::string& s) {
    return std::find(list.begin(), list.end(), s) != list.end();
  };
  if (!listed(scheduler_names, pod.scheduler_name)) {
    return Unmovable::kOtherScheduler;
  }
  if ((!rules.namespaces.empty() &&
       !listed(rules.namespaces, pod.namespace_)) ||
      listed(rules.exclude_namespaces, pod.namespace_)) {
    return Unmovable::kNamespace;
  }
  if (rules.labels && !Selects(rules.labels, pod.labels)) {
    return Unmovable::kLabels;
  }
  if (pod.priority > rules.max_priority) return Unmovable::kPriority;
  if (pod.phase != PodPhase::kRunning || pod.deleting) {
    return Unmovable::kNotRunning;
  }
  if (pod.start_time_ms == 0 ||
      now_ms - pod.start_time_ms < absl::ToInt64Milliseconds(rules.min_age)) {
    return Unmovable::kTooYoung;
  }
  if (pod.local_storage && !rules.local_storage) {
    return Unmovable::kLocalStorage;
  }
  if (pod.mirror) return Unmovable::kMirror;
  if (!pod.controller) return Unmovable::kNoController;
  if (pod.controller->kind == "DaemonSet") return Unmovable::kDaemonSet;
  return Unmovable::kMovable;
}

absl::string_view LeftBecauseName(LeftBecause why) {
  switch (why) {
    case LeftBecause::kReturns:
      return "returns";
    case LeftBecause::kNowhere:
      return "nowhere";
    case LeftBecause::kWouldBeHot:
      return "would-be-hot";
    case LeftBecause::kLimited:
      return "limited";
  }
  return "";
}

MovePlan PlanMoves(const HotNode& hot, std::vector<MoveCandidate> candidates,
                   absl::FunctionRef<bool(size_t pod)> allowed,
                   absl::FunctionRef<Replacement(size_t pod)> place,
                   absl::FunctionRef<void(size_t pod)> moved,
                   std::unordered_map<std::string, double>* taken) {
  MovePlan plan{.value_after = hot.value};
  // Largest first; ties by the caller's order.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const MoveCandidate& a, const MoveCandidate& b) {
                     return a.takes > b.takes;
                   });
  std::vector<bool> tried(candidates.size(), false);
  // What the nodes taking pods already got this round.
  std::unordered_map<std::string, double> own;
  if (taken == nullptr) taken = &own;
  while (plan.value_after > hot.target) {
    const double deficit = plan.value_after - hot.target;
    // The smallest untried candidate enough on its own (the first of
    // equals), else the largest.
    size_t pick = candidates.size();
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (tried[i]) continue;
      if (pick == candidates.size() ||
          (candidates[i].takes >= deficit &&
           candidates[i].takes < candidates[pick].takes)) {
        pick = i;
      }
      if (candidates[i].takes < deficit) break;
    }
    if (pick == candidates.size()) break;  // none left
    tried[pick] = true;
    const MoveCandidate& c = candidates[pick];
    if (!allowed(c.pod)) {
      plan.left.push_back({.pod = c.pod, .why = LeftBecause::kLimited});
      continue;
    }
    const Replacement r = place(c.pod);
    LeftPod left{.pod = c.pod, .node = r.node};
    if (r.node.empty()) {
      left.why = LeftBecause::kNowhere;
    } else if (r.node == hot.node) {
      left.why = LeftBecause::kReturns;
    } else if (const double to_value = r.value_with_pod + (*taken)[r.node];
               !(to_value <= hot.target)) {
      left.why = LeftBecause::kWouldBeHot;
    } else {
      (*taken)[r.node] += c.takes;
      plan.moves.push_back(
          {.pod = c.pod, .to = r.node, .takes = c.takes, .to_value = to_value});
      plan.value_after -= c.takes;
      moved(c.pod);
      continue;
    }
    plan.left.push_back(std::move(left));
  }
  return plan;
}

void MoveLimits::StartInterval(int64_t now_ms) {
  total_ = 0;
  per_node_.clear();
  per_namespace_.clear();
  per_workload_.clear();
  std::erase_if(cooling_until_ms_,
                [&](const auto& entry) { return entry.second <= now_ms; });
}

bool MoveLimits::Allows(const std::string& node, const std::string& namespace_,
                        const std::string& workload, int64_t now_ms) const {
  auto count = [](const std::unordered_map<std::string, int>& m,
                  const std::string& key) {
    auto it = m.find(key);
    return it == m.end() ? 0 : it->second;
  };
  if (auto it = cooling_until_ms_.find(workload);
      it != cooling_until_ms_.end() && now_ms < it->second) {
    return false;
  }
  return total_ < limits_.total && count(per_node_, node) < limits_.per_node &&
         count(per_namespace_, namespace_) < limits_.per_namespace &&
         count(per_workload_, workload) < limits_.per_workload;
}

void MoveLimits::Record(const std::string& node, const std::string& namespace_,
                        const std::string& workload, int64_t now_ms) {
  ++total_;
  ++per_node_[node];
  ++per_namespace_[namespace_];
  ++per_workload_[workload];
  cooling_until_ms_[workload] =
      now_ms + absl::ToInt64Milliseconds(limits_.cool_down);
}

}  // namespace ms
