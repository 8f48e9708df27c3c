#include "scoring/plugins/volume_restrictions.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ms {
namespace {

bool SharesMonitor(const std::vector<std::string>& a,
                   const std::vector<std::string>& b) {
  for (const std::string& m : a) {
    if (std::find(b.begin(), b.end(), m) != b.end()) return true;
  }
  return false;
}

// kube-scheduler's isVolumeConflict, for one pair of disks.
bool Conflict(const InlineDisk& a, const InlineDisk& b) {
  if (a.kind != b.kind || a.id != b.id) return false;
  const bool both_read_only = a.read_only && b.read_only;
  switch (a.kind) {
    case InlineDisk::Kind::kAwsElasticBlockStore:
      return true;
    case InlineDisk::Kind::kGcePersistentDisk:
    case InlineDisk::Kind::kIscsi:
      return !both_read_only;
    case InlineDisk::Kind::kRbd:
      return a.pool == b.pool && SharesMonitor(a.monitors, b.monitors) &&
             !both_read_only;
  }
  return false;
}

}  // namespace

bool InlineDisksFit(const std::vector<InlineDisk>& disks,
                    const NodeInfo& node) {
  for (const InlineDisk& disk : disks) {
    for (const auto& pod : node.pods) {
      for (const InlineDisk& other : pod->inline_disks) {
        if (Conflict(disk, other)) return false;
      }
    }
  }
  return true;
}

std::string PreFilterVolumeRestrictions(const Pod& pod,
                                        const VolumeCatalog& catalog,
                                        int* rwop_in_use,
                                        std::vector<std::string>* rwop_claims) {
  *rwop_in_use = 0;
  rwop_claims->clear();
  for (const PodClaim& c : pod.claims) {
    if (c.ephemeral) continue;
    const PersistentVolumeClaim* claim = catalog.Claim(pod.namespace_, c.name);
    if (claim == nullptr) {
      return absl::StrCat("persistentvolumeclaim \"", c.name, "\" not found");
    }
    if ((claim->access_modes & kReadWriteOncePod) == 0 ||
        std::count(rwop_claims->begin(), rwop_claims->end(), c.name) > 0) {
      continue;
    }
    rwop_claims->push_back(c.name);
    if (catalog.InUse(claim->Key())) ++*rwop_in_use;
  }
  return "";
}

int ReadWriteOncePodConflicts(const std::vector<std::string>& rwop_claims,
                              const PodInfo& other) {
  int conflicts = 0;
  for (const PodClaim& c : other.claims) {
    if (c.ephemeral) continue;
    conflicts += std::count(rwop_claims.begin(), rwop_claims.end(), c.name) > 0;
  }
  return conflicts;
}

}  // namespace ms
