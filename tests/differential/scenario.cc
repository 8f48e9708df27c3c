#include "tests/differential/scenario.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ms::differential {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;
using Labels = std::map<std::string, std::string>;

constexpr char kHost[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kRack[] = "rack";  // on some nodes only
// Storage (only in scenarios with storage).
constexpr char kBetaZone[] = "failure-domain.beta.kubernetes.io/zone";
constexpr char kRegion[] = "topology.kubernetes.io/region";
constexpr char kBetaRegion[] = "failure-domain.beta.kubernetes.io/region";
constexpr char kDriver[] = "csi.example.com";   // a CSI driver
constexpr char kDriver2[] = "block.csi.example.com";  // another, on some PVs
constexpr char kNfs[] = "example.com/nfs";      // a provisioner, not CSI
constexpr char kNoProvisioner[] = "kubernetes.io/no-provisioner";

std::string Q(const std::string& s) { return absl::StrCat("\"", s, "\""); }

// A JSON object from fields whose values are JSON already.
std::string Obj(const Fields& fields) {
  return absl::StrCat(
      "{",
      absl::StrJoin(fields, ",",
                    [](std::string* out, const auto& f) {
                      absl::StrAppend(out, Q(f.first), ":", f.second);
                    }),
      "}");
}

std::string Arr(const std::vector<std::string>& items) {
  return absl::StrCat("[", absl::StrJoin(items, ","), "]");
}

// Inserts `fields` (JSON members, no trailing comma) first into the object
// of the first (with `last`, the last) member named `key` of `json`.
void InsertFields(std::string& json, std::string_view key,
                  const std::string& fields, bool last = false) {
  const std::string opener = absl::StrCat("\"", std::string(key), "\":{");
  const size_t at = last ? json.rfind(opener) : json.find(opener);
  const size_t pos = at + opener.size();
  json.insert(pos, json[pos] == '}' ? fields : fields + ",");
}

std::string LabelsJson(const Labels& labels) {
  Fields f;
  for (const auto& [k, v] : labels) f.push_back({k, Q(v)});
  return Obj(f);
}

class Random {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  int Int(int lo, int hi) {  // inclusive
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int>(v.size()) - 1))];
  }
  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) {
      std::swap(v[i - 1], v[static_cast<size_t>(Int(0, static_cast<int>(i) - 1))]);
    }
  }

 private:
  std::mt19937_64 rng_;
};

const std::vector<std::string> kApps = {"web", "db", "cache"};
const std::vector<std::string> kNamespaces = {"default", "team-a", "team-b"};
// What containers run: "redis" has no tag (":latest" is implied), "busybox"
// is on no node.
const std::vector<std::string> kImages = {"registry.k8s.io/pause:3.10",
                                          "nginx:1.27", "redis", "busybox"};
const std::vector<std::string> kZones = {"z1", "z2", "z3"};

// Mixed into the scenario's seed for the nominated pods' own stream.
constexpr uint64_t kNominatedSalt = 0x6e6f6d696e617465ULL;  // "nominate"
// And for preemption's.
constexpr uint64_t kPreemptionSalt = 0x707265656d707421ULL;  // "preempt!"
// And for what newer releases read (Kubernetes 1.36 and 1.37).
constexpr uint64_t kNewerSalt = 0x6e65776572313336ULL;  // "newer136"
// And for the CSIDrivers.
constexpr uint64_t kCsiDriverSalt = 0x6373696472697672ULL;  // "csidrivr"
// And for CSI storage capacity.
constexpr uint64_t kCapacitySalt = 0x6361706163697479ULL;  // "capacity"
// And for namespace selectors that select namespaces without labels.
constexpr uint64_t kNamespaceSalt = 0x6e616d6573706163ULL;  // "namespac"

// kube-scheduler sorts a node's possible victims with sort.Slice, an
// insertion sort (stable, as ours) up to this many; no node gets more
// pods than this from the preemption part.
constexpr int kMaxPodsPerNode = 12;

