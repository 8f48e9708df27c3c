#include "scheduler/cycle/rebalancer.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"
#include "scoring/unseen_load.h"

namespace ms {
namespace {

std::vector<std::string> RebalancedNames(
    const RebalanceConfig& config,
    const std::vector<Rebalancer::Profile>& profiles) {
  if (!config.pods.scheduler_names.empty()) return config.pods.scheduler_names;
  std::vector<std::string> names;
  for (const Rebalancer::Profile& p : profiles) names.push_back(p.name);
  return names;
}

// "cpu 0.93 above 0.85 for 3 samples".
std::string WhyHot(const HotBound& bound, const HotNode& hot) {
  return absl::StrFormat("%s %.4g above %.4g for %d sample%s", bound.metric,
                         hot.value, hot.threshold, hot.samples,
                         hot.samples == 1 ? "" : "s");
}

}  // namespace

Rebalancer::Rebalancer(const RebalanceConfig& config,
                       std::vector<Profile> profiles, ClusterState& state,
                       metrics::MetricsCache& cache, SchedulerApi& api,
                       EventRecorder& recorder, Leadership& leadership,
                       const Clock& clock, Registry& registry,
                       absl::Duration evict_timeout)
    : config_(config),
      profiles_(std::move(profiles)),
      names_(RebalancedNames(config_, profiles_)),
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
      tracker_(config_.hot),
      limits_(config_.limits) {
  for (const HotBound& bound : config_.hot) {
    BoundTerm found;
    for (const Profile& p : profiles_) {
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
  registry.AddGauge("metrics_scheduler_rebalance_hot_nodes",
                    "Nodes that stayed hot at the last round, by metric.",
                    {"metric"}, [this] {
                      Registry::GaugeSamples samples;
                      absl::MutexLock lock(&mu_);
                      for (const HotBound& b : config_.hot) {
                        double n = 0;
                        for (const HotNode& h : last_hot_) {
                          if (config_.hot[h.bound].metric == b.metric) ++n;
                        }
                        samples.push_back({{b.metric}, n});
                      }
                      return samples;
                    });
  for (const char* result : {"evicted", "dry-run", "disruption-budget", "gone",
                             "not-leader", "failed"}) {
    evictions_.With({result});
  }
}

Rebalancer::~Rebalancer() { Stop(); }

void Rebalancer::OnAssignedPod(const Pod& pod) {
  if (std::find(names_.begin(), names_.end(), pod.scheduler_name) ==
      names_.end()) {
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

const Rebalancer::Profile* Rebalancer::ProfileNamed(
    const std::string& scheduler_name) const {
  for (const Profile& p : profiles_) {
    if (p.name == scheduler_name) return &p;
  }
  return nullptr;
}

Rebalancer::Round Rebalancer::RunOnce() {
  absl::MutexLock round_lock(&round_mu_);
  Round round;
  // A standby writes nothing, not even a dry run's Events.
  if (!leadership_.IsLeader()) return round;
  rounds_.With({}).Inc();
  const int64_t now_ms = absl::ToUnixMillis(clock_.Now());
  const std::shared_ptr<const MetricsSnapshot> snapshot = cache_.Snapshot();
  const std::vector<std::string> nodes = state_.NodeNames();
  for (size_t b = 0; b < config_.hot.size(); ++b) {
    const MetricTerm& term =
        bound_terms_[b].scoring->metrics[bound_terms_[b].term];
    const MetricValues* values =
        snapshot == nullptr ? nullptr : snapshot->Find(term.name);
    MetricColumn column =
        values != nullptr
            ? AlignMetric(*values, nodes)
            : MetricColumn{.values = std::vector<double>(nodes.size(), NAN),
                           .time_ms = std::vector<int64_t>(nodes.size(), 0)};
    tracker_.Observe(b, nodes, column, now_ms, term.max_staleness_ms);
  }
  round.hot = tracker_.Hot();
  {
    absl::MutexLock lock(&mu_);
    last_hot_ = round.hot;
  }
  if (round.hot.empty()) return round;
  limits_.StartInterval(now_ms);

  std::set<std::string> handled;  // a node hot on two metrics: the first
  for (const HotNode& hot : round.hot) {
    if (!handled.insert(hot.node).second) continue;
    const HotBound& bound = config_.hot[hot.bound];
    const BoundTerm& bt = bound_terms_[hot.bound];
    std::vector<Pod> pods;
    {
      absl::MutexLock lock(&mu_);
      if (auto it = by_node_.find(hot.node); it != by_node_.end()) {
        for (const std::string& key : it->second) pods.push_back(pods_[key]);
      }
    }
    std::vector<MoveCandidate> candidates;
    std::vector<std::string> takes_why(pods.size());
    for (size_t i = 0; i < pods.size(); ++i) {
      const Unmovable why = WhyUnmovable(pods[i], config_.pods, names_, now_ms);
      if (why != Unmovable::kMovable) {
        left_.With({std::string(UnmovableName(why))}).Inc();
        VLOG(2) << "rebalance: " << pods[i].Key() << " stays on " << hot.node
                << ": " << UnmovableName(why);
        continue;
      }
      const PodEstimate takes =
          state_.Takes(*bt.scoring, snapshot, bt.term, pods[i]);
      if (!std::isfinite(takes.value) || takes.value <= 0) {
        left_.With({"unknown-load"}).Inc();
        continue;
      }
      takes_why[i] = DescribeEstimate(bt.scoring->metrics[bt.term], takes);
      candidates.push_back({.pod = i, .takes = takes.value});
    }
    const MovePlan plan = PlanMoves(
        hot, std::move(candidates),
        [&](size_t i) {
          const std::string workload =
              pods[i].controller ? pods[i].controller->uid : "";
          return limits_.Allows(hot.node, pods[i].namespace_, workload, now_ms);
        },
        [&](size_t i) -> Replacement {
          const Profile* profile = ProfileNamed(pods[i].scheduler_name);
          if (profile == nullptr) return {};
          // Its replacement: the same pod, not bound yet (its own charge
          // on its node is left out of the decision).
          Pod replacement = pods[i];
          replacement.node_name.clear();
          std::string node;
          state_.DecideAndAssume({.pod = &replacement,
                                  .config = profile->scoring,
                                  .metrics = snapshot,
                                  .seed = static_cast<uint64_t>(now_ms) + i,
                                  .assume = false},
                                 workspace_, &node);
          if (node.empty()) return {};
          return {node, state_.ValueWith(*bt.scoring, snapshot, bt.term, node,
                                         pods[i])};
        });
    for (const LeftPod& left : plan.left) {
      left_.With({std::string(LeftBecauseName(left.why))}).Inc();
      VLOG(1) << "rebalance: " << pods[left.pod].Key() << " stays on "
              << hot.node << " (" << WhyHot(bound, hot)
              << "): " << LeftBecauseName(left.why)
              << (left.node.empty() ? "" : " to " + left.node);
    }
    for (const PlannedMove& move : plan.moves) {
      const Pod& pod = pods[move.pod];
      limits_.Record(hot.node, pod.namespace_,
                     pod.controller ? pod.controller->uid : "", now_ms);
      Move(pod, hot, move, takes_why[move.pod], now_ms, round);
    }
  }
  return round;
}

void Rebalancer::Move(const Pod& pod, const HotNode& hot,
                      const PlannedMove& move, const std::string& takes_why,
                      int64_t now_ms, Round& round) {
  const HotBound& bound = config_.hot[hot.bound];
  const std::string what = absl::StrFormat(
      "off node %s (%s) to node %s (%s %.4g with it): it takes %.4g, %s",
      hot.node, WhyHot(bound, hot), move.to, bound.metric, move.to_value,
      move.takes, takes_why);
  round.moves.push_back(
      absl::StrCat(pod.Key(), " ", hot.node, " -> ", move.to));
  if (config_.mode == RebalanceMode::kDryRun) {
    evictions_.With({"dry-run"}).Inc();
    LOG(INFO) << "rebalance (dry run): would move " << pod.Key() << " " << what;
    recorder_.Normal(pod, "WouldRebalance", "Rebalancing",
                     absl::StrCat("Would move ", what, " (dry run)"));
    return;
  }
  const absl::Duration timeout =
      std::min(evict_timeout_, leadership_.WriteMargin());
  if (!leadership_.AwaitWriteWindow(timeout)) {
    evictions_.With({"not-leader"}).Inc();
    return;
  }
  const absl::Status s = api_.EvictPod(pod, timeout);
  if (s.ok()) {
    evictions_.With({"evicted"}).Inc();
    LOG(INFO) << "rebalance: evicted " << pod.Key() << " " << what;
    recorder_.Normal(pod, "Rebalanced", "Rebalancing",
                     absl::StrCat("Evicted to move it ", what));
    tracker_.Settle(hot.node,
                    now_ms + bound_terms_[hot.bound]
                                 .scoring->metrics[bound_terms_[hot.bound].term]
                                 .estimate.warmup_ms);
  } else if (absl::IsResourceExhausted(s)) {
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
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping), config_.interval)) {
        return;
      }
    }
    RunOnce();
  }
}

}  // namespace ms
