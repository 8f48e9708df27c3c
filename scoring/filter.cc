#include "scoring/filter.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ms {
namespace {

// The fixed reasons by bit, in bit order (scalar resources, CSI drivers,
// device classes and metrics are worded apart).
constexpr const char* kFixedReasons[] = {kReasonUnschedulable,
                                         kReasonNodeName,
                                         kReasonUntoleratedTaint,
                                         kReasonEnforcedAffinity,
                                         kReasonAffinity,
                                         kReasonPorts,
                                         kReasonTooManyPods,
                                         "Insufficient cpu",
                                         "Insufficient memory",
                                         "Insufficient ephemeral-storage",
                                         nullptr /* scalar */,
                                         kReasonDiskConflict,
                                         kReasonReadWriteOncePodInUse,
                                         kReasonVolumeLimits,
                                         kReasonVolumeNodeConflict,
                                         kReasonVolumeBindConflict,
                                         kReasonVolumeMissing,
                                         kReasonVolumeZone,
                                         kReasonTopologySpreadLabel,
                                         kReasonTopologySpread,
                                         kReasonPodAffinity,
                                         kReasonPodAntiAffinity,
                                         kReasonExistingAntiAffinity,
                                         kReasonNodeFeatures,
                                         nullptr /* CSI driver */,
                                         nullptr /* device class */,
                                         kReasonVolumeNotEnoughSpace,
                                         nullptr /* metrics */,
                                         nullptr,
                                         nullptr};
static_assert(std::size(kFixedReasons) == kNumFilterFailures);

// The reason for `bit` (a kFailMetric bit) of metric index `metric`,
// whose value crossed `bound`.
std::string MetricIndexReason(const std::vector<MetricTerm>* metrics,
                              int metric, uint32_t bit, double bound) {
  if (metrics != nullptr && metric >= 0 &&
      static_cast<size_t>(metric) < metrics->size()) {
    return MetricReason((*metrics)[metric].name, bit, bound);
  }
  return MetricReason(absl::StrCat("#", metric), bit, bound);
}

// The driver of volume `index` of the pod's CSI volumes (`f` may be null).
const std::string& CsiDriverName(const PodFilter* f, int index) {
  static const std::string* const kUnknown = new std::string("unknown");
  if (f == nullptr || f->volumes == nullptr || index < 0 ||
      static_cast<size_t>(index) >= f->volumes->csi.size()) {
    return *kUnknown;
  }
  return f->volumes->csi[index].first;
}

// NodeResourcesFit, leaving to dynamic resource allocation the requests a
// DeviceClass provides that the node does not advertise (*delegated gets
// their bits), as kube-scheduler's shouldDelegateResourceToDRA does.
FitResult FitLeavingDevices(const PodFilter& f, const NodeInfo& info,
                            uint64_t* delegated) {
  FitResult fit = Fit(f.requests, info);
  if (f.device_scalars == 0) return fit;
  for (size_t i = 0; i < f.requests.scalar.size() && i < 64; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    if ((f.device_scalars & bit) != 0 &&
        info.node.allocatable.Scalar(f.requests.scalar[i].first) <= 0) {
      *delegated |= bit;
    }
  }
  fit.scalars &= ~*delegated;
  return fit;
}

// The reason for request i of `f`, which only a DeviceClass provides.
std::string DeviceClassReason(const PodFilter& f, size_t i) {
  const std::string& name = f.requests.scalar[i].first;
  std::string device_class = "?";
  if (f.device_resources != nullptr) {
    auto it = f.device_resources->find(name);
    if (it != f.device_resources->end()) device_class = it->second;
  }
  return absl::StrCat("node(s) could provide ", name,
                      " only through DeviceClass ", device_class,
                      " (dynamic resource allocation is not supported by "
                      "this scheduler yet)");
}

// PodTopologySpread's failure bit for the node; 0 when it fits or the
// plugin is skipped (null).
uint32_t SpreadFailure(const PodTopologySpreadFilter* spread, size_t i) {
  if (spread == nullptr) return 0;
  switch (spread->Check(i)) {
    case PodTopologySpreadFilter::Verdict::kFits:
      return 0;
    case PodTopologySpreadFilter::Verdict::kMissingLabel:
      return kFailTopologySpreadLabel;
    case PodTopologySpreadFilter::Verdict::kSkew:
      return kFailTopologySpread;
  }
  return 0;
}

// The volume plugins' failure bits for node i (0: it fits); for
// kFailCsiDriverMissing, *csi_driver is the volume's index in v.csi.
uint32_t VolumeFailures(const VolumeFilters& v, const NodeInfo& info,
                        int* csi_driver) {
  if (!v.disks->empty() && !InlineDisksFit(*v.disks, info)) {
    return kFailDiskConflict;
  }
  if ((v.rwop_in_use > 0 || !v.disks->empty()) &&
      v.rwop_in_use + v.rwop_added > 0) {
    return kFailReadWriteOncePod;
  }
  if (v.csi_drivers_required && !v.csi.empty()) {
    *csi_driver = MissingCsiDriver(v.csi, info.node.name, *v.catalog);
    if (*csi_driver >= 0) return kFailCsiDriverMissing;
  }
  if (!NodeVolumeLimitsFits(v.csi, info, *v.catalog)) return kFailVolumeLimits;
  const uint32_t binding = VolumeBindingCheck(v.binding, info.node, *v.catalog);
  if (binding != 0) {
    auto bit = [&](uint32_t from, FilterFailure to) {
      return (binding & from) != 0 ? to : 0u;
    };
    return bit(kVolumeNodeConflict, kFailVolumeNodeConflict) |
           bit(kVolumeBindConflict, kFailVolumeBindConflict) |
           bit(kVolumeMissing, kFailVolumeMissing) |
           bit(kVolumeNotEnoughSpace, kFailVolumeNotEnoughSpace);
  }
  if (!VolumeZoneFits(v.zone, info.node)) return kFailVolumeZone;
  return 0;
}

}  // namespace

