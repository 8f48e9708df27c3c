// PodDisruptionBudget (policy/v1): what preemption reads of one, to prefer
// evicting pods whose budget allows it.
#ifndef METRICS_SCHEDULER_MODEL_DISRUPTION_BUDGET_H_
#define METRICS_SCHEDULER_MODEL_DISRUPTION_BUDGET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/pod_affinity.h"

namespace ms {

struct PodDisruptionBudget {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  // spec.selector; absent selects no pod, and so does an empty one here
  // (kube-scheduler skips a budget whose selector is empty).
  std::optional<LabelSelector> selector;
  int32_t disruptions_allowed = 0;  // status.disruptionsAllowed
  // status.disruptedPods: names of pods already being evicted, which no
  // longer count against the budget.
  std::vector<std::string> disrupted_pods;

  std::string Key() const { return namespace_ + "/" + name; }
  friend bool operator==(const PodDisruptionBudget&,
                         const PodDisruptionBudget&) = default;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_DISRUPTION_BUDGET_H_
