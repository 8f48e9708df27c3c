// ParseKubeVersion: /version's gitVersion into the release whose rules
// apply.
#include "model/kube_version.h"

#include "gtest/gtest.h"

namespace ms {
namespace {

int MinorOf(std::string_view git_version) {
  absl::StatusOr<KubeVersion> v = ParseKubeVersion(git_version);
  EXPECT_TRUE(v.ok()) << git_version << ": " << v.status();
  return v.ok() ? v->minor : -1;
}

TEST(KubeVersionTest, ReleasesAsApiserversGiveThem) {
  EXPECT_EQ(MinorOf("v1.36.3"), 36);
  EXPECT_EQ(MinorOf("v1.35.0-rc.1"), 35);
  EXPECT_EQ(MinorOf("v1.37.2+k3s1"), 37);
  EXPECT_EQ(MinorOf("v1.36.1-eks-1234abc"), 36);
  EXPECT_EQ(MinorOf("1.35"), 35);
  EXPECT_EQ(MinorOf("v1.34"), 34);
}

TEST(KubeVersionTest, OutsideTheSupportedRangeFollowsTheNearest) {
  EXPECT_EQ(MinorOf("v1.29.4"), KubeVersion::kOldestMinor);
  EXPECT_EQ(MinorOf("v1.40.0"), KubeVersion::kNewestMinor);
  EXPECT_FALSE(IsSupportedKubeVersion("v1.29.4"));
  EXPECT_FALSE(IsSupportedKubeVersion("v1.40.0"));
  EXPECT_TRUE(IsSupportedKubeVersion("v1.35.4"));
  EXPECT_TRUE(IsSupportedKubeVersion("v1.37.2"));
}

TEST(KubeVersionTest, NotAOneDotRelease) {
  for (std::string_view bad :
       {"", "v2.0.0", "1", "v1.", "v1.x", "v1.3a", "latest", "v0.0.0-master"}) {
    EXPECT_FALSE(ParseKubeVersion(bad).ok()) << bad;
  }
}

TEST(KubeVersionTest, RulesByRelease) {
  KubeVersion v{.minor = 36};
  EXPECT_TRUE(v.AtLeast(35));
  EXPECT_TRUE(v.AtLeast(36));
  EXPECT_FALSE(v.AtLeast(37));
  EXPECT_EQ(v.ToString(), "1.36");
  EXPECT_EQ(KubeVersion{}.minor, KubeVersion::kNewestMinor);
}

}  // namespace
}  // namespace ms
