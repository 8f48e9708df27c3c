// Fuzzes the resource metrics API decoder (metrics/metrics_server_decode.h).
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "metrics/metrics_server_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view body(reinterpret_cast<const char*>(data), size);
  size_t total = 0;
  auto items = ms::metrics::DecodeNodeMetricsList(body);
  if (items.ok()) {
    for (const ms::metrics::NodeUsage& usage : *items) {
      total += usage.name.size() + static_cast<size_t>(usage.time_ms) +
               static_cast<size_t>(usage.cpu_cores.value_or(0)) +
               static_cast<size_t>(usage.memory_bytes.value_or(0));
    }
  }
  return total == 0xFFFFFFFF ? 1 : 0;
}