std::string MetricReason(absl::string_view name, uint32_t bit, double bound) {
  if (bit == kFailMetricAbove) {
    return absl::StrCat("node(s) had ", name, " above ", bound);
  }
  if (bit == kFailMetricBelow) {
    return absl::StrCat("node(s) had ", name, " below ", bound);
  }
  return absl::StrCat("node(s) had no usable value for metric ", name);
}

std::string PreFilterVolumes(const Pod& pod, const VolumeCatalog& catalog,
                             KubeVersion kube, VolumeFilters* out) {
  out->catalog = &catalog;
  out->csi_drivers_required = kube.AtLeast(37);
  out->disks = &pod.inline_disks;
  out->rwop_added = 0;
  if (std::string why = PreFilterVolumeRestrictions(
          pod, catalog, &out->rwop_in_use, &out->rwop_claims);
      !why.empty()) {
    return why;
  }
  out->csi = PreFilterNodeVolumeLimits(pod, catalog);
  if (std::string why = PreFilterVolumeBinding(pod, catalog, &out->binding);
      !why.empty()) {
    return why;
  }
  return PreFilterVolumeZone(pod, catalog, &out->zone);
}

void SetDeviceClassResources(const DeviceClassResources* classes,
                             KubeVersion kube, PodFilter* f) {
  f->device_scalars = 0;
  f->device_resources = classes;
  if (classes == nullptr || classes->empty() || !kube.AtLeast(36)) return;
  for (size_t i = 0; i < f->requests.scalar.size() && i < 64; ++i) {
    const auto& [name, value] = f->requests.scalar[i];
    if (value > 0 && classes->contains(name)) {
      f->device_scalars |= uint64_t{1} << i;
    }
  }
}

PodFilter MakePodFilter(const Pod& pod, KubeVersion kube,
                        const std::vector<NodeSelectorTerm>* added_affinity) {
  if (added_affinity != nullptr && added_affinity->empty()) {
    added_affinity = nullptr;
  }
  return PodFilter{
      .pod = &pod,
      .requests = PodRequests(pod, kube),
      .host_ports = PodHostPorts(pod),
      .tolerates_unschedulable = ToleratesUnschedulable(pod),
      .has_node_affinity = HasNodeAffinity(pod) || added_affinity != nullptr,
      .added_affinity = added_affinity,
      .required_features = pod.required_features & NodeFeaturesOf(kube),
  };
}

NodeCheck CheckNode(const PodFilter& f, const std::vector<NodeInfo>& nodes,
                    size_t i) {
  return CheckNode(f, nodes[i], i);
}

