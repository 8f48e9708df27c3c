// Node features: which a release's kube-scheduler infers a pod needs.
#include "model/node_features.h"

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(NodeFeaturesTest, ByRelease) {
  EXPECT_EQ(NodeFeaturesOf(KubeVersion{.minor = 34}), 0u);
  EXPECT_EQ(NodeFeaturesOf(KubeVersion{.minor = 35}), 0u);
  EXPECT_EQ(NodeFeaturesOf(KubeVersion{.minor = 36}),
            kFeatureRestartAllContainers | kFeatureUserNamespacesHostNetwork);
  EXPECT_EQ(NodeFeaturesOf(KubeVersion{.minor = 37}),
            kFeatureRestartAllContainers | kFeatureUserNamespacesHostNetwork |
                kFeatureVolumeBindMountOptions);
}

TEST(NodeFeaturesTest, Names) {
  EXPECT_EQ(NodeFeatureOf("RestartAllContainersOnContainerExits"),
            kFeatureRestartAllContainers);
  EXPECT_EQ(NodeFeatureOf("GuaranteedQoSPodCPUResize"), 0u);
  EXPECT_EQ(NodeFeatureNames(kFeatureRestartAllContainers |
                             kFeatureVolumeBindMountOptions),
            "RestartAllContainersOnContainerExits, VolumeBindMountOptions");
}

}  // namespace
}  // namespace ms
