// VolumeBinding (kube-scheduler: plugins/volumebinding).
//
// Pre-filter, over the pod's claims (persistentVolumeClaim and generic
// ephemeral volumes) in spec order; the first failure rejects the pod on
// every node (UnschedulableAndUnresolvable), in kube-scheduler's words: an
// ephemeral claim not created yet or not owned by the pod, a claim Lost or
// being deleted. Each claim is then bound (spec.volumeName and the
// pv.kubernetes.io/bind-completed annotation), delayed (no volume yet, its
// class WaitForFirstConsumer) or else immediate-unbound, which rejects
// the pod: "pod has unbound immediate PersistentVolumeClaims" (the PV
// controller binds those; the pod is retried when they change).
//
// Filter, per node, every failure at once:
//   - a bound claim's PV missing, or its nodeAffinity not matching the
//     node (MatchesVolumeNodeAffinity);
//   - delayed claims: one already given a node (selected-node) fits only
//     that node; the others are matched, smallest request first, each to
//     the smallest available PV of its class (not yet chosen for this pod,
//     unclaimed or pre-bound to it, large enough, same volume mode and
//     attributes class, selector and access modes satisfied, node affinity
//     matching); a claim pre-bound by a PV is matched to that PV or to
//     nothing; the rest must be provisionable on the node (a provisioner
//     other than kubernetes.io/no-provisioner, allowedTopologies matching
//     the node's labels, and, for a claim with a storage request whose
//     provisioner is a CSIDriver with storageCapacity, a
//     CSIStorageCapacity of its class selecting the node with room for
//     the request: CheckProvisioning). They are taken claims with a
//     selected node first, in spec order, then the others smallest first;
//     the first that cannot be provisioned decides the reason.
// On success VolumeBindingCheck also says what the node's binding takes
// (model/volumes.h: VolumeBindings), which the binder writes before
// binding the pod.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_BINDING_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_BINDING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "model/volumes.h"
#include "scoring/volume_catalog.h"

namespace ms {

class ScorePlugin;  // scoring/score_plugin.h

inline constexpr char kReasonVolumeNodeConflict[] =
    "node(s) didn't match PersistentVolume's node affinity";
inline constexpr char kReasonVolumeBindConflict[] =
    "node(s) didn't find available persistent volumes to bind";
inline constexpr char kReasonVolumeMissing[] =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
inline constexpr char kReasonVolumeNotEnoughSpace[] =
    "node(s) did not have enough free storage";

struct VolumeBindingFilter {
  bool active = false;  // the pod has claims
  std::vector<const PersistentVolumeClaim*> bound;
  std::vector<const PersistentVolumeClaim*> delayed;  // smallest first
  // The delayed claims with a selected node, in spec order.
  std::vector<const PersistentVolumeClaim*> selected;
  // Per delayed claim: the PVs of its class.
  std::vector<std::vector<const PersistentVolume*>> candidates;
};

// Pre-filter: the rejection, or "" with *out filled. The pointers are the
// catalog's, valid while it does not change.
std::string PreFilterVolumeBinding(const Pod& pod, const VolumeCatalog& catalog,
                                   VolumeBindingFilter* out);

// What VolumeBindingCheck finds wrong with a node, as bits.
enum VolumeBindingFailure : uint32_t {
  kVolumeNodeConflict = 1u << 0,
  kVolumeBindConflict = 1u << 1,
  kVolumeMissing = 1u << 2,
  kVolumeNotEnoughSpace = 1u << 3,
};

// checkVolumeProvisions for one claim to be provisioned on a node with
// `labels`.
enum class Provisioning {
  kProvisionable,
  kNotProvisionable,  // no provisioner, or allowedTopologies exclude it
  kNoSpace,           // no CSIStorageCapacity with room selects the node
};
// *capacity (if given) is the CSIStorageCapacity that has room, the first
// by namespace/name (kube-scheduler: the first its lister yields), or null
// when capacity is not checked: a claim without a storage request (a
// request of 0 counts as none), a provisioner that is not a CSIDriver
// with storageCapacity.
Provisioning CheckProvisioning(const PersistentVolumeClaim& claim,
                               const Labels& labels,
                               const VolumeCatalog& catalog,
                               const CsiStorageCapacity** capacity);

// Filter: the failures on `node` (0: it fits). When it fits and `out` is
// set, *out is what binding the pod there takes.
uint32_t VolumeBindingCheck(const VolumeBindingFilter& filter,
                            const Node& node, const VolumeCatalog& catalog,
                            VolumeBindings* out = nullptr);

// Score (Kubernetes 1.37 on, whose StorageCapacityScoring gate is on by
// default; before, the plugin does not score): how much room a node's
// binding leaves, with the default shape {0: 10, 100: 0}. Per storage
// class of the chosen PVs (`bindings.binds`, the claims waiting for their
// first consumer matched to existing PVs), or when no PV is chosen, of the
// claims to be provisioned whose CSIStorageCapacity on the node
// (CheckProvisioning, on the node's `labels`) was checked:
//   u = sum of the claims' requests * 100 / capacity (the PVs' summed; the
//       class's CSIStorageCapacity.capacity once), integer division, 100
//       when the capacity is 0 or below the requests,
//   class score = 100 - u;
// the node's score is the classes' mean, rounded half away from 0; 0 with
// no class.
int64_t VolumeBindingScore(const VolumeBindings& bindings, const Labels& labels,
                           const VolumeCatalog& catalog);

// The volumeBinding term: VolumeBindingScore of each feasible node's
// binding, from Kubernetes 1.37 and for pods with claims; counts only when
// the feasible nodes' scores differ (else it cannot change the choice, as
// kube-scheduler's 0 on every node for a pod without claims).
std::unique_ptr<ScorePlugin> MakeVolumeBindingPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_BINDING_H_
