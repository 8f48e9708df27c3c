#include "scheduler/cycle/cluster_state.h"

#include <algorithm>
#include <cmath>

#include "glog/logging.h"
#include "scoring/unseen_load.h"

namespace ms {
namespace {

// Whether a node change may let a pending pod fit where it did not before.
bool SchedulingRelevantChange(const Node& old_node, const Node& new_node) {
  return old_node.labels != new_node.labels ||
         old_node.unschedulable != new_node.unschedulable ||
         old_node.taints != new_node.taints ||
         old_node.allocatable != new_node.allocatable ||
         old_node.ready != new_node.ready ||
         // a node-attribute metric's threshold may pass now
         old_node.annotations != new_node.annotations;
}

}  // namespace

ClusterState::ClusterState(const Clock& clock, KubeVersion kube,
                           absl::Duration longest_herd_window,
                           absl::Duration longest_estimate_window)
    : clock_(clock),
      kube_(kube),
      metric_views_(longest_herd_window, longest_estimate_window) {}

bool ClusterState::UpsertNode(const Node& node) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(node.name);
  if (it != index_.end()) {
    NodeInfo& info = nodes_[it->second];
    info.node.resource_version = node.resource_version;
    if (info.node == node) return false;  // a heartbeat
    bool relevant = SchedulingRelevantChange(info.node, node);
    if (info.node.labels != node.labels ||
        info.node.annotations != node.annotations) {
      ++attributes_version_;
    }
    if (NodeAddressesOf(info.node) != NodeAddressesOf(node)) {
      ++addresses_version_;
    }
    info.node = node;
    if (!layout_changed_) table_.Update(it->second, info);
    return relevant;
  }
  NodeInfo info;
  auto orphan = orphans_.find(node.name);
  if (orphan != orphans_.end()) {
    info = std::move(orphan->second);
    orphans_.erase(orphan);
  }
  info.node = node;
  index_[node.name] = nodes_.size();
  nodes_.push_back(std::move(info));
  names_.push_back(node.name);
  layout_changed_ = true;
  ++layout_version_;
  ++addresses_version_;
  return true;
}

void ClusterState::RemoveNode(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(name);
  if (it == index_.end()) return;
  size_t i = it->second;
  size_t last = nodes_.size() - 1;
  // Pods still on the node keep their charge with it, in case it returns.
  NodeInfo removed = std::move(nodes_[i]);
  if (i != last) {
    nodes_[i] = std::move(nodes_[last]);
    names_[i] = std::move(names_[last]);
    index_[names_[i]] = i;
  }
  nodes_.pop_back();
  names_.pop_back();
  index_.erase(name);
  removed.node = Node{.name = name};
  if (removed.requested.pods > 0) orphans_[name] = std::move(removed);
  layout_changed_ = true;
  ++layout_version_;
  ++addresses_version_;
}

void ClusterState::Charge(const std::string& node, const PodCharge& charge) {
  volumes_.AddUsers(charge.pod->namespace_, charge.pod->claims);
  auto it = index_.find(node);
  if (it == index_.end()) {
    orphans_[node].AddPod(charge);
    return;
  }
  nodes_[it->second].AddPod(charge);
  if (!layout_changed_) table_.Update(it->second, nodes_[it->second]);
}

void ClusterState::Uncharge(const std::string& node, const PodCharge& charge) {
  volumes_.RemoveUsers(charge.pod->namespace_, charge.pod->claims);
  auto it = index_.find(node);
  if (it == index_.end()) {
    auto orphan = orphans_.find(node);
    if (orphan == orphans_.end()) return;
    orphan->second.RemovePod(charge);
    if (orphan->second.requested.pods <= 0) orphans_.erase(orphan);
    return;
  }
  nodes_[it->second].RemovePod(charge);
  if (!layout_changed_) table_.Update(it->second, nodes_[it->second]);
}

void ClusterState::RemovePlaced(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  Uncharge(it->second.node, it->second.charge);
  metric_views_.Stopped(key);
  if (it->second.assumed) {
    if (it->second.volumes != nullptr) volumes_.Forget(*it->second.volumes);
    --num_assumed_;
  }
  pods_.erase(it);
}

