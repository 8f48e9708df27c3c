#include "scheduler/cmd/explain.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "kube/manifest.h"
#include "metrics/cache.h"
#include "scheduler/cycle/cluster_state.h"
#include "scheduler/cycle/rebalance_planner.h"
#include "scheduler/cycle/scoring_profile.h"
#include "scoring/decide.h"

namespace ms {
namespace {

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool LooksLikeFile(const std::string& arg) {
  for (const char* ext : {".yaml", ".yml", ".json"}) {
    if (absl::EndsWith(arg, ext)) return true;
  }
  return false;
}

// A DNS-1123 subdomain, loosely: what a namespace or pod name may hold.
bool IsObjectName(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s) {
    if (!(absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-' ||
          c == '.')) {
      return false;
    }
  }
  return true;
}

std::string Memory(int64_t bytes) {
  constexpr int64_t kMi = int64_t{1} << 20;
  if (bytes > 0 && bytes % kMi == 0) return absl::StrCat(bytes / kMi, "Mi");
  return absl::StrCat(bytes);
}

}  // namespace

absl::StatusOr<ExplainTarget> ParseExplainTarget(const std::string& arg) {
  ExplainTarget target;
  if (arg == "-" || IsRegularFile(arg)) {
    std::string text;
    if (arg == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), {});
    } else {
      std::ifstream in(arg);
      std::stringstream buffer;
      buffer << in.rdbuf();
      if (!in) return absl::InvalidArgumentError(arg + ": cannot read");
      text = buffer.str();
    }
    absl::StatusOr<Pod> pod = kube::DecodePodManifest(text);
    if (!pod.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(arg == "-" ? "stdin" : arg, ": ", pod.status().message()));
    }
    target.manifest = *std::move(pod);
    return target;
  }
  if (LooksLikeFile(arg)) {
    return absl::InvalidArgumentError(arg + ": no such file");
  }
  std::vector<std::string> parts = absl::StrSplit(arg, '/');
  if (parts.size() == 1) parts.insert(parts.begin(), "default");
  if (parts.size() != 2 || !IsObjectName(parts[0]) || !IsObjectName(parts[1])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", arg, "\" is neither a manifest file nor NAMESPACE/NAME"));
  }
  target.pod_namespace = parts[0];
  target.pod_name = parts[1];
  return target;
}

absl::StatusOr<ClusterView> ReadCluster(kube::KubeClient& client,
                                        const Config& config) {
  ClusterView view;
  ASSIGN_OR_RETURN(std::string git_version, client.ServerVersion());
  ASSIGN_OR_RETURN(view.kube, ParseKubeVersion(git_version));
  ASSIGN_OR_RETURN(kube::ObjectList<Node> nodes, client.ListNodes(
                       {.node_annotations = NodeAnnotationKeys(config)}));
  view.nodes = std::move(nodes.items);
  ASSIGN_OR_RETURN(
      kube::ObjectList<Pod> pods,
      client.ListPods({.field_selector = "spec.nodeName!=,status.phase!="
                                         "Succeeded,status.phase!=Failed"}));
  view.assigned = std::move(pods.items);
  ASSIGN_OR_RETURN(pods, client.ListPods({.field_selector =
                                              kube::kNominatedPodsSelector}));
  view.nominated = std::move(pods.items);
  ASSIGN_OR_RETURN(kube::ObjectList<Namespace> namespaces,
                   client.ListNamespaces({}));
  view.namespaces = std::move(namespaces.items);
  for (WorkloadKind kind : kWorkloadKinds) {
    ASSIGN_OR_RETURN(kube::ObjectList<Workload> list,
                     client.ListWorkloads(kind, {}));
    for (Workload& w : list.items) view.workloads.push_back(std::move(w));
  }
  ASSIGN_OR_RETURN(kube::ObjectList<PersistentVolumeClaim> claims,
                   client.List<PersistentVolumeClaim>(kube::kClaimsPath, {}));
  view.claims = std::move(claims.items);
  ASSIGN_OR_RETURN(kube::ObjectList<PersistentVolume> volumes,
                   client.List<PersistentVolume>(kube::kVolumesPath, {}));
  view.volumes = std::move(volumes.items);
  ASSIGN_OR_RETURN(kube::ObjectList<StorageClass> classes,
                   client.List<StorageClass>(kube::kStorageClassesPath, {}));
  view.storage_classes = std::move(classes.items);
  ASSIGN_OR_RETURN(kube::ObjectList<CsiNode> csi_nodes,
                   client.List<CsiNode>(kube::kCsiNodesPath, {}));
  view.csi_nodes = std::move(csi_nodes.items);
  ASSIGN_OR_RETURN(kube::ObjectList<CsiDriver> csi_drivers,
                   client.List<CsiDriver>(kube::kCsiDriversPath, {}));
  view.csi_drivers = std::move(csi_drivers.items);
  ASSIGN_OR_RETURN(kube::ObjectList<CsiStorageCapacity> capacities,
                   client.List<CsiStorageCapacity>(kube::kCapacitiesPath, {}));
  view.capacities = std::move(capacities.items);
  // A cluster with resource.k8s.io turned off has no DeviceClasses.
  absl::StatusOr<kube::ObjectList<DeviceClass>> device_classes =
      client.List<DeviceClass>(kube::kDeviceClassesPath, {});
  if (device_classes.ok()) {
    view.device_classes = std::move(device_classes->items);
  } else if (!absl::IsNotFound(device_classes.status())) {
    return device_classes.status();
  }
  ASSIGN_OR_RETURN(kube::ObjectList<PodDisruptionBudget> budgets,
                   client.List<PodDisruptionBudget>(kube::kBudgetsPath, {}));
  view.budgets = std::move(budgets.items);
  return view;
}

