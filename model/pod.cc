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

template <typename Adjust>
Resources Requests(const Pod& pod, Adjust adjust) {
  Resources reqs;
  for (const Container& c : pod.containers) reqs.Add(adjust(c.requests));

  Resources sidecars;  // sidecar init containers started so far
  Resources init_max;
  for (const Container& c : pod.init_containers) {
    Resources r = adjust(c.requests);
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
