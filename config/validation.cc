#include "config/validation.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace ms {

absl::string_view UrlAuthority(absl::string_view url) {
  size_t start = url.find("://");
  if (start == absl::string_view::npos) return "";
  url.remove_prefix(start + 3);
  return url.substr(0, url.find_first_of("/?#"));
}

std::string UrlHost(absl::string_view url) {
  absl::string_view authority = UrlAuthority(url);
  authority = authority.substr(authority.rfind('@') + 1);  // npos + 1 == 0
  if (absl::StartsWith(authority, "[")) {
    return std::string(authority.substr(1, authority.find(']') - 1));
  }
  return std::string(authority.substr(0, authority.find(':')));
}

bool IsLoopbackHost(absl::string_view host) {
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

bool IsDns1123Label(absl::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!(absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-')) {
      return false;
    }
  }
  return s.front() != '-' && s.back() != '-';
}

bool IsDns1123Subdomain(absl::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    absl::string_view part =
        s.substr(start, dot == absl::string_view::npos ? absl::string_view::npos
                                                       : dot - start);
    if (!IsDns1123Label(part)) return false;
    if (dot == absl::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsQualifiedName(absl::string_view s) {
  size_t slash = s.find('/');
  absl::string_view name = s;
  if (slash != absl::string_view::npos) {
    if (!IsDns1123Subdomain(s.substr(0, slash))) return false;
    name = s.substr(slash + 1);
  }
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!(absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.')) {
      return false;
    }
  }
  return absl::ascii_isalnum(name.front()) && absl::ascii_isalnum(name.back());
}

bool IsMetricName(absl::string_view s) {
  if (s.empty()) return false;
  if (!(absl::ascii_isalpha(s[0]) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(absl::ascii_isalnum(c) || c == '_' || c == '.' || c == ':' ||
          c == '-')) {
      return false;
    }
  }
  return true;
}

bool IsHeaderName(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(absl::ascii_isalnum(c) || absl::StrContains("!#$%&'*+-.^_`|~", c))) {
      return false;
    }
  }
  return true;
}

}  // namespace ms
