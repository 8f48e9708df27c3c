#include "model/topology_spread.h"

#include "absl/strings/str_cat.h"

namespace ms {

void WorkloadSelectors::Upsert(const Workload& w) {
  const std::string key = absl::StrCat(w.namespace_, "/", w.name);
  switch (w.kind) {
    case WorkloadKind::kService:
      // A Service without a selector, or with an empty one, adds nothing
      // to any pod's selector.
      if (!w.selector || w.selector->match_labels.empty()) {
        Remove(w.kind, w.namespace_, w.name);
      } else {
        services[w.namespace_][w.name] = w.selector->match_labels;
      }
      return;
    case WorkloadKind::kReplicaSet:
      replica_sets[key] = w.selector;
      return;
    case WorkloadKind::kStatefulSet:
      stateful_sets[key] = w.selector;
      return;
    case WorkloadKind::kReplicationController:
      replication_controllers[key] =
          w.selector ? w.selector->match_labels : Labels();
      return;
  }
}

void WorkloadSelectors::Remove(WorkloadKind kind,
                               const std::string& namespace_,
                               const std::string& name) {
  const std::string key = absl::StrCat(namespace_, "/", name);
  switch (kind) {
    case WorkloadKind::kService:
      if (auto it = services.find(namespace_); it != services.end()) {
        it->second.erase(name);
        if (it->second.empty()) services.erase(it);
      }
      return;
    case WorkloadKind::kReplicaSet:
      replica_sets.erase(key);
      return;
    case WorkloadKind::kStatefulSet:
      stateful_sets.erase(key);
      return;
    case WorkloadKind::kReplicationController:
      replication_controllers.erase(key);
      return;
  }
}

}  // namespace ms
