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
  (void)ms::kube::DecodePodWatchEvent(line);
  (void)ms::kube::DecodeNodeWatchEvent(line);
  (void)ms::kube::DecodeNamespaceWatchEvent(line);
  (void)ms::kube::DecodeBudgetWatchEvent(line);
  (void)ms::kube::DecodeClaimWatchEvent(line);
  (void)ms::kube::DecodeVolumeWatchEvent(line);
  (void)ms::kube::DecodeStorageClassWatchEvent(line);
  (void)ms::kube::DecodeCsiNodeWatchEvent(line);
  for (ms::WorkloadKind kind : ms::kWorkloadKinds) {
    (void)ms::kube::DecodeWorkloadWatchEvent(line, kind);
  }
  return 0;
}
