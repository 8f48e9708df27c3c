#include "scoring/plugins/volume_zone.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ms {
namespace {

constexpr char kBetaZone[] = "failure-domain.beta.kubernetes.io/zone";
constexpr char kBetaRegion[] = "failure-domain.beta.kubernetes.io/region";
constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kRegion[] = "topology.kubernetes.io/region";
constexpr const char* kTopologyKeys[] = {kBetaZone, kBetaRegion, kZone,
                                         kRegion};

const char* GaKey(const std::string& key) {
  if (key == kBetaZone) return kZone;
  if (key == kBetaRegion) return kRegion;
  return nullptr;
}

// A label value listing zones joined by "__", each trimmed; false when one
// is empty (the label is then ignored).
bool ZoneSet(const std::string& value, std::set<std::string>* out) {
  for (absl::string_view part : absl::StrSplit(value, "__")) {
    absl::string_view zone = absl::StripAsciiWhitespace(part);
    if (zone.empty()) return false;
    out->emplace(zone);
  }
  return true;
}

}  // namespace

std::string PreFilterVolumeZone(const Pod& pod, const VolumeCatalog& catalog,
                                VolumeTopology* out) {
  out->clear();
  for (const PodClaim& c : pod.claims) {
    if (c.ephemeral) continue;
    if (c.name.empty()) return "PersistentVolumeClaim had no name";
    const PersistentVolumeClaim* claim = catalog.Claim(pod.namespace_, c.name);
    if (claim == nullptr) {
      return absl::StrCat("persistentvolumeclaim \"", c.name, "\" not found");
    }
    if (claim->volume_name.empty()) {
      if (claim->storage_class.empty()) {
        return "PersistentVolumeClaim had no pv name and storageClass name";
      }
      const StorageClass* sc = catalog.Class(claim->storage_class);
      if (sc == nullptr) {
        return absl::StrCat("storageclass.storage.k8s.io \"",
                            claim->storage_class, "\" not found");
      }
      if (sc->binding_mode == BindingMode::kWaitForFirstConsumer) continue;
      return "PersistentVolume had no name";
    }
    const PersistentVolume* pv = catalog.Volume(claim->volume_name);
    if (pv == nullptr) {
      return absl::StrCat("persistentvolume \"", claim->volume_name,
                          "\" not found");
    }
    for (const char* key : kTopologyKeys) {
      auto it = pv->labels.find(key);
      if (it == pv->labels.end()) continue;
      std::set<std::string> zones;
      if (ZoneSet(it->second, &zones)) out->emplace_back(key, std::move(zones));
    }
  }
  return "";
}

bool VolumeZoneFits(const VolumeTopology& topology, const Node& node) {
  if (topology.empty()) return true;
  bool constrained = false;
  for (const char* key : kTopologyKeys) constrained |= node.labels.contains(key);
  if (!constrained) return true;
  for (const auto& [key, zones] : topology) {
    auto it = node.labels.find(key);
    if (it == node.labels.end()) {
      if (const char* ga = GaKey(key)) it = node.labels.find(ga);
    }
    if (it == node.labels.end() || !zones.contains(it->second)) return false;
  }
  return true;
}

}  // namespace ms
