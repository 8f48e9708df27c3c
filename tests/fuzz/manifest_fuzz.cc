// Fuzzes the pod-manifest reader of `explain -f` (kube/manifest.h): YAML to
// JSON, then the pod decoder.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "kube/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ms::kube::DecodePodManifest(text);
  return 0;
}
