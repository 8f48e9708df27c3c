// Builders of storage objects for the volume plugins' tests: classes,
// claims, volumes, nodes labelled with their hostname and zone, and a pod
// with claims.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_STORAGE_BUILDERS_H_
#define METRICS_SCHEDULER_TESTS_TESTING_STORAGE_BUILDERS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "model/volumes.h"
#include "tests/testing/builders.h"

namespace ms::testing {

inline constexpr char kHostname[] = "kubernetes.io/hostname";
inline constexpr char kZone[] = "topology.kubernetes.io/zone";

inline StorageClass Class(
    const std::string& name, BindingMode mode,
    const std::string& provisioner = "kubernetes.io/no-provisioner") {
  return {.name = name, .provisioner = provisioner, .binding_mode = mode};
}

inline PersistentVolumeClaim Claim(const std::string& name,
                                   const std::string& storage_class,
                                   int64_t request = kGi) {
  return {.namespace_ = "default",
          .name = name,
          .uid = "uid-" + name,
          .resource_version = "10",
          .storage_class = storage_class,
          .access_modes = kReadWriteOnce,
          .storage_request = request};
}

inline PersistentVolumeClaim BoundClaim(const std::string& name,
                                        const std::string& volume) {
  PersistentVolumeClaim c = Claim(name, "local");
  c.volume_name = volume;
  c.bind_completed = true;
  c.phase = ClaimPhase::kBound;
  return c;
}

// A PV of `storage_class` usable only on `node` ("" : anywhere).
inline PersistentVolume Volume(const std::string& name,
                               const std::string& storage_class,
                               int64_t capacity, const std::string& node = "") {
  PersistentVolume pv{.name = name,
                      .resource_version = "20",
                      .storage_class = storage_class,
                      .capacity = capacity,
                      .access_modes = kReadWriteOnce,
                      .phase = VolumePhase::kAvailable};
  if (!node.empty()) {
    pv.node_affinity = std::vector<NodeSelectorTerm>{
        {.match_expressions = {{kHostname, SelectorOperator::kIn, {node}}}}};
  }
  return pv;
}

inline Node Named(const std::string& name, const std::string& zone = "") {
  Node n = MakeNode(name).Label(kHostname, name).Build().node;
  if (!zone.empty()) n.labels[kZone] = zone;
  return n;
}

inline Pod WithClaims(std::vector<PodClaim> claims) {
  Pod p = MakePod("web").Req(100, 100 * kMi);
  p.uid = "pod-uid";
  p.claims = std::move(claims);
  return p;
}

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_STORAGE_BUILDERS_H_
