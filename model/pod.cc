#include "model/pod.h"

namespace ms {
namespace {

constexpr int64_t kDefaultMilliCpuRequest = 100;                // 100m
constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;  // 200Mi

Resources WithDefaults(const Resources& r) {
  Resources out = r;
  if (out.milli_cpu == 0) out.milli_cpu = kDefaultMilliCpuRequest;
  if (out.memory == 0) out.memory = kDefaultMemoryRequest;
  return out;
}

// Which amounts of a container to count. After an in-place resize the
// kubelet reports what it allocated and what the container actually has;
// until it reports them, both are the spec (kube-scheduler's
// containerSpecRequests, containerAllocatedRequests and
// containerActuatedRequests). A resize found infeasible is not counted:
// its spec is not the container's.
enum class Amounts { kSpec, kAllocated, kActuated };

const ContainerResourceStatus* FindStatus(const Pod& pod,
                                          const std::string& name) {
  for (const ContainerResourceStatus& s : pod.container_statuses) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Resources ContainerAmounts(const Pod& pod, const Container& c,
                           Amounts amounts) {
  if (amounts != Amounts::kSpec) {
    const ContainerResourceStatus* status = FindStatus(pod, c.name);
    if (status != nullptr) {
      if (amounts == Amounts::kActuated && status->actual) {
        return *status->actual;
      }
      if (status->allocated) return *status->allocated;
    }
    if (pod.resize_infeasible) return {};
  }
  return c.requests;
}

// The containers' sum as the sidecar KEP defines it:
// max(sum of containers + sum of sidecar init containers,
//     each regular init container + the sidecars started before it).
template <typename Adjust>
Resources Aggregate(const Pod& pod, Amounts amounts, Adjust adjust) {
  Resources reqs;
  for (const Container& c : pod.containers) {
    reqs.Add(adjust(ContainerAmounts(pod, c, amounts)));
  }
  Resources sidecars;  // sidecar init containers started so far
  Resources init_max;
  for (const Container& c : pod.init_containers) {
    Resources r = adjust(ContainerAmounts(pod, c, amounts));
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
  return reqs;
}

// kube-scheduler's PodRequests with status resources (InPlacePodVertical-
// Scaling, on by default): the larger of what the spec asks, what the
// kubelet allocated and what it actuated, aggregated each on its own; when
// the resize is infeasible, the spec is left out.
template <typename Adjust>
Resources Requests(const Pod& pod, Adjust adjust) {
  Resources reqs;
  if (pod.container_statuses.empty() && !pod.resize_infeasible) {
    reqs = Aggregate(pod, Amounts::kSpec, adjust);  // nothing resized
  } else {
    if (!pod.resize_infeasible) reqs = Aggregate(pod, Amounts::kSpec, adjust);
    reqs.SetMax(Aggregate(pod, Amounts::kAllocated, adjust));
    reqs.SetMax(Aggregate(pod, Amounts::kActuated, adjust));
  }
  reqs.Add(pod.overhead);
  reqs.pods = 1;
  return reqs;
}

}  // namespace

Resources PodRequests(const Pod& pod) {
  return Requests(pod, [](const Resources& r) { return r; });
}

Resources PodNonZeroRequests(const Pod& pod) {
  return Requests(pod, WithDefaults);
}

std::vector<ContainerPort> PodHostPorts(const Pod& pod) {
  std::vector<ContainerPort> ports;
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const Container& c : *list) {
      for (const ContainerPort& p : c.ports) {
        if (p.host_port > 0) ports.push_back(p);
      }
    }
  }
  return ports;
}

}  // namespace ms