std::string FormatPreemption(const Preemption& p) {
  if (!p.ok()) {
    return absl::StrCat("preemption would not help: ", p.message, "\n");
  }
  std::vector<std::string> victims;
  for (const auto& v : p.victims) {
    victims.push_back(absl::StrCat(v->namespace_, "/", v->name, " (priority ",
                                   v->priority, ")"));
  }
  std::string out = absl::StrCat(
      "preemption would help: on ", p.node_name, ", evicting ",
      victims.size(), " pod(s): ", absl::StrJoin(victims, ", "));
  if (p.budget_violations > 0) {
    absl::StrAppend(&out, "; ", p.budget_violations,
                    " of them beyond their PodDisruptionBudget");
  }
  return out + "\n";
}

namespace {

// The cluster as the scheduler would see it, without the pod itself.
void LoadState(const ClusterView& cluster, const Pod& pod,
               ClusterState& state) {
  for (const Node& node : cluster.nodes) state.UpsertNode(node);
  for (const Namespace& ns : cluster.namespaces) state.UpsertNamespace(ns);
  for (const Workload& w : cluster.workloads) state.UpsertWorkload(w);
  for (const PersistentVolumeClaim& c : cluster.claims) state.UpsertClaim(c);
  for (const PersistentVolume& v : cluster.volumes) state.UpsertVolume(v);
  for (const StorageClass& c : cluster.storage_classes) {
    state.UpsertStorageClass(c);
  }
  for (const CsiNode& n : cluster.csi_nodes) state.UpsertCsiNode(n);
  for (const CsiDriver& d : cluster.csi_drivers) state.UpsertCsiDriver(d);
  for (const CsiStorageCapacity& c : cluster.capacities) {
    state.UpsertCapacity(c);
  }
  for (const DeviceClass& c : cluster.device_classes) {
    state.UpsertDeviceClass(c);
  }
  for (const Pod& p : cluster.assigned) {
    if (p.Key() != pod.Key()) state.UpsertAssignedPod(p);
  }
  for (const Pod& p : cluster.nominated) {
    if (p.Key() != pod.Key()) state.UpsertNominatedPod(p);
  }
  for (const PodDisruptionBudget& b : cluster.budgets) state.UpsertBudget(b);
}

// The heading: the pod, its requests, the profile that places it, and
// what is explained of a pod that is not plainly pending.
std::string Heading(const Config& config, const ProfileConfig& profile,
                    bool own_profile, const Pod& pod, KubeVersion kube,
                    size_t num_nodes) {
  Resources requests = PodRequests(pod, kube);
  std::string out = absl::StrFormat(
      "pod %s (requests cpu %dm, memory %s), %d node(s)\n", pod.Key(),
      requests.milli_cpu, Memory(requests.memory), num_nodes);
  if (config.profiles.size() > 1) {
    absl::StrAppend(&out, "profile ", profile.scheduler_name);
    if (!own_profile) {
      absl::StrAppend(
          &out, " (the pod's schedulerName ",
          pod.scheduler_name.empty() ? "default-scheduler" : pod.scheduler_name,
          " is not one of this configuration's)");
    }
    absl::StrAppend(&out, "\n");
  }
  if (!pod.node_name.empty()) {
    absl::StrAppend(&out, "already bound to ", pod.node_name,
                    "; explained as if it were pending\n");
  } else if (pod.scheduling_gated) {
    absl::StrAppend(&out,
                    "scheduling gated: not attempted until its "
                    "spec.schedulingGates are removed; explained as if they "
                    "were\n");
  }
  return out;
}

// The profile's query metrics, fetched once into `snapshot` (null when
// there are none), with a line on what was fetched appended to `out`.
// Unavailable when none could be.
absl::Status FetchMetrics(const Config& config, const ProfileConfig& profile,
                          const ClusterState& state,
                          metrics::MetricsSource* source,
                          std::shared_ptr<const MetricsSnapshot>* snapshot,
                          std::string* out) {
  std::vector<MetricConfig> queried;
  for (const MetricConfig& m : profile.metrics) {
    if (m.origin.is_query()) queried.push_back(m);
  }
  if (profile.metrics.empty()) {
    absl::StrAppend(out, "no metrics configured: fallback scoring\n");
    return absl::OkStatus();
  }
  if (queried.empty()) return absl::OkStatus();
  if (source == nullptr) {
    return absl::FailedPreconditionError("metrics configured but no source");
  }
  metrics::MetricsCache cache(
      source, queried,
      metrics::CacheOptions{.refresh_timeout = config.cache.refresh_timeout});
  cache.SetNodes(state.NodeAddressList());
  cache.RefreshAll();
  *snapshot = cache.Snapshot();
  std::vector<std::string> failures;
  std::vector<std::string> coverage;
  for (const metrics::MetricStats& s : cache.Stats()) {
    if (!s.last_status.ok()) {
      failures.push_back(absl::StrCat(s.name, ": ", s.last_status.ToString()));
    }
    coverage.push_back(
        absl::StrCat(s.name, " ", s.nodes_with_data, "/", s.nodes_known));
  }
  const std::string backend = config.backend.type == BackendType::kMetricsServer
                                  ? std::string("the resource metrics API")
                                  : config.backend.url;
  if (failures.size() == queried.size()) {
    return absl::UnavailableError(absl::StrCat(
        "metrics backend ", backend,
        ": no metric could be fetched: ", absl::StrJoin(failures, "; ")));
  }
  absl::StrAppend(out, "metrics from ", backend,
                  ", nodes with data: ", absl::StrJoin(coverage, ", "), "\n");
  for (const std::string& f : failures) {
    absl::StrAppend(out, "not fetched: ", f, "\n");
  }
  return absl::OkStatus();
}

// What else the score reads: node attributes, and the recent placements
// explain cannot know.
std::string OtherInputs(const ProfileConfig& profile,
                        const ScoringConfig& scoring) {
  std::string out;
  std::vector<std::string> attributes;
  for (const MetricConfig& m : profile.metrics) {
    if (m.origin.is_query()) continue;
    attributes.push_back(absl::StrCat(
        m.name, " (",
        m.origin.kind == MetricOrigin::Kind::kNodeLabel ? "label "
                                                        : "annotation ",
        m.origin.key, ")"));
  }
  if (!attributes.empty()) {
    absl::StrAppend(&out, "from the nodes: ", absl::StrJoin(attributes, ", "),
                    "\n");
  }
  if (scoring.builtins[BuiltinTerm::kRecentPlacements] > 0) {
    absl::StrAppend(&out,
                    "recentPlacements: the running scheduler's recent "
                    "placements are not known here; counted as none\n");
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ExplainPlacement(const Config& config,
                                             const ClusterView& cluster,
                                             const Pod& pod,
                                             metrics::MetricsSource* source,
                                             uint64_t seed) {
  // The pod's own profile; a pod of another scheduler is explained as the
  // first profile would place it.
  const ProfileConfig* found = FindProfile(config, pod.scheduler_name);
  const ProfileConfig& profile = found ? *found : config.profiles.front();
  ClusterState state(RealClock::Get(), cluster.kube, profile.herd.window,
                     EstimateWindow(profile));
  LoadState(cluster, pod, state);

  std::string out = Heading(config, profile, found != nullptr, pod,
                            cluster.kube, cluster.nodes.size());
  std::shared_ptr<const MetricsSnapshot> snapshot;
  RETURN_IF_ERROR(
      FetchMetrics(config, profile, state, source, &snapshot, &out));
  ScoringConfig scoring = MakeScoringConfig(config, profile);
  scoring.kube = cluster.kube;
  absl::StrAppend(&out, OtherInputs(profile, scoring), "\n");

  Workspace workspace;
  std::string node;
  Decision decision = state.DecideAndAssume({.pod = &pod,
                                             .config = &scoring,
                                             .metrics = snapshot,
                                             .explain = true,
                                             .preempt = true,
                                             .seed = seed},
                                            workspace, &node);
  if (!decision.explanation.has_value()) {
    // A pod rejected before scoring (a constraint not implemented).
    absl::StrAppend(&out, "no node: ", decision.filter_summary, "\n");
    return out;
  }
  absl::StrAppend(&out, FormatExplanation(*decision.explanation));
  if (decision.preemption.has_value()) {
    absl::StrAppend(&out, FormatPreemption(*decision.preemption));
  }
  return out;
}

absl::StatusOr<std::string> ExplainRebalancePlan(const Config& config,
                                                 const ClusterView& cluster,
                                                 metrics::MetricsSource* source,
                                                 uint64_t seed) {
  const RebalanceConfig& rebalance = config.rebalance;
  if (rebalance.hot.empty()) {
    return absl::FailedPreconditionError(
        "rebalance.hot is empty: nothing says when a node is hot");
  }
  ClusterState state(RealClock::Get(), cluster.kube, absl::Seconds(30));
  LoadState(cluster, Pod(), state);
  // Every profile's policy (pods move by their own), and the metrics of
  // all of them, fetched once.
  std::vector<ScoringConfig> scorings;
  scorings.reserve(config.profiles.size());
  std::vector<RebalanceProfile> profiles;
  for (const ProfileConfig& p : config.profiles) {
    scorings.push_back(MakeScoringConfig(config, p));
    scorings.back().kube = cluster.kube;
    profiles.push_back({p.scheduler_name, &scorings.back()});
  }
  ProfileConfig all;
  all.metrics = QueryMetrics(config);
  std::string out;
  std::shared_ptr<const MetricsSnapshot> snapshot;
  RETURN_IF_ERROR(FetchMetrics(config, all, state, source, &snapshot, &out));

  const RebalancePlanner planner(rebalance, std::move(profiles));
  std::vector<HotBound> one_sample = rebalance.hot;
  for (HotBound& b : one_sample) b.samples = 1;
  HotTracker tracker(one_sample);
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  planner.Observe(tracker, state, snapshot.get(), now_ms);
  const std::vector<HotNode> hot = tracker.Hot();
  MoveLimits limits(rebalance.limits);
  limits.StartInterval(now_ms);
  Workspace workspace;
  const std::vector<NodeRebalance> plans = planner.Plan(
      hot,
      [&](const std::string& node) {
        std::vector<Pod> pods;
        const std::vector<std::string>& names = planner.names();
        for (const Pod& p : cluster.assigned) {
          if (p.node_name == node &&
              std::find(names.begin(), names.end(), p.scheduler_name) !=
                  names.end()) {
            pods.push_back(p);
          }
        }
        return pods;
      },
      state, snapshot, limits, now_ms, seed, workspace);

  static constexpr const char* kModes[] = {"off", "dryRun", "evict"};
  absl::StrAppend(
      &out, "rebalance: mode ", kModes[static_cast<int>(rebalance.mode)],
      ", every ", absl::FormatDuration(rebalance.interval),
      "; one sample now (the scheduler waits for each metric's `samples` "
      "in a row)\n");
  for (size_t b = 0; b < rebalance.hot.size(); ++b) {
    const HotBound& bound = rebalance.hot[b];
    absl::StrAppend(
        &out, "\n", bound.metric, ": hot above ",
        bound.high ? absl::StrCat(*bound.high) : "",
        bound.high && bound.above_mean ? " or " : "",
        bound.above_mean ? absl::StrCat("the mean + ", *bound.above_mean) : "",
        " for ", bound.samples, " samples, brought to ", bound.low, "\n");
    // A node hot on this metric and planned under another (hotter there)
    // is hot here too.
    const int others = static_cast<int>(state.NumNodes()) -
                       static_cast<int>(std::count_if(
                           hot.begin(), hot.end(),
                           [&](const HotNode& h) { return h.bound == b; }));
    for (const NodeRebalance& r : plans) {
      if (r.hot.bound != b) continue;
      absl::StrAppend(&out, "  ", r.hot.node, " ",
                      absl::StrFormat("%.4g", r.hot.value), " above ",
                      absl::StrFormat("%.4g", r.hot.threshold), ":\n");
      for (const PlannedMove& m : r.plan.moves) {
        absl::StrAppend(&out, "    would move ", r.pods[m.pod].Key(), " to ",
                        m.to,
                        absl::StrFormat(" (%s %.4g with it): it takes %.4g, ",
                                        bound.metric, m.to_value, m.takes),
                        r.takes_why[m.pod], "\n");
      }
      for (const LeftPod& l : r.plan.left) {
        absl::StrAppend(&out, "    leaves ", r.pods[l.pod].Key(), ": ",
                        LeftBecauseName(l.why),
                        l.node.empty() ? "" : " (" + l.node + ")", "\n");
      }
      for (const auto& [i, why] : r.unmovable) {
        absl::StrAppend(&out, "    leaves ", r.pods[i].Key(), ": ",
                        UnmovableName(why), "\n");
      }
      for (size_t i : r.unknown_load) {
        absl::StrAppend(&out, "    leaves ", r.pods[i].Key(),
                        ": unknown-load\n");
      }
      absl::StrAppend(&out, "    ", r.hot.node, " would be at ",
                      absl::StrFormat("%.4g", r.plan.value_after), "\n");
    }
    // A node is planned once, under the metric it is most above.
    for (const HotNode& h : hot) {
      if (h.bound != b) continue;
      for (const NodeRebalance& r : plans) {
        if (r.hot.node == h.node && r.hot.bound != b) {
          absl::StrAppend(
              &out, "  ", h.node, " ", absl::StrFormat("%.4g", h.value),
              " above ", absl::StrFormat("%.4g", h.threshold),
              ": planned under ", rebalance.hot[r.hot.bound].metric, "\n");
        }
      }
    }
    absl::StrAppend(&out, "  ", others, " other node(s) not hot\n");
  }
  return out;
}

absl::StatusOr<std::string> Explain(const Config& config,
                                    kube::KubeClient& client,
                                    metrics::MetricsSource* source,
                                    const ExplainTarget& target,
                                    uint64_t seed) {
  Pod pod;
  if (target.manifest.has_value()) {
    pod = *target.manifest;
  } else {
    ASSIGN_OR_RETURN(pod, client.GetPod(target.pod_namespace, target.pod_name));
  }
  ASSIGN_OR_RETURN(ClusterView cluster, ReadCluster(client, config));
  return ExplainPlacement(config, cluster, pod, source, seed);
}

absl::StatusOr<std::string> ExplainRebalance(const Config& config,
                                             kube::KubeClient& client,
                                             metrics::MetricsSource* source,
                                             uint64_t seed) {
  ASSIGN_OR_RETURN(ClusterView cluster, ReadCluster(client, config));
  return ExplainRebalancePlan(config, cluster, source, seed);
}

}  // namespace ms