NodeCheck CheckNode(const PodFilter& f, const NodeInfo& info, size_t i) {
  NodeCheck c;
  const Node& node = info.node;
  const Pod& pod = *f.pod;
  uint64_t delegated = 0;  // requests left to dynamic resource allocation
  if (!NodeUnschedulableFilter(f.tolerates_unschedulable, node)) {
    c.failures = kFailUnschedulable;
  } else if (!NodeNameFilter(pod, node)) {
    c.failures = kFailNodeName;
  } else if (FirstUntoleratedTaint(pod.tolerations, node.taints) != nullptr) {
    c.failures = kFailTaint;
  } else if (f.added_affinity != nullptr &&
             !MatchesNodeSelectorTerms(*f.added_affinity, node)) {
    c.failures = kFailEnforcedAffinity;
  } else if (f.has_node_affinity && !MatchesNodeAffinity(pod, node)) {
    c.failures = kFailAffinity;
  } else if (!f.host_ports.empty() &&
             HostPortsConflict(f.host_ports, info.used_host_ports)) {
    c.failures = kFailPorts;
  } else if (FitResult fit = FitLeavingDevices(f, info, &delegated);
             !fit.fits()) {
    auto bit = [](bool set, FilterFailure f) { return set ? f : 0u; };
    c.failures = bit(fit.too_many_pods, kFailTooManyPods) |
                 bit(fit.cpu, kFailCpu) | bit(fit.memory, kFailMemory) |
                 bit(fit.ephemeral_storage, kFailEphemeralStorage) |
                 bit(fit.scalars != 0, kFailScalar);
    c.scalars = fit.scalars;
  } else if (uint32_t volumes =
                 f.volumes != nullptr
                     ? VolumeFailures(*f.volumes, info, &c.csi_driver)
                     : 0;
             volumes != 0) {
    c.failures = volumes;
  } else if (uint32_t spread = SpreadFailure(f.topology_spread, i);
             spread != 0) {
    c.failures = spread;
  } else if (f.pod_affinity != nullptr) {
    switch (f.pod_affinity->Check(i)) {
      case InterPodAffinityFilter::Verdict::kFits:
        break;
      case InterPodAffinityFilter::Verdict::kAffinity:
        c.failures = kFailPodAffinity;
        break;
      case InterPodAffinityFilter::Verdict::kAntiAffinity:
        c.failures = kFailPodAntiAffinity;
        break;
      case InterPodAffinityFilter::Verdict::kExistingAntiAffinity:
        c.failures = kFailExistingAntiAffinity;
        break;
    }
  }
  if (c.failures == 0 && (f.required_features & ~node.declared_features) != 0) {
    c.failures = kFailNodeFeatures;
  }
  if (c.failures == 0 && delegated != 0) {
    c.failures = kFailDeviceClassResource;
    c.device_scalars = delegated;
  }
  return c;
}

std::vector<std::string> FailureReasons(
    const PodFilter& f, const NodeCheck& c,
    const std::vector<MetricTerm>* metrics) {
  std::vector<std::string> out;
  for (int bit = 0; bit < kNumFilterFailures; ++bit) {
    if ((c.failures & (1u << bit)) == 0) continue;
    if ((1u << bit) == kFailScalar) {
      for (size_t i = 0; i < f.requests.scalar.size() && i < 64; ++i) {
        if (c.scalars & (uint64_t{1} << i)) {
          out.push_back(
              absl::StrCat("Insufficient ", f.requests.scalar[i].first));
        }
      }
    } else if ((1u << bit) == kFailCsiDriverMissing) {
      out.push_back(CsiDriverMissingReason(CsiDriverName(&f, c.csi_driver)));
    } else if ((1u << bit) == kFailDeviceClassResource) {
      for (size_t i = 0; i < f.requests.scalar.size() && i < 64; ++i) {
        if (c.device_scalars & (uint64_t{1} << i)) {
          out.push_back(DeviceClassReason(f, i));
        }
      }
    } else if ((1u << bit) & kFailMetric) {
      out.push_back(
          MetricIndexReason(metrics, c.metric, 1u << bit, c.metric_bound));
    } else {
      out.push_back(kFixedReasons[bit]);
    }
  }
  return out;
}

void FilterSummary::Reset(const PodFilter* filter,
                          const std::vector<MetricTerm>* metrics) {
  filter_ = filter;
  metrics_config_ = metrics;
  std::fill(std::begin(counts_), std::end(counts_), 0);
  scalars_.clear();
  csi_drivers_.clear();
  device_scalars_.clear();
  metrics_.clear();
}

