// NodeVolumeLimits (kube-scheduler: plugins/nodevolumelimits, the CSI
// limits).
//
// Each of the pod's claims (persistentVolumeClaim and generic ephemeral
// volumes) is a CSI volume: (driver, handle) of its PV's spec.csi when the
// claim is bound to a PV that exists, else (the class's provisioner, a
// handle of its own) when its StorageClass exists; a claim that is
// neither (a PV of another source, no class) is not counted. A node whose
// CSINode reports an attach limit for a driver fits when the volumes of
// that driver already used by its pods, plus the pod's that are not among
// them, stay within the limit; else kReasonVolumeLimits. A node without a
// CSINode, or without limits, always fits.
//
// From Kubernetes 1.37 (VolumeLimitScaling) a CSIDriver that sets
// preventPodSchedulingIfMissing keeps the pod off nodes whose CSINode does
// not list that driver (no CSINode: not listed); a driver without a
// CSIDriver object is taken as installed. This check comes first.
//
// Not implemented: in-tree volumes migrated to CSI (awsElasticBlockStore,
// gcePersistentDisk, azureDisk, cinder, ... PVs and inline volumes), which
// kube-scheduler translates to their CSI drivers, and VolumeAttachments not
// backed by a pod on the node; see docs/limitations.md.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_NODE_VOLUME_LIMITS_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_NODE_VOLUME_LIMITS_H_

#include <string>
#include <utility>
#include <vector>

#include "model/node_info.h"
#include "model/pod.h"
#include "scoring/volume_catalog.h"

namespace ms {

inline constexpr char kReasonVolumeLimits[] =
    "node(s) exceed max volume count";

// A CSI volume: driver, handle.
using CsiVolume = std::pair<std::string, std::string>;

// Pre-filter: the pod's CSI volumes (empty: nothing to check).
std::vector<CsiVolume> PreFilterNodeVolumeLimits(const Pod& pod,
                                                 const VolumeCatalog& catalog);

bool NodeVolumeLimitsFits(const std::vector<CsiVolume>& volumes,
                          const NodeInfo& node, const VolumeCatalog& catalog);

// 1.37: the index in `volumes` of the first volume whose driver is
// required on the node and missing there; -1 when none is.
// (kube-scheduler names whichever its map iteration meets first.)
int MissingCsiDriver(const std::vector<CsiVolume>& volumes,
                     const std::string& node, const VolumeCatalog& catalog);

// The reason for MissingCsiDriver's driver: "<driver> CSI driver is not
// installed on the node".
std::string CsiDriverMissingReason(const std::string& driver);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_NODE_VOLUME_LIMITS_H_