// The seed of the storage's own stream (splitmix64 of the scenario's).
uint64_t StorageSeed(uint64_t seed) {
  uint64_t x = seed + 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A PersistentVolumeClaim to write.
struct ClaimSpec {
  std::string ns, name, uid;
  std::optional<std::string> cls;  // spec.storageClassName; none: unset
  bool class_annotation = false;   // the beta annotation instead
  std::vector<std::string> modes = {"ReadWriteOnce"};
  int request_mi = 0;
  bool block = false;
  std::string vac;       // volumeAttributesClassName
  std::string selector;  // JSON, or ""
  std::string volume_name;
  bool bind_completed = false;
  std::string selected_node;
  std::string phase = "Pending";
  bool deleting = false;
  std::string owner;  // ownerReferences JSON, or ""
};

// A PersistentVolume to write.
struct VolumeSpec {
  std::string name;
  std::string cls;
  bool class_annotation = false;
  int capacity_gi = 0;
  std::vector<std::string> modes = {"ReadWriteOnce"};
  bool block = false;
  std::string vac;
  std::string claim_ref;  // JSON, or ""
  std::string phase = "Available";
  bool deleting = false;
};

// A node's allocatable cpu and memory.
struct Allocatable {
  int cpu_milli, memory_mi;
};

class Generator {
 public:
  explicit Generator(uint64_t seed)
      : r_(seed),
        v_(StorageSeed(seed)),
        d_(StorageSeed(~seed)),
        n_(StorageSeed(seed ^ kNominatedSalt)),
        p_(StorageSeed(seed ^ kPreemptionSalt)),
        f_(StorageSeed(seed ^ kNewerSalt)),
        c_(StorageSeed(seed ^ kCsiDriverSalt)),
        k_(StorageSeed(seed ^ kCapacitySalt)),
        a_(StorageSeed(seed ^ kNamespaceSalt)) {}

  Scenario Make(uint64_t seed) {
    Scenario s;
    s_ = &s;
    s.seed = seed;
    // Storage draws from v_ only: the rest of the scenario is the same
    // with it or without it.
    storage_ = v_.Chance(0.35);
    s.name = absl::StrCat("seed-", seed);
    for (const std::string& ns : kNamespaces) {
      Labels labels;
      if (ns != "default") labels["team"] = ns.substr(5);  // a, b
      s.namespaces.push_back(
          Obj({{"metadata", Obj({{"name", Q(ns)},
                                 {"labels", LabelsJson(labels)}})}}));
    }
    const int num_nodes = r_.Int(2, 9);
    num_nodes_ = num_nodes;
    for (int i = 0; i < num_nodes; ++i) s.nodes.push_back(Node(i));
    // Workloads the default spread reads.
    for (const std::string& app : kApps) {
      if (r_.Chance(0.4)) {
        s.services.push_back(Obj(
            {{"metadata",
              Obj({{"name", Q("svc-" + app)}, {"namespace", Q("default")}})},
             {"spec", Obj({{"selector", LabelsJson({{"app", app}})}})}}));
      }
      if (r_.Chance(0.1)) {
        s.stateful_sets.push_back(Obj(
            {{"metadata",
              Obj({{"name", Q("sts-" + app)}, {"namespace", Q("default")}})},
             {"spec", Obj({{"selector",
                            Obj({{"matchLabels",
                                  LabelsJson({{"app", app}})}})}})}}));
      }
      if (r_.Chance(0.1)) {
        s.replication_controllers.push_back(Obj(
            {{"metadata",
              Obj({{"name", Q("rc-" + app)}, {"namespace", Q("default")}})},
             {"spec", Obj({{"selector", LabelsJson({{"app", app}})}})}}));
      }
      if (r_.Chance(0.5)) {
        s.replica_sets.push_back(Obj(
            {{"metadata",
              Obj({{"name", Q("rs-" + app)}, {"namespace", Q("default")}})},
             {"spec", Obj({{"selector",
                            Obj({{"matchLabels",
                                  LabelsJson({{"app", app}})}})}})}}));
      }
    }
    if (storage_) Storage();
    const int num_placed = r_.Int(0, 3 * num_nodes);
    for (int i = 0; i < num_placed; ++i) {
      const int node = r_.Int(0, num_nodes - 1);
      s.placed.push_back(Pod(absl::StrCat("p", i), absl::StrCat("n", node),
                             /*incoming=*/false));
      placed_.push_back({.node = node, .ns = pod_ns_, .labels = pod_labels_});
    }
    s.pod = Pod("incoming", "", /*incoming=*/true);
    Nominated();
    Preemption();
    s_ = nullptr;
    return s;
  }

 private:
  std::string Quantity(int milli) { return absl::StrCat(milli, "m"); }

  std::string Node(int i) {
    const std::string name = absl::StrCat("n", i);
    Labels labels = {{kHost, name}};
    if (r_.Chance(0.9)) labels[kZone] = absl::StrCat("z", r_.Int(1, 3));
    if (r_.Chance(0.5)) labels[kRack] = absl::StrCat("r", r_.Int(1, 2));
    if (r_.Chance(0.3)) labels["disk"] = "ssd";
    if (r_.Chance(0.6)) labels["lifecycle"] = r_.Chance(0.5) ? "spot" : "on-demand";
    if (storage_) {  // what VolumeZone reads besides the zone
      if (v_.Chance(0.15)) {
        auto zone = labels.find(kZone);
        labels[kBetaZone] = zone != labels.end() && v_.Chance(0.8)
                                ? zone->second
                                : v_.Pick(kZones);
      }
      if (v_.Chance(0.2)) labels[kRegion] = v_.Chance(0.7) ? "r1" : "r2";
      if (v_.Chance(0.05)) labels[kBetaRegion] = "r1";
    }
    Fields spec;
    std::vector<std::string> taints;
    if (r_.Chance(0.25)) {
      taints.push_back(Obj({{"key", Q("spot")}, {"value", Q("true")},
                            {"effect", Q("PreferNoSchedule")}}));
    }
    if (r_.Chance(0.1)) {
      taints.push_back(Obj({{"key", Q("autoscaler/scale-down")},
                            {"effect", Q("PreferNoSchedule")}}));
    }
    // Readiness as the node lifecycle controller shows it: a condition and
    // its NoSchedule taint; rarely a condition alone (a taint not yet
    // added), which kube-scheduler does not filter on.
    std::string ready = "True";
    const int readiness = r_.Int(0, 99);
    if (readiness < 8) {
      ready = "False";
      taints.push_back(Obj({{"key", Q("node.kubernetes.io/not-ready")},
                            {"effect", Q("NoSchedule")}}));
    } else if (readiness < 12) {
      ready = "Unknown";
      taints.push_back(Obj({{"key", Q("node.kubernetes.io/unreachable")},
                            {"effect", Q("NoSchedule")}}));
    } else if (readiness < 14) {
      ready = "False";
    }
    if (r_.Chance(0.15)) {
      taints.push_back(Obj({{"key", Q("dedicated")}, {"value", Q("gpu")},
                            {"effect", Q("NoSchedule")}}));
    }
    if (r_.Chance(0.05)) {
      taints.push_back(Obj({{"key", Q("maintenance")},
                            {"effect", Q("NoExecute")}}));
    }
    if (!taints.empty()) spec.push_back({"taints", Arr(taints)});
    if (r_.Chance(0.05)) spec.push_back({"unschedulable", "true"});
    const int cpu_cores = r_.Pick<int>({2, 4, 8});
    const int memory_gi = r_.Pick<int>({4, 8, 16});
    allocatable_.push_back({cpu_cores * 1000, memory_gi * 1024});
    const std::string cpu = absl::StrCat(cpu_cores);
    const std::string memory = absl::StrCat(memory_gi, "Gi");
    const std::string pods = r_.Chance(0.1) ? "4" : "110";
    const std::string resources = Obj(
        {{"cpu", Q(cpu)}, {"memory", Q(memory)}, {"pods", Q(pods)}});
    // Images, each by all its names, with one size per image everywhere.
    std::vector<std::string> images;
    if (r_.Chance(0.5)) {
      images.push_back(Obj({{"names", Arr({Q("registry.k8s.io/pause:3.10"),
                                           Q("registry.k8s.io/pause@sha256:ee6521f2")})},
                            {"sizeBytes", "104857600"}}));
    }
    if (r_.Chance(0.4)) {
      images.push_back(Obj({{"names", Arr({Q("docker.io/library/nginx:1.27"),
                                           Q("nginx:1.27")})},
                            {"sizeBytes", "524288000"}}));
    }
    if (r_.Chance(0.3)) {
      images.push_back(Obj({{"names", Arr({Q("redis:latest")})},
                            {"sizeBytes", "943718400"}}));
    }
    Fields status = {
        {"capacity", resources},
        {"allocatable", resources},
        {"images", Arr(images)},
        {"conditions",
         Arr({Obj({{"type", Q("Ready")}, {"status", Q(ready)}})})}};
    // What the node's kubelet declares (NodeDeclaredFeatures, 1.36 on),
    // one name no pod's spec implies among them.
    if (f_.Chance(0.8)) {
      std::vector<std::string> declared;
      for (const char* feature :
           {"RestartAllContainersOnContainerExits",
            "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions",
            "GuaranteedQoSPodCPUResize"}) {
        if (f_.Chance(0.7)) declared.push_back(Q(feature));
      }
      status.push_back({"declaredFeatures", Arr(declared)});
    }
    return Obj(
        {{"metadata", Obj({{"name", Q(name)}, {"labels", LabelsJson(labels)}})},
         {"spec", Obj(spec)},
         {"status", Obj(status)}});
  }

  std::string TopologyKey() {
    const int k = r_.Int(0, 9);
    return k < 5 ? kHost : k < 9 ? kZone : kRack;
  }

  std::string Selector() {
    const int k = r_.Int(0, 9);
    if (k < 6) return Obj({{"matchLabels", LabelsJson({{"app", r_.Pick(kApps)}})}});
    if (k < 8) {
      return Obj({{"matchExpressions",
                   Arr({Obj({{"key", Q("app")},
                             {"operator", Q(k == 6 ? "In" : "NotIn")},
                             {"values", Arr({Q(r_.Pick(kApps)),
                                             Q(r_.Pick(kApps))})}})})}});
    }
    if (k == 8) {
      return Obj({{"matchExpressions",
                   Arr({Obj({{"key", Q("tier")}, {"operator", Q("Exists")}})})}});
    }
    return "{}";  // everything
  }

  // A pod affinity term: namespaces unset (the pod's own), listed, or
  // chosen by a namespaceSelector.
  //
  // matchLabelKeys and mismatchLabelKeys come as the apiserver serves them:
  // the listed keys' values of the pod's own labels already merged into
  // the selector ("key In (v)", "key NotIn (v)"), which is all
  // kube-scheduler reads.
  std::string Term(const Labels& own) {
    std::string selector = Selector();
    Fields f;
    const int keys = r_.Int(0, 19);
    if (keys < 2 && selector != "{}") {
      const bool match = keys == 0;
      f.push_back({match ? "matchLabelKeys" : "mismatchLabelKeys",
                   Arr({Q("rev")})});
      if (auto rev = own.find("rev"); rev != own.end()) {
        // Selector() gives matchLabels or matchExpressions, never both.
        const std::string expression =
            Obj({{"key", Q("rev")}, {"operator", Q(match ? "In" : "NotIn")},
                 {"values", Arr({Q(rev->second)})}});
        if (selector.find("matchExpressions") != std::string::npos) {
          selector.insert(selector.size() - 2, "," + expression);
        } else {
          selector.insert(selector.size() - 1,
                          absl::StrCat(",", Q("matchExpressions"), ":",
                                       Arr({expression})));
        }
      }
    }
    f.insert(f.begin(), {{"labelSelector", selector},
                         {"topologyKey", Q(TopologyKey())}});
    const int k = r_.Int(0, 19);
    if (k < 2) {
      f.push_back({"namespaces", Arr({Q(r_.Pick(kNamespaces))})});
    } else if (k < 4) {
      // Now and then one that selects the namespace without labels too
      // (kube-scheduler before 1.37 reads the incoming pod's as selecting
      // every namespace).
      const int unlabelled = a_.Int(0, 9);
      std::string requirement =
          unlabelled < 2
              ? Obj({{"key", Q("team")},
                     {"operator", Q("NotIn")},
                     {"values", Arr({Q("a")})}})
              : Obj({{"key", Q("team")}, {"operator", Q("DoesNotExist")}});
      f.push_back({"namespaceSelector",
                   unlabelled < 3
                       ? Obj({{"matchExpressions", Arr({requirement})}})
                       : Obj({{"matchLabels", LabelsJson({{"team", "a"}})}})});
    } else if (k == 4) {
      f.push_back({"namespaceSelector", "{}"});
    }
    return Obj(f);
  }

  std::string Weighted(const Labels& own) {
    return Obj({{"weight", absl::StrCat(r_.Int(1, 100))},
                {"podAffinityTerm", Term(own)}});
  }

  // podAffinity or podAntiAffinity with each kind of term by chance.
  std::string Rules(const Labels& own, double required, double preferred) {
    Fields f;
    if (r_.Chance(required)) {
      std::vector<std::string> terms = {Term(own)};
      if (r_.Chance(0.2)) terms.push_back(Term(own));
      f.push_back({"requiredDuringSchedulingIgnoredDuringExecution", Arr(terms)});
    }
    if (r_.Chance(preferred)) {
      std::vector<std::string> terms = {Weighted(own)};
      if (r_.Chance(0.3)) terms.push_back(Weighted(own));
      f.push_back({"preferredDuringSchedulingIgnoredDuringExecution", Arr(terms)});
    }
    return f.empty() ? "" : Obj(f);
  }

  std::string Spread(const std::string& app) {
    const bool hard = r_.Chance(0.5);
    Fields f = {{"maxSkew", absl::StrCat(r_.Int(1, 3))},
                {"topologyKey", Q(TopologyKey())},
                {"whenUnsatisfiable", Q(hard ? "DoNotSchedule" : "ScheduleAnyway")}};
    if (r_.Chance(0.85)) {
      f.push_back({"labelSelector",
                   r_.Chance(0.8)
                       ? Obj({{"matchLabels", LabelsJson({{"app", app}})}})
                       : Selector()});
    }
    if (hard && r_.Chance(0.2)) f.push_back({"minDomains", absl::StrCat(r_.Int(2, 4))});
    if (r_.Chance(0.15)) {
      f.push_back({"nodeAffinityPolicy", Q(r_.Chance(0.5) ? "Ignore" : "Honor")});
    }
    if (r_.Chance(0.15)) {
      f.push_back({"nodeTaintsPolicy", Q(r_.Chance(0.5) ? "Ignore" : "Honor")});
    }
    if (r_.Chance(0.15)) f.push_back({"matchLabelKeys", Arr({Q("rev")})});
    return Obj(f);
  }

  std::string Pod(const std::string& name, const std::string& node,
                  bool incoming) {
    const std::string ns = r_.Chance(0.7) ? "default" : r_.Pick(kNamespaces);
    const std::string app = r_.Pick(kApps);
    Labels labels = {{"app", app}};
    if (r_.Chance(0.5)) labels["tier"] = r_.Chance(0.5) ? "fe" : "be";
    if (r_.Chance(0.5)) labels["rev"] = absl::StrCat(r_.Int(1, 2));
    if (incoming) {  // what nominated pods may match
      incoming_ns_ = ns;
      incoming_labels_ = labels;
    }
    pod_ns_ = ns;  // what budgets may select
    pod_labels_ = labels;
    Fields metadata = {{"name", Q(name)}, {"namespace", Q(ns)},
                       {"uid", Q("uid-" + name)},
                       {"labels", LabelsJson(labels)}};
    if (ns == "default" && r_.Chance(0.5)) {
      const int k = r_.Int(0, 9);
      const auto [api_version, kind, prefix] =
          k < 7   ? std::tuple{"apps/v1", "ReplicaSet", "rs-"}
          : k < 9 ? std::tuple{"apps/v1", "StatefulSet", "sts-"}
                  : std::tuple{"v1", "ReplicationController", "rc-"};
      metadata.push_back(
          {"ownerReferences",
           Arr({Obj({{"apiVersion", Q(api_version)}, {"kind", Q(kind)},
                     {"name", Q(prefix + app)},
                     {"uid", Q(absl::StrCat(prefix, "uid-", app))},
                     {"controller", "true"}})})});
    }
    if (!incoming && r_.Chance(0.05)) {
      metadata.push_back({"deletionTimestamp", Q("2026-01-01T00:00:00Z")});
    }
    Fields spec;
    if (!node.empty()) spec.push_back({"nodeName", Q(node)});
    if (incoming) spec.push_back({"schedulerName", Q("metrics-scheduler")});
    std::vector<std::string> containers = {Container("c", 8080)};
    if (r_.Chance(0.2)) containers.push_back(Container("c2", 8081));
    spec.push_back({"containers", Arr(containers)});
    std::vector<std::string> init;
    if (r_.Chance(0.15)) init.push_back(Container("init", 9090));
    if (r_.Chance(0.1)) {  // a sidecar
      std::string sidecar = Container("sidecar", 9091);
      sidecar.insert(sidecar.size() - 1, R"(,"restartPolicy":"Always")");
      init.push_back(sidecar);
    }
    if (!init.empty()) spec.push_back({"initContainers", Arr(init)});
    if (r_.Chance(0.1)) {  // pod-level requests, at least the containers'
      Fields level;
      if (r_.Chance(0.7)) level.push_back({"cpu", Q(Quantity(r_.Int(10, 25) * 100))});
      if (level.empty() || r_.Chance(0.5)) {
        level.push_back({"memory", Q(absl::StrCat(r_.Int(8, 24) * 128, "Mi"))});
      }
      spec.push_back({"resources", Obj({{"requests", Obj(level)}})});
    }
    Fields affinity;
    const double scale = incoming ? 1.0 : 0.5;
    if (std::string a = Rules(labels, 0.15 * scale, 0.25 * scale); !a.empty()) {
      affinity.push_back({"podAffinity", a});
    }
    if (std::string a = Rules(labels, 0.25 * scale, 0.25 * scale); !a.empty()) {
      affinity.push_back({"podAntiAffinity", a});
    }
    if (incoming) {
      if (r_.Chance(0.1)) {
        spec.push_back({"nodeSelector", LabelsJson({{"disk", "ssd"}})});
      }
      Fields node_affinity;
      if (r_.Chance(0.1)) {
        node_affinity.push_back(
            {"requiredDuringSchedulingIgnoredDuringExecution",
             Obj({{"nodeSelectorTerms",
                   Arr({Obj({{"matchExpressions",
                              Arr({Obj({{"key", Q(kZone)},
                                        {"operator", Q("In")},
                                        {"values", Arr({Q("z1"), Q("z2")})}})})}})})}})});
      }
      if (r_.Chance(0.4)) {
        node_affinity.push_back(
            {"preferredDuringSchedulingIgnoredDuringExecution",
             PreferredNodeAffinity()});
      }
      if (!node_affinity.empty()) {
        affinity.push_back({"nodeAffinity", Obj(node_affinity)});
      }
      std::vector<std::string> tolerations;
      if (r_.Chance(0.25)) {
        tolerations.push_back(
            Obj({{"key", Q("dedicated")}, {"operator", Q("Exists")}}));
      }
      if (r_.Chance(0.2)) {
        tolerations.push_back(Obj({{"key", Q("spot")}, {"operator", Q("Equal")},
                                   {"value", Q("true")},
                                   {"effect", Q("PreferNoSchedule")}}));
      }
      if (r_.Chance(0.1)) {  // as a CNI DaemonSet's pods do
        tolerations.push_back(
            Obj({{"key", Q("node.kubernetes.io/not-ready")},
                 {"operator", Q("Exists")}, {"effect", Q("NoSchedule")}}));
      }
      if (!tolerations.empty()) spec.push_back({"tolerations", Arr(tolerations)});
      std::vector<std::string> spread;
      for (int i = r_.Chance(0.6) ? r_.Int(1, 2) : 0; i > 0; --i) {
        spread.push_back(Spread(app));
      }
      if (!spread.empty()) spec.push_back({"topologySpreadConstraints", Arr(spread)});
    }
    if (!affinity.empty()) spec.push_back({"affinity", Obj(affinity)});
    if (storage_) {
      std::vector<std::string> volumes =
          incoming ? IncomingVolumes(name, ns) : PlacedVolumes(name, ns, node);
      InlineDisks(volumes);
      if (!volumes.empty()) spec.push_back({"volumes", Arr(volumes)});
    }
    if (incoming) NewerSpec(spec);
    Fields status = {{"phase", Q(incoming ? "Pending" : "Running")}};
    // The pod-level resources a kubelet of 1.36 or later reports.
    if (!incoming && f_.Chance(0.15)) {
      status.push_back({"allocatedResources",
                        Obj({{"cpu", Q(Quantity(f_.Int(1, 30) * 100))}})});
      status.push_back(
          {"resources",
           Obj({{"requests",
                 Obj({{"cpu", Q(Quantity(f_.Int(1, 30) * 100))}})}})});
    }
    if (!incoming && r_.Chance(0.1)) {  // resized in place
      Fields cs = {{"name", Q("c")}};
      if (r_.Chance(0.7)) {
        cs.push_back({"allocatedResources",
                      Obj({{"cpu", Q(Quantity(r_.Int(1, 30) * 100))}})});
      }
      if (r_.Chance(0.8)) {
        cs.push_back({"resources",
                      Obj({{"requests",
                            Obj({{"cpu", Q(Quantity(r_.Int(1, 30) * 100))}})}})});
      }
      status.push_back({"containerStatuses", Arr({Obj(cs)})});
      if (r_.Chance(0.3)) {
        status.push_back(
            {"conditions",
             Arr({Obj({{"type", Q("PodResizePending")}, {"status", Q("True")},
                       {"reason", Q("Infeasible")}})})});
      }
    }
    return Obj({{"metadata", Obj(metadata)},
                {"spec", Obj(spec)},
                {"status", Obj(status)}});
  }

  // What newer releases read of an incoming pod's spec, from f_: an init
  // container restarting every container on an exit code, with a bind
  // mount option (NodeDeclaredFeatures); host network in a user namespace;
  // an image volume (ImageLocality), when the pod has no volumes. Not the
  // node features in scenarios with storage: the nodes they rule out would
  // leave too few for the pods with claims.
  void NewerSpec(Fields& spec) {
    if (f_.Chance(0.06) && !storage_) {
      Fields init = {
          {"name", Q("restarter")},
          {"image", Q(f_.Pick(kImages))},
          {"restartPolicyRules",
           Arr({Obj({{"action", Q("RestartAllContainers")},
                     {"exitCodes", Obj({{"operator", Q("In")},
                                        {"values", Arr({"42"})}})}})})}};
      if (f_.Chance(0.5)) {
        init.push_back(
            {"volumeMounts",
             Arr({Obj({{"name", Q("scratch")},
                       {"mountPath", Q("/scratch")},
                       {"bindMountOptions", Arr({Q("nosuid")})}})})});
      }
      auto existing = absl::c_find_if(
          spec, [](const auto& f) { return f.first == "initContainers"; });
      if (existing == spec.end()) {
        spec.push_back({"initContainers", Arr({Obj(init)})});
      }
    }
    if (f_.Chance(0.05) && !storage_) {
      spec.push_back({"hostNetwork", "true"});
      spec.push_back({"hostUsers", "false"});
    }
    if (f_.Chance(0.15) && absl::c_none_of(spec, [](const auto& f) {
          return f.first == "volumes";
        })) {
      spec.push_back(
          {"volumes",
           Arr({Obj({{"name", Q("model")},
                     {"image", Obj({{"reference", Q(f_.Pick(kImages))}})}})})});
    }
  }

  // A container: requests of every form kube-scheduler tells apart (none,
  // one of cpu and memory, an explicit 0), sometimes a host port.
  std::string Container(const std::string& name, int host_port) {
    Fields container = {{"name", Q(name)}, {"image", Q(r_.Pick(kImages))}};
    if (r_.Chance(0.9)) {  // else none: scored with 100m and 200Mi
      Fields requests;
      const int k = r_.Int(0, 9);
      if (k != 0) {
        requests.push_back({"cpu", Q(k == 1 ? "0" : Quantity(r_.Int(1, 20) * 100))});
      }
      if (k != 9) {
        requests.push_back(
            {"memory", Q(k == 8 ? "0" : absl::StrCat(r_.Int(1, 16) * 128, "Mi"))});
      }
      container.push_back({"resources", Obj({{"requests", Obj(requests)}})});
    }
    if (r_.Chance(0.05)) {
      container.push_back(
          {"ports", Arr({Obj({{"containerPort", absl::StrCat(host_port)},
                              {"hostPort", absl::StrCat(host_port)},
                              {"protocol", Q("TCP")}})})});
    }
    return Obj(container);
  }

  // Preferred node affinity: a few weighted terms on labels, or on the
  // node's name.
  std::string PreferredNodeAffinity() {
    std::vector<std::string> terms;
    for (int i = r_.Int(1, 3); i > 0; --i) {
      std::string requirement;
      switch (r_.Int(0, 4)) {
        case 0:
        case 1:
          requirement = Obj({{"key", Q("lifecycle")}, {"operator", Q("In")},
                             {"values", Arr({Q("spot")})}});
          break;
        case 2:
          requirement = Obj({{"key", Q(kZone)}, {"operator", Q("NotIn")},
                             {"values", Arr({Q("z1")})}});
          break;
        case 3:
          requirement = Obj({{"key", Q("disk")}, {"operator", Q("Exists")}});
          break;
        default:
          requirement = Obj({{"key", Q("metadata.name")}, {"operator", Q("In")},
                             {"values", Arr({Q(absl::StrCat("n", r_.Int(0, 3)))})}});
          break;
      }
      const bool field = requirement.find("metadata.name") != std::string::npos;
      terms.push_back(Obj(
          {{"weight", absl::StrCat(r_.Int(1, 100))},
           {"preference", Obj({{field ? "matchFields" : "matchExpressions",
                                Arr({requirement})}})}}));
    }
    return Arr(terms);
  }

  // Nominated pods. Everything from here to the storage draws from n_.

  // In about a quarter of the scenarios: gives the incoming pod a priority
  // and nominates one to three pods of lower, equal and higher priorities,
  // mostly to existing nodes, with requests that make their node too full,
  // sometimes the incoming pod's host ports, labels its spread and
  // anti-affinity selectors may match, and required anti-affinity that
  // may select it; rarely a stale copy of the incoming pod itself (its UID:
  // ignored).
  void Nominated() {
    if (!n_.Chance(0.25)) return;
    static constexpr int kLevels[] = {0, 100, 1000, 10000};
    const int level = n_.Chance(0.2) ? 0 : n_.Int(1, 2);
    SetIncomingPriority(kLevels[level]);
    std::vector<int> ports;  // the incoming pod's host ports
    for (int port : {8080, 8081, 9090, 9091}) {
      const std::string text = absl::StrCat(R"("hostPort":)", port);
      if (s_->pod.find(text) != std::string::npos) ports.push_back(port);
    }
    for (int i = n_.Int(1, 3); i > 0; --i) {
      const bool self = n_.Chance(0.07);
      const int relation = self ? n_.Int(0, 1) : n_.Int(-1, 1);  // <, =, >
      const int priority = kLevels[std::clamp(level + relation, 0, 3)];
      s_->nominated.push_back(NominatedPod(
          self ? "incoming" : absl::StrCat("nom", s_->nominated.size()),
          priority, ports));
    }
  }

  // spec.priority (and spec.priorityClassName, for a priority other than
  // 0) as the apiserver's Priority admission sets them.
  static std::string PriorityFields(int priority) {
    return priority == 0
               ? R"("priority":0)"
               : absl::StrCat(R"("priorityClassName":")", "prio-", priority,
                              R"(","priority":)", priority);
  }

  // Into the incoming pod's JSON only: nothing else is drawn.
  void SetIncomingPriority(int priority) {
    constexpr std::string_view kSpec = R"("spec":{)";
    const size_t at = s_->pod.find(kSpec);
    s_->pod.insert(at + kSpec.size(), PriorityFields(priority) + ",");
  }

  // An unassigned pod nominated to a node ("incoming": a stale copy of the
  // incoming pod, with its UID).
  std::string NominatedPod(const std::string& name, int priority,
                           const std::vector<int>& incoming_ports) {
    const bool self = name == "incoming";
    const std::string ns =
        self || n_.Chance(0.75) ? incoming_ns_ : n_.Pick(kNamespaces);
    const int node = n_.Int(0, num_nodes_ - 1);
    const bool exists = !n_.Chance(0.08);
    const std::string node_name =
        exists ? absl::StrCat("n", node)
               : absl::StrCat("n", num_nodes_ + n_.Int(0, 2));  // no such node
    const Allocatable room = exists ? allocatable_[static_cast<size_t>(node)]
                                    : Allocatable{4000, 8192};
    Labels labels = incoming_labels_;
    if (!self) {
      labels = {{"app", n_.Chance(0.6) ? IncomingApp() : n_.Pick(kApps)}};
      if (n_.Chance(0.5)) labels["tier"] = n_.Chance(0.5) ? "fe" : "be";
      if (n_.Chance(0.5)) labels["rev"] = absl::StrCat(n_.Int(1, 2));
    }
    Fields spec;
    if (self || n_.Chance(0.5)) {  // else the default scheduler's
      spec.push_back({"schedulerName", Q("metrics-scheduler")});
    }
    spec.push_back(
        {"containers", Arr({NominatedContainer(room, incoming_ports)})});
    if (n_.Chance(0.1)) {  // an init container asking for more
      const std::string cpu = Quantity(room.cpu_milli * n_.Int(5, 10) / 10);
      spec.push_back(
          {"initContainers",
           Arr({Obj({{"name", Q("init")},
                     {"image", Q(n_.Pick(kImages))},
                     {"resources",
                      Obj({{"requests", Obj({{"cpu", Q(cpu)}})}})}})})});
    }
    if (std::string anti = NominatedAntiAffinity(ns); !self && !anti.empty()) {
      spec.push_back({"affinity", Obj({{"podAntiAffinity", anti}})});
    }
    std::string spec_json = Obj(spec);
    spec_json.insert(1, PriorityFields(priority) + ",");
    return Obj({{"metadata", Obj({{"name", Q(name)}, {"namespace", Q(ns)},
                                  {"uid", Q("uid-" + name)},
                                  {"labels", LabelsJson(labels)}})},
                {"spec", spec_json},
                {"status", Obj({{"phase", Q("Pending")},
                                {"nominatedNodeName", Q(node_name)}})}});
  }

  const std::string& IncomingApp() const { return incoming_labels_.at("app"); }

  // A nominated pod's container: requests of most of the node (one
  // resource or both), some of it, a little, or none; sometimes a host
  // port, mostly one of the incoming pod's if it has any.
  std::string NominatedContainer(const Allocatable& room,
                                 const std::vector<int>& incoming_ports) {
    Fields requests;
    const int k = n_.Int(0, 19);
    if (k < 15) {
      const int lo = k < 9 ? 4 : 1, hi = k < 9 ? 10 : 4;
      const int which = n_.Int(0, 3);  // 0: cpu only large, 1: memory only
      const int cpu = which == 1 ? n_.Int(1, 5) * 100
                                 : room.cpu_milli * n_.Int(lo, hi) / 10;
      const int memory_mi = which == 0 ? n_.Int(1, 4) * 128
                                       : room.memory_mi * n_.Int(lo, hi) / 10;
      requests = {{"cpu", Q(Quantity(cpu))},
                  {"memory", Q(absl::StrCat(memory_mi, "Mi"))}};
    } else if (k < 18) {
      requests = {{"cpu", Q(Quantity(n_.Int(1, 5) * 100))},
                  {"memory", Q(absl::StrCat(n_.Int(1, 4) * 128, "Mi"))}};
    }
    Fields container = {{"name", Q("c")}, {"image", Q(n_.Pick(kImages))}};
    if (!requests.empty()) {
      container.push_back({"resources", Obj({{"requests", Obj(requests)}})});
    }
    if (!incoming_ports.empty() ? n_.Chance(0.5) : n_.Chance(0.1)) {
      const int port = !incoming_ports.empty() && n_.Chance(0.8)
                           ? n_.Pick(incoming_ports)
                           : n_.Pick<int>({8080, 8081, 9090, 9091});
      container.push_back(
          {"ports", Arr({Obj({{"containerPort", absl::StrCat(port)},
                              {"hostPort", absl::StrCat(port)},
                              {"protocol", Q("TCP")}})})});
    }
    return Obj(container);
  }

  // A nominated pod's podAntiAffinity, or "": sometimes a required term,
  // mostly selecting the incoming pod (from the pod's namespace `ns`, or
  // naming the incoming pod's); rarely a preferred one, which no score
  // counts.
  std::string NominatedAntiAffinity(const std::string& ns) {
    Fields anti;
    if (n_.Chance(0.3)) {
      const int which = n_.Int(0, 9);
      std::string selector = "{}";
      if (which < 8) {
        selector = Obj({{"matchLabels",
                         LabelsJson({{"app", which < 6 ? IncomingApp()
                                                       : n_.Pick(kApps)}})}});
      } else if (which == 8) {
        selector = Obj({{"matchExpressions",
                         Arr({Obj({{"key", Q("tier")},
                                   {"operator", Q("Exists")}})})}});
      }
      const int key = n_.Int(0, 9);
      Fields term = {
          {"labelSelector", selector},
          {"topologyKey", Q(key < 6 ? kHost : key < 9 ? kZone : kRack)}};
      if (ns != incoming_ns_ && n_.Chance(0.6)) {
        term.push_back({"namespaces", Arr({Q(incoming_ns_)})});
      } else if (n_.Chance(0.1)) {
        term.push_back({"namespaceSelector", "{}"});
      }
      anti.push_back({"requiredDuringSchedulingIgnoredDuringExecution",
                      Arr({Obj(term)})});
    }
    if (n_.Chance(0.1)) {
      const std::string term =
          Obj({{"labelSelector",
                Obj({{"matchLabels", LabelsJson({{"app", IncomingApp()}})}})},
               {"topologyKey", Q(kHost)}});
      anti.push_back(
          {"preferredDuringSchedulingIgnoredDuringExecution",
           Arr({Obj({{"weight", "100"}, {"podAffinityTerm", term}})})});
    }
    return anti.empty() ? "" : Obj(anti);
  }

  // Preemption. Everything from here to the storage draws from p_.

  // In about a third of the scenarios, makes preemption matter: gives the
  // incoming pod a priority (unless the nominated part did) and the placed
  // pods priorities below, equal to and above it (some negative) and
  // start times (mostly distinct, some equal); adds pods that fill most
  // nodes, so that the incoming pod often fits nowhere; marks some pods
  // deleting, most of them by a scheduler's preemption (a DisruptionTarget
  // condition); sometimes gives the incoming pod preemptionPolicy Never
  // or a status.nominatedNodeName (with a pod its preemption is evicting
  // there, or not); and adds PodDisruptionBudgets selecting some of the
  // pods (disruptionsAllowed 0 to 2, some disruptedPods, some with an
  // empty or no selector, some in another namespace). In a fifth of them
  // only the added pods may be evicted, alike on every node, so that
  // candidates tie.
  //
  // In the other scenarios, when the nominated part gave the incoming pod
  // a priority above 0, the placed pods (of priority 0) get distinct start
  // times: kube-scheduler reads a pod without one as starting at the
  // time.Now() of each comparison, which orders its victims by chance.
  void Preemption() {
    const bool on = p_.Chance(0.33);
    int incoming = IncomingPriority();
    if (!on) {
      if (incoming > 0) {
        for (size_t i = 0; i < placed_.size(); ++i) {
          SetStartTime(s_->placed[i], static_cast<int>(i) * 7);
        }
      }
      return;
    }
    s_->preemption = true;
    if (incoming < 0) {
      incoming = p_.Pick<int>({0, 100, 1000, 1000, 10000});
      SetIncomingPriority(incoming);
    }
    // Sometimes the fillers alone may be evicted, all alike: nodes whose
    // victims tie on every criterion kube-scheduler picks by.
    const bool alike = p_.Chance(0.2);
    Fillers(alike);
    // Start times: from a short span (many equal) or a long one.
    const int span = p_.Chance(0.4) ? 3 : 1000;
    for (size_t i = 0; i < placed_.size(); ++i) {
      std::string& pod = s_->placed[i];
      PlacedInfo& info = placed_[i];
      if (!alike) {
        info.priority = incoming + p_.Pick<int>({-900, -500, -500, -90, -90,
                                                 0, 1000});
      } else {
        info.priority = info.filler ? incoming - 500
                                    : incoming + p_.Pick<int>({0, 1000});
      }
      InsertFields(pod, "spec", PriorityFields(info.priority));
      SetStartTime(pod, alike && info.filler ? 0 : p_.Int(0, span));
      if (p_.Chance(0.06)) Terminate(pod, /*by_preemption=*/p_.Chance(0.8));
    }
    if (p_.Chance(0.12)) {
      InsertFields(s_->pod, "spec", R"("preemptionPolicy":"Never")");
    }
    if (p_.Chance(0.2)) {  // nominated by an earlier preemption
      const int node = p_.Int(0, num_nodes_ - 1);
      InsertFields(s_->pod, "status",
                   absl::StrCat(R"("nominatedNodeName":"n)", node, R"(")"),
                   /*last=*/true);
      std::vector<size_t> lower;
      for (size_t i = 0; i < placed_.size(); ++i) {
        if (placed_[i].node == node && placed_[i].priority < incoming) {
          lower.push_back(i);
        }
      }
      if (!lower.empty() && p_.Chance(0.5)) {
        Terminate(s_->placed[p_.Pick(lower)], /*by_preemption=*/true);
      }
    }
    for (int i = p_.Int(0, 3); i > 0; --i) Budget();
  }

  // The incoming pod's spec.priority; -1 when it has none.
  int IncomingPriority() const {
    constexpr std::string_view kKey = R"("priority":)";
    const size_t at = s_->pod.find(kKey);
    if (at == std::string::npos) return -1;
    return std::atoi(s_->pod.c_str() + at + kKey.size());
  }

  // Pods that take most of a node (of the priorities Preemption gives):
  // one to three on most nodes, as many as kMaxPodsPerNode allows; with
  // `alike`, one taking the same share of every node's cpu.
  void Fillers(bool alike) {
    std::vector<int> count(static_cast<size_t>(num_nodes_), 0);
    for (const PlacedInfo& p : placed_) ++count[static_cast<size_t>(p.node)];
    const int alike_percent = p_.Int(60, 100);
    for (int node = 0; node < num_nodes_; ++node) {
      if (!p_.Chance(0.85)) continue;
      const Allocatable room = allocatable_[static_cast<size_t>(node)];
      const int room_for = kMaxPodsPerNode - count[static_cast<size_t>(node)];
      const int n = std::min(alike ? 1 : p_.Int(1, 3), room_for);
      if (alike) {
        if (n == 1) Filler(node, room.cpu_milli * alike_percent / 100, 256);
        continue;
      }
      int percent = p_.Int(50, 100);  // of the node's cpu, all fillers
      for (int k = 0; k < n; ++k) {
        const int share = k + 1 == n ? percent : p_.Int(1, percent);
        percent -= share;
        Filler(node, room.cpu_milli * share / 100,
               p_.Chance(0.3) ? room.memory_mi * p_.Int(3, 9) / 10
                              : p_.Int(1, 8) * 128);
      }
    }
  }

  void Filler(int node, int cpu_milli, int memory_mi) {
    const std::string name = absl::StrCat("f", s_->placed.size());
    const std::string ns = p_.Chance(0.8) ? "default" : "team-a";
    Labels labels = {{"app", p_.Pick(kApps)}};
    if (p_.Chance(0.4)) labels["tier"] = p_.Chance(0.5) ? "fe" : "be";
    const std::string requests =
        Obj({{"cpu", Q(Quantity(std::max(cpu_milli, 1)))},
             {"memory", Q(absl::StrCat(std::max(memory_mi, 1), "Mi"))}});
    Fields container = {{"name", Q("c")},
                        {"image", Q(p_.Pick(kImages))},
                        {"resources", Obj({{"requests", requests}})}};
    if (p_.Chance(0.08)) {  // a host port the incoming pod may want
      const int port = p_.Pick<int>({8080, 8081, 9090});
      container.push_back(
          {"ports", Arr({Obj({{"containerPort", absl::StrCat(port)},
                              {"hostPort", absl::StrCat(port)},
                              {"protocol", Q("TCP")}})})});
    }
    s_->placed.push_back(
        Obj({{"metadata", Obj({{"name", Q(name)}, {"namespace", Q(ns)},
                               {"uid", Q("uid-" + name)},
                               {"labels", LabelsJson(labels)}})},
             {"spec", Obj({{"nodeName", Q(absl::StrCat("n", node))},
                           {"containers", Arr({Obj(container)})}})},
             {"status", Obj({{"phase", Q("Running")}})}}));
    placed_.push_back(
        {.node = node, .ns = ns, .labels = labels, .filler = true});
  }

  // status.startTime, `minutes` after a fixed instant.
  static void SetStartTime(std::string& pod, int minutes) {
    const std::string time = absl::StrCat(
        "2025-06-0", 1 + minutes / 1440, "T",
        absl::Dec(minutes / 60 % 24, absl::kZeroPad2), ":",
        absl::Dec(minutes % 60, absl::kZeroPad2), ":00Z");
    InsertFields(pod, "status", absl::StrCat(R"("startTime":)", Q(time)),
                 /*last=*/true);
  }

  // Being deleted: a deletionTimestamp (unless it has one), and a
  // DisruptionTarget condition: True with reason PreemptionByScheduler,
  // as a scheduler's preemption sets it, or another eviction's.
  void Terminate(std::string& pod, bool by_preemption) {
    if (pod.find("deletionTimestamp") == std::string::npos) {
      InsertFields(pod, "metadata",
                   R"("deletionTimestamp":"2026-01-01T00:00:00Z")");
    }
    if (pod.find("DisruptionTarget") != std::string::npos) return;
    const std::string condition = Obj(
        {{"type", Q("DisruptionTarget")},
         {"status", Q(by_preemption || p_.Chance(0.5) ? "True" : "False")},
         {"reason", Q(by_preemption ? "PreemptionByScheduler"
                                    : "EvictionByEvictionAPI")}});
    constexpr std::string_view kConditions = R"("conditions":[)";
    if (const size_t at = pod.rfind(kConditions); at != std::string::npos) {
      pod.insert(at + kConditions.size(), condition + ",");
    } else {
      InsertFields(pod, "status",
                   absl::StrCat(R"("conditions":[)", condition, "]"),
                   /*last=*/true);
    }
  }

  // A PodDisruptionBudget, mostly in the default namespace, mostly
  // selecting an app.
  void Budget() {
    const std::string name = absl::StrCat("pdb", s_->budgets.size());
    const std::string ns = p_.Chance(0.75) ? "default" : p_.Pick(kNamespaces);
    Fields spec;
    const int k = p_.Int(0, 19);
    if (k < 12) {
      spec.push_back(
          {"selector",
           Obj({{"matchLabels", LabelsJson({{"app", p_.Pick(kApps)}})}})});
    } else if (k < 15) {
      spec.push_back(
          {"selector",
           Obj({{"matchExpressions",
                 Arr({Obj({{"key", Q("app")}, {"operator", Q("In")},
                           {"values", Arr({Q(p_.Pick(kApps)),
                                           Q(p_.Pick(kApps))})}})})}})});
    } else if (k < 17) {
      spec.push_back({"selector", Obj({{"matchLabels",
                                        LabelsJson({{"tier", "fe"}})}})});
    } else if (k < 19) {
      spec.push_back({"selector", "{}"});  // selects nothing here
    }  // else no selector
    spec.push_back({"minAvailable", "1"});
    Fields status = {
        {"disruptionsAllowed", absl::StrCat(p_.Pick<int>({0, 0, 1, 2}))}};
    if (p_.Chance(0.3)) {  // evictions under way: a pod of its namespace
      std::vector<std::string> names;
      for (size_t i = 0; i < placed_.size(); ++i) {
        if (placed_[i].ns == ns) names.push_back(PodName(i));
      }
      if (!names.empty()) {
        status.push_back({"disruptedPods",
                          Obj({{p_.Pick(names), Q("2026-01-01T00:00:00Z")}})});
      }
    }
    status.push_back({"currentHealthy", "1"});
    status.push_back({"desiredHealthy", "1"});
    status.push_back({"expectedPods", "1"});
    s_->budgets.push_back(
        Obj({{"metadata", Obj({{"name", Q(name)}, {"namespace", Q(ns)},
                               {"uid", Q("uid-" + name)},
                               {"resourceVersion", Q("1")}})},
             {"spec", Obj(spec)},
             {"status", Obj(status)}}));
  }

  // The i-th placed pod's name: p<i>, then the fillers' f<i>.
  std::string PodName(size_t i) const {
    const std::string& pod = s_->placed[i];
    constexpr std::string_view kName = R"({"metadata":{"name":")";
    const size_t from = pod.find(kName) + kName.size();
    return pod.substr(from, pod.find('"', from) - from);
  }

  // Storage. Everything below draws from v_.

  struct PoolClaim {
    std::string name;
    bool good;  // a pod naming it may fit (bound to a PV that exists, or
                // waiting in a WaitForFirstConsumer class)
  };
  struct Delayed {
    std::string ns, name, uid, cls;
    bool block = false;
    std::string vac;
    bool prebound = false;  // a PV names it already
  };

  std::string Meta(const std::string& name, const std::string& ns,
                   const std::string& uid, const Fields& extra = {}) {
    Fields f = {{"name", Q(name)}};
    if (!ns.empty()) f.push_back({"namespace", Q(ns)});
    f.push_back({"uid", Q(uid)});
    f.push_back({"resourceVersion", Q(absl::StrCat(++resource_version_))});
    f.insert(f.end(), extra.begin(), extra.end());
    return Obj(f);
  }

  // Sizes, each handed out once: no two PVs have one capacity, no two
  // claims one request (kube-scheduler's choice among equals is a Go map's
  // order or an unstable sort's).
  int NextCapacityGi() {
    if (capacities_.empty()) {
      capacities_ = {1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 64};
      v_.Shuffle(capacities_);
    }
    if (next_capacity_ < capacities_.size()) return capacities_[next_capacity_++];
    return 100 + static_cast<int>(next_capacity_++);
  }
  int NextRequestMi() {
    if (requests_.empty()) {
      requests_ = {512,  768,   1024,  1536,  2048,  2560,  3072,  4096,
                   5120, 6144,  7168,  9216,  11264, 14336, 18432, 24576,
                   30720, 46080, 61440};
      v_.Shuffle(requests_);
    }
    if (next_request_ < requests_.size()) return requests_[next_request_++];
    return 200000 + static_cast<int>(next_request_++);
  }

  // A size in one of the forms the apiserver keeps as written.
  std::string Gi(int gi) {
    const int k = v_.Int(0, 9);
    if (k < 8) return Q(absl::StrCat(gi, "Gi"));
    if (k < 9) return Q(absl::StrCat(int64_t{gi} * 1024, "Mi"));
    return Q(absl::StrCat(int64_t{gi} << 30));
  }
  std::string Mi(int mi) {
    const int k = v_.Int(0, 9);
    if (k < 7 || (k < 9 && mi % 1024 != 0)) return Q(absl::StrCat(mi, "Mi"));
    if (k < 9) return Q(absl::StrCat(mi / 1024, "Gi"));
    return Q(absl::StrCat(int64_t{mi} << 20));
  }

  std::string Modes(const std::vector<std::string>& modes) {
    std::vector<std::string> quoted;
    for (const std::string& m : modes) quoted.push_back(Q(m));
    return Arr(quoted);
  }
  std::vector<std::string> ClaimModes() {
    const int k = v_.Int(0, 19);
    if (k < 12) return {"ReadWriteOnce"};
    if (k < 15) return {"ReadWriteOncePod"};
    if (k < 17) return {"ReadWriteMany"};
    if (k < 19) return {"ReadWriteOnce", "ReadOnlyMany"};
    return {"ReadOnlyMany"};
  }
  std::vector<std::string> VolumeModes() {
    const int k = v_.Int(0, 19);
    if (k < 7) return {"ReadWriteOnce"};
    if (k < 10) return {"ReadWriteOnce", "ReadOnlyMany"};
    if (k < 13) return {"ReadWriteOnce", "ReadWriteOncePod"};
    if (k < 16) return {"ReadWriteMany", "ReadOnlyMany", "ReadWriteOnce"};
    if (k < 18) return {"ReadWriteOncePod"};
    return {"ReadWriteMany"};
  }
  std::vector<std::string> ZoneSubset() {
    std::vector<std::string> zones = kZones;
    v_.Shuffle(zones);
    zones.resize(static_cast<size_t>(v_.Int(1, 2)));
    return zones;
  }
  std::string NodeName() { return absl::StrCat("n", v_.Int(0, num_nodes_ - 1)); }
  std::string Requirement(const std::string& key, const std::string& op,
                          const std::vector<std::string>& values) {
    Fields f = {{"key", Q(key)}, {"operator", Q(op)}};
    if (!values.empty()) {
      std::vector<std::string> quoted;
      for (const std::string& v : values) quoted.push_back(Q(v));
      f.push_back({"values", Arr(quoted)});
    }
    return Obj(f);
  }

  // StorageClasses, each present or not; volumeBindingMode always set.
  void StorageClasses() {
    auto add = [&](const std::string& name, const std::string& provisioner,
                   const std::string& mode, const Fields& extra) {
      Fields f = {{"metadata", Meta(name, "", "uid-sc-" + name)},
                  {"provisioner", Q(provisioner)},
                  {"reclaimPolicy", Q("Delete")},
                  {"volumeBindingMode", Q(mode)}};
      f.insert(f.end(), extra.begin(), extra.end());
      s_->storage_classes.push_back(Obj(f));
      classes_[name] = provisioner;
      if (mode == "WaitForFirstConsumer") wffc_classes_.push_back(name);
    };
    if (v_.Chance(0.85)) add("local", kNoProvisioner, "WaitForFirstConsumer", {});
    if (v_.Chance(0.9)) {
      Fields extra;
      const int k = v_.Int(0, 19);
      std::vector<std::string> terms;
      auto is = [&](const std::string& key,
                    const std::vector<std::string>& values) {
        std::vector<std::string> quoted;
        for (const std::string& v : values) quoted.push_back(Q(v));
        return Obj({{"key", Q(key)}, {"values", Arr(quoted)}});
      };
      if (k < 5) {
        terms.push_back(Obj({{"matchLabelExpressions",
                              Arr({is(kZone, ZoneSubset())})}}));
      } else if (k < 7) {
        terms.push_back(Obj({{"matchLabelExpressions",
                              Arr({is(kZone, {v_.Pick(kZones)})})}}));
        terms.push_back(Obj({{"matchLabelExpressions",
                              Arr({is(kHost, {NodeName()})})}}));
      } else if (k < 8) {
        terms.push_back(Obj({{"matchLabelExpressions",
                              Arr({is(kZone, ZoneSubset()), is(kRegion, {"r1"})})}}));
      }
      if (!terms.empty() && v_.Chance(0.1)) {
        terms.push_back(v_.Chance(0.5) ? "{}" : R"({"matchLabelExpressions":[]})");
      }
      if (!terms.empty()) extra.push_back({"allowedTopologies", Arr(terms)});
      add("csi-wffc", kDriver, "WaitForFirstConsumer", extra);
    }
    if (v_.Chance(0.5)) add("shared", kNfs, "WaitForFirstConsumer", {});
    if (v_.Chance(0.8)) {
      add("standard", v_.Chance(0.7) ? kDriver : kNfs, "Immediate", {});
    }
  }

  // A class for a claim waiting for its first consumer: mostly one that
  // exists and is WaitForFirstConsumer.
  std::string WffcClass() {
    if (wffc_classes_.empty() || v_.Chance(0.05)) {
      return v_.Pick(std::vector<std::string>{"local", "csi-wffc", "shared",
                                              "gold"});
    }
    // Mostly a class that can provision.
    const int k = v_.Int(0, 9);
    const std::string want = k < 5 ? "csi-wffc" : k < 8 ? "shared" : "local";
    if (std::find(wffc_classes_.begin(), wffc_classes_.end(), want) !=
        wffc_classes_.end()) {
      return want;
    }
    return v_.Pick(wffc_classes_);
  }
  // A class for a bound claim.
  std::string BoundClass() {
    const int k = v_.Int(0, 19);
    return k < 7 ? "csi-wffc" : k < 12 ? "local" : k < 17 ? "standard"
           : k < 19 ? "shared" : "";
  }
  // Which provisioner made a PV of the class: its source (a field of the
  // spec).
  std::pair<std::string, std::string> Source(const std::string& cls,
                                             const std::string& name) {
    auto it = classes_.find(cls);
    const std::string provisioner =
        it != classes_.end() ? it->second
        : cls == "local"     ? kNoProvisioner
        : cls == "shared"    ? kNfs
                             : kDriver;
    if (provisioner == kNoProvisioner) {
      return {"local", Obj({{"path", Q("/mnt/disks/" + name)}})};
    }
    if (provisioner == kNfs) {
      return {"nfs", Obj({{"server", Q("nfs.example.com")},
                          {"path", Q("/exports/" + name)}})};
    }
    return {"csi", Obj({{"driver", Q(v_.Chance(0.1) ? kDriver2 : kDriver)},
                        {"volumeHandle", Q("handle-" + name)}})};
  }

  // spec.nodeAffinity of a PV: on the host, the zone, or (ignored by
  // kube-scheduler, which matches PVs on labels only) the node's name.
  std::string VolumeAffinity() {
    std::vector<std::string> terms;
    const int k = v_.Int(0, 19);
    if (k < 9) {
      std::vector<std::string> hosts = {NodeName()};
      if (v_.Chance(0.25)) hosts.push_back(NodeName());
      terms.push_back(Obj({{"matchExpressions",
                            Arr({Requirement(kHost, "In", hosts)})}}));
    } else if (k < 14) {
      terms.push_back(Obj({{"matchExpressions",
                            Arr({Requirement(kZone, "In", ZoneSubset())})}}));
    } else if (k < 15) {
      terms.push_back(Obj({{"matchExpressions",
                            Arr({Requirement(kZone, "Exists", {})})}}));
    } else if (k < 17) {
      Fields term = {{"matchFields",
                      Arr({Requirement("metadata.name", "In", {NodeName()})})}};
      if (v_.Chance(0.5)) {
        term.insert(term.begin(),
                    {"matchExpressions",
                     Arr({Requirement(kZone, "In", {v_.Pick(kZones)})})});
      }
      terms.push_back(Obj(term));
    } else {
      terms.push_back(Obj({{"matchExpressions",
                            Arr({Requirement(kHost, "In", {NodeName()})})}}));
      terms.push_back(Obj({{"matchExpressions",
                            Arr({Requirement(kZone, "In", {v_.Pick(kZones)})})}}));
    }
    return Obj({{"required", Obj({{"nodeSelectorTerms", Arr(terms)}})}});
  }

  // Topology labels VolumeZone reads, and a label for claims' selectors.
  Labels VolumeLabels() {
    Labels labels;
    const int k = v_.Int(0, 19);
    auto multi = [&] {
      std::vector<std::string> zones = kZones;
      v_.Shuffle(zones);
      return absl::StrCat(zones[0], "__", zones[1]);
    };
    if (k < 6) {
      labels[kZone] = v_.Pick(kZones);
    } else if (k < 8) {
      labels[kZone] = multi();
    } else if (k < 10) {
      labels[kBetaZone] = v_.Pick(kZones);
    } else if (k < 11) {
      labels[kBetaZone] = multi();
    } else if (k < 12) {
      labels[kRegion] = v_.Chance(0.7) ? "r1" : "r2";
    } else if (k < 13) {
      labels[kZone] = v_.Pick(kZones);
      labels[kRegion] = "r1";
    } else if (k < 14) {
      labels[kZone] = absl::StrCat(v_.Pick(kZones), "__");  // ignored
    } else if (k < 15) {
      labels[kBetaRegion] = "r1";
    }
    if (v_.Chance(0.25)) labels["tier"] = "gold";
    return labels;
  }

  std::string ClaimRef(const std::string& ns, const std::string& name,
                       const std::string& uid) {
    Fields f = {{"kind", Q("PersistentVolumeClaim")},
                {"namespace", Q(ns)},
                {"name", Q(name)}};
    if (!uid.empty()) f.push_back({"uid", Q(uid)});
    return Obj(f);
  }

  // Writes a PV; affinity, labels and source by chance and class.
  void AddVolume(const VolumeSpec& v) {
    Fields extra;
    Labels labels = VolumeLabels();
    if (!labels.empty()) extra.push_back({"labels", LabelsJson(labels)});
    if (v.class_annotation) {
      extra.push_back({"annotations",
                       LabelsJson({{"volume.beta.kubernetes.io/storage-class",
                                    v.cls}})});
    }
    if (v.deleting) {
      extra.push_back({"deletionTimestamp", Q("2026-01-01T00:00:00Z")});
      extra.push_back({"finalizers", Arr({Q("kubernetes.io/pv-protection")})});
    }
    Fields spec = {{"capacity",
                    Obj({{"storage", Gi(v.capacity_gi)}})},
                   {"accessModes", Modes(v.modes)},
                   {"persistentVolumeReclaimPolicy", Q("Delete")}};
    if (!v.class_annotation && !v.cls.empty()) {
      spec.push_back({"storageClassName", Q(v.cls)});
    }
    if (v.block) {
      spec.push_back({"volumeMode", Q("Block")});
    } else if (v_.Chance(0.3)) {
      spec.push_back({"volumeMode", Q("Filesystem")});
    }
    if (!v.vac.empty()) spec.push_back({"volumeAttributesClassName", Q(v.vac)});
    const double affinity = v.cls == "local" ? 0.85
                            : v.cls == "csi-wffc" ? 0.3
                            : v.cls == "standard" ? 0.2 : 0.05;
    if (v_.Chance(affinity)) spec.push_back({"nodeAffinity", VolumeAffinity()});
    spec.push_back(Source(v.cls, v.name));
    if (!v.claim_ref.empty()) spec.push_back({"claimRef", v.claim_ref});
    s_->volumes.push_back(
        Obj({{"metadata", Meta(v.name, "", "uid-" + v.name, extra)},
             {"spec", Obj(spec)},
             {"status", Obj({{"phase", Q(v.phase)}})}}));
  }
  std::string NextVolumeName() { return absl::StrCat("pv", volume_count_++); }

  void AddClaim(const ClaimSpec& c) {
    Fields extra;
    Labels annotations;
    if (c.class_annotation && c.cls) {
      annotations["volume.beta.kubernetes.io/storage-class"] = *c.cls;
    }
    if (c.bind_completed) {
      // Only its presence counts.
      annotations["pv.kubernetes.io/bind-completed"] = v_.Chance(0.95) ? "yes" : "";
      annotations["pv.kubernetes.io/bound-by-controller"] = "yes";
    }
    if (!c.selected_node.empty()) {
      annotations["volume.kubernetes.io/selected-node"] = c.selected_node;
    }
    if (!annotations.empty()) extra.push_back({"annotations", LabelsJson(annotations)});
    if (c.deleting) {
      extra.push_back({"deletionTimestamp", Q("2026-01-01T00:00:00Z")});
      extra.push_back({"finalizers", Arr({Q("kubernetes.io/pvc-protection")})});
    }
    if (!c.owner.empty()) extra.push_back({"ownerReferences", c.owner});
    Fields spec = {{"accessModes", Modes(c.modes)},
                   {"resources",
                    Obj({{"requests",
                          Obj({{"storage", Mi(c.request_mi)}})}})}};
    // kube-scheduler 1.37 scores a claim to be provisioned with CSI
    // storage capacity by *spec.storageClassName, and crashes on a claim
    // that names its class by the beta annotation alone: claims of the CSI
    // driver's classes get a spec class too (the annotation wins).
    const bool csi_class =
        c.cls && (classes_[*c.cls] == kDriver || classes_[*c.cls] == kDriver2);
    if (c.cls && !c.class_annotation) {
      spec.push_back({"storageClassName", Q(*c.cls)});
    } else if (c.class_annotation && (v_.Chance(0.3) || csi_class)) {
      spec.push_back({"storageClassName", Q("ignored")});
    }
    if (c.block) {
      spec.push_back({"volumeMode", Q("Block")});
    } else if (v_.Chance(0.3)) {
      spec.push_back({"volumeMode", Q("Filesystem")});
    }
    if (!c.vac.empty()) spec.push_back({"volumeAttributesClassName", Q(c.vac)});
    if (!c.selector.empty()) spec.push_back({"selector", c.selector});
    if (!c.volume_name.empty()) spec.push_back({"volumeName", Q(c.volume_name)});
    Fields status = {{"phase", Q(c.phase)}};
    if (c.phase == "Bound") {
      status.push_back({"accessModes", Modes(c.modes)});
      status.push_back(
          {"capacity", Obj({{"storage", Mi(c.request_mi)}})});
    }
    s_->claims.push_back(Obj({{"metadata", Meta(c.name, c.ns, c.uid, extra)},
                              {"spec", Obj(spec)},
                              {"status", Obj(status)}}));
  }

  // A claim bound to a PV made for it (or, rarely, whose PV is gone).
  void Bind(ClaimSpec& c) {
    c.phase = v_.Chance(0.95) ? "Bound" : "Pending";  // the status lagging
    c.bind_completed = true;
    if (v_.Chance(0.06)) {  // its PV deleted under it
      c.volume_name = absl::StrCat("pv-gone-", volume_count_++);
      return;
    }
    VolumeSpec v{.name = NextVolumeName(), .cls = c.cls.value_or(""),
                 .class_annotation = v_.Chance(0.1),
                 .capacity_gi = NextCapacityGi(), .modes = c.modes,
                 .block = c.block, .vac = c.vac,
                 .claim_ref = ClaimRef(c.ns, c.name, c.uid), .phase = "Bound"};
    if (v_.Chance(0.3)) v.modes = VolumeModes();
    c.volume_name = v.name;
    AddVolume(v);
  }

  std::string ClaimSelector() {
    const int k = v_.Int(0, 9);
    if (k < 5) return Obj({{"matchLabels", LabelsJson({{"tier", "gold"}})}});
    if (k < 8) {
      return Obj({{"matchExpressions",
                   Arr({Requirement(kZone, "In", {v_.Pick(kZones)})})}});
    }
    return Obj({{"matchExpressions", Arr({Requirement("tier", "NotIn", {"gold"})})}});
  }

  // A claim waiting for its first consumer; `free` PVs may be made for it.
  void Delay(ClaimSpec& c) {
    c.cls = WffcClass();
    if (v_.Chance(0.1)) {  // provisioning on a node (rarely none such)
      c.selected_node = absl::StrCat("n", v_.Int(0, num_nodes_));
    }
    if (v_.Chance(0.15)) c.selector = ClaimSelector();
    delayed_.push_back({c.ns, c.name, c.uid, *c.cls, c.block, c.vac});
  }

  // One claim of a namespace's pool: what the pods name.
  void AddPoolClaim(const std::string& ns, int j) {
    const std::string name = absl::StrCat("c", j);
    ClaimSpec c{.ns = ns, .name = name, .uid = absl::StrCat("uid-pvc-", ns, "-", name)};
    c.class_annotation = v_.Chance(0.1);
    c.modes = ClaimModes();
    c.request_mi = NextRequestMi();
    c.block = v_.Chance(0.08);
    if (v_.Chance(0.05)) c.vac = "gold-vac";
    bool good = false;
    const int k = v_.Int(0, 99);
    if (k < 42) {
      c.cls = BoundClass();
      Bind(c);
      good = c.volume_name.rfind("pv-gone-", 0) != 0;
    } else if (k < 80) {
      Delay(c);
      good = classes_.contains(*c.cls) &&
             std::find(wffc_classes_.begin(), wffc_classes_.end(), *c.cls) !=
                 wffc_classes_.end();
    } else if (k < 86) {  // Immediate, not bound yet (or no class at all)
      const int which = v_.Int(0, 3);
      if (which == 0) {
        c.cls = "standard";
      } else if (which == 1) {
        c.cls = "";
      } else if (which == 2) {
        c.cls = "gold";  // no such class
      }
    } else if (k < 90) {  // pre-bound by its user: volumeName, not bound yet
      c.cls = BoundClass();
      VolumeSpec v{.name = NextVolumeName(), .cls = *c.cls,
                   .capacity_gi = NextCapacityGi(), .modes = c.modes,
                   .block = c.block, .vac = c.vac};
      if (v_.Chance(0.5)) {
        v.claim_ref = ClaimRef(c.ns, c.name, c.uid);
        v.phase = "Bound";
      }
      c.volume_name = v.name;
      AddVolume(v);
    } else if (k < 94) {  // lost its PV
      c.cls = BoundClass();
      c.volume_name = absl::StrCat("pv-lost-", volume_count_++);
      c.bind_completed = true;
      c.phase = "Lost";
    } else {  // being deleted
      if (v_.Chance(0.5)) {
        c.cls = BoundClass();
        Bind(c);
      } else {
        Delay(c);
      }
      c.deleting = true;
    }
    AddClaim(c);
    pool_[ns].push_back({name, good});
  }

  // Free PVs for the claims waiting: some large enough, of the right mode
  // and on the right nodes, some pre-bound to one; and others in their
  // classes that no claim may take (bound, released, being deleted).
  void FreeVolumes() {
    std::vector<std::string> classes;
    for (Delayed& d : delayed_) {
      classes.push_back(d.cls);
      const int n = v_.Chance(0.65) ? v_.Int(1, 2) : 0;
      for (int i = 0; i < n; ++i) {
        VolumeSpec v{.name = NextVolumeName(), .cls = d.cls,
                     .class_annotation = v_.Chance(0.1),
                     .capacity_gi = NextCapacityGi(), .modes = VolumeModes(),
                     .block = d.block ? v_.Chance(0.8) : v_.Chance(0.05),
                     .vac = v_.Chance(0.9) ? d.vac : "other-vac"};
        if (!d.prebound && v_.Chance(0.2)) {  // pre-bound by its user
          d.prebound = true;
          v.claim_ref = ClaimRef(d.ns, d.name, v_.Chance(0.5) ? d.uid : "");
        } else if (v_.Chance(0.05)) {  // a claim of that name once had it
          v.claim_ref = ClaimRef(d.ns, d.name, "uid-old");
          v.phase = "Released";
        }
        if (v_.Chance(0.04)) v.deleting = true;
        AddVolume(v);
      }
    }
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    for (const std::string& cls : classes) {
      for (int i = v_.Int(0, 2); i > 0; --i) {
        VolumeSpec v{.name = NextVolumeName(), .cls = cls,
                     .capacity_gi = NextCapacityGi(), .modes = VolumeModes()};
        const int k = v_.Int(0, 9);
        if (k < 5) {
          // free
        } else if (k < 7) {
          v.claim_ref = ClaimRef("default", "elsewhere", "uid-elsewhere");
          v.phase = "Bound";
        } else if (k < 8) {
          v.claim_ref = ClaimRef("default", "gone", "uid-gone");
          v.phase = "Released";
        } else if (k < 9) {
          v.deleting = true;
        } else {
          v.phase = "Pending";
        }
        AddVolume(v);
      }
    }
  }

  // CSINodes: attach limits of the CSI driver (and of the NFS
  // provisioner's name, which kube-scheduler counts like a driver), small
  // enough to bite.
  void CsiNodes() {
    for (int i = 0; i < num_nodes_; ++i) {
      if (!v_.Chance(0.6)) continue;
      const std::string name = absl::StrCat("n", i);
      std::vector<std::string> drivers;
      if (v_.Chance(0.9)) {
        Fields d = {{"name", Q(kDriver)}, {"nodeID", Q(name)},
                    {"topologyKeys", Arr({Q(kZone)})}};
        if (v_.Chance(0.85)) {
          d.push_back({"allocatable",
                       Obj({{"count", absl::StrCat(v_.Pick<int>({0, 1, 1, 2, 2, 3, 4}))}})});
        }
        drivers.push_back(Obj(d));
      }
      if (v_.Chance(0.15)) {
        drivers.push_back(Obj({{"name", Q(kDriver2)}, {"nodeID", Q(name)},
                               {"allocatable", Obj({{"count", "1"}})}}));
      }
      if (v_.Chance(0.25)) {
        drivers.push_back(Obj({{"name", Q(kNfs)}, {"nodeID", Q(name)},
                               {"allocatable",
                                Obj({{"count", absl::StrCat(v_.Int(0, 2))}})}}));
      }
      s_->csi_nodes.push_back(
          Obj({{"metadata", Meta(name, "", "uid-csinode-" + name)},
               {"spec", Obj({{"drivers", Arr(drivers)}})}}));
    }
  }

  // CSIDrivers of the two CSI drivers, which may ask (from 1.37) that pods
  // with their volumes stay off nodes whose CSINode does not list them,
  // and may report their capacity (storageCapacity).
  void CsiDrivers() {
    for (const char* driver : {kDriver, kDriver2}) {
      const bool capacity = k_.Chance(0.35);
      const bool present = c_.Chance(0.2);
      if (!present && !capacity) continue;
      Fields spec = {{"attachRequired", "true"}};
      if (present && c_.Chance(0.7)) {
        spec.push_back({"preventPodSchedulingIfMissing",
                        c_.Chance(0.8) ? "true" : "false"});
      }
      if (capacity) spec.push_back({"storageCapacity", "true"});
      s_->csi_drivers.push_back(
          Obj({{"metadata",
                Meta(driver, "", absl::StrCat("uid-csidriver-", driver))},
               {"spec", Obj(spec)}}));
    }
  }

  // CSIStorageCapacities of the CSI class waiting for its first consumer:
  // one per zone (so that at most one selects a node, as kube-scheduler
  // takes whichever its lister yields first), with capacities around the
  // claims' requests, some with a smaller maximumVolumeSize; now and then
  // one that selects no node (no nodeTopology) or every node.
  void Capacities() {
    if (!classes_.contains("csi-wffc") || !k_.Chance(0.8)) return;
    const std::vector<int> capacities = {1024,  4096,  10240,
                                         20480, 65536, 204800};
    // Quantities in Mi: Mi() would draw from the storage stream.
    auto mi = [](int n) { return Q(absl::StrCat(n, "Mi")); };
    auto add = [&](const std::string& name, const std::string& topology) {
      Fields f = {{"metadata", Meta(name, "default", "uid-" + name)},
                  {"storageClassName", Q("csi-wffc")},
                  {"capacity", mi(k_.Pick(capacities))}};
      if (!topology.empty()) f.push_back({"nodeTopology", topology});
      if (k_.Chance(0.2)) {
        f.push_back({"maximumVolumeSize", mi(k_.Pick<int>({2048, 8192}))});
      }
      s_->capacities.push_back(Obj(f));
    };
    if (k_.Chance(0.1)) {
      add("cap-all", "{}");
      return;
    }
    for (const std::string& zone : kZones) {
      if (!k_.Chance(0.8)) continue;
      add("cap-" + zone, Obj({{"matchLabels", Obj({{kZone, Q(zone)}})}}));
    }
    if (k_.Chance(0.1)) add("cap-none", "");
  }

  void Storage() {
    StorageClasses();
    for (const std::string& ns : kNamespaces) {
      const int n = ns == "default" ? v_.Int(1, 6) : v_.Int(0, 2);
      for (int j = 0; j < n; ++j) AddPoolClaim(ns, j);
    }
    FreeVolumes();
    CsiNodes();
    CsiDrivers();
    Capacities();
  }

  std::string ClaimVolume(const std::string& volume, const std::string& claim) {
    return Obj({{"name", Q(volume)},
                {"persistentVolumeClaim", Obj({{"claimName", Q(claim)}})}});
  }

  // A generic ephemeral volume and, unless `created` is false, its claim
  // "<pod>-<volume>": owned by the pod (or not, when `owned` is false),
  // bound, waiting for its first consumer, or immediate and unbound.
  std::string EphemeralVolume(const std::string& pod, const std::string& ns,
                              const std::string& volume, bool created,
                              bool owned, const std::string& node) {
    ClaimSpec c{.ns = ns, .name = pod + "-" + volume,
                .uid = absl::StrCat("uid-pvc-", ns, "-", pod, "-", volume)};
    c.modes = v_.Chance(0.8) ? std::vector<std::string>{"ReadWriteOnce"}
                             : ClaimModes();
    c.request_mi = NextRequestMi();
    const int k = v_.Int(0, 19);
    if (k < 12) {
      Delay(c);
      if (!node.empty()) c.selected_node = node;
    } else if (k < 19) {
      c.cls = v_.Chance(0.7) ? "csi-wffc" : BoundClass();
      Bind(c);
    } else {
      c.cls = "standard";
    }
    Fields tspec = {{"accessModes", Modes(c.modes)},
                    {"resources",
                     Obj({{"requests",
                           Obj({{"storage", Mi(c.request_mi)}})}})}};
    if (c.cls) tspec.push_back({"storageClassName", Q(*c.cls)});
    if (created) {
      Fields owner = {{"apiVersion", Q("v1")}, {"kind", Q("Pod")},
                      {"name", Q(pod)}, {"uid", Q("uid-" + pod)},
                      {"controller", "true"}, {"blockOwnerDeletion", "true"}};
      if (!owned) {
        if (v_.Chance(0.5)) {
          owner[4].second = "false";
        } else {
          owner[3].second = Q("uid-" + pod + "-before");  // an earlier pod's
        }
      }
      c.owner = Arr({Obj(owner)});
      AddClaim(c);
    }
    return Obj({{"name", Q(volume)},
                {"ephemeral",
                 Obj({{"volumeClaimTemplate", Obj({{"spec", Obj(tspec)}})}})}});
  }

  // Sometimes an in-tree disk written in the pod (VolumeRestrictions'
  // conflicts), from a pool small enough that pods share them.
  void InlineDisks(std::vector<std::string>& volumes) {
    if (!d_.Chance(0.25)) return;
    for (int i = d_.Chance(0.8) ? 1 : 2; i > 0; --i) {
      const std::string id = d_.Pick(std::vector<std::string>{"d1", "d2"});
      const std::string read_only = d_.Chance(0.4) ? "true" : "false";
      Fields source;
      std::string kind;
      switch (d_.Int(0, 3)) {
        case 0:
          kind = "gcePersistentDisk";
          source = {{"pdName", Q(id)}, {"readOnly", read_only}};
          break;
        case 1:
          kind = "awsElasticBlockStore";
          source = {{"volumeID", Q(id)}, {"readOnly", read_only}};
          break;
        case 2:
          kind = "iscsi";
          source = {{"targetPortal", Q("10.0.0.1:3260")}, {"iqn", Q(id)},
                    {"lun", "0"}, {"readOnly", read_only}};
          break;
        default: {
          std::vector<std::string> monitors;
          for (const char* m : {"m1", "m2", "m3"}) {
            if (d_.Chance(0.5)) monitors.push_back(Q(m));
          }
          if (monitors.empty()) monitors.push_back(Q("m1"));
          kind = "rbd";
          source = {{"monitors", Arr(monitors)},
                    {"pool", Q(d_.Chance(0.7) ? "rbd" : "fast")},
                    {"image", Q(id)},
                    {"readOnly", read_only}};
        }
      }
      volumes.push_back(Obj({{"name", Q(absl::StrCat("disk", volumes.size()))},
                             {kind, Obj(source)}}));
    }
  }

  // A placed pod's volumes: claims of its namespace's pool (whatever their
  // state), its own ephemeral claims, a missing claim.
  std::vector<std::string> PlacedVolumes(const std::string& name,
                                         const std::string& ns,
                                         const std::string& node) {
    std::vector<std::string> volumes;
    if (!v_.Chance(0.4)) return volumes;
    const std::vector<PoolClaim>& pool = pool_[ns];
    std::vector<std::string> named;
    for (int i = v_.Chance(0.7) ? 1 : 2; i > 0; --i) {
      const std::string volume = absl::StrCat("v", volumes.size());
      const int k = v_.Int(0, 99);
      if (k < 80 && !pool.empty()) {
        const std::string claim = Unnamed(pool, named, /*good_only=*/false);
        volumes.push_back(ClaimVolume(volume, claim));
        named.push_back(claim);
      } else if (k < 95) {
        volumes.push_back(EphemeralVolume(name, ns, volume,
                                          /*created=*/v_.Chance(0.9),
                                          /*owned=*/true, node));
        ephemeral_[ns].push_back(name + "-" + volume);
      } else {
        volumes.push_back(ClaimVolume(volume, "missing-" + name));
      }
    }
    return volumes;
  }

  // The incoming pod's: up to three, mostly claims it could use.
  std::vector<std::string> IncomingVolumes(const std::string& name,
                                           const std::string& ns) {
    std::vector<std::string> volumes;
    incoming_delayed_from_ = delayed_.size();
    const int k = v_.Int(0, 99);
    const int n = k < 10 ? 0 : k < 65 ? 1 : k < 92 ? 2 : 3;
    const std::vector<PoolClaim>& pool = pool_[ns];
    std::vector<std::string> named;
    for (int i = 0; i < n; ++i) {
      const std::string volume = absl::StrCat("v", i);
      const int kind = v_.Int(0, 99);
      if (kind < 66 && !pool.empty()) {
        const std::string claim = Unnamed(pool, named, /*good_only=*/v_.Chance(0.92));
        volumes.push_back(ClaimVolume(volume, claim));
        named.push_back(claim);
      } else if (kind >= 66 && kind < 69) {
        volumes.push_back(ClaimVolume(volume, "c-missing"));
      } else if (kind >= 69 && kind < 74 && !ephemeral_[ns].empty()) {
        // Another pod's ephemeral claim, by name.
        volumes.push_back(ClaimVolume(volume, v_.Pick(ephemeral_[ns])));
      } else {
        const bool created = v_.Chance(0.93);
        volumes.push_back(EphemeralVolume(name, ns, volume, created,
                                          /*owned=*/v_.Chance(0.93), ""));
      }
    }
    FreeVolumesForIncoming();
    return volumes;
  }

  // A claim of the pool for a pod that names `named` already: mostly
  // another one (a pod may name a claim twice), mostly a good one if
  // `good_only`.
  std::string Unnamed(const std::vector<PoolClaim>& pool,
                      const std::vector<std::string>& named, bool good_only) {
    std::vector<std::string> fresh, fresh_good;
    for (const PoolClaim& c : pool) {
      if (std::find(named.begin(), named.end(), c.name) != named.end()) continue;
      fresh.push_back(c.name);
      if (c.good) fresh_good.push_back(c.name);
    }
    if (good_only && !fresh_good.empty()) return v_.Pick(fresh_good);
    if (!fresh.empty() && !v_.Chance(0.05)) return v_.Pick(fresh);
    return v_.Pick(pool).name;
  }

  // Free PVs for the incoming pod's own ephemeral claims that wait.
  void FreeVolumesForIncoming() {
    for (size_t i = incoming_delayed_from_; i < delayed_.size(); ++i) {
      const Delayed& d = delayed_[i];
      if (!v_.Chance(0.5)) continue;
      AddVolume({.name = NextVolumeName(), .cls = d.cls,
                 .capacity_gi = NextCapacityGi(), .modes = VolumeModes(),
                 .block = d.block, .vac = d.vac});
    }
  }

  Random r_;
  Random v_;  // storage's own stream
  Random d_;  // inline disks' own stream
  Random n_;  // nominated pods' own stream
  Random p_;  // preemption's own stream
  Random f_;  // newer releases' fields' own stream
  Random c_;  // the CSIDrivers' own stream
  Random k_;  // CSI storage capacity's own stream
  Random a_;  // the NotIn and DoesNotExist namespace selectors' own stream
  bool storage_ = false;
  Scenario* s_ = nullptr;
  int num_nodes_ = 0;
  // What preemption reads of the placed pods, in s_->placed's order.
  struct PlacedInfo {
    int node = 0;
    std::string ns;
    Labels labels;
    int priority = 0;
    bool filler = false;  // added by Fillers
  };
  std::vector<PlacedInfo> placed_;
  std::string pod_ns_;  // of the pod Pod() made last
  Labels pod_labels_;
  std::vector<Allocatable> allocatable_;  // by node index
  std::string incoming_ns_;
  Labels incoming_labels_;
  int resource_version_ = 0;
  int volume_count_ = 0;
  std::vector<int> capacities_, requests_;
  size_t next_capacity_ = 0, next_request_ = 0;
  std::map<std::string, std::string> classes_;  // name -> provisioner
  std::vector<std::string> wffc_classes_;
  std::map<std::string, std::vector<PoolClaim>> pool_;  // by namespace
  std::map<std::string, std::vector<std::string>> ephemeral_;  // placed pods'
  std::vector<Delayed> delayed_;
  size_t incoming_delayed_from_ = 0;
};

}  // namespace

