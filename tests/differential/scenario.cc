#include "tests/differential/scenario.h"

#include <map>
#include <random>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ms::differential {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;
using Labels = std::map<std::string, std::string>;

constexpr char kHost[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kRack[] = "rack";  // on some nodes only

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

 private:
  std::mt19937_64 rng_;
};

const std::vector<std::string> kApps = {"web", "db", "cache"};
const std::vector<std::string> kNamespaces = {"default", "team-a", "team-b"};
// What containers run: "redis" has no tag (":latest" is implied), "busybox"
// is on no node.
const std::vector<std::string> kImages = {"registry.k8s.io/pause:3.10",
                                          "nginx:1.27", "redis", "busybox"};

class Generator {
 public:
  explicit Generator(uint64_t seed) : r_(seed) {}

  Scenario Make(uint64_t seed) {
    Scenario s;
    s.seed = seed;
    s.name = absl::StrCat("seed-", seed);
    for (const std::string& ns : kNamespaces) {
      Labels labels;
      if (ns != "default") labels["team"] = ns.substr(5);  // a, b
      s.namespaces.push_back(
          Obj({{"metadata", Obj({{"name", Q(ns)},
                                 {"labels", LabelsJson(labels)}})}}));
    }
    const int num_nodes = r_.Int(2, 9);
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
    const int num_placed = r_.Int(0, 3 * num_nodes);
    for (int i = 0; i < num_placed; ++i) {
      s.placed.push_back(Pod(absl::StrCat("p", i),
                             absl::StrCat("n", r_.Int(0, num_nodes - 1)),
                             /*incoming=*/false));
    }
    s.pod = Pod("incoming", "", /*incoming=*/true);
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
    const std::string cpu = absl::StrCat(r_.Pick<int>({2, 4, 8}));
    const std::string memory = absl::StrCat(r_.Pick<int>({4, 8, 16}), "Gi");
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
    return Obj(
        {{"metadata", Obj({{"name", Q(name)}, {"labels", LabelsJson(labels)}})},
         {"spec", Obj(spec)},
         {"status",
          Obj({{"capacity", resources},
               {"allocatable", resources},
               {"images", Arr(images)},
               {"conditions",
                Arr({Obj({{"type", Q("Ready")}, {"status", Q(ready)}})})}})}});
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
      f.push_back({"namespaceSelector",
                   Obj({{"matchLabels", LabelsJson({{"team", "a"}})}})});
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
    Fields status = {{"phase", Q(incoming ? "Pending" : "Running")}};
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

  Random r_;
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
              {"pod", pod}});
}

std::string Scenario::Describe() const {
  std::string out = absl::StrCat("# ", name, "\npod: ", pod, "\nnodes:\n");
  for (const std::string& n : nodes) absl::StrAppend(&out, "  - ", n, "\n");
  absl::StrAppend(&out, "pods:\n");
  for (const std::string& p : placed) absl::StrAppend(&out, "  - ", p, "\n");
  absl::StrAppend(&out, "services:\n");
  for (const std::string& s : services) absl::StrAppend(&out, "  - ", s, "\n");
  for (const auto& [kind, items] :
       {std::pair{"replicaSets", &replica_sets},
        std::pair{"statefulSets", &stateful_sets},
        std::pair{"replicationControllers", &replication_controllers}}) {
    absl::StrAppend(&out, kind, ":\n");
    for (const std::string& s : *items) absl::StrAppend(&out, "  - ", s, "\n");
  }
  return out;
}

Scenario Generate(uint64_t seed) { return Generator(seed).Make(seed); }

}  // namespace ms::differential
