// VolumeRestrictions (kube-scheduler: plugins/volumerestrictions).
//
// Pre-filter: every persistentVolumeClaim volume's claim must exist
// (generic ephemeral ones are VolumeBinding's to check); the first missing
// one rejects the pod on every node, UnschedulableAndUnresolvable:
// `persistentvolumeclaim "NAME" not found`.
//
// Filter: a ReadWriteOncePod claim may be used by one pod in the whole
// cluster; when a pod already placed (or assumed) uses one of the pod's,
// every node is rejected with kReasonReadWriteOncePodInUse (Unschedulable:
// preemption could free it).
//
// Not implemented: the conflicts of inline in-tree disks (gcePersistentDisk,
// awsElasticBlockStore, iscsi, rbd volumes written in the pod spec), which
// kube-scheduler also checks here; see the README's limitations.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_RESTRICTIONS_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_RESTRICTIONS_H_

#include <string>

#include "model/pod.h"
#include "scoring/volume_catalog.h"

namespace ms {

inline constexpr char kReasonReadWriteOncePodInUse[] =
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
    "access mode already in-use by another pod";

// Pre-filter: the rejection, or "" with *rwop_in_use set when a
// ReadWriteOncePod claim of the pod is in use.
std::string PreFilterVolumeRestrictions(const Pod& pod,
                                        const VolumeCatalog& catalog,
                                        bool* rwop_in_use);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_RESTRICTIONS_H_
