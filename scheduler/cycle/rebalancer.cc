#include "scheduler/cycle/rebalancer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"

namespace ms {

Rebalancer::Rebalancer(const RebalanceConfig& config,
                       std::vector<Profile> profiles, ClusterState& state,
                       metrics::MetricsCache& cache, SchedulerApi& api,
                       EventRecorder& recorder, Leadership& leadership,
                       const Clock& clock, Registry& registry,
                       absl::Duration evict_timeout)
    : planner_(config, std::move(profiles)),
      state_(state),
      cache_(cache),
      api_(api),
      recorder_(recorder),
      leadership_(leadership),
      clock_(clock),
      evict_timeout_(evict_timeout),
      evictions_(registry.AddCounter(
          "metrics_scheduler_rebalance_evictions_total",
          "Pods moved off hot nodes, by result: evicted, dry-run (said, not "
          "done), disruption-budget (a PodDisruptionBudget refused), gone, "
          "not-leader, failed.",
          {"result"})),
      left_(registry.AddCounter(
          "metrics_scheduler_rebalance_left_total",
          "Pods on hot nodes left where they are, by reason: what may not "
          "move (other-scheduler, namespace, labels, priority, not-running, "
          "too-young, local-storage, mirror, no-controller, daemonset, "
          "unknown-load) and what would not help (returns, nowhere, "
          "would-be-hot, limited).",
          {"reason"})),
      rounds_(registry.AddCounter("metrics_scheduler_rebalance_rounds_total",
                                  "Rebalancing rounds run on the leader.")),
      tracker_(config.hot),
      limits_(config.limits) {
  registry.AddGauge("metrics_scheduler_rebalance_hot_nodes",
                    "Nodes that stayed hot at the last round, by metric.",
                    {"metric"}, [this] {
                      Registry::GaugeSamples samples;
                      const std::vector<HotBound>& bounds =
                          planner_.config().hot;
                      absl::MutexLock lock(&mu_);
                      for (const HotBound& b : bounds) {
                        double n = 0;
                        for (const HotNode& h : last_hot_)
                          n += bounds[h.bound].metric == b.metric;
                        samples.push_back({{b.metric}, n});
                      }
                      return samples;
                    });
  for (const char* result : {"evicted", "dry-run", "disruption-budget", "gone",
                             "not-leader", "failed"}) {
    evictions_.With({result});
  }
  rounds_.With({});  // 0 on a standby, which runs none
}

Rebalancer::~Rebalancer() { Stop(); }

void Rebalancer::OnAssignedPod(const Pod& pod) {
  const std::vector<std::string>& names = planner_.names();
  if (std::find(names.begin(), names.end(), pod.scheduler_name) ==
      names.end()) {
    return;
  }
  absl::MutexLock lock(&mu_);
  const std::string key = pod.Key();
  auto it = pods_.find(key);
  if (it != pods_.end() && it->second.node_name != pod.node_name) {
    by_node_[it->second.node_name].erase(key);
  }
  by_node_[pod.node_name].insert(key);
  pods_[key] = pod;
}

void Rebalancer::OnAssignedPodDeleted(const Pod& pod) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end() || it->second.uid != pod.uid) return;
  auto node = by_node_.find(it->second.node_name);
  if (node != by_node_.end()) {
    node->second.erase(it->first);
    if (node->second.empty()) by_node_.erase(node);
  }
  pods_.erase(it);
}

std::vector<Pod> Rebalancer::PodsOn(const std::string& node) const {
  std::vector<Pod> pods;
  absl::MutexLock lock(&mu_);
  if (auto it = by_node_.find(node); it != by_node_.end()) {
    for (const std::string& key : it->second) pods.push_back(pods_.at(key));
  }
  return pods;
}

