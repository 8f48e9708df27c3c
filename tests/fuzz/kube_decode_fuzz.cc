// Fuzzes the decoders of Kubernetes objects (kube/decode.h): each input is
// given to every one of them, as an apiserver answer could be (the
// workload lists once per WorkloadKind: Services and ReplicationControllers
// have a map selector, ReplicaSets and StatefulSets a LabelSelector).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "kube/decode.h"
#include "model/topology_spread.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view json(reinterpret_cast<const char*>(data), size);
  // The annotations node-attribute metrics keep.
  static const std::vector<std::string> kKeep = {"example.com/hourly-cost",
                                                 "a"};
  (void)ms::kube::DecodePod(json);
  (void)ms::kube::DecodeNode(json);
  (void)ms::kube::DecodeNode(json, kKeep);
  (void)ms::kube::DecodeLease(json);
  (void)ms::kube::DecodeList<ms::Pod>(json);
  (void)ms::kube::DecodeList<ms::Node>(json);
  (void)ms::kube::DecodeList<ms::Node>(json, {.annotations = kKeep});
  (void)ms::kube::DecodeList<ms::Namespace>(json);
  (void)ms::kube::DecodeList<ms::PodDisruptionBudget>(json);
  (void)ms::kube::DecodeList<ms::PersistentVolumeClaim>(json);
  (void)ms::kube::DecodeList<ms::PersistentVolume>(json);
  (void)ms::kube::DecodeList<ms::StorageClass>(json);
  (void)ms::kube::DecodeList<ms::CsiNode>(json);
  (void)ms::kube::DecodeList<ms::CsiDriver>(json);
  (void)ms::kube::DecodeList<ms::CsiStorageCapacity>(json);
  (void)ms::kube::DecodeList<ms::DeviceClass>(json);
  for (ms::WorkloadKind kind : ms::kWorkloadKinds) {
    (void)ms::kube::DecodeList<ms::Workload>(json, kind);
  }
  (void)ms::kube::DecodeErrorStatus(409, json);
  return 0;
}
