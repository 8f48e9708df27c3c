#include "scoring/unseen_load.h"

#include <cmath>

#include "absl/strings/numbers.h"

namespace ms {

double UnseenLoad(const MetricTerm& term, const PodInfo& pod,
                  const Node& node) {
  using Basis = UnseenLoadEstimate::Basis;
  const UnseenLoadEstimate& e = term.estimate;
  if (!e.enabled()) return 0;
  if (auto it = pod.estimates.find(term.name); it != pod.estimates.end()) {
    double value = 0;
    if (absl::SimpleAtod(it->second, &value) && std::isfinite(value)) {
      return value;
    }
  }
  switch (e.basis) {
    case Basis::kNone:
      return 0;
    case Basis::kPerPod:
      return e.factor;
    case Basis::kCpuRequests:
      return node.allocatable.milli_cpu > 0
                 ? e.factor * static_cast<double>(pod.requests.milli_cpu) /
                       static_cast<double>(node.allocatable.milli_cpu)
                 : 0;
    case Basis::kMemoryRequests:
      return node.allocatable.memory > 0
                 ? e.factor * static_cast<double>(pod.requests.memory) /
                       static_cast<double>(node.allocatable.memory)
                 : 0;
  }
  return 0;
}

}  // namespace ms
