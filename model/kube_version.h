// KubeVersion: the Kubernetes minor release whose kube-scheduler rules the
// scheduler follows where releases differ (docs/versions.md lists each
// difference). The scheduler takes the cluster's from the apiserver's
// /version at start; a release older than the oldest supported follows the
// oldest's rules, a newer one the newest's (and is logged as untested).
// Plain value.
#ifndef METRICS_SCHEDULER_MODEL_KUBE_VERSION_H_
#define METRICS_SCHEDULER_MODEL_KUBE_VERSION_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ms {

struct KubeVersion {
  static constexpr int kOldestMinor = 34;
  static constexpr int kNewestMinor = 37;

  int minor = kNewestMinor;  // of major 1

  // Whether the rules of release 1.<m> apply.
  bool AtLeast(int m) const { return minor >= m; }
  std::string ToString() const { return "1." + std::to_string(minor); }

  friend bool operator==(const KubeVersion&, const KubeVersion&) = default;
};

// Parses a release as /version's gitVersion gives it ("v1.36.3",
// "v1.37.0-rc.1+k3s1", "1.35") into the supported range: older minors give
// the oldest, newer the newest. Not "1.x": an error.
absl::StatusOr<KubeVersion> ParseKubeVersion(std::string_view git_version);

// Whether `git_version` is within [kOldestMinor, kNewestMinor] as given.
bool IsSupportedKubeVersion(std::string_view git_version);

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_KUBE_VERSION_H_
