#include "model/kube_version.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ms {
namespace {

// The minor of "v1.<minor>[.patch][-pre][+build]", or -1.
int MinorOf(std::string_view version) {
  absl::string_view v(version.data(), version.size());
  absl::ConsumePrefix(&v, "v");
  if (!absl::ConsumePrefix(&v, "1.")) return -1;
  size_t end = 0;
  while (end < v.size() && absl::ascii_isdigit(v[end])) ++end;
  int minor = 0;
  if (end == 0 || !absl::SimpleAtoi(v.substr(0, end), &minor)) return -1;
  if (end < v.size() && v[end] != '.' && v[end] != '-' && v[end] != '+') {
    return -1;
  }
  return minor;
}

}  // namespace

absl::StatusOr<KubeVersion> ParseKubeVersion(std::string_view git_version) {
  int minor = MinorOf(git_version);
  if (minor < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", absl::string_view(git_version.data(), git_version.size()),
        "\" is not a Kubernetes 1.x release version"));
  }
  return KubeVersion{.minor = std::clamp(minor, KubeVersion::kOldestMinor,
                                         KubeVersion::kNewestMinor)};
}

bool IsSupportedKubeVersion(std::string_view git_version) {
  int minor = MinorOf(git_version);
  return minor >= KubeVersion::kOldestMinor &&
         minor <= KubeVersion::kNewestMinor;
}

}  // namespace ms