bool ClusterState::UpsertAssignedPod(const Pod& pod) {
  std::string key = pod.Key();
  absl::MutexLock lock(&mu_);
  // Bound: no longer nominated, whether or not the nominated pods'
  // informer has said so yet (or ever saw a nomination made here).
  if (!nominated_.empty()) nominated_.erase(key);
  auto it = pods_.find(key);
  if (it != pods_.end()) {
    PlacedPod& placed = it->second;
    if (placed.uid() == pod.uid && placed.node == pod.node_name) {
      if (placed.assumed) {  // our binding, now confirmed by the apiserver
        placed.assumed = false;
        --num_assumed_;
      }
      // Requests change in place (a resize), labels are edited: charge the
      // pod as it is now.
      PodCharge charge = PodCharge::Of(pod, kube_);
      if (charge == placed.charge) return false;
      const bool relabelled = placed.charge.pod->labels != pod.labels;
      Uncharge(placed.node, placed.charge);
      placed.charge = std::move(charge);
      Charge(placed.node, placed.charge);
      return relabelled;
    }
    // Another pod under the same name, or bound elsewhere than assumed.
    RemovePlaced(key);
  }
  PlacedPod placed{pod.node_name, PodCharge::Of(pod, kube_), false};
  Charge(placed.node, placed.charge);
  // Bound by someone else (or before this process): its load may not show
  // in the metrics yet.
  const absl::Time now = clock_.Now();
  metric_views_.Started(placed.node, now, Layout(), key,
                        pod.start_time_ms > 0 ? pod.start_time_ms
                                              : absl::ToUnixMillis(now),
                        placed.charge.pod);
  pods_.emplace(key, std::move(placed));
  return true;
}

bool ClusterState::UpsertNamespace(const Namespace& ns) {
  absl::MutexLock lock(&mu_);
  auto [it, added] = namespaces_.try_emplace(ns.name, ns.labels);
  if (added) return true;
  if (it->second == ns.labels) return false;
  it->second = ns.labels;
  return true;
}

void ClusterState::RemoveNamespace(const std::string& name) {
  absl::MutexLock lock(&mu_);
  namespaces_.erase(name);
}

void ClusterState::UpsertWorkload(const Workload& workload) {
  absl::MutexLock lock(&mu_);
  workloads_.Upsert(workload);
}

void ClusterState::RemoveWorkload(const Workload& workload) {
  absl::MutexLock lock(&mu_);
  workloads_.Remove(workload.kind, workload.namespace_, workload.name);
}

void ClusterState::UpsertClaim(const PersistentVolumeClaim& claim) {
  absl::MutexLock lock(&mu_);
  volumes_.UpsertClaim(claim);
  ++volume_changes_;
}

void ClusterState::RemoveClaim(const PersistentVolumeClaim& claim) {
  absl::MutexLock lock(&mu_);
  volumes_.RemoveClaim(claim.namespace_, claim.name);
  ++volume_changes_;
}

void ClusterState::UpsertVolume(const PersistentVolume& volume) {
  absl::MutexLock lock(&mu_);
  volumes_.UpsertVolume(volume);
  ++volume_changes_;
}

void ClusterState::RemoveVolume(const PersistentVolume& volume) {
  absl::MutexLock lock(&mu_);
  volumes_.RemoveVolume(volume.name);
  ++volume_changes_;
}

void ClusterState::UpsertStorageClass(const StorageClass& storage_class) {
  absl::MutexLock lock(&mu_);
  volumes_.UpsertClass(storage_class);
}

void ClusterState::RemoveStorageClass(const StorageClass& storage_class) {
  absl::MutexLock lock(&mu_);
  volumes_.RemoveClass(storage_class.name);
}

void ClusterState::UpsertCsiNode(const CsiNode& node) {
  absl::MutexLock lock(&mu_);
  volumes_.UpsertCsiNode(node);
}

void ClusterState::RemoveCsiNode(const CsiNode& node) {
  absl::MutexLock lock(&mu_);
  volumes_.RemoveCsiNode(node.name);
}

void ClusterState::UpsertCsiDriver(const CsiDriver& driver) {
  absl::MutexLock lock(&mu_);
  volumes_.UpsertCsiDriver(driver);
}

void ClusterState::RemoveCsiDriver(const CsiDriver& driver) {
  absl::MutexLock lock(&mu_);
  volumes_.RemoveCsiDriver(driver.name);
}

