#include "scheduler/cycle/scheduler.h"

#include <algorithm>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "glog/logging.h"
#include "scheduler/cycle/scoring_profile.h"
#include "scoring/explanation.h"
#include "scoring/unseen_load.h"

namespace ms {
namespace {

constexpr absl::Duration kHousekeepingPeriod = absl::Seconds(1);

bool IsTerminal(const Pod& pod) {
  return pod.phase == PodPhase::kSucceeded || pod.phase == PodPhase::kFailed;
}

absl::Duration LongestHerdWindow(const Config& config) {
  absl::Duration longest = absl::ZeroDuration();
  for (const ProfileConfig& p : config.profiles) {
    longest = std::max(longest, p.herd.window);
  }
  return longest;
}

absl::Duration LongestEstimateWindow(const Config& config) {
  absl::Duration longest = absl::ZeroDuration();
  for (const ProfileConfig& p : config.profiles) {
    longest = std::max(longest, EstimateWindow(p));
  }
  return longest;
}

}  // namespace

Scheduler::Scheduler(const Config& config, SchedulerOptions options,
                     SchedulerApi& api, metrics::MetricsCache* cache,
                     const Clock& clock, Registry& registry,
                     Leadership& leadership, LivenessMonitor* liveness)
    : config_(config),
      options_(std::move(options)),
      profiles_([&config, kube = options_.kube] {
        std::vector<Profile> out;
        for (const ProfileConfig& p : config.profiles) {
          ScoringConfig scoring = MakeScoringConfig(config, p);
          scoring.kube = kube;
          out.push_back({p.scheduler_name, std::move(scoring)});
        }
        return out;
      }()),
      filters_on_queries_(absl::c_any_of(
          profiles_,
          [](const Profile& p) {
            return absl::c_any_of(p.scoring.metrics, [](const MetricTerm& t) {
              return t.origin.is_query() && t.has_filter();
            });
          })),
      cache_(cache),
      clock_(clock),
      leadership_(leadership),
      liveness_(liveness),
      loop_part_(liveness ? &liveness->Register("scheduling loop") : nullptr),
      queue_(clock, options_.queue),
      state_(clock, options_.kube, LongestHerdWindow(config),
             LongestEstimateWindow(config)),
      rng_(options_.seed),
      attempts_(registry, SchedulerNames(config)),
      decisions_(registry.AddCounter(
          "metrics_scheduler_decisions_total",
          "Placement decisions by scoring mode (metrics or fallback) and "
          "profile.",
          {"mode", "profile"})),
      decision_seconds_(registry.AddHistogram(
          "metrics_scheduler_decision_duration_seconds",
          "Time to filter, score and pick a node for one pod.",
          ExponentialBuckets(0.00001, 2, 16))),
      registry_(registry),
      recorder_({.components = SchedulerNames(config),
                 .instance = options_.identity,
                 .workers = options_.event_workers,
                 // Events yield to the bindings while pods wait.
                 .busy = [this] { return queue_.HasActive(); }},
                api, registry),
      binder_(
          {.workers = options_.bind_workers,
           .max_in_flight = options_.max_bindings_in_flight,
           .initial_in_flight = std::min(32, options_.max_bindings_in_flight),
           .timeout = options_.bind_timeout,
           .volume_binding_timeout = options_.volume_binding_timeout},
          api, state_, queue_, leadership, recorder_, clock, registry,
          attempts_),
      preemptor_({.timeout = options_.bind_timeout}, api, recorder_, leadership,
                 registry, [this](const Pod& pod) {
                   // Not carried out: its room is not kept; try again.
                   state_.RemoveNominatedPod(pod);
                   queue_.MoveAllToActive();
                 }) {
  for (const Profile& profile : profiles_) {
    for (ScoringMode mode : {ScoringMode::kMetrics, ScoringMode::kFallback}) {
      decisions_.With({ModeName(mode), profile.name});
    }
  }
  RegisterMetrics();
  if (config_.rebalance.mode != RebalanceMode::kOff && cache_ != nullptr) {
    std::vector<Rebalancer::Profile> profiles;
    for (const Profile& p : profiles_) profiles.push_back({p.name, &p.scoring});
    rebalancer_ = std::make_unique<Rebalancer>(
        config_.rebalance, std::move(profiles), state_, *cache_, api, recorder_,
        leadership, clock, registry, options_.bind_timeout);
  }
  // Also on standbys: their metrics cache follows the nodes too, so a
  // takeover decides with warm metrics.
  housekeeping_ = std::thread([this] { Housekeeping(); });
}

Scheduler::~Scheduler() {
  Stop();
  if (housekeeping_.joinable()) housekeeping_.join();
  // binder_ then recorder_ are destroyed next: the last bindings settle,
  // then their Events are written.
}

void Scheduler::RegisterMetrics() {
  // kube-scheduler's queues; a pod being scheduled or bound is in none.
  registry_.AddGauge(
      "metrics_scheduler_pending_pods",
      "Pending pods, by queue: 'active' ready to be tried, 'backoff' "
      "waiting out a backoff after an error, 'unschedulable' tried and "
      "waiting for a cluster change, 'gated' not tried because of their "
      "scheduling gates.",
      {"queue"}, [this] {
        QueueLengths l = queue_.Lengths();
        double gated;
        {
          absl::MutexLock lock(&gated_mu_);
          gated = static_cast<double>(gated_.size());
        }
        return Registry::GaugeSamples{
            {{"active"}, static_cast<double>(l.active)},
            {{"backoff"}, static_cast<double>(l.backoff)},
            {{"unschedulable"}, static_cast<double>(l.unschedulable)},
            {{"gated"}, gated}};
      });
  registry_.AddGauge("metrics_scheduler_in_flight_pods",
                     "Pods taken from the queue and being scheduled or "
                     "bound now.",
                     {}, [this] {
                       return Registry::GaugeSamples{
                           {{}, static_cast<double>(
                                    queue_.Lengths().in_flight)}};
                     });
  registry_.AddGauge("metrics_scheduler_assumed_pods",
                     "Pods placed by this scheduler, not yet seen bound.", {},
                     [this] {
                       return Registry::GaugeSamples{
                           {{}, static_cast<double>(state_.NumAssumed())}};
                     });
  registry_.AddGauge(
      "metrics_scheduler_nominated_pods",
      "Unbound pods (any scheduler's) whose nominated node keeps room for "
      "them.",
      {}, [this] {
        return Registry::GaugeSamples{
            {{}, static_cast<double>(state_.NumNominated())}};
      });
  registry_.AddGauge("metrics_scheduler_nodes", "Nodes known.", {}, [this] {
    return Registry::GaugeSamples{
        {{}, static_cast<double>(state_.NumNodes())}};
  });
  registry_.AddGauge("metrics_scheduler_leader",
                     "1 when this replica is the leader.", {}, [this] {
                       return Registry::GaugeSamples{
                           {{}, leadership_.IsLeader() ? 1.0 : 0.0}};
                     });
}

void Scheduler::OnPendingPod(const Pod& pod) {
  const bool gated = pod.scheduling_gated && !pod.deleting &&
                     !IsTerminal(pod) && pod.node_name.empty();
  SetGated(pod.Key(), gated);
  if (pod.deleting || IsTerminal(pod) || !pod.node_name.empty()) {
    queue_.Delete(pod.Key());
    return;
  }
  if (gated) {
    // kube-scheduler's SchedulingGates: not attempted, no event; the
    // apiserver keeps its SchedulingGated condition. Gates can only be
    // removed, and the update that removes the last one queues it.
    MS_VLOG(2) << pod.Key() << " is scheduling-gated; waiting for its gates"
               << LogFields().Pod(pod.namespace_, pod.name);
    queue_.Delete(pod.Key());
    return;
  }
  queue_.Update(pod);
}

void Scheduler::SetGated(const std::string& key, bool gated) {
  absl::MutexLock lock(&gated_mu_);
  if (gated) {
    gated_.insert(key);
  } else {
    gated_.erase(key);
  }
}

void Scheduler::OnPendingPodDeleted(const Pod& pod) {
  SetGated(pod.Key(), false);
  queue_.Delete(pod.Key());
  recorder_.Forget(pod);
  // A preemptor gone before its nomination was seen: its room is free.
  state_.RemoveNominatedPod(pod);
}

void Scheduler::OnPendingPodRejected(const kube::RejectedObject& rejected) {
  if (rejected.name.empty()) return;  // nothing to put an Event on
  Pod pod{.name = rejected.name,
          .namespace_ = rejected.namespace_,
          .uid = rejected.uid};
  // An older version may be queued: it is not what the user wants now.
  queue_.Delete(pod.Key());
  recorder_.FailedScheduling(
      pod, "Scheduling",
      absl::StrCat("metrics-scheduler cannot read this pod: ", rejected.error,
                   "; it is not scheduled until that is fixed"));
}

void Scheduler::OnNominatedPod(const Pod& pod, bool deleted) {
  if (!deleted) {
    state_.UpsertNominatedPod(pod);
    return;
  }
  // Bound, deleted, or its nomination cleared: the room it held is free.
  state_.RemoveNominatedPod(pod);
  queue_.MoveAllToActive();
}

void Scheduler::OnBudget(const PodDisruptionBudget& budget, bool deleted) {
  deleted ? state_.RemoveBudget(budget) : state_.UpsertBudget(budget);
}

void Scheduler::OnAssignedPod(const Pod& pod) {
  // A pod that arrives, or is relabelled, may satisfy a pending pod's
  // pod affinity.
  if (state_.UpsertAssignedPod(pod)) queue_.MoveAllToActive();
  if (rebalancer_) rebalancer_->OnAssignedPod(pod);
}

void Scheduler::OnAssignedPodDeleted(const Pod& pod) {
  state_.RemoveAssignedPod(pod);
  queue_.MoveAllToActive();  // its resources are free again
  if (rebalancer_) rebalancer_->OnAssignedPodDeleted(pod);
}

void Scheduler::OnNode(const Node& node) {
  if (state_.UpsertNode(node)) queue_.MoveAllToActive();
}

void Scheduler::OnNamespace(const Namespace& ns) {
  if (state_.UpsertNamespace(ns)) queue_.MoveAllToActive();
}

void Scheduler::OnNamespaceDeleted(const Namespace& ns) {
  state_.RemoveNamespace(ns.name);
}

void Scheduler::OnWorkload(const Workload& workload) {
  state_.UpsertWorkload(workload);
}

void Scheduler::OnWorkloadDeleted(const Workload& workload) {
  state_.RemoveWorkload(workload);
}

void Scheduler::OnStorage(const PersistentVolumeClaim& claim, bool deleted) {
  deleted ? state_.RemoveClaim(claim) : state_.UpsertClaim(claim);
  queue_.MoveAllToActive();
}

void Scheduler::OnStorage(const PersistentVolume& volume, bool deleted) {
  deleted ? state_.RemoveVolume(volume) : state_.UpsertVolume(volume);
  queue_.MoveAllToActive();
}

void Scheduler::OnStorage(const StorageClass& storage_class, bool deleted) {
  deleted ? state_.RemoveStorageClass(storage_class)
          : state_.UpsertStorageClass(storage_class);
  queue_.MoveAllToActive();
}

void Scheduler::OnStorage(const CsiNode& node, bool deleted) {
  deleted ? state_.RemoveCsiNode(node) : state_.UpsertCsiNode(node);
  queue_.MoveAllToActive();
}

void Scheduler::OnStorage(const CsiDriver& driver, bool deleted) {
  deleted ? state_.RemoveCsiDriver(driver) : state_.UpsertCsiDriver(driver);
  queue_.MoveAllToActive();
}

void Scheduler::OnStorage(const CsiStorageCapacity& capacity, bool deleted) {
  deleted ? state_.RemoveCapacity(capacity) : state_.UpsertCapacity(capacity);
  queue_.MoveAllToActive();
}

void Scheduler::OnDeviceClass(const DeviceClass& device_class, bool deleted) {
  deleted ? state_.RemoveDeviceClass(device_class)
          : state_.UpsertDeviceClass(device_class);
  queue_.MoveAllToActive();
}

void Scheduler::OnNodeDeleted(const Node& node) {
  state_.RemoveNode(node.name);
}

void Scheduler::SyncNodesToCache() {
  if (cache_ == nullptr) return;
  // The list may be newer than the version read: the next call then hands
  // it over once more, which the cache takes as no change.
  const uint64_t version = state_.NodeAddressesVersion();
  if (synced_addresses_.exchange(version) == version) return;
  cache_->SetNodes(state_.NodeAddressList());
}

void Scheduler::Housekeeping() {
  while (!stopping_.WaitForNotificationWithTimeout(kHousekeepingPeriod)) {
    queue_.Flush();
    SyncNodesToCache();
    RetryOnNewMetrics();
  }
}

void Scheduler::RetryOnNewMetrics() {
  if (cache_ == nullptr || !filters_on_queries_) return;
  std::shared_ptr<const MetricsSnapshot> now = cache_->Snapshot();
  if (now == seen_metrics_) return;
  const bool first = seen_metrics_ == nullptr;
  seen_metrics_ = std::move(now);
  if (!first) queue_.MoveAllToActive();
}

void Scheduler::Run() {
  running_.store(true);
  // The metrics cache fetches nothing before it knows the nodes: do not
  // leave the first decisions to wait for the next housekeeping tick.
  SyncNodesToCache();
  LOG(INFO) << "scheduling pods with schedulerName "
            << absl::StrJoin(SchedulerNames(config_), ", ");
  if (rebalancer_) rebalancer_->Start();
  while (std::optional<QueuedPod> queued = queue_.Pop()) {
    if (loop_part_ == nullptr) {
      ScheduleOne(std::move(*queued));
      continue;
    }
    LivenessMonitor::Busy busy(*liveness_, *loop_part_);
    ScheduleOne(std::move(*queued));
  }
  if (rebalancer_) rebalancer_->Stop();
  // Let the bindings and preemptions already handed out settle.
  binder_.Drain();
  preemptor_.Drain();
  running_.store(false);
  stopped_.Notify();
}

void Scheduler::Stop() {
  if (stopping_.HasBeenNotified()) {
    if (running_.load()) stopped_.WaitForNotification();
    return;
  }
  stopping_.Notify();
  queue_.Close();
  binder_.Cancel();
  preemptor_.Cancel();
  if (running_.load()) stopped_.WaitForNotification();
}

const Scheduler::Profile& Scheduler::ProfileOf(const Pod& pod) const {
  for (const Profile& profile : profiles_) {
    if (profile.name == pod.scheduler_name) return profile;
  }
  return profiles_.front();
}

void Scheduler::Preempt(const Pod& pod, const Preemption& preemption) {
  std::vector<std::string> names;
  for (const auto& v : preemption.victims) {
    names.push_back(absl::StrCat(v->namespace_, "/", v->name));
  }
  LOG(INFO) << pod.Key() << ": preempting " << names.size() << " pod(s) on "
            << preemption.node_name << ": " << absl::StrJoin(names, ", ")
            << LogFields().Pod(pod.namespace_, pod.name).Node(
                   preemption.node_name);
  // Its room is kept from now on, not only once the nomination is seen.
  Pod nominated = pod;
  nominated.nominated_node_name = preemption.node_name;
  state_.UpsertNominatedPod(nominated);
  preemptor_.Submit({.preemptor = pod,
                     .node = preemption.node_name,
                     .victims = preemption.victims,
                     .lower_nominated = preemption.lower_nominated});
}

std::shared_ptr<const MetricsSnapshot> Scheduler::MetricsForCycle(
    bool* force_fallback) {
  *force_fallback = false;
  if (cache_ == nullptr) return nullptr;
  if (!cache_->FirstRefreshDone()) {
    absl::Time now = clock_.Now();
    if (cold_since_ == absl::InfinitePast()) cold_since_ = now;
    absl::Duration left =
        cold_since_ + config_.fallback.cold_cache_deadline - now;
    if (left <= absl::ZeroDuration() || !cache_->WaitForFirstRefresh(left)) {
      *force_fallback = true;
      MS_VLOG(2) << "metrics cache still cold: deciding in fallback mode";
    }
  }
  return cache_->Snapshot();
}

void Scheduler::ScheduleOne(QueuedPod queued) {
  const absl::Time started = absl::Now();  // the attempt's, for metrics
  const Pod& pod = queued.pod;
  const Profile& profile = ProfileOf(pod);
  bool force_fallback = false;
  std::shared_ptr<const MetricsSnapshot> metrics =
      MetricsForCycle(&force_fallback);
  DecisionRequest request{.pod = &pod,
                          .config = &profile.scoring,
                          .metrics = std::move(metrics),
                          .force_fallback = force_fallback,
                          .preempt = !preemptor_.InFlight(pod.uid),
                          .seed = rng_()};
  std::string node;
  absl::Time start = absl::Now();
  Decision decision = state_.DecideAndAssume(request, workspace_, &node);
  decision_seconds_.With({}).Observe(
      absl::ToDoubleSeconds(absl::Now() - start));

  if (!decision.ok()) {
    attempts_.Attempted(pod.scheduler_name,
                        AttemptMetrics::Result::kUnschedulable, started);
    LOG(INFO) << pod.Key() << " is unschedulable: " << decision.filter_summary
              << LogFields().Pod(pod.namespace_, pod.name);
    if (decision.preemption && decision.preemption->ok()) {
      Preempt(pod, *decision.preemption);
    }
    recorder_.Unschedulable(pod, decision.filter_summary);
    queue_.RequeueUnschedulable(queued);
    return;
  }
  decisions_.With({ModeName(decision.mode), profile.name}).Inc();
  for (std::string& problem :
       InvalidEstimateAnnotations(profile.scoring.metrics, pod.estimates)) {
    LOG(WARNING) << pod.Key() << ": " << problem
                 << LogFields().Pod(pod.namespace_, pod.name);
    recorder_.Warning(pod, "InvalidEstimate", "Scheduling", std::move(problem));
  }
  MS_VLOG(1) << pod.Key() << " -> " << node << " ("
             << SummarizeTerms(decision.score, decision.mode, decision.terms)
             << ")" << LogFields().Pod(pod.namespace_, pod.name).Node(node);
  binder_.Submit({.queued = std::move(queued),
                  .node = std::move(node),
                  .decision = std::move(decision),
                  .started = started});
}

}  // namespace ms
