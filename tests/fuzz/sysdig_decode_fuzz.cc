// Fuzzes the Sysdig data API decoders (metrics/sysdig_decode.h): the rows of
// a 2xx answer and the message of an error answer.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "metrics/sysdig_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view body(reinterpret_cast<const char*>(data), size);
  size_t total = 0;
  (void)ms::metrics::DecodeSysdigRows(
      "fuzz", body, [&](const ms::metrics::SysdigRow& row) {
        for (char c : row.host) total += static_cast<unsigned char>(c);
        total += static_cast<size_t>(row.time_ms);
      });
  total += ms::metrics::SysdigErrorMessage(body).size();
  return total == 0xFFFFFFFF ? 1 : 0;
}
