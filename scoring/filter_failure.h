// Why a filter rejected a node, as bits: what the filter phase (filter.h)
// reports and what the metrics' own filters (plugins/metric_terms.h) add.
#ifndef METRICS_SCHEDULER_SCORING_FILTER_FAILURE_H_
#define METRICS_SCHEDULER_SCORING_FILTER_FAILURE_H_

#include <cstdint>

namespace ms {

// Why a node was rejected: a bit set, so one node can report several
// insufficient resources.
enum FilterFailure : uint32_t {
  kFailUnschedulable = 1u << 0,
  kFailNodeName = 1u << 1,
  kFailTaint = 1u << 2,
  kFailEnforcedAffinity = 1u << 3,  // the configured addedAffinity
  kFailAffinity = 1u << 4,
  kFailPorts = 1u << 5,
  kFailTooManyPods = 1u << 6,
  kFailCpu = 1u << 7,
  kFailMemory = 1u << 8,
  kFailEphemeralStorage = 1u << 9,
  kFailScalar = 1u << 10,        // NodeCheck::scalars says which
  kFailDiskConflict = 1u << 11,  // VolumeRestrictions
  kFailReadWriteOncePod = 1u << 12,
  kFailVolumeLimits = 1u << 13,        // NodeVolumeLimits
  kFailVolumeNodeConflict = 1u << 14,  // VolumeBinding, as many as apply
  kFailVolumeBindConflict = 1u << 15,
  kFailVolumeMissing = 1u << 16,
  kFailVolumeZone = 1u << 17,  // VolumeZone
  kFailTopologySpreadLabel = 1u << 18,
  kFailTopologySpread = 1u << 19,
  kFailPodAffinity = 1u << 20,
  kFailPodAntiAffinity = 1u << 21,
  kFailExistingAntiAffinity = 1u << 22,
  kFailNodeFeatures = 1u << 23,  // NodeDeclaredFeatures (1.36 on)
  // NodeVolumeLimits from 1.37: a CSI driver that wants pods kept off nodes
  // without it is missing there; NodeCheck::csi_driver says which.
  kFailCsiDriverMissing = 1u << 24,
  // From 1.36: a request a DeviceClass provides, which the node does not
  // advertise, so that only dynamic resource allocation could meet it
  // there (DynamicResources, which this scheduler does not implement);
  // NodeCheck::device_scalars says which.
  kFailDeviceClassResource = 1u << 25,
  // VolumeBinding: no CSIStorageCapacity with room for a claim to be
  // provisioned selects the node.
  kFailVolumeNotEnoughSpace = 1u << 26,
  // Not filter plugins: the metrics' own filters, set by Decide only;
  // NodeCheck::metric says which metric. A metric with `missing: exclude`
  // had no usable value on the node; a fresh value was above the metric's
  // `filter.max` or below its `filter.min`.
  kFailMissingMetric = 1u << 27,
  kFailMetricAbove = 1u << 28,
  kFailMetricBelow = 1u << 29,
};
inline constexpr uint32_t kFailMetric =
    kFailMissingMetric | kFailMetricAbove | kFailMetricBelow;
// How many FilterFailure bits there are; every table indexed by bit has
// this many entries.
inline constexpr int kNumFilterFailures = 30;
static_assert(kFailMetricBelow == 1u << (kNumFilterFailures - 1));

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_FILTER_FAILURE_H_