void ClusterState::UpsertCapacity(const CsiStorageCapacity& capacity) {
  absl::MutexLock lock(&mu_);
  volumes_.UpsertCapacity(capacity);
}

void ClusterState::RemoveCapacity(const CsiStorageCapacity& capacity) {
  absl::MutexLock lock(&mu_);
  volumes_.RemoveCapacity(capacity.Key());
}

void ClusterState::UpsertDeviceClass(const DeviceClass& device_class) {
  absl::MutexLock lock(&mu_);
  device_classes_[device_class.name] = device_class;
  device_resources_ = IndexDeviceClasses(device_classes_);
}

void ClusterState::RemoveDeviceClass(const DeviceClass& device_class) {
  absl::MutexLock lock(&mu_);
  device_classes_.erase(device_class.name);
  device_resources_ = IndexDeviceClasses(device_classes_);
}

uint64_t ClusterState::AwaitVolumes(
    uint64_t seen, absl::Time deadline,
    absl::FunctionRef<void(const VolumeCatalog&)> fn) const {
  absl::MutexLock lock(&mu_);
  auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return volume_changes_ != seen;
  };
  mu_.AwaitWithDeadline(absl::Condition(&changed), deadline);
  fn(volumes_);
  return volume_changes_;
}

void ClusterState::RemoveAssignedPod(const Pod& pod) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end() || it->second.uid() != pod.uid) return;
  RemovePlaced(pod.Key());
}

void ClusterState::Forget(const Pod& pod) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end() || !it->second.assumed || it->second.uid() != pod.uid) {
    return;
  }
  RemovePlaced(pod.Key());
}

NodeLayout ClusterState::Layout() const {
  return {.nodes = &nodes_,
          .names = &names_,
          .index = &index_,
          .version = layout_version_,
          .attributes_version = attributes_version_,
          .find_pod = [this](const std::string& key)
                          ABSL_NO_THREAD_SAFETY_ANALYSIS -> const PodInfo* {
            // Called by metric_views_ only, under mu_.
            auto it = pods_.find(key);
            return it != pods_.end() ? it->second.charge.pod.get() : nullptr;
          }};
}

const MetricViews::View& ClusterState::View(
    const ScoringConfig& config,
    const std::shared_ptr<const MetricsSnapshot>& metrics, absl::Time now) {
  if (layout_changed_) {
    table_.Build(nodes_);
    layout_changed_ = false;
  }
  return metric_views_.Get(config, metrics, now, Layout());
}

void ClusterState::UpsertNominatedPod(const Pod& pod) {
  absl::MutexLock lock(&mu_);
  if (pod.nominated_node_name.empty() || !pod.node_name.empty() ||
      pod.phase == PodPhase::kSucceeded || pod.phase == PodPhase::kFailed) {
    nominated_.erase(pod.Key());
    return;
  }
  nominated_[pod.Key()] = {pod.nominated_node_name, PodCharge::Of(pod, kube_)};
}

void ClusterState::RemoveNominatedPod(const Pod& pod) {
  absl::MutexLock lock(&mu_);
  auto it = nominated_.find(pod.Key());
  if (it != nominated_.end() && it->second.charge.pod->uid == pod.uid) {
    nominated_.erase(it);
  }
}

size_t ClusterState::NumNominated() const {
  absl::MutexLock lock(&mu_);
  return nominated_.size();
}

void ClusterState::UpsertBudget(const PodDisruptionBudget& budget) {
  absl::MutexLock lock(&mu_);
  budgets_[budget.Key()] = budget;
  budgets_changed_ = true;
}

void ClusterState::RemoveBudget(const PodDisruptionBudget& budget) {
  absl::MutexLock lock(&mu_);
  budgets_changed_ |= budgets_.erase(budget.Key()) > 0;
}

const std::vector<NominatedPod>* ClusterState::NominatedView() {
  if (nominated_.empty()) return nullptr;
  nominated_view_.clear();
  for (const auto& [key, n] : nominated_) {
    auto node = index_.find(n.node);
    if (node == index_.end()) continue;
    // Bound (the informer may not have said so yet) or assumed by us.
    auto placed = pods_.find(key);
    if (placed != pods_.end() && placed->second.uid() == n.charge.pod->uid) {
      continue;
    }
    nominated_view_.push_back(
        {.node = static_cast<uint32_t>(node->second), .charge = n.charge});
  }
  return &nominated_view_;
}

