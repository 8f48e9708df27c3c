// Fuzzes the decoder of kube-scheduler's extender calls
// (kube/extender_wire.h): what arrives on the extender port.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "kube/extender_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view body(reinterpret_cast<const char*>(data), size);
  size_t total = 0;
  auto args = ms::kube::DecodeExtenderArgs(body);
  if (args.ok()) {
    total += args->pod_name.size() + args->pod_namespace.size();
    for (const auto& name : args->node_names) total += name.size();
  }
  return total == 0xFFFFFFFF ? 1 : 0;
}
