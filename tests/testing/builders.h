// Builders of model objects for tests: MakeNode("n1").Capacity(4000, 8 * kGi),
// MakePod("p").Req(100, kMi), Column({1, 2, 3}, kNow). A node is ready with
// 4 CPUs, 8 GiB and room for 110 pods; a pod is in namespace "default",
// its uid "uid-" and its name, for metrics-scheduler, with one container
// requesting nothing.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_BUILDERS_H_
#define METRICS_SCHEDULER_TESTS_TESTING_BUILDERS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/metrics.h"
#include "model/node_info.h"
#include "model/pod.h"
#include "scoring/scoring_config.h"

namespace ms::testing {

inline constexpr int64_t kMi = 1024 * 1024;
inline constexpr int64_t kGi = 1024 * kMi;
inline constexpr int64_t kNow = 1700000000000;  // ms

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string name) {
    info_.node.name = std::move(name);
    info_.node.ready = true;
    info_.node.allocatable.milli_cpu = 4000;
    info_.node.allocatable.memory = 8 * kGi;
    info_.node.allocatable.ephemeral_storage = 100 * kGi;
    info_.node.allocatable.pods = 110;
  }
  NodeBuilder& Capacity(int64_t milli_cpu, int64_t memory, int64_t pods = 110) {
    info_.node.allocatable.milli_cpu = milli_cpu;
    info_.node.allocatable.memory = memory;
    info_.node.allocatable.pods = pods;
    return *this;
  }
  // Requests already on the node: both the exact and the non-zero sums.
  NodeBuilder& Requested(int64_t milli_cpu, int64_t memory, int64_t pods = 1) {
    info_.requested.milli_cpu = milli_cpu;
    info_.requested.memory = memory;
    info_.requested.pods = pods;
    info_.non_zero_requested.milli_cpu = milli_cpu;
    info_.non_zero_requested.memory = memory;
    info_.non_zero_requested.pods = pods;
    return *this;
  }
  NodeBuilder& NonZeroRequested(int64_t milli_cpu, int64_t memory) {
    info_.non_zero_requested.milli_cpu = milli_cpu;
    info_.non_zero_requested.memory = memory;
    return *this;
  }
  NodeBuilder& Ephemeral(int64_t allocatable, int64_t requested) {
    info_.node.allocatable.ephemeral_storage = allocatable;
    info_.requested.ephemeral_storage = requested;
    return *this;
  }
  NodeBuilder& Scalar(const std::string& name, int64_t allocatable,
                      int64_t requested) {
    info_.node.allocatable.SetScalar(name, allocatable);
    if (requested != 0) info_.requested.SetScalar(name, requested);
    return *this;
  }
  NodeBuilder& Label(const std::string& k, const std::string& v) {
    info_.node.labels[k] = v;
    return *this;
  }
  NodeBuilder& Annotation(const std::string& k, const std::string& v) {
    info_.node.annotations[k] = v;
    return *this;
  }
  NodeBuilder& Taint(const std::string& k, const std::string& v,
                     TaintEffect effect = TaintEffect::kNoSchedule) {
    info_.node.taints.push_back({k, v, effect});
    return *this;
  }
  NodeBuilder& Unschedulable() {
    info_.node.unschedulable = true;
    return *this;
  }
  // Not ready as the node lifecycle controller shows it: the condition and
  // the node.kubernetes.io/not-ready NoSchedule taint.
  NodeBuilder& NotReady() {
    info_.node.ready = false;
    return Taint("node.kubernetes.io/not-ready", "", TaintEffect::kNoSchedule);
  }
  NodeBuilder& UsedPort(int32_t port, const std::string& protocol = "TCP",
                        const std::string& ip = "") {
    info_.used_host_ports.push_back({port, protocol, ip});
    return *this;
  }
  // A pod placed on the node (its requests, ports and labels).
  NodeBuilder& Placed(const Pod& pod) {
    info_.AddPod(pod, KubeVersion{});
    return *this;
  }
  NodeInfo Build() const { return info_; }
  operator NodeInfo() const { return info_; }  // NOLINT
  // The Node alone, as an informer shows it.
  operator Node() const { return info_.node; }  // NOLINT

 private:
  NodeInfo info_;
};

inline NodeBuilder MakeNode(const std::string& name) {
  return NodeBuilder(name);
}

