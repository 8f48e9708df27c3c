// Node: what the scheduler knows of a Kubernetes Node.
//
// A plain value decoded by kube/ and read by scoring/. Only the fields that
// placement needs are kept. Thread-compatible.
#ifndef METRICS_SCHEDULER_MODEL_NODE_H_
#define METRICS_SCHEDULER_MODEL_NODE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/resources.h"

namespace ms {

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;

  friend bool operator==(const Taint&, const Taint&) = default;
};

struct NodeAddress {
  std::string type;  // InternalIP, ExternalIP, Hostname, ...
  std::string address;

  friend bool operator==(const NodeAddress&, const NodeAddress&) = default;
};

struct Node {
  std::string name;
  std::string uid;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  // Only the annotations node-attribute metrics and metric filters' node
  // bounds read (kube::ListOptions::node_annotations); every other one is
  // skipped when decoding.
  std::map<std::string, std::string> annotations;
  bool unschedulable = false;  // spec.unschedulable (cordoned)
  std::vector<Taint> taints;
  Resources allocatable;  // status.allocatable; pods in `allocatable.pods`
  bool ready = false;     // condition Ready == "True"
  std::vector<NodeAddress> addresses;
  // Every name of every image the node holds (status.images[].names[]),
  // interned (InternImageName, which also keeps the sizes).
  std::vector<uint32_t> images;
  // A digest of status.images as the apiserver sent it (its JSON text),
  // so that a status write with the same list can reuse `images`
  // (kube::DecodeContext<Node>::known_images); 0 when it had none.
  uint64_t images_digest = 0;
  // status.declaredFeatures that a pod's spec may require, as
  // model/node_features.h bits.
  uint32_t declared_features = 0;

  friend bool operator==(const Node&, const Node&) = default;
};

// The `node.kubernetes.io/unschedulable` taint that a cordoned node carries
// implicitly, as kube-scheduler's NodeUnschedulable plugin sees it.
inline constexpr char kTaintNodeUnschedulable[] =
    "node.kubernetes.io/unschedulable";

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_NODE_H_
