#include "scoring/plugins/volume_binding.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "scoring/plugins/node_affinity.h"
#include "scoring/score_plugin.h"

namespace ms {
namespace {

constexpr char kNoProvisioner[] = "kubernetes.io/no-provisioner";

// kube-scheduler's IsDelayBindingMode. A class without a mode counts as
// Immediate, the apiserver's default.
bool Delayed(const PersistentVolumeClaim& claim, const VolumeCatalog& catalog) {
  if (claim.storage_class.empty()) return false;
  const StorageClass* sc = catalog.Class(claim.storage_class);
  return sc != nullptr && sc->binding_mode == BindingMode::kWaitForFirstConsumer;
}

bool BoundToClaim(const PersistentVolume& pv,
                  const PersistentVolumeClaim& claim) {
  if (!pv.claim_ref) return false;
  const ClaimRef& ref = *pv.claim_ref;
  return ref.name == claim.name && ref.namespace_ == claim.namespace_ &&
         (ref.uid.empty() || ref.uid == claim.uid);
}

// component-helpers' FindMatchingVolume on the scheduler's path: the PV
// for `claim` on a node with `labels`, or null.
const PersistentVolume* MatchingVolume(
    const PersistentVolumeClaim& claim,
    const std::vector<const PersistentVolume*>& volumes, const Labels& labels,
    const std::vector<const PersistentVolume*>& chosen) {
  const PersistentVolume* smallest = nullptr;
  for (const PersistentVolume* pv : volumes) {
    if (std::find(chosen.begin(), chosen.end(), pv) != chosen.end()) continue;
    if (pv->claim_ref && !BoundToClaim(*pv, claim)) continue;
    if (pv->capacity < claim.storage_request) continue;
    if (pv->volume_mode != claim.volume_mode) continue;
    if (pv->volume_attributes_class != claim.volume_attributes_class) continue;
    if (pv->deleting) continue;
    const bool affinity = MatchesVolumeNodeAffinity(pv->node_affinity, labels);
    if (BoundToClaim(*pv, claim)) return affinity ? pv : nullptr;
    if (pv->phase != VolumePhase::kAvailable) continue;
    if (claim.selector && !Selects(claim.selector, pv->labels)) continue;
    if (pv->storage_class != claim.storage_class) continue;
    if (!affinity) continue;
    if ((claim.access_modes & ~pv->access_modes) != 0) continue;
    if (smallest == nullptr || pv->capacity < smallest->capacity) {
      smallest = pv;
    }
  }
  return smallest;
}

// v1helper.MatchTopologySelectorTerms: no terms match everything.
bool MatchesTopology(const std::vector<TopologySelectorTerm>& terms,
                     const Labels& labels) {
  if (terms.empty()) return true;
  for (const TopologySelectorTerm& term : terms) {
    bool all = !term.empty();
    for (const auto& [key, values] : term) {
      auto it = labels.find(key);
      if (it == labels.end() ||
          std::find(values.begin(), values.end(), it->second) ==
              values.end()) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

}  // namespace

Provisioning CheckProvisioning(const PersistentVolumeClaim& claim,
                               const Labels& labels,
                               const VolumeCatalog& catalog,
                               const CsiStorageCapacity** capacity) {
  if (capacity != nullptr) *capacity = nullptr;
  const StorageClass* sc = catalog.Class(claim.storage_class);
  if (sc == nullptr) return Provisioning::kNotProvisionable;  // gone since
  if (sc->provisioner.empty() || sc->provisioner == kNoProvisioner ||
      !MatchesTopology(sc->allowed_topologies, labels)) {
    return Provisioning::kNotProvisionable;
  }
  // hasEnoughCapacity: only for a request, and a CSI driver that opts in.
  if (claim.storage_request == 0) return Provisioning::kProvisionable;
  const CsiDriver* driver = catalog.Driver(sc->provisioner);
  if (driver == nullptr || !driver->storage_capacity) {
    return Provisioning::kProvisionable;
  }
  for (const auto& [key, c] : catalog.Capacities()) {
    const std::optional<int64_t> limit = c.VolumeLimit();
    if (c.storage_class == sc->name && limit &&
        *limit >= claim.storage_request && Selects(c.node_topology, labels)) {
      if (capacity != nullptr) *capacity = &c;
      return Provisioning::kProvisionable;
    }
  }
  return Provisioning::kNoSpace;
}

std::string PreFilterVolumeBinding(const Pod& pod, const VolumeCatalog& catalog,
                                   VolumeBindingFilter* out) {
  *out = VolumeBindingFilter{};
  if (pod.claims.empty()) return "";
  out->active = true;
  std::vector<const PersistentVolumeClaim*> claims;
  for (const PodClaim& c : pod.claims) {
    const PersistentVolumeClaim* claim = catalog.Claim(pod.namespace_, c.name);
    if (claim == nullptr) {
      return c.ephemeral
                 ? absl::StrCat("waiting for ephemeral volume controller to "
                                "create the persistentvolumeclaim \"",
                                c.name, "\"")
                 : absl::StrCat("persistentvolumeclaim \"", c.name,
                                "\" not found");
    }
    if (claim->phase == ClaimPhase::kLost) {
      return absl::StrCat("persistentvolumeclaim \"", claim->name,
                          "\" bound to non-existent persistentvolume \"",
                          claim->volume_name, "\"");
    }
    if (claim->deleting) {
      return absl::StrCat("persistentvolumeclaim \"", claim->name,
                          "\" is being deleted");
    }
    if (c.ephemeral && claim->controller_uid != pod.uid) {
      return absl::StrCat("PVC ", pod.namespace_, "/", claim->name,
                          " was not created for pod ", pod.namespace_, "/",
                          pod.name, " (pod is not owner)");
    }
    claims.push_back(claim);
  }
  bool immediate = false;
  for (const PersistentVolumeClaim* claim : claims) {
    if (claim->fully_bound()) {
      out->bound.push_back(claim);
    } else if (Delayed(*claim, catalog) && claim->volume_name.empty()) {
      out->delayed.push_back(claim);
    } else {
      immediate = true;
    }
  }
  if (immediate) return "pod has unbound immediate PersistentVolumeClaims";
  for (const PersistentVolumeClaim* claim : out->delayed) {
    if (!claim->selected_node.empty()) out->selected.push_back(claim);
  }
  std::stable_sort(out->delayed.begin(), out->delayed.end(),
                   [](const PersistentVolumeClaim* a,
                      const PersistentVolumeClaim* b) {
                     return a->storage_request < b->storage_request;
                   });
  for (const PersistentVolumeClaim* claim : out->delayed) {
    out->candidates.push_back(catalog.VolumesOfClass(claim->storage_class));
  }
  return "";
}

uint32_t VolumeBindingCheck(const VolumeBindingFilter& f, const Node& node,
                            const VolumeCatalog& catalog, VolumeBindings* out) {
  if (!f.active) return 0;
  uint32_t failures = 0;
  for (const PersistentVolumeClaim* claim : f.bound) {
    const PersistentVolume* pv = catalog.Volume(claim->volume_name);
    if (pv == nullptr) {
      failures |= kVolumeMissing;
      break;
    }
    if (!MatchesVolumeNodeAffinity(pv->node_affinity, node.labels)) {
      failures |= kVolumeNodeConflict;
      break;
    }
  }
  if (f.delayed.empty()) return failures;
  // What binding takes is recorded only when asked for (the winner): the
  // filter pass over every node needs the verdict alone.
  VolumeBindings bindings;
  std::vector<const PersistentVolumeClaim*> provision;
  for (const PersistentVolumeClaim* claim : f.selected) {
    if (claim->selected_node != node.name) {
      return failures | kVolumeBindConflict;
    }
    provision.push_back(claim);
  }
  std::vector<const PersistentVolume*> chosen;
  for (size_t i = 0; i < f.delayed.size(); ++i) {
    const PersistentVolumeClaim* claim = f.delayed[i];
    if (!claim->selected_node.empty()) continue;
    const PersistentVolume* pv =
        MatchingVolume(*claim, f.candidates[i], node.labels, chosen);
    if (pv == nullptr) {
      provision.push_back(claim);
      continue;
    }
    chosen.push_back(pv);
    if (out == nullptr) continue;
    bindings.binds.push_back(
        {.volume = pv->name,
         .volume_version = pv->resource_version,
         .claim = {claim->namespace_, claim->name, claim->uid},
         .claim_version = claim->resource_version,
         .prebound = BoundToClaim(*pv, *claim)});
  }
  for (const PersistentVolumeClaim* claim : provision) {
    switch (CheckProvisioning(*claim, node.labels, catalog, nullptr)) {
      case Provisioning::kProvisionable:
        break;
      case Provisioning::kNotProvisionable:
        return failures | kVolumeBindConflict;
      case Provisioning::kNoSpace:
        return failures | kVolumeNotEnoughSpace;
    }
    if (out == nullptr) continue;
    bindings.provisions.push_back({claim->namespace_, claim->name,
                                   claim->resource_version});
  }
  if (failures == 0 && out != nullptr) {
    bindings.node = node.name;
    *out = std::move(bindings);
  }
  return failures;
}

int64_t VolumeBindingScore(const VolumeBindings& bindings, const Labels& labels,
                           const VolumeCatalog& catalog) {
  struct Room {
    int64_t requested = 0;
    int64_t capacity = 0;
  };
  std::map<std::string, Room> by_class;
  for (const VolumeBindings::Bind& b : bindings.binds) {
    const PersistentVolume* pv = catalog.Volume(b.volume);
    const PersistentVolumeClaim* claim =
        catalog.Claim(b.claim.namespace_, b.claim.name);
    if (pv == nullptr || claim == nullptr) continue;
    Room& room = by_class[pv->storage_class];
    room.requested += claim->storage_request;
    room.capacity += pv->capacity;
  }
  if (bindings.binds.empty()) {
    for (const VolumeBindings::Provision& p : bindings.provisions) {
      const PersistentVolumeClaim* claim = catalog.Claim(p.namespace_, p.name);
      const CsiStorageCapacity* capacity = nullptr;
      if (claim == nullptr ||
          CheckProvisioning(*claim, labels, catalog, &capacity) !=
              Provisioning::kProvisionable ||
          capacity == nullptr) {
        continue;
      }
      Room& room = by_class[claim->storage_class];
      // The class's capacity on the node, once however many claims share
      // it.
      room.capacity = capacity->capacity.value_or(0);
      room.requested += claim->storage_request;
    }
  }
  if (by_class.empty()) return 0;
  int64_t sum = 0;
  for (const auto& [_, room] : by_class) {
    // In 128 bits: byte counts near 2^63 / 100 do not overflow.
    int64_t u = room.capacity == 0 || room.requested > room.capacity
                    ? 100
                    : static_cast<int64_t>(__int128{room.requested} * 100 /
                                           room.capacity);
    sum += 100 - u;
  }
  return static_cast<int64_t>(std::round(static_cast<double>(sum) /
                                         static_cast<double>(by_class.size())));
}

namespace {

class VolumeBindingPlugin final : public NormalizedScorePlugin {
 public:
  VolumeBindingPlugin() : NormalizedScorePlugin(BuiltinTerm::kVolumeBinding) {}

  bool PreScore(const ScoreContext& ctx) override {
    if (!ctx.config->kube.AtLeast(37) || ctx.volume_binding == nullptr ||
        !ctx.volume_binding->active) {
      return false;
    }
    const size_t n = ctx.num_nodes();
    Reserve(n);
    std::optional<int64_t> first;
    bool differ = false;
    for (size_t i = 0; i < n; ++i) {
      raw_[i] = 0;
      if (ctx.feasible[i] != 0) {
        VolumeBindings bindings;
        VolumeBindingCheck(*ctx.volume_binding, (*ctx.nodes)[i].node,
                           *ctx.volume_catalog, &bindings);
        raw_[i] = VolumeBindingScore(bindings, (*ctx.nodes)[i].node.labels,
                                     *ctx.volume_catalog);
        if (!first) first = raw_[i];
        differ |= raw_[i] != *first;
      }
      scores_[i] = static_cast<double>(raw_[i]);
    }
    return differ;
  }
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeVolumeBindingPlugin() {
  return std::make_unique<VolumeBindingPlugin>();
}

}  // namespace ms
