#include "common/url.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ms {

std::string UrlEncode(absl::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3 / 2);
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

std::string JoinUrl(absl::string_view base, absl::string_view path) {
  while (!base.empty() && base.back() == '/') base.remove_suffix(1);
  return absl::StrCat(base, path);
}

}  // namespace ms