void FilterSummary::Add(const NodeCheck& c) {
  for (int bit = 0; bit < kNumFilterFailures; ++bit) {
    if (c.failures & (1u << bit)) ++counts_[bit];
  }
  if (c.failures & kFailScalar) {
    for (int i = 0; i < 64; ++i) {
      if (c.scalars & (uint64_t{1} << i)) {
        if (scalars_.size() <= static_cast<size_t>(i)) scalars_.resize(i + 1);
        ++scalars_[i];
      }
    }
  }
  if (c.failures & kFailDeviceClassResource) {
    for (int i = 0; i < 64; ++i) {
      if (c.device_scalars & (uint64_t{1} << i)) {
        if (device_scalars_.size() <= static_cast<size_t>(i)) {
          device_scalars_.resize(i + 1);
        }
        ++device_scalars_[i];
      }
    }
  }
  if (c.failures & kFailCsiDriverMissing) {
    const std::string& driver = CsiDriverName(filter_, c.csi_driver);
    auto seen = std::find_if(csi_drivers_.begin(), csi_drivers_.end(),
                             [&](const auto& d) { return d.first == driver; });
    if (seen != csi_drivers_.end()) {
      ++seen->second;
    } else {
      csi_drivers_.emplace_back(driver, 1);
    }
  }
  if ((c.failures & kFailMetric) && c.metric >= 0) {
    // One bit per metric failure (MetricFailure).
    const uint32_t bit = c.failures & kFailMetric;
    const double bound = bit == kFailMissingMetric ? 0 : c.metric_bound;
    for (MetricCount& seen : metrics_) {
      if (seen.metric == c.metric && seen.bit == bit && seen.bound == bound) {
        ++seen.count;
        return;
      }
    }
    metrics_.push_back(
        {.metric = c.metric, .bit = bit, .bound = bound, .count = 1});
  }
}

std::string FilterSummary::Message(int num_nodes) const {
  std::vector<std::string> reasons;
  for (int bit = 0; bit < kNumFilterFailures; ++bit) {
    if (counts_[bit] > 0 && kFixedReasons[bit] != nullptr) {
      reasons.push_back(absl::StrCat(counts_[bit], " ", kFixedReasons[bit]));
    }
  }
  for (size_t i = 0; i < scalars_.size(); ++i) {
    if (scalars_[i] > 0 && filter_ != nullptr &&
        i < filter_->requests.scalar.size()) {
      reasons.push_back(absl::StrCat(scalars_[i], " Insufficient ",
                                     filter_->requests.scalar[i].first));
    }
  }
  for (size_t i = 0; i < device_scalars_.size(); ++i) {
    if (device_scalars_[i] > 0 && filter_ != nullptr &&
        i < filter_->requests.scalar.size()) {
      reasons.push_back(absl::StrCat(device_scalars_[i], " ",
                                     DeviceClassReason(*filter_, i)));
    }
  }
  for (const auto& [driver, count] : csi_drivers_) {
    reasons.push_back(absl::StrCat(count, " ", CsiDriverMissingReason(driver)));
  }
  // Bounds that differ may read the same (printed to six digits): counted
  // together then, as kube-scheduler counts by reason.
  std::vector<std::pair<std::string, int>> metric_reasons;
  for (const MetricCount& m : metrics_) {
    std::string reason =
        MetricIndexReason(metrics_config_, m.metric, m.bit, m.bound);
    auto same =
        std::find_if(metric_reasons.begin(), metric_reasons.end(),
                     [&](const auto& seen) { return seen.first == reason; });
    if (same != metric_reasons.end()) {
      same->second += m.count;
    } else {
      metric_reasons.emplace_back(std::move(reason), m.count);
    }
  }
  for (const auto& [reason, count] : metric_reasons) {
    reasons.push_back(absl::StrCat(count, " ", reason));
  }
  std::sort(reasons.begin(), reasons.end());
  std::string msg = absl::StrCat("0/", num_nodes, " nodes are available");
  if (reasons.empty()) return msg + ".";
  msg += ": ";
  constexpr absl::string_view kMore = ", ...";
  for (size_t i = 0; i < reasons.size(); ++i) {
    absl::string_view sep = i == 0 ? "" : ", ";
    // Keep room for the ellipsis or the final period.
    if (msg.size() + sep.size() + reasons[i].size() + kMore.size() + 1 >=
        kMaxMessageBytes) {
      msg += i == 0 ? "..." : std::string(kMore);  // cut: no final period
      return msg;
    }
    absl::StrAppend(&msg, sep, reasons[i]);
  }
  msg += ".";
  return msg;
}

std::string UnsupportedConstraints(const Pod& pod) {
  if (pod.has_resource_claims) {
    return "pod requires dynamic resource allocation (spec.resourceClaims), "
           "which this scheduler does not support yet";
  }
  return "";
}

}  // namespace ms
