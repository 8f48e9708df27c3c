// VolumeRestrictions (kube-scheduler: plugins/volumerestrictions).
//
// Pre-filter: every persistentVolumeClaim volume's claim must exist
// (generic ephemeral ones are VolumeBinding's to check); the first missing
// one rejects the pod on every node, UnschedulableAndUnresolvable:
// `persistentvolumeclaim "NAME" not found`.
//
// Filter:
//   - an inline disk of the pod (model/pod.h: InlineDisk) may not be one a
//     pod on the node already has: the same GCE PD unless both mount it
//     read-only, the same EBS volume, the same iSCSI IQN unless both are
//     read-only, the same RBD pool and image on a shared monitor unless
//     both are read-only; else kReasonDiskConflict;
//   - a ReadWriteOncePod claim may be used by one pod in the whole cluster;
//     when a pod already placed (or assumed) uses one of the pod's, every
//     node is rejected with kReasonReadWriteOncePodInUse.
// Both are Unschedulable (preemption could free them).
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_RESTRICTIONS_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_RESTRICTIONS_H_

#include <string>

#include "model/node_info.h"
#include "model/pod.h"
#include "scoring/volume_catalog.h"

namespace ms {

inline constexpr char kReasonDiskConflict[] = "node(s) had no available disk";
inline constexpr char kReasonReadWriteOncePodInUse[] =
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
    "access mode already in-use by another pod";

// Pre-filter: the rejection, or "" with *rwop_claims naming the pod's
// ReadWriteOncePod claims (each once) and *rwop_in_use how many of them
// a placed pod uses (kube-scheduler's conflictingPVCRefCount).
std::string PreFilterVolumeRestrictions(const Pod& pod,
                                        const VolumeCatalog& catalog,
                                        int* rwop_in_use,
                                        std::vector<std::string>* rwop_claims);

// The AddPod extension: how many of `other`'s persistentVolumeClaim volumes
// name one of `rwop_claims` (by name only, in any namespace, as
// kube-scheduler's conflictingPVCRefCountForPod does).
int ReadWriteOncePodConflicts(const std::vector<std::string>& rwop_claims,
                              const PodInfo& other);

// Filter, the inline disks: whether none of `disks` conflicts with those
// of the pods on `node`.
bool InlineDisksFit(const std::vector<InlineDisk>& disks,
                    const NodeInfo& node);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_RESTRICTIONS_H_
