// Persistent storage as the volume plugins read it: the claims a pod names,
// PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
// CSIDrivers and CSIStorageCapacities.
//
// Plain values decoded by kube/ with only the fields kube-scheduler's
// VolumeRestrictions, NodeVolumeLimits, VolumeBinding and VolumeZone read,
// each already resolved the way those plugins resolve it (a claim's class
// from the beta annotation or the spec; a volume mode absent meaning
// Filesystem). Read by scoring/volume_catalog and scoring/plugins/volume_*.
// Thread-compatible.
#ifndef METRICS_SCHEDULER_MODEL_VOLUMES_H_
#define METRICS_SCHEDULER_MODEL_VOLUMES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/pod.h"
#include "model/pod_affinity.h"

namespace ms {

// Access modes as bits.
enum AccessMode : uint8_t {
  kReadWriteOnce = 1u << 0,
  kReadOnlyMany = 1u << 1,
  kReadWriteMany = 1u << 2,
  kReadWriteOncePod = 1u << 3,
};

enum class VolumeMode : uint8_t { kFilesystem, kBlock };

enum class ClaimPhase : uint8_t { kPending, kBound, kLost };

struct PersistentVolumeClaim {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  // The beta annotation volume.beta.kubernetes.io/storage-class, else
  // spec.storageClassName, else "".
  std::string storage_class;
  std::string volume_name;  // spec.volumeName
  // Annotations: pv.kubernetes.io/bind-completed is present;
  // volume.kubernetes.io/selected-node.
  bool bind_completed = false;
  std::string selected_node;
  uint8_t access_modes = 0;  // AccessMode bits
  std::optional<LabelSelector> selector;  // spec.selector
  int64_t storage_request = 0;  // spec.resources.requests.storage, bytes
  VolumeMode volume_mode = VolumeMode::kFilesystem;
  std::string volume_attributes_class;  // spec.volumeAttributesClassName
  ClaimPhase phase = ClaimPhase::kPending;
  bool deleting = false;  // metadata.deletionTimestamp is set
  std::string controller_uid;  // the controlling ownerReference's uid

  std::string Key() const { return namespace_ + "/" + name; }
  // kube-scheduler's "fully bound": a volume named and the PV controller's
  // bind-completed annotation (a volumeName alone is only pre-bound).
  bool fully_bound() const { return !volume_name.empty() && bind_completed; }

  friend bool operator==(const PersistentVolumeClaim&,
                         const PersistentVolumeClaim&) = default;
};

// spec.claimRef of a PersistentVolume.
struct ClaimRef {
  std::string namespace_;
  std::string name;
  std::string uid;  // may be empty (a pre-bound volume)

  friend bool operator==(const ClaimRef&, const ClaimRef&) = default;
};

enum class VolumePhase : uint8_t {
  kPending,
  kAvailable,
  kBound,
  kReleased,
  kFailed
};

struct PersistentVolume {
  std::string name;
  std::string uid;
  std::string resource_version;
  Labels labels;
  std::string storage_class;  // the beta annotation, else the spec's
  std::optional<ClaimRef> claim_ref;
  int64_t capacity = 0;  // spec.capacity.storage, bytes
  uint8_t access_modes = 0;
  VolumeMode volume_mode = VolumeMode::kFilesystem;
  std::string volume_attributes_class;
  VolumePhase phase = VolumePhase::kPending;
  bool deleting = false;
  // spec.nodeAffinity.required.nodeSelectorTerms; absent: any node.
  std::optional<std::vector<NodeSelectorTerm>> node_affinity;
  // spec.csi: the driver and the volume handle (empty for other sources).
  std::string csi_driver;
  std::string csi_handle;

  friend bool operator==(const PersistentVolume&,
                         const PersistentVolume&) = default;
};

enum class BindingMode : uint8_t { kUnset, kImmediate, kWaitForFirstConsumer };

// One term of a StorageClass's allowedTopologies: every key must have one
// of its values (key In values, ANDed).
using TopologySelectorTerm = std::vector<std::pair<std::string,
                                                   std::vector<std::string>>>;

struct StorageClass {
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string provisioner;
  BindingMode binding_mode = BindingMode::kUnset;
  std::vector<TopologySelectorTerm> allowed_topologies;  // ORed

  friend bool operator==(const StorageClass&, const StorageClass&) = default;
};

// A CSINode: the CSI drivers registered on the node and, per driver, how
// many volumes it may attach (drivers that report no limit are left out).
struct CsiNode {
  std::string name;  // the node's
  std::string uid;
  std::string resource_version;
  std::set<std::string> drivers;                 // spec.drivers[].name
  std::map<std::string, int64_t> attach_limits;  // driver -> count

  friend bool operator==(const CsiNode&, const CsiNode&) = default;
};

// A CSIDriver (storage.k8s.io/v1), with the fields the volume plugins
// read: a driver that sets spec.storageCapacity has VolumeBinding check
// its CSIStorageCapacity objects before provisioning; from Kubernetes 1.37
// (VolumeLimitScaling) a driver that sets
// spec.preventPodSchedulingIfMissing keeps pods with its volumes off nodes
// whose CSINode does not list it.
struct CsiDriver {
  std::string name;
  std::string uid;
  std::string resource_version;
  bool storage_capacity = false;
  bool prevent_scheduling_if_missing = false;

  friend bool operator==(const CsiDriver&, const CsiDriver&) = default;
};

// A CSIStorageCapacity (storage.k8s.io/v1): how much a storage class's
// driver can provision for the nodes its topology selects.
struct CsiStorageCapacity {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string storage_class;  // storageClassName
  // nodeTopology; absent: no node has access.
  std::optional<LabelSelector> node_topology;
  std::optional<int64_t> capacity;             // bytes
  std::optional<int64_t> maximum_volume_size;  // bytes

  std::string Key() const { return namespace_ + "/" + name; }
  // The largest volume it allows: maximumVolumeSize, else capacity.
  std::optional<int64_t> VolumeLimit() const {
    return maximum_volume_size ? maximum_volume_size : capacity;
  }

  friend bool operator==(const CsiStorageCapacity&,
                         const CsiStorageCapacity&) = default;
};

// What binding a pod's unbound WaitForFirstConsumer claims takes once its
// node is chosen, as kube-scheduler's VolumeBinding Reserve and PreBind do
// it: each claim matched to an available PV gets that PV (the PV's
// claimRef is set to it), each other claim is provisioned on the node (its
// volume.kubernetes.io/selected-node annotation is set). Empty when every
// claim is bound already.
struct VolumeBindings {
  struct Bind {
    std::string volume;          // the PV's name
    std::string volume_version;  // its resourceVersion: the precondition
    ClaimRef claim;
    std::string claim_version;
    // The PV named the claim already (pre-bound by its creator): it is not
    // marked pv.kubernetes.io/bound-by-controller.
    bool prebound = false;
  };
  struct Provision {
    std::string namespace_;
    std::string name;
    std::string claim_version;  // the precondition
  };
  std::string node;
  std::vector<Bind> binds;
  std::vector<Provision> provisions;

  bool empty() const { return binds.empty() && provisions.empty(); }
  friend bool operator==(const VolumeBindings&,
                         const VolumeBindings&) = default;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_VOLUMES_H_
