// Fuzzes the decoders of watch-stream lines (kube/decode.h):
// {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}, each
// line given to every one of them (the workloads' once per WorkloadKind).
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "kube/decode.h"
#include "model/topology_spread.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view line(reinterpret_cast<const char*>(data), size);
  (void)ms::kube::DecodeWatchEvent<ms::Pod>(line);
  (void)ms::kube::DecodeWatchEvent<ms::Node>(line);
  (void)ms::kube::DecodeWatchEvent<ms::Namespace>(line);
  (void)ms::kube::DecodeWatchEvent<ms::PodDisruptionBudget>(line);
  (void)ms::kube::DecodeWatchEvent<ms::PersistentVolumeClaim>(line);
  (void)ms::kube::DecodeWatchEvent<ms::PersistentVolume>(line);
  (void)ms::kube::DecodeWatchEvent<ms::StorageClass>(line);
  (void)ms::kube::DecodeWatchEvent<ms::CsiNode>(line);
  (void)ms::kube::DecodeWatchEvent<ms::CsiDriver>(line);
  (void)ms::kube::DecodeWatchEvent<ms::CsiStorageCapacity>(line);
  (void)ms::kube::DecodeWatchEvent<ms::DeviceClass>(line);
  for (ms::WorkloadKind kind : ms::kWorkloadKinds) {
    (void)ms::kube::DecodeWatchEvent<ms::Workload>(line, kind);
  }
  return 0;
}
