#include "config/duration.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ms {

absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid duration \"", text, "\": ", why,
                     " (examples: 500ms, 15s, 2m, 1h30m)"));
  };
  if (text == "0") return absl::ZeroDuration();
  if (text.empty()) return invalid("empty");
  if (text[0] == '-' || text[0] == '+') return invalid("must not be signed");
  absl::Duration total = absl::ZeroDuration();
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    int64_t whole = 0;
    bool digits = false;
    for (; i < text.size() && absl::ascii_isdigit(text[i]); ++i) {
      if (whole > 1000000000000LL) return invalid("too large");
      whole = whole * 10 + (text[i] - '0');
      digits = true;
    }
    double fraction = 0;
    if (i < text.size() && text[i] == '.') {
      ++i;
      double scale = 0.1;
      for (; i < text.size() && absl::ascii_isdigit(text[i]); ++i) {
        fraction += (text[i] - '0') * scale;
        scale /= 10;
        digits = true;
      }
    }
    if (!digits) {
      return invalid(start == i ? "expected a number" : "no digits");
    }
    size_t unit_start = i;
    while (i < text.size() && !absl::ascii_isdigit(text[i]) && text[i] != '.') {
      ++i;
    }
    absl::string_view unit = text.substr(unit_start, i - unit_start);
    absl::Duration u;
    if (unit == "ns") {
      u = absl::Nanoseconds(1);
    } else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs") {
      u = absl::Microseconds(1);
    } else if (unit == "ms") {
      u = absl::Milliseconds(1);
    } else if (unit == "s") {
      u = absl::Seconds(1);
    } else if (unit == "m") {
      u = absl::Minutes(1);
    } else if (unit == "h") {
      u = absl::Hours(1);
    } else if (unit.empty()) {
      return invalid("missing unit (ns, us, ms, s, m, h)");
    } else {
      return invalid(absl::StrCat("unknown unit \"", unit, "\""));
    }
    total += whole * u + fraction * u;
  }
  if (total > absl::Hours(24 * 365 * 100)) return invalid("too large");
  return total;
}

}  // namespace ms
