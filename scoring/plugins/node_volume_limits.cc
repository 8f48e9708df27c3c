#include "scoring/plugins/node_volume_limits.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace ms {
namespace {

// The CSI volume of a claim; false when it is not counted. A claim without
// a PV gets a handle of its own, the same wherever it is named (kube-
// scheduler's: a random prefix drawn once, then "namespace/name"), so it
// counts once per node however many pods name it.
bool VolumeOf(const std::string& namespace_, const PodClaim& c,
              const VolumeCatalog& catalog, CsiVolume* out) {
  const PersistentVolumeClaim* claim = catalog.Claim(namespace_, c.name);
  if (claim == nullptr) return false;
  if (!claim->volume_name.empty()) {
    if (const PersistentVolume* pv = catalog.Volume(claim->volume_name)) {
      if (pv->csi_driver.empty()) return false;
      *out = {pv->csi_driver, pv->csi_handle};
      return true;
    }
  }
  if (claim->storage_class.empty()) return false;
  const StorageClass* sc = catalog.Class(claim->storage_class);
  if (sc == nullptr || sc->provisioner.empty()) return false;
  *out = {sc->provisioner, absl::StrCat("\x01unbound-", namespace_, "/", c.name)};
  return true;
}

}  // namespace

std::vector<CsiVolume> PreFilterNodeVolumeLimits(
    const Pod& pod, const VolumeCatalog& catalog) {
  std::vector<CsiVolume> out;
  for (const PodClaim& c : pod.claims) {
    CsiVolume v;
    if (VolumeOf(pod.namespace_, c, catalog, &v)) out.push_back(std::move(v));
  }
  return out;
}

bool NodeVolumeLimitsFits(const std::vector<CsiVolume>& volumes,
                          const NodeInfo& node, const VolumeCatalog& catalog) {
  if (volumes.empty()) return true;
  const CsiNode* csi = catalog.Csi(node.node.name);
  if (csi == nullptr || csi->attach_limits.empty()) return true;
  std::set<CsiVolume> attached;
  for (const auto& pod : node.pods) {
    for (const PodClaim& c : pod->claims) {
      CsiVolume v;
      if (VolumeOf(pod->namespace_, c, catalog, &v)) {
        attached.insert(std::move(v));
      }
    }
  }
  std::map<std::string, int64_t> used, wanted;
  for (const CsiVolume& v : attached) ++used[v.first];
  for (const CsiVolume& v : std::set<CsiVolume>(volumes.begin(), volumes.end())) {
    if (!attached.contains(v)) ++wanted[v.first];
  }
  for (const auto& [driver, count] : wanted) {
    auto limit = csi->attach_limits.find(driver);
    if (limit == csi->attach_limits.end()) continue;
    auto in_use = used.find(driver);
    const int64_t have = in_use == used.end() ? 0 : in_use->second;
    if (have + count > limit->second) return false;
  }
  return true;
}

int MissingCsiDriver(const std::vector<CsiVolume>& volumes,
                     const std::string& node, const VolumeCatalog& catalog) {
  const CsiNode* csi = catalog.Csi(node);
  for (size_t i = 0; i < volumes.size(); ++i) {
    const std::string& name = volumes[i].first;
    const CsiDriver* driver = catalog.Driver(name);
    if (driver == nullptr || !driver->prevent_scheduling_if_missing) continue;
    if (csi == nullptr || !csi->drivers.contains(name)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::string CsiDriverMissingReason(const std::string& driver) {
  return absl::StrCat(driver, " CSI driver is not installed on the node");
}

}  // namespace ms
