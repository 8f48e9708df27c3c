#include "model/pod.h"

namespace ms {
namespace {

constexpr int64_t kDefaultMilliCpuRequest = 100;                // 100m
constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;  // 200Mi

// A resource list: its amounts, and which of cpu and memory it names (an
// extended resource is named when `amounts.scalar` holds it, even as 0).
struct Named {
  Resources amounts;
  RequestNames names;
};

RequestNames NamesOf(const Resources& r, RequestNames named) {
  return {.cpu = named.cpu || r.milli_cpu != 0,
          .memory = named.memory || r.memory != 0};
}

Named NamedOf(const Resources& r, RequestNames named) {
  return {r, NamesOf(r, named)};
}

void Merge(RequestNames& into, RequestNames from) {
  into.cpu |= from.cpu;
  into.memory |= from.memory;
}

// component-helpers' addResourceList and maxResourceList.
void AddInto(Named& into, const Named& from) {
  into.amounts.Add(from.amounts);
  Merge(into.names, from.names);
}

void MaxInto(Named& into, const Named& from) {
  into.amounts.SetMax(from.amounts);
  Merge(into.names, from.names);
}

// Which non-zero defaults replace an amount a container's list does not
// name (NonMissingContainerRequests).
struct Defaults {
  bool cpu = false;
  bool memory = false;
};

constexpr Defaults kBothDefaults{.cpu = true, .memory = true};

// applyNonMissing.
Named WithDefaults(Named n, Defaults d) {
  if (d.cpu && !n.names.cpu) {
    n.amounts.milli_cpu = kDefaultMilliCpuRequest;
    n.names.cpu = true;
  }
  if (d.memory && !n.names.memory) {
    n.amounts.memory = kDefaultMemoryRequest;
    n.names.memory = true;
  }
  return n;
}

// How the requests are asked for (component-helpers' PodResourcesOptions,
// with InPlacePodLevelResourcesVerticalScalingEnabled on from 1.36, its
// gate's default).
struct Options {
  KubeVersion kube;
  Defaults defaults;       // NonMissingContainerRequests
  bool use_status = true;  // UseStatusResources
  bool pod_level = true;   // !SkipPodLevelResources
};

enum class Kind { kContainer, kSidecar, kInit };

const ContainerResourceStatus* FindStatus(const Pod& pod,
                                          const std::string& name) {
  for (const ContainerResourceStatus& s : pod.container_statuses) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Named Spec(const Container& c) { return NamedOf(c.requests, c.named); }

// The sidecar KEP's sum over the pod's containers of `of(container, kind)`,
// with `d` applied to each (1.34 AggregateContainerRequests' loops, 1.37
// aggregateContainerResourcesByFn):
//   max(sum of containers + sum of sidecar init containers,
//       each regular init container + the sidecars started before it).
template <typename Of>
Named Aggregate(const Pod& pod, Defaults d, Of of) {
  Named sum;
  for (const Container& c : pod.containers) {
    AddInto(sum, WithDefaults(of(c, Kind::kContainer), d));
  }
  Named sidecars;  // sidecar init containers started so far
  Named init_max;
  for (const Container& c : pod.init_containers) {
    Named n =
        WithDefaults(of(c, c.restart_always ? Kind::kSidecar : Kind::kInit), d);
    if (c.restart_always) {
      AddInto(sum, n);
      AddInto(sidecars, n);
      MaxInto(init_max, sidecars);
    } else {
      AddInto(n, sidecars);
      MaxInto(init_max, n);
    }
  }
  MaxInto(sum, init_max);
  return sum;
}

// 1.34 to 1.36: what one container counts (determineContainerReqs,
// determineEffectiveRequests): its spec; once its status reports
// resources, the largest of spec, actual and allocated, per resource,
// leaving the spec out while the resize is infeasible. Regular init
// containers always count their spec.
Named LargestPerContainer(const Pod& pod, const Container& c, Kind kind) {
  Named out = Spec(c);
  if (kind == Kind::kInit) return out;
  const ContainerResourceStatus* s = FindStatus(pod, c.name);
  if (s == nullptr || !s->reports_resources()) return out;
  if (pod.resize_infeasible) out = {};
  if (s->actual) MaxInto(out, NamedOf(*s->actual, s->actual_named));
  if (s->allocated) MaxInto(out, NamedOf(*s->allocated, s->allocated_named));
  return out;
}

// 1.37 (containerAllocatedRequests): allocatedResources, else the spec;
// nothing while the resize is infeasible. For every kind of container.
Named Allocated(const Pod& pod, const Container& c) {
  const ContainerResourceStatus* s = FindStatus(pod, c.name);
  if (s != nullptr && s->allocated) {
    return NamedOf(*s->allocated, s->allocated_named);
  }
  return pod.resize_infeasible ? Named{} : Spec(c);
}

// 1.37 (containerActuatedRequests): resources.requests, else
// allocatedResources, else the spec; nothing while the resize is
// infeasible.
Named Actuated(const Pod& pod, const Container& c) {
  const ContainerResourceStatus* s = FindStatus(pod, c.name);
  if (s != nullptr && s->actual) return NamedOf(*s->actual, s->actual_named);
  return Allocated(pod, c);
}

// The containers' part (AggregateContainerRequests).
Named ContainersRequests(const Pod& pod, const Options& o) {
  auto spec = [](const Container& c, Kind) { return Spec(c); };
  if (!o.use_status) return Aggregate(pod, o.defaults, spec);
  if (!o.kube.AtLeast(37)) {
    // The largest per container, then the sum.
    return Aggregate(pod, o.defaults, [&pod](const Container& c, Kind kind) {
      return LargestPerContainer(pod, c, kind);
    });
  }
  // 1.37: the sums, then the largest of them.
  const PodResourceStatus& status = pod.resource_status;
  Named allocated;
  Named actuated;
  if (status.allocated && status.actual) {
    // The kubelet's own sums, taken as they are (no defaults). Its
    // allocatedResources is PodRequests of the pod with the overhead
    // (kubelet_pods.go), and the overhead is added again below: as
    // kube-scheduler 1.37 does, a pod with spec.overhead counts it twice.
    allocated = NamedOf(*status.allocated, status.allocated_named);
    actuated = NamedOf(*status.actual, status.actual_named);
  } else {
    allocated = Aggregate(pod, o.defaults, [&pod](const Container& c, Kind) {
      return Allocated(pod, c);
    });
    actuated = Aggregate(pod, o.defaults, [&pod](const Container& c, Kind) {
      return Actuated(pod, c);
    });
  }
  Named out =
      pod.resize_infeasible ? Named{} : Aggregate(pod, o.defaults, spec);
  MaxInto(out, actuated);
  MaxInto(out, allocated);
  return out;
}

// applyPodLevelResources: sets in `reqs` each pod-level resource (cpu,
// memory, hugepages-*) that `keys` names to its amount in `values` (0 when
// `values` has none).
void ApplyPodLevel(const Named& keys, const Named& values, Named& reqs) {
  if (keys.names.cpu) {
    reqs.amounts.milli_cpu = values.amounts.milli_cpu;
    reqs.names.cpu = true;
  }
  if (keys.names.memory) {
    reqs.amounts.memory = values.amounts.memory;
    reqs.names.memory = true;
  }
  for (const auto& [name, value] : keys.amounts.scalar) {
    if (name.starts_with("hugepages-")) {
      reqs.amounts.SetScalar(name, values.amounts.Scalar(name));
    }
  }
}

// The pod-level requests replacing the containers' part in `reqs`.
void PodLevelRequests(const Pod& pod, const Options& o, Named& reqs) {
  if (!o.pod_level || !pod.pod_requests) return;
  const Named spec = NamedOf(*pod.pod_requests, pod.pod_requests_named);
  const PodResourceStatus& status = pod.resource_status;
  if (!o.use_status || !o.kube.AtLeast(36) || !status.reports_resources()) {
    ApplyPodLevel(spec, spec, reqs);
    return;
  }
  // From 1.36, once status.resources is set: the largest of spec, actual
  // and allocated (the overhead in the last two, and added again below, as
  // kube-scheduler does).
  Named effective = pod.resize_infeasible ? Named{} : spec;
  if (status.actual) {
    MaxInto(effective, NamedOf(*status.actual, status.actual_named));
  }
  if (status.allocated) {
    MaxInto(effective, NamedOf(*status.allocated, status.allocated_named));
  }
  // 1.36 sets the resources the spec names; 1.37 each one any of the three
  // names.
  ApplyPodLevel(o.kube.AtLeast(37) ? effective : spec, effective, reqs);
}

// component-helpers' PodRequests; `names` of the result says which of cpu
// and memory a list it read names.
Named Requests(const Pod& pod, const Options& o) {
  Named reqs = ContainersRequests(pod, o);
  PodLevelRequests(pod, o, reqs);
  AddInto(reqs, NamedOf(pod.overhead, {}));
  reqs.amounts.pods = 1;
  return reqs;
}

}  // namespace

Resources PodRequests(const Pod& pod, KubeVersion kube) {
  return Requests(pod, {.kube = kube}).amounts;
}

Resources PodNonZeroRequests(const Pod& pod, KubeVersion kube) {
  if (!pod.pod_requests) {
    return Requests(pod, {.kube = kube, .defaults = kBothDefaults}).amounts;
  }
  // PodInfo.CalculateResource (getNonMissingContainerRequests): with
  // pod-level requests, a default only for what nothing read names.
  const Named requests = Requests(pod, {.kube = kube});
  const Defaults d{.cpu = !requests.names.cpu,
                   .memory = !requests.names.memory};
  if (!d.cpu && !d.memory) return requests.amounts;
  return Requests(pod, {.kube = kube, .defaults = d}).amounts;
}

Resources PodScoringRequests(const Pod& pod) {
  return Requests(pod, {.defaults = kBothDefaults,
                        .use_status = false,
                        .pod_level = false})
      .amounts;
}

CpuMemoryLimits PodLimits(const Pod& pod) {
  bool cpu = true;
  bool memory = true;
  const Named sum = Aggregate(pod, {}, [&](const Container& c, Kind) {
    cpu = cpu && c.limits.milli_cpu > 0;
    memory = memory && c.limits.memory > 0;
    return Named{.amounts = {.milli_cpu = c.limits.milli_cpu,
                             .memory = c.limits.memory}};
  });
  cpu = cpu && sum.amounts.milli_cpu > 0;
  memory = memory && sum.amounts.memory > 0;
  Resources limits{.milli_cpu = cpu ? sum.amounts.milli_cpu : 0,
                   .memory = memory ? sum.amounts.memory : 0};
  if (pod.pod_limits.milli_cpu > 0) limits.milli_cpu = pod.pod_limits.milli_cpu;
  if (pod.pod_limits.memory > 0) limits.memory = pod.pod_limits.memory;
  if (limits.milli_cpu > 0) {
    limits.Add({.milli_cpu = pod.overhead.milli_cpu});
  }
  if (limits.memory > 0) limits.Add({.memory = pod.overhead.memory});
  return {.milli_cpu = limits.milli_cpu, .memory = limits.memory};
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
