// VolumeCatalog: the cluster's storage as the volume plugins see it.
//
// PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
// CSIDrivers and CSIStorageCapacities as their informers deliver them, which
// claims placed pods use, and what this scheduler has assumed of them:
//
//   catalog.UpsertClaim(claim);                 // informers
//   catalog.AddUsers(pod.namespace_, pod.claims);  // a pod charged to a node
//   ... Decide reads it through the plugins ...
//   catalog.Assume(decision.volume_bindings);   // the node is chosen
//   catalog.Forget(decision.volume_bindings);   // binding failed
//
// Assume lays the chosen node's bindings over the informers' objects, as
// kube-scheduler's assume caches do: a PV to be bound carries its claim
// (so the next decision does not offer it again) and a claim to be
// provisioned carries the node (so another pod of that claim follows it).
// An informer version that differs from the one an assumption was made on
// replaces it (the write landed, or the object changed under it).
// Thread-compatible: ClusterState holds it under its lock.
#ifndef METRICS_SCHEDULER_SCORING_VOLUME_CATALOG_H_
#define METRICS_SCHEDULER_SCORING_VOLUME_CATALOG_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/volumes.h"

namespace ms {

class VolumeCatalog {
 public:
  void UpsertClaim(PersistentVolumeClaim claim);
  void RemoveClaim(const std::string& namespace_, const std::string& name);
  void UpsertVolume(PersistentVolume volume);
  void RemoveVolume(const std::string& name);
  void UpsertClass(StorageClass storage_class);
  void RemoveClass(const std::string& name);
  void UpsertCsiNode(CsiNode node);
  void RemoveCsiNode(const std::string& name);
  void UpsertCsiDriver(CsiDriver driver);
  void RemoveCsiDriver(const std::string& name);
  void UpsertCapacity(CsiStorageCapacity capacity);
  void RemoveCapacity(const std::string& key);  // "namespace/name"

  // The objects, assumptions included; null when unknown. Valid until the
  // catalog next changes.
  const PersistentVolumeClaim* Claim(const std::string& namespace_,
                                     const std::string& name) const;
  const PersistentVolume* Volume(const std::string& name) const;
  const StorageClass* Class(const std::string& name) const;
  const CsiNode* Csi(const std::string& node) const;
  const CsiDriver* Driver(const std::string& name) const;
  // The CSIStorageCapacities, by namespace/name.
  const std::map<std::string, CsiStorageCapacity>& Capacities() const {
    return capacities_;
  }
  // The PVs of a storage class ("" included), by name.
  std::vector<const PersistentVolume*> VolumesOfClass(
      const std::string& storage_class) const;

  // Pods charged to nodes (assumed ones included) and the claims they
  // name, for ReadWriteOncePod. As in kube-scheduler, only
  // persistentVolumeClaim volumes count, not generic ephemeral ones.
  void AddUsers(const std::string& namespace_,
                const std::vector<PodClaim>& claims);
  void RemoveUsers(const std::string& namespace_,
                   const std::vector<PodClaim>& claims);
  // Whether a placed pod uses the claim "namespace/name".
  bool InUse(const std::string& key) const;

  void Assume(const VolumeBindings& bindings);
  void Forget(const VolumeBindings& bindings);

 private:
  template <typename T>
  struct Entry {
    T object;                  // as the informer delivered it
    std::optional<T> assumed;  // with this scheduler's assumption
    const T& current() const { return assumed ? *assumed : object; }
  };
  template <typename T>
  static void Upsert(absl::flat_hash_map<std::string, Entry<T>>& map,
                     const std::string& key, T object);

  absl::flat_hash_map<std::string, Entry<PersistentVolumeClaim>> claims_;
  absl::flat_hash_map<std::string, Entry<PersistentVolume>> volumes_;
  std::map<std::string, std::set<std::string>> volumes_by_class_;
  absl::flat_hash_map<std::string, StorageClass> classes_;
  absl::flat_hash_map<std::string, CsiNode> csi_nodes_;
  absl::flat_hash_map<std::string, CsiDriver> csi_drivers_;
  std::map<std::string, CsiStorageCapacity> capacities_;
  absl::flat_hash_map<std::string, int> users_;  // claim key -> pods
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_VOLUME_CATALOG_H_