std::string Scenario::OracleLine() const {
  return Obj({{"name", Q(name)},
              {"nodes", Arr(nodes)},
              {"pods", Arr(placed)},
              {"namespaces", Arr(namespaces)},
              {"services", Arr(services)},
              {"replicaSets", Arr(replica_sets)},
              {"statefulSets", Arr(stateful_sets)},
              {"replicationControllers", Arr(replication_controllers)},
              {"persistentVolumeClaims", Arr(claims)},
              {"persistentVolumes", Arr(volumes)},
              {"storageClasses", Arr(storage_classes)},
              {"csiNodes", Arr(csi_nodes)},
              {"csiDrivers", Arr(csi_drivers)},
              {"csiStorageCapacities", Arr(capacities)},
              {"nominatedPods", Arr(nominated)},
              {"podDisruptionBudgets", Arr(budgets)},
              {"pod", pod}});
}

std::string Scenario::Describe() const {
  std::string out = absl::StrCat("# ", name, "\npod: ", pod, "\nnodes:\n");
  for (const std::string& n : nodes) absl::StrAppend(&out, "  - ", n, "\n");
  absl::StrAppend(&out, "pods:\n");
  for (const std::string& p : placed) absl::StrAppend(&out, "  - ", p, "\n");
  absl::StrAppend(&out, "nominatedPods:\n");
  for (const std::string& p : nominated) absl::StrAppend(&out, "  - ", p, "\n");
  absl::StrAppend(&out, "podDisruptionBudgets:\n");
  for (const std::string& b : budgets) absl::StrAppend(&out, "  - ", b, "\n");
  absl::StrAppend(&out, "services:\n");
  for (const std::string& s : services) absl::StrAppend(&out, "  - ", s, "\n");
  for (const auto& [kind, items] :
       {std::pair{"replicaSets", &replica_sets},
        std::pair{"statefulSets", &stateful_sets},
        std::pair{"replicationControllers", &replication_controllers},
        std::pair{"persistentVolumeClaims", &claims},
        std::pair{"persistentVolumes", &volumes},
        std::pair{"storageClasses", &storage_classes},
        std::pair{"csiNodes", &csi_nodes},
        std::pair{"csiDrivers", &csi_drivers},
        std::pair{"csiStorageCapacities", &capacities}}) {
    absl::StrAppend(&out, kind, ":\n");
    for (const std::string& s : *items) absl::StrAppend(&out, "  - ", s, "\n");
  }
  return out;
}

Scenario Generate(uint64_t seed) { return Generator(seed).Make(seed); }

}  // namespace ms::differential
