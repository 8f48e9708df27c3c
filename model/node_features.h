// Node features a pod may require: kube-scheduler's NodeDeclaredFeatures
// filter (in the default profile from Kubernetes 1.36). A node declares
// what it supports (status.declaredFeatures, written by its kubelet); a
// pod's spec implies what it needs (component-helpers'
// nodedeclaredfeatures, InferForScheduling); a node that lacks one fails
// the pod, UnschedulableAndUnresolvable: "node(s) didn't match Pod's
// required features". Only the features a pod's spec can imply are kept,
// as bits; a node's other declared names are dropped when decoding.
#ifndef METRICS_SCHEDULER_MODEL_NODE_FEATURES_H_
#define METRICS_SCHEDULER_MODEL_NODE_FEATURES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "model/kube_version.h"

namespace ms {

enum NodeFeature : uint32_t {
  // A container or init container with a restartPolicyRules action
  // RestartAllContainers (1.36 on).
  kFeatureRestartAllContainers = 1u << 0,
  // spec.hostNetwork with spec.hostUsers false (1.36 on).
  kFeatureUserNamespacesHostNetwork = 1u << 1,
  // A volume mount with bindMountOptions (1.37 on).
  kFeatureVolumeBindMountOptions = 1u << 2,
};

inline constexpr char kReasonNodeFeatures[] =
    "node(s) didn't match Pod's required features";

// The bit of a declared feature's name; 0 for a name no pod's spec implies.
uint32_t NodeFeatureOf(std::string_view name);

// The features release `v`'s kube-scheduler infers a pod needs: none
// before 1.36 (the filter is not in the default profile).
uint32_t NodeFeaturesOf(KubeVersion v);

// The names of the bits set, comma-separated, for logs and explain.
std::string NodeFeatureNames(uint32_t features);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_NODE_FEATURES_H_
