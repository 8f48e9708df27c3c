// VolumeZone (kube-scheduler: plugins/volumezone).
//
// Pre-filter, over the pod's persistentVolumeClaim volumes (not generic
// ephemeral ones): a claim bound to a PV (spec.volumeName) contributes
// the PV's zone and region labels (failure-domain.beta.kubernetes.io/zone,
// .../region, topology.kubernetes.io/zone, .../region; a value may list
// several zones joined by "__"); an unbound claim of a
// WaitForFirstConsumer class contributes nothing; any other claim, or a
// missing PV, rejects the pod on every node with kube-scheduler's message.
//
// Filter: a node with none of those four labels fits; otherwise, for each
// PV label, the node's value of that key (for a beta key, else of its GA
// key) must be one of the PV's: else kReasonVolumeZone.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_ZONE_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_ZONE_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "scoring/volume_catalog.h"

namespace ms {

inline constexpr char kReasonVolumeZone[] =
    "node(s) had no available volume zone";

// The PVs' topology labels: key, and the values the node may have.
using VolumeTopology =
    std::vector<std::pair<std::string, std::set<std::string>>>;

// Pre-filter: the rejection, or "" with *out filled (empty: skipped).
std::string PreFilterVolumeZone(const Pod& pod, const VolumeCatalog& catalog,
                                VolumeTopology* out);

bool VolumeZoneFits(const VolumeTopology& topology, const Node& node);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_VOLUME_ZONE_H_