Rebalancer::Round Rebalancer::RunOnce() {
  absl::MutexLock round_lock(&round_mu_);
  Round round;
  // A standby writes nothing, not even a dry run's Events.
  if (!leadership_.IsLeader()) return round;
  rounds_.With({}).Inc();
  const int64_t now_ms = absl::ToUnixMillis(clock_.Now());
  const std::shared_ptr<const MetricsSnapshot> snapshot = cache_.Snapshot();
  planner_.Observe(tracker_, state_, snapshot.get(), now_ms);
  round.hot = tracker_.Hot();
  {
    absl::MutexLock lock(&mu_);
    last_hot_ = round.hot;
  }
  if (round.hot.empty()) return round;
  limits_.StartInterval(now_ms);
  const std::vector<NodeRebalance> plans = planner_.Plan(
      round.hot, [this](const std::string& node) { return PodsOn(node); },
      state_, snapshot, limits_, now_ms, static_cast<uint64_t>(now_ms),
      workspace_);
  const bool dry_run = planner_.config().mode == RebalanceMode::kDryRun;
  for (const NodeRebalance& node : plans) {
    CountLeft(node);
    std::vector<std::string> moved;
    for (const PlannedMove& move : node.plan.moves) {
      if (Move(node, move, now_ms, round)) {
        moved.push_back(
            absl::StrCat(node.pods[move.pod].Key(), " to ", move.to));
      }
    }
    if (moved.empty()) continue;
    recorder_.NodeEvent(
        node.hot.node, dry_run ? "WouldRebalance" : "Rebalancing",
        "Rebalancing",
        absl::StrCat(planner_.WhyHot(node.hot),
                     dry_run ? ": would move " : ": moving ",
                     absl::StrJoin(moved, ", "), dry_run ? " (dry run)" : ""));
  }
  return round;
}

void Rebalancer::CountLeft(const NodeRebalance& node) {
  for (const auto& [i, why] : node.unmovable) {
    left_.With({std::string(UnmovableName(why))}).Inc();
    VLOG(2) << "rebalance: " << node.pods[i].Key() << " stays on "
            << node.hot.node << ": " << UnmovableName(why);
  }
  for (size_t i : node.unknown_load) {
    left_.With({"unknown-load"}).Inc();
    VLOG(2) << "rebalance: " << node.pods[i].Key() << " stays on "
            << node.hot.node << ": what it takes is not known";
  }
  for (const LeftPod& left : node.plan.left) {
    left_.With({std::string(LeftBecauseName(left.why))}).Inc();
    VLOG(1) << "rebalance: " << node.pods[left.pod].Key() << " stays on "
            << node.hot.node << " (" << planner_.WhyHot(node.hot)
            << "): " << LeftBecauseName(left.why)
            << (left.node.empty() ? "" : " to " + left.node);
  }
}

bool Rebalancer::Move(const NodeRebalance& node, const PlannedMove& move,
                      int64_t now_ms, Round& round) {
  const Pod& pod = node.pods[move.pod];
  const HotNode& hot = node.hot;
  const std::string what = absl::StrFormat(
      "off node %s (%s) to node %s (%s %.4g with it): it takes %.4g, %s",
      hot.node, planner_.WhyHot(hot), move.to,
      planner_.config().hot[hot.bound].metric, move.to_value, move.takes,
      node.takes_why[move.pod]);
  round.moves.push_back(
      absl::StrCat(pod.Key(), " ", hot.node, " -> ", move.to));
  if (planner_.config().mode == RebalanceMode::kDryRun) {
    evictions_.With({"dry-run"}).Inc();
    LOG(INFO) << "rebalance (dry run): would move " << pod.Key() << " " << what;
    recorder_.Normal(pod, "WouldRebalance", "Rebalancing",
                     absl::StrCat("Would move ", what, " (dry run)"));
    return true;
  }
  const absl::Duration timeout =
      std::min(evict_timeout_, leadership_.WriteMargin());
  if (!leadership_.AwaitWriteWindow(timeout)) {
    evictions_.With({"not-leader"}).Inc();
    return false;
  }
  const absl::Status s = api_.EvictPod(pod, timeout);
  if (s.ok()) {
    evictions_.With({"evicted"}).Inc();
    LOG(INFO) << "rebalance: evicted " << pod.Key() << " " << what;
    recorder_.Normal(pod, "Rebalanced", "Rebalancing",
                     absl::StrCat("Evicted to move it ", what));
    tracker_.Left(hot.bound, hot.node, move.takes,
                  now_ms + planner_.SettleMs(hot.bound));
    return true;
  }
  if (absl::IsResourceExhausted(s)) {
    evictions_.With({"disruption-budget"}).Inc();
    LOG(INFO) << "rebalance: " << pod.Key() << " stays: " << s.message();
    recorder_.Normal(pod, "RebalanceBlocked", "Rebalancing",
                     absl::StrCat("Not moved ", what, ": ", s.message()));
  } else if (absl::IsNotFound(s) || absl::IsAborted(s)) {
    evictions_.With({"gone"}).Inc();
  } else {
    evictions_.With({"failed"}).Inc();
    LOG(WARNING) << "rebalance: evicting " << pod.Key() << " failed: " << s;
  }
  return false;
}

void Rebalancer::Start() {
  absl::MutexLock lock(&mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { Loop(); });
}

void Rebalancer::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Rebalancer::Loop() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_;
      };
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping),
                               planner_.config().interval)) {
        return;
      }
    }
    RunOnce();
  }
}

}  // namespace ms