class PodBuilder {
 public:
  explicit PodBuilder(std::string name) {
    pod_.uid = "uid-" + name;
    pod_.name = std::move(name);
    pod_.namespace_ = "default";
    pod_.scheduler_name = "metrics-scheduler";
    pod_.containers.push_back({});
  }
  // Requests of the (first) container.
  PodBuilder& Req(int64_t milli_cpu, int64_t memory) {
    pod_.containers[0].requests.milli_cpu = milli_cpu;
    pod_.containers[0].requests.memory = memory;
    return *this;
  }
  PodBuilder& Ephemeral(int64_t bytes) {
    pod_.containers[0].requests.ephemeral_storage = bytes;
    return *this;
  }
  PodBuilder& Scalar(const std::string& name, int64_t amount) {
    pod_.containers[0].requests.SetScalar(name, amount);
    return *this;
  }
  PodBuilder& HostPort(int32_t port, const std::string& protocol = "TCP",
                       const std::string& ip = "") {
    pod_.containers[0].ports.push_back({port, protocol, ip});
    return *this;
  }
  PodBuilder& Tolerate(const std::string& key, TolerationOperator op,
                       const std::string& value,
                       std::optional<TaintEffect> effect = std::nullopt) {
    pod_.tolerations.push_back({key, op, value, effect});
    return *this;
  }
  PodBuilder& NodeSelector(const std::string& k, const std::string& v) {
    pod_.node_selector[k] = v;
    return *this;
  }
  PodBuilder& Affinity(std::vector<NodeSelectorTerm> terms) {
    pod_.required_node_affinity = std::move(terms);
    return *this;
  }
  PodBuilder& NodeName(const std::string& name) {
    pod_.node_name = name;
    return *this;
  }
  PodBuilder& Uid(const std::string& uid) {
    pod_.uid = uid;
    return *this;
  }
  PodBuilder& Scheduler(const std::string& name) {
    pod_.scheduler_name = name;
    return *this;
  }
  PodBuilder& Priority(int32_t priority) {
    pod_.priority = priority;
    return *this;
  }
  PodBuilder& Namespace(const std::string& ns) {
    pod_.namespace_ = ns;
    return *this;
  }
  PodBuilder& Label(const std::string& k, const std::string& v) {
    pod_.labels[k] = v;
    return *this;
  }
  // Required pod affinity and anti-affinity terms; preferred ones with
  // their weight.
  PodBuilder& PodAffinity(PodAffinityTerm term) {
    pod_.pod_affinity.required.push_back(std::move(term));
    return *this;
  }
  PodBuilder& PodAntiAffinity(PodAffinityTerm term) {
    pod_.pod_anti_affinity.required.push_back(std::move(term));
    return *this;
  }
  PodBuilder& PreferPodAffinity(int32_t weight, PodAffinityTerm term) {
    pod_.pod_affinity.preferred.push_back({weight, std::move(term)});
    return *this;
  }
  PodBuilder& PreferPodAntiAffinity(int32_t weight, PodAffinityTerm term) {
    pod_.pod_anti_affinity.preferred.push_back({weight, std::move(term)});
    return *this;
  }
  // A topology spread constraint selecting pods labelled `key=value`.
  PodBuilder& Spread(int32_t max_skew, const std::string& topology_key,
                     UnsatisfiableAction action, const std::string& key,
                     const std::string& value) {
    TopologySpreadConstraint c;
    c.max_skew = max_skew;
    c.topology_key = topology_key;
    c.when_unsatisfiable = action;
    c.label_selector = LabelSelector{.match_labels = {{key, value}}};
    pod_.topology_spread.push_back(std::move(c));
    return *this;
  }
  PodBuilder& Controller(const std::string& api_version,
                         const std::string& kind, const std::string& name,
                         const std::string& uid = "") {
    pod_.controller = ControllerRef{api_version, kind, name, uid};
    return *this;
  }
  Pod& mutable_pod() { return pod_; }
  Pod Build() const { return pod_; }
  operator Pod() const { return pod_; }  // NOLINT

 private:
  Pod pod_;
};

inline PodBuilder MakePod(const std::string& name = "p") {
  return PodBuilder(name);
}

// A pod affinity term selecting pods labelled `key=value` in `namespaces`
// (as the decoder leaves them: the pod's own when the term names none),
// over `topology_key`.
inline PodAffinityTerm Term(const std::string& key, const std::string& value,
                            const std::string& topology_key,
                            std::vector<std::string> namespaces = {"default"}) {
  PodAffinityTerm t;
  t.label_selector = LabelSelector{.match_labels = {{key, value}}};
  t.namespaces = std::move(namespaces);
  t.topology_key = topology_key;
  return t;
}

// A metric column with every sample taken at `time_ms`.
inline MetricColumn Column(const std::vector<double>& values,
                           int64_t time_ms = kNow) {
  MetricColumn c;
  c.values = values;
  c.time_ms.assign(values.size(), time_ms);
  return c;
}

// A metric term; values older than 60 s are stale.
inline MetricTerm Term(const std::string& name, double weight = 1,
                       Direction dir = Direction::kLower,
                       MissingPolicy missing = MissingPolicy::kNeutral) {
  MetricTerm t;
  t.name = name;
  t.weight = weight;
  t.direction = dir;
  t.missing = missing;
  t.max_staleness_ms = 60000;
  return t;
}

// A configuration scoring `metrics` alone (no built-in term).
inline ScoringConfig MetricsOnly(std::vector<MetricTerm> metrics) {
  ScoringConfig c;
  c.metrics = std::move(metrics);
  c.builtins[BuiltinTerm::kLeastAllocated] = 0;
  c.builtins[BuiltinTerm::kBalancedAllocation] = 0;
  c.builtins[BuiltinTerm::kRecentPlacements] = 0;
  return c;
}

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_BUILDERS_H_
