#include "model/node_features.h"

#include <vector>

#include "absl/strings/str_join.h"

namespace ms {
namespace {

struct Named {
  NodeFeature bit;
  std::string_view name;
  int since_minor;  // the release whose kube-scheduler infers it
};

constexpr Named kFeatures[] = {
    {kFeatureRestartAllContainers, "RestartAllContainersOnContainerExits", 36},
    {kFeatureUserNamespacesHostNetwork, "UserNamespacesHostNetworkSupport", 36},
    {kFeatureVolumeBindMountOptions, "VolumeBindMountOptions", 37},
};

}  // namespace

uint32_t NodeFeatureOf(std::string_view name) {
  for (const Named& f : kFeatures) {
    if (f.name == name) return f.bit;
  }
  return 0;
}

uint32_t NodeFeaturesOf(KubeVersion v) {
  uint32_t out = 0;
  for (const Named& f : kFeatures) {
    if (v.AtLeast(f.since_minor)) out |= f.bit;
  }
  return out;
}

std::string NodeFeatureNames(uint32_t features) {
  std::vector<absl::string_view> names;
  for (const Named& f : kFeatures) {
    if ((features & f.bit) != 0)
      names.emplace_back(f.name.data(), f.name.size());
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace ms
