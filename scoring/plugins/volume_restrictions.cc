#include "scoring/plugins/volume_restrictions.h"

#include "absl/strings/str_cat.h"

namespace ms {

std::string PreFilterVolumeRestrictions(const Pod& pod,
                                        const VolumeCatalog& catalog,
                                        bool* rwop_in_use) {
  *rwop_in_use = false;
  for (const PodClaim& c : pod.claims) {
    if (c.ephemeral) continue;
    const PersistentVolumeClaim* claim = catalog.Claim(pod.namespace_, c.name);
    if (claim == nullptr) {
      return absl::StrCat("persistentvolumeclaim \"", c.name, "\" not found");
    }
    if ((claim->access_modes & kReadWriteOncePod) != 0 &&
        catalog.InUse(claim->Key())) {
      *rwop_in_use = true;
    }
  }
  return "";
}

}  // namespace ms
