#include "scoring/volume_catalog.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ms {
namespace {

std::string ClaimKey(const std::string& namespace_, const std::string& name) {
  return absl::StrCat(namespace_, "/", name);
}

template <typename Map>
auto Find(const Map& map, const std::string& key)
    -> decltype(&map.begin()->second) {
  auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

}  // namespace

template <typename T>
void VolumeCatalog::Upsert(absl::flat_hash_map<std::string, Entry<T>>& map,
                           const std::string& key, T object) {
  Entry<T>& e = map[key];
  // The assumption stands while the informer still shows the version it
  // was made on.
  if (e.assumed &&
      e.object.resource_version != object.resource_version) {
    e.assumed.reset();
  }
  e.object = std::move(object);
}

void VolumeCatalog::UpsertClaim(PersistentVolumeClaim claim) {
  const std::string key = claim.Key();
  Upsert(claims_, key, std::move(claim));
}

void VolumeCatalog::RemoveClaim(const std::string& namespace_,
                                const std::string& name) {
  claims_.erase(ClaimKey(namespace_, name));
}

void VolumeCatalog::UpsertVolume(PersistentVolume volume) {
  if (auto it = volumes_.find(volume.name);
      it != volumes_.end() &&
      it->second.object.storage_class != volume.storage_class) {
    volumes_by_class_[it->second.object.storage_class].erase(volume.name);
  }
  volumes_by_class_[volume.storage_class].insert(volume.name);
  const std::string name = volume.name;
  Upsert(volumes_, name, std::move(volume));
}

void VolumeCatalog::RemoveVolume(const std::string& name) {
  auto it = volumes_.find(name);
  if (it == volumes_.end()) return;
  auto by_class = volumes_by_class_.find(it->second.object.storage_class);
  if (by_class != volumes_by_class_.end()) {
    by_class->second.erase(name);
    if (by_class->second.empty()) volumes_by_class_.erase(by_class);
  }
  volumes_.erase(it);
}

void VolumeCatalog::UpsertClass(StorageClass storage_class) {
  const std::string name = storage_class.name;
  classes_[name] = std::move(storage_class);
}

void VolumeCatalog::RemoveClass(const std::string& name) {
  classes_.erase(name);
}

void VolumeCatalog::UpsertCsiNode(CsiNode node) {
  const std::string name = node.name;
  csi_nodes_[name] = std::move(node);
}

void VolumeCatalog::RemoveCsiNode(const std::string& name) {
  csi_nodes_.erase(name);
}

void VolumeCatalog::UpsertCsiDriver(CsiDriver driver) {
  const std::string name = driver.name;
  csi_drivers_[name] = std::move(driver);
}

void VolumeCatalog::RemoveCsiDriver(const std::string& name) {
  csi_drivers_.erase(name);
}

void VolumeCatalog::UpsertCapacity(CsiStorageCapacity capacity) {
  const std::string key = capacity.Key();
  capacities_[key] = std::move(capacity);
}

void VolumeCatalog::RemoveCapacity(const std::string& key) {
  capacities_.erase(key);
}

const PersistentVolumeClaim* VolumeCatalog::Claim(
    const std::string& namespace_, const std::string& name) const {
  const Entry<PersistentVolumeClaim>* e =
      Find(claims_, ClaimKey(namespace_, name));
  return e == nullptr ? nullptr : &e->current();
}

const PersistentVolume* VolumeCatalog::Volume(const std::string& name) const {
  const Entry<PersistentVolume>* e = Find(volumes_, name);
  return e == nullptr ? nullptr : &e->current();
}

const StorageClass* VolumeCatalog::Class(const std::string& name) const {
  return Find(classes_, name);
}

const CsiNode* VolumeCatalog::Csi(const std::string& node) const {
  return Find(csi_nodes_, node);
}

const CsiDriver* VolumeCatalog::Driver(const std::string& name) const {
  return Find(csi_drivers_, name);
}

std::vector<const PersistentVolume*> VolumeCatalog::VolumesOfClass(
    const std::string& storage_class) const {
  std::vector<const PersistentVolume*> out;
  auto it = volumes_by_class_.find(storage_class);
  if (it == volumes_by_class_.end()) return out;
  out.reserve(it->second.size());
  for (const std::string& name : it->second) out.push_back(Volume(name));
  return out;
}

void VolumeCatalog::AddUsers(const std::string& namespace_,
                             const std::vector<PodClaim>& claims) {
  for (const PodClaim& c : claims) {
    if (!c.ephemeral) ++users_[ClaimKey(namespace_, c.name)];
  }
}

void VolumeCatalog::RemoveUsers(const std::string& namespace_,
                                const std::vector<PodClaim>& claims) {
  for (const PodClaim& c : claims) {
    if (c.ephemeral) continue;
    auto it = users_.find(ClaimKey(namespace_, c.name));
    if (it != users_.end() && --it->second <= 0) users_.erase(it);
  }
}

bool VolumeCatalog::InUse(const std::string& key) const {
  return users_.contains(key);
}

void VolumeCatalog::Assume(const VolumeBindings& bindings) {
  for (const VolumeBindings::Bind& b : bindings.binds) {
    auto it = volumes_.find(b.volume);
    if (it == volumes_.end()) continue;
    PersistentVolume pv = it->second.current();
    pv.claim_ref = b.claim;
    it->second.assumed = std::move(pv);
  }
  for (const VolumeBindings::Provision& p : bindings.provisions) {
    auto it = claims_.find(ClaimKey(p.namespace_, p.name));
    if (it == claims_.end()) continue;
    PersistentVolumeClaim claim = it->second.current();
    claim.selected_node = bindings.node;
    it->second.assumed = std::move(claim);
  }
}

void VolumeCatalog::Forget(const VolumeBindings& bindings) {
  for (const VolumeBindings::Bind& b : bindings.binds) {
    if (auto it = volumes_.find(b.volume); it != volumes_.end()) {
      it->second.assumed.reset();
    }
  }
  for (const VolumeBindings::Provision& p : bindings.provisions) {
    if (auto it = claims_.find(ClaimKey(p.namespace_, p.name));
        it != claims_.end()) {
      it->second.assumed.reset();
    }
  }
}

}  // namespace ms