Decision ClusterState::DecideAndAssume(const DecisionRequest& request,
                                       Workspace& workspace,
                                       std::string* node_name) {
  absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  const MetricViews::View& view = View(*request.config, request.metrics, now);
  if (budgets_changed_ && request.preempt) {
    budgets_view_.clear();
    for (const auto& [key, b] : budgets_) budgets_view_.push_back(b);
    budgets_changed_ = false;
  }
  // A what-if about a pod already placed (shadow mode) is decided as if it
  // were not: its charge is left out for the decision.
  const PlacedPod* self = nullptr;
  if (!request.assume) {
    auto it = pods_.find(request.pod->Key());
    if (it != pods_.end() && it->second.uid() == request.pod->uid) {
      self = &it->second;
      Uncharge(self->node, self->charge);
    }
  }
  DecideInput input{.pod = request.pod,
                    .nodes = &nodes_,
                    .table = &table_,
                    .metrics = &view.columns,
                    .metric_table = &view.metric_table,
                    .unseen = &view.unseen,
                    .node_bounds = &view.node_bounds,
                    .recent_placements = &view.recent,
                    .siblings = &view.siblings,
                    .namespaces = &namespaces_,
                    .workloads = &workloads_,
                    .volumes = &volumes_,
                    .device_resources = &device_resources_,
                    .nominated = NominatedView(),
                    .budgets = &budgets_view_,
                    .preempt = request.preempt,
                    .now_ms = absl::ToUnixMillis(now),
                    .seed = request.seed,
                    .force_fallback = request.force_fallback,
                    .explain = request.explain};
  Decision decision = Decide(input, *request.config, workspace);
  if (self != nullptr) Charge(self->node, self->charge);
  node_name->clear();
  if (!decision.ok()) return decision;
  if (decision.explanation.has_value()) {
    decision.explanation->estimates = ExplainEstimates(
        request.config->metrics, *PodCharge::Of(*request.pod, kube_).pod,
        nodes_[decision.node_index].node, view.siblings);
  }

  const Pod& pod = *request.pod;
  *node_name = names_[decision.node_index];
  if (!request.assume) return decision;
  std::string key = pod.Key();
  auto known = pods_.find(key);
  if (known != pods_.end() && known->second.uid() == pod.uid &&
      !known->second.assumed) {
    // The informer has already shown this pod bound: its charge stands
    // where it is, and the binding about to be sent will be refused.
    return decision;
  }
  RemovePlaced(key);  // our earlier assumption, or a stale namesake
  PlacedPod placed{*node_name, PodCharge::Of(pod, kube_), true};
  if (!decision.volume_bindings.empty()) {
    placed.volumes =
        std::make_unique<const VolumeBindings>(decision.volume_bindings);
    volumes_.Assume(*placed.volumes);
  }
  Charge(placed.node, placed.charge);
  std::shared_ptr<const PodInfo> info = placed.charge.pod;
  pods_.emplace(key, std::move(placed));
  ++num_assumed_;
  metric_views_.Place(decision.node_index, now, Layout(), key,
                      std::move(info));
  return decision;
}

MetricVerdict ClusterState::JudgeNodes(
    const std::vector<std::string>& names, const ScoringConfig& config,
    const std::shared_ptr<const MetricsSnapshot>& metrics, const Pod* pod) {
  const int64_t now_ms = absl::ToUnixMillis(clock_.Now());
  std::vector<MetricColumn> columns;
  NodeBounds bounds;
  {
    absl::MutexLock lock(&mu_);
    const MetricViews::View& view = View(config, metrics, clock_.Now());
    // Each name's row in the views; -1 when not known here.
    std::vector<int64_t> rows(names.size(), -1);
    for (size_t i = 0; i < names.size(); ++i) {
      auto it = index_.find(names[i]);
      if (it != index_.end()) rows[i] = static_cast<int64_t>(it->second);
    }
    columns.resize(view.columns.size());
    for (size_t m = 0; m < view.columns.size(); ++m) {
      const MetricColumn& all = view.columns[m];
      MetricColumn& picked = columns[m];
      picked.values.assign(names.size(), std::nan(""));
      picked.time_ms.assign(names.size(), 0);
      if (all.values.size() != nodes_.size()) continue;  // no data
      for (size_t i = 0; i < names.size(); ++i) {
        if (rows[i] < 0) continue;
        picked.values[i] = all.values[rows[i]];
        picked.time_ms[i] = all.time_ms[rows[i]];
      }
    }
    bounds.resize(view.node_bounds.size());
    for (size_t m = 0; m < view.node_bounds.size(); ++m) {
      if (config.metrics[m].has_scoped_filter()) {
        bounds[m] = PickNodes(view.node_bounds[m], rows);
      }
    }
  }
  return JudgeByMetrics(config, columns, names.size(), now_ms, pod, &bounds);
}

