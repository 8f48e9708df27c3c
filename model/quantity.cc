#include "model/quantity.h"

#include <cstdint>
#include <limits>

#include "absl/numeric/int128.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ms {
namespace {

using int128 = absl::int128;

constexpr int kMaxMantissaDigits = 30;  // < 2^100; Scale() bounds each step

struct Parsed {
  bool negative = false;
  int128 mantissa = 0;  // all digits, the decimal point removed
  int exp10 = 0;        // value = mantissa * 10^exp10 * 2^exp2
  int exp2 = 0;
};

absl::Status Invalid(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid quantity \"", text, "\": ", why));
}

absl::StatusOr<Parsed> Parse(absl::string_view text) {
  Parsed p;
  size_t i = 0;
  if (text.empty()) return Invalid(text, "empty");
  if (text[i] == '+' || text[i] == '-') {
    p.negative = text[i] == '-';
    ++i;
  }
  int digits = 0;
  int significant = 0;
  int fraction_digits = 0;
  bool seen_point = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (seen_point) return Invalid(text, "two decimal points");
      seen_point = true;
      continue;
    }
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) break;
    ++digits;
    if (seen_point) ++fraction_digits;
    if (significant > 0 || c != '0') ++significant;
    if (significant > kMaxMantissaDigits) {
      return Invalid(text, "too many significant digits");
    }
    p.mantissa = p.mantissa * 10 + (c - '0');
  }
  if (digits == 0) return Invalid(text, "no digits");
  p.exp10 = -fraction_digits;

  absl::string_view suffix = text.substr(i);
  if (suffix.empty()) return p;
  if (suffix.size() == 2 && suffix[1] == 'i') {
    static constexpr absl::string_view kBinary = "KMGTPE";
    size_t k = kBinary.find(suffix[0]);
    if (k == absl::string_view::npos) return Invalid(text, "unknown suffix");
    p.exp2 = 10 * static_cast<int>(k + 1);
    return p;
  }
  if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'n': p.exp10 -= 9; return p;
      case 'u': p.exp10 -= 6; return p;
      case 'm': p.exp10 -= 3; return p;
      case 'k': p.exp10 += 3; return p;
      case 'M': p.exp10 += 6; return p;
      case 'G': p.exp10 += 9; return p;
      case 'T': p.exp10 += 12; return p;
      case 'P': p.exp10 += 15; return p;
      case 'E': p.exp10 += 18; return p;
      default: break;
    }
  }
  if (suffix[0] == 'e' || suffix[0] == 'E') {
    size_t j = 1;
    bool negative_exp = false;
    if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) {
      negative_exp = suffix[j] == '-';
      ++j;
    }
    if (j == suffix.size()) return Invalid(text, "exponent has no digits");
    int exp = 0;
    for (; j < suffix.size(); ++j) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(suffix[j]))) {
        return Invalid(text, "unknown suffix");
      }
      exp = exp * 10 + (suffix[j] - '0');
      if (exp > 100) return Invalid(text, "exponent out of range");
    }
    p.exp10 += negative_exp ? -exp : exp;
    return p;
  }
  return Invalid(text, "unknown suffix");
}

// ceil(p * 10^scale10), or OutOfRange.
absl::StatusOr<int64_t> Scale(absl::string_view text, const Parsed& p,
                              int scale10) {
  const int128 kLimit = int128(1) << 100;
  auto too_large = [&] {
    return absl::OutOfRangeError(
        absl::StrCat("quantity \"", text, "\" is too large"));
  };
  // Trailing zeros of a fraction ("1.000Ei") do not count against the
  // limit below.
  int128 mantissa = p.mantissa;
  int e = p.exp10 + scale10;
  while (e < 0 && mantissa != 0 && mantissa % 10 == 0) {
    mantissa /= 10;
    ++e;
  }
  // Checked before each step, so no step overflows int128. (Up to 30
  // significant digits times 2^60 would not fit.)
  if (mantissa > (kLimit >> p.exp2)) return too_large();
  int128 num = mantissa << p.exp2;
  int128 den = 1;
  for (; e > 0; --e) {
    if (num > kLimit / 10) return too_large();
    num *= 10;
  }
  for (; e < 0; ++e) {
    den *= 10;
    if (den > kLimit) {  // the value rounds to 1 or 0 anyway
      den = kLimit;
      break;
    }
  }
  int128 q = num / den;
  if (num % den != 0) {
    // Round away from zero toward +inf: ceil for positive values, and for
    // negative ones the apiserver also rounds up in magnitude.
    q += 1;
  }
  if (q > std::numeric_limits<int64_t>::max()) return too_large();
  int64_t v = static_cast<int64_t>(q);
  return p.negative ? -v : v;
}

}  // namespace

absl::StatusOr<int64_t> ParseQuantityMilli(absl::string_view text) {
  absl::StatusOr<Parsed> p = Parse(text);
  if (!p.ok()) return p.status();
  return Scale(text, *p, 3);
}

absl::StatusOr<int64_t> ParseQuantityValue(absl::string_view text) {
  absl::StatusOr<Parsed> p = Parse(text);
  if (!p.ok()) return p.status();
  return Scale(text, *p, 0);
}

}  // namespace ms
