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
  (void)ms::kube::DecodePodList(json);
  (void)ms::kube::DecodeNodeList(json);
  (void)ms::kube::DecodeNodeList(json, kKeep);
  (void)ms::kube::DecodeNamespaceList(json);
  (void)ms::kube::DecodeBudgetList(json);
  (void)ms::kube::DecodeClaimList(json);
  (void)ms::kube::DecodeVolumeList(json);
  (void)ms::kube::DecodeStorageClassList(json);
  (void)ms::kube::DecodeCsiNodeList(json);
  for (ms::WorkloadKind kind : ms::kWorkloadKinds) {
    (void)ms::kube::DecodeWorkloadList(json, kind);
  }
  (void)ms::kube::DecodeErrorStatus(409, json);
  return 0;
}
