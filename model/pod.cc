#include "model/pod.h"

namespace ms {
namespace {

constexpr int64_t kDefaultMilliCpuRequest = 100;                // 100m
constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;  // 200Mi

// Requests with the names of the lists they came from.
struct Named {
  Resources amounts;
  RequestNames names;
};

RequestNames NamesOf(const Resources& r, RequestNames named) {
  return {.cpu = named.cpu || r.milli_cpu != 0,
          .memory = named.memory || r.memory != 0};
}

void Merge(RequestNames& into, RequestNames from) {
  into.cpu |= from.cpu;
  into.memory |= from.memory;
}

const ContainerResourceStatus* FindStatus(const Pod& pod,
                                          const std::string& name) {
  for (const ContainerResourceStatus& s : pod.container_statuses) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// What is charged for one container (determineContainerReqs): its spec;
// once its status reports resources, the largest of spec, allocated and
// actual, per resource, leaving the spec out while the resize is
// infeasible. Regular init containers always count their spec.
Named ContainerRequests(const Pod& pod, const Container& c, bool use_status) {
  Named out{c.requests, NamesOf(c.requests, c.named)};
  const ContainerResourceStatus* status =
      use_status ? FindStatus(pod, c.name) : nullptr;
  if (status == nullptr || !status->actual) return out;
  if (pod.resize_infeasible) out = {};
  out.amounts.SetMax(*status->actual);
  if (status->allocated) out.amounts.SetMax(*status->allocated);
  Merge(out.names, NamesOf(out.amounts, status->named));
  return out;
}

// Which non-zero defaults replace an amount a container does not name.
struct Defaults {
  bool cpu = false;
  bool memory = false;
};

Resources WithDefaults(Named n, Defaults d) {
  if (d.cpu && !n.names.cpu) n.amounts.milli_cpu = kDefaultMilliCpuRequest;
  if (d.memory && !n.names.memory) n.amounts.memory = kDefaultMemoryRequest;
  return n.amounts;
}

// Whether pod-level requests replace the containers' sum.
enum class PodLevel { kRead, kIgnore };

// component-helpers' PodRequests (with status resources) with `d` as its
// NonMissingContainerRequests; `names` gets which of cpu and memory the
// result names (a container, the pod level or the overhead).
Resources Requests(const Pod& pod, Defaults d, PodLevel level_requests,
                   RequestNames* names) {
  RequestNames named;
  // The sidecar KEP's sum.
  Resources reqs;
  for (const Container& c : pod.containers) {
    Named n = ContainerRequests(pod, c, /*use_status=*/true);
    Merge(named, n.names);
    reqs.Add(WithDefaults(n, d));
  }
  Resources sidecars;  // sidecar init containers started so far
  Resources init_max;
  for (const Container& c : pod.init_containers) {
    Named n = ContainerRequests(pod, c, /*use_status=*/c.restart_always);
    Merge(named, n.names);
    Resources r = WithDefaults(n, d);
    if (c.restart_always) {
      reqs.Add(r);
      sidecars.Add(r);
      init_max.SetMax(sidecars);
    } else {
      r.Add(sidecars);
      init_max.SetMax(r);
    }
  }
  reqs.SetMax(init_max);
  // Pod-level amounts replace the sum.
  if (pod.pod_requests && level_requests == PodLevel::kRead) {
    const Resources& level = *pod.pod_requests;
    const RequestNames level_names = NamesOf(level, pod.pod_requests_named);
    if (level_names.cpu) reqs.milli_cpu = level.milli_cpu;
    if (level_names.memory) reqs.memory = level.memory;
    for (const auto& [name, value] : level.scalar) reqs.SetScalar(name, value);
    Merge(named, level_names);
  }
  reqs.Add(pod.overhead);
  Merge(named, NamesOf(pod.overhead, {}));
  reqs.pods = 1;
  if (names != nullptr) *names = named;
  return reqs;
}

}  // namespace

Resources PodRequests(const Pod& pod) {
  return Requests(pod, {}, PodLevel::kRead, nullptr);
}

Resources PodNonZeroRequests(const Pod& pod) {
  constexpr Defaults kBoth{.cpu = true, .memory = true};
  if (!pod.pod_requests) return Requests(pod, kBoth, PodLevel::kRead, nullptr);
  // PodInfo.CalculateResource: with pod-level requests, a default only for
  // what nothing names.
  RequestNames names;
  Resources requests = Requests(pod, {}, PodLevel::kRead, &names);
  const Defaults d{.cpu = !names.cpu, .memory = !names.memory};
  if (!d.cpu && !d.memory) return requests;
  return Requests(pod, d, PodLevel::kRead, nullptr);
}

Resources PodScoringRequests(const Pod& pod) {
  return Requests(pod, {.cpu = true, .memory = true}, PodLevel::kIgnore,
                  nullptr);
}

std::vector<ContainerPort> PodHostPorts(const Pod& pod) {
  std::vector<ContainerPort> ports;
  for (const Container& c : pod.init_containers) {
    if (!c.restart_always) continue;
    for (const ContainerPort& p : c.ports) {
      if (p.host_port > 0) ports.push_back(p);
    }
  }
  for (const Container& c : pod.containers) {
    for (const ContainerPort& p : c.ports) {
      if (p.host_port > 0) ports.push_back(p);
    }
  }
  return ports;
}

}  // namespace ms
