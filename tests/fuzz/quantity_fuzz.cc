// Fuzzes the quantity parser (model/quantity.h). Beyond not crashing: the
// two scales agree (a value in units is the value in thousandths / 1000,
// its magnitude rounded up, as the apiserver rounds) whenever both fit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<int64_t> milli = ms::ParseQuantityMilli(text);
  absl::StatusOr<int64_t> value = ms::ParseQuantityValue(text);
  if (milli.ok() && value.ok()) {
    // Both round the magnitude up, so units = thousandths / 1000 with the
    // magnitude rounded up.
    const bool negative = *milli < 0;
    const uint64_t magnitude =
        negative ? 0 - static_cast<uint64_t>(*milli) : *milli;
    const uint64_t units = magnitude / 1000 + (magnitude % 1000 != 0);
    const int64_t want = negative ? -static_cast<int64_t>(units)
                                  : static_cast<int64_t>(units);
    if (want != *value) std::abort();
  }
  if (milli.ok() != value.ok() && value.ok()) {
    // Whatever fits in thousandths fits in units; the reverse need not hold.
    if (milli.status().code() != absl::StatusCode::kOutOfRange) std::abort();
  }
  return 0;
}