std::vector<metrics::NodeAddresses> ClusterState::NodeAddressList() const {
  absl::MutexLock lock(&mu_);
  std::vector<metrics::NodeAddresses> out;
  out.reserve(nodes_.size());
  for (const NodeInfo& info : nodes_) out.push_back(NodeAddressesOf(info.node));
  return out;
}

bool ClusterState::KnownImages(std::string_view name, uint64_t digest,
                               std::vector<uint32_t>& images) const {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return false;
  const Node& node = nodes_[it->second].node;
  if (node.images_digest != digest) return false;
  images = node.images;
  return true;
}

uint64_t ClusterState::NodeAddressesVersion() const {
  absl::MutexLock lock(&mu_);
  return addresses_version_;
}

metrics::NodeAddresses NodeAddressesOf(const Node& node) {
  metrics::NodeAddresses n{
      .name = node.name,
      .allocatable_cpu = static_cast<double>(node.allocatable.milli_cpu) / 1000,
      .allocatable_memory = static_cast<double>(node.allocatable.memory)};
  for (const NodeAddress& a : node.addresses) n.addresses.push_back(a.address);
  return n;
}

namespace {

// What term `term`'s siblings measure in `view`; null when it measures none.
const SiblingUsages* SiblingsOf(const MetricViews::View& view, size_t term) {
  return term < view.siblings.size() && !view.siblings[term].empty()
             ? &view.siblings[term]
             : nullptr;
}

}  // namespace

PodEstimate ClusterState::Takes(
    const ScoringConfig& config,
    const std::shared_ptr<const MetricsSnapshot>& metrics, size_t term,
    const Pod& pod) {
  const absl::Time now = clock_.Now();
  const MetricTerm& t = config.metrics[term];
  const std::optional<double> own =
      OwnSample(metrics.get(), t, pod.Key(), absl::ToUnixMillis(now));
  absl::MutexLock lock(&mu_);
  const MetricViews::View& view = View(config, metrics, now);
  auto node = index_.find(pod.node_name);
  if (node == index_.end()) return {.value = NAN};
  return PodTakes(t, *PodCharge::Of(pod, kube_).pod, nodes_[node->second].node,
                  SiblingsOf(view, term), own);
}

double ClusterState::ValueWith(
    const ScoringConfig& config,
    const std::shared_ptr<const MetricsSnapshot>& metrics, size_t term,
    const std::string& node, const Pod& pod) {
  absl::MutexLock lock(&mu_);
  const MetricViews::View& view = View(config, metrics, clock_.Now());
  auto it = index_.find(node);
  if (it == index_.end()) return NAN;
  return view.columns[term].values[it->second] +
         EstimatePod(config.metrics[term], *PodCharge::Of(pod, kube_).pod,
                     nodes_[it->second].node, SiblingsOf(view, term))
             .value;
}

std::vector<std::string> ClusterState::NodeNames() const {
  absl::MutexLock lock(&mu_);
  return names_;
}

std::vector<NodeInfo> ClusterState::Nodes() const {
  absl::MutexLock lock(&mu_);
  return nodes_;
}

bool ClusterState::HasNode(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  return index_.contains(name);
}

size_t ClusterState::NumNodes() const {
  absl::MutexLock lock(&mu_);
  return nodes_.size();
}

size_t ClusterState::NumAssumed() const {
  absl::MutexLock lock(&mu_);
  return num_assumed_;
}

int ClusterState::RecentPlacements(const std::string& node,
                                   const ScoringConfig& config) const {
  absl::MutexLock lock(&mu_);
  return metric_views_.Recent(node, config, Layout());
}

}  // namespace ms
