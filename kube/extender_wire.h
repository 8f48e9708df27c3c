// kube-scheduler's extender protocol on the wire (k8s.io/kube-scheduler
// extender/v1 types.go): what a filter or prioritize call sends, and what
// the extender answers. Go's encoding/json writes the field names as
// declared (`Pod`, `NodeNames`) and reads them ignoring case, so names are
// matched here ignoring case too.
//
// Pure functions; thread-safe.
#ifndef METRICS_SCHEDULER_KUBE_EXTENDER_WIRE_H_
#define METRICS_SCHEDULER_KUBE_EXTENDER_WIRE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ms::kube {

// What the extender needs of ExtenderArgs.
struct ExtenderArgs {
  std::string pod_namespace;  // Pod.metadata.namespace
  std::string pod_name;       // Pod.metadata.name
  // Pod.metadata.labels and Pod.spec.priority: what a metric filter's
  // scopes select pods by (model/threshold_scope.h).
  std::map<std::string, std::string> pod_labels;
  int32_t pod_priority = 0;
  // NodeNames (nodeCacheCapable: true), or the names of Nodes.items.
  std::vector<std::string> node_names;
  // The call carried whole Node objects (nodeCacheCapable: false), which
  // an answer would have to echo back.
  bool with_nodes = false;
};

// InvalidArgument when `body` is not an ExtenderArgs object.
absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(absl::string_view body);

// ExtenderFilterResult with NodeNames: the nodes that pass, and those that
// fail with their reason, all as unresolvable (preemption cannot change a
// node's metrics); `error` (may be empty) in Error.
std::string EncodeFilterResult(
    const std::vector<std::string>& passed,
    const std::vector<std::pair<std::string, std::string>>& failed,
    const std::string& error = "");

// HostPriorityList: [{"Host": name, "Score": score}, ...].
std::string EncodeHostPriorities(
    const std::vector<std::pair<std::string, int64_t>>& scores);

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_EXTENDER_WIRE_H_
