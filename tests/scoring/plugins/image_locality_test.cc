#include "scoring/plugins/image_locality.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/image_names.h"
#include "scoring/image_index.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::MakeNode;

constexpr int64_t kMB = 1024 * 1024;

TEST(NormalizedImageNameTest, AddsLatestWithoutATag) {
  EXPECT_EQ(NormalizedImageName("redis"), "redis:latest");
  EXPECT_EQ(NormalizedImageName("redis:7"), "redis:7");
  EXPECT_EQ(NormalizedImageName("registry:5000/redis"),
            "registry:5000/redis:latest");
  EXPECT_EQ(NormalizedImageName("registry:5000/redis:7"),
            "registry:5000/redis:7");
  EXPECT_EQ(NormalizedImageName("redis@sha256:abc"), "redis@sha256:abc");
}

// calculatePriority: clamped to [23 MB, 1000 MB per container], linear.
TEST(ImageLocalityScoreTest, Thresholds) {
  EXPECT_EQ(ImageLocalityScore(0, 1), 0);
  EXPECT_EQ(ImageLocalityScore(23 * kMB, 1), 0);
  EXPECT_EQ(ImageLocalityScore(1000 * kMB, 1), 100);
  EXPECT_EQ(ImageLocalityScore(5000 * kMB, 1), 100);
  // 100 * (511.5 - 23) / (1000 - 23) MB = 50.
  EXPECT_EQ(ImageLocalityScore(511 * kMB + kMB / 2, 1), 50);
  EXPECT_EQ(ImageLocalityScore(1000 * kMB, 2), 49);  // 100 * 977 / 1977
  EXPECT_EQ(ImageLocalityScore(1000 * kMB, 0), 0);
}

NodeInfo WithImages(const std::string& name,
                    const std::vector<std::pair<std::string, int64_t>>& images) {
  NodeInfo n = MakeNode(name);
  for (const auto& [image, size] : images) {
    n.node.images.push_back(InternImageName(image, size));
  }
  return n;
}

// The per-node pass gives each feasible holder ImageLocalityScore of its
// sum (one division per distinct sum in a row): the same score for every
// sum, at and around each point's boundary, for one to many images.
TEST(ImageLocalityScoresTest, MatchTheScalarScore) {
  std::vector<int64_t> sums;
  for (size_t images : {1u, 2u, 3u, 7u, 40u}) {
    sums.clear();
    const int64_t lo = 23 * kMB, hi = 1000 * kMB * static_cast<int64_t>(images);
    for (int point = 0; point <= 100; ++point) {
      // The smallest sum that reaches `point`, and its neighbours.
      const int64_t at = lo + ((hi - lo) * point + 99) / 100;
      for (int64_t d : {-1, 0, 1}) sums.push_back(at + d);
    }
    for (int64_t s : {int64_t{0}, lo - 1, lo, hi + 1, int64_t{1} << 50}) {
      sums.push_back(s);
    }
    std::vector<int64_t> feasible(sums.size(), -1);
    std::vector<uint32_t> holders(sums.size());
    for (size_t i = 0; i < holders.size(); ++i) holders[i] = i;
    std::vector<double> out(sums.size(), -1);
    ImageLocalityScores(holders, sums.data(), feasible.data(), sums.size(),
                        images, out.data());
    for (size_t i = 0; i < sums.size(); ++i) {
      const int64_t want =
          sums[i] > lo ? ImageLocalityScore(sums[i], images) : 0;
      EXPECT_EQ(out[i], static_cast<double>(want))
          << "sum " << sums[i] << ", " << images << " images";
    }
  }
  // An infeasible node, and a node that is not a holder, score 0.
  const int64_t sums2[] = {900 * kMB, 900 * kMB, 900 * kMB};
  const int64_t feasible2[] = {0, -1, -1};
  double out2[] = {-1, -1, -1};
  EXPECT_TRUE(ImageLocalityScores({0, 1}, sums2, feasible2, 3, 1, out2));
  EXPECT_EQ(out2[0], 0);
  EXPECT_EQ(out2[1], ImageLocalityScore(900 * kMB, 1));
  EXPECT_EQ(out2[2], 0);
}

// The size scaled by the share of nodes that hold the image, summed over
// the containers (twice for an image two containers run).
TEST(ImageLocalitySumsTest, ScalesBySpread) {
  std::vector<NodeInfo> nodes = {
      WithImages("a", {{"il-test/app:1", 800 * kMB}, {"il-test/db:1", 400 * kMB}}),
      WithImages("b", {{"il-test/app:1", 800 * kMB}}),
      WithImages("c", {}), WithImages("d", {})};
  ImageIndex index;
  index.Build(nodes);
  Pod pod;
  pod.containers = {{.name = "x", .image = "il-test/app:1"},
                    {.name = "y", .image = "il-test/db:1"},
                    {.name = "z", .image = "il-test/app:1"}};
  std::vector<int64_t> sums(4, -7);
  std::vector<uint32_t> holders;
  ASSERT_TRUE(
      ImageLocalitySums(pod, KubeVersion{}, index, 4, sums.data(), &holders));
  EXPECT_EQ(sums[0], 400 * kMB + 100 * kMB + 400 * kMB);  // app twice at 2/4
  EXPECT_EQ(sums[1], 800 * kMB);
  EXPECT_EQ(sums[2], 0);
  // The holders, a node once per image it holds: app, db, app.
  EXPECT_EQ(holders, (std::vector<uint32_t>{0, 1, 0, 0, 1}));

  // The index follows a node that drops an image.
  nodes[1] = WithImages("b", {});
  index.Update(1, nodes[1].node);
  ASSERT_TRUE(
      ImageLocalitySums(pod, KubeVersion{}, index, 4, sums.data(), &holders));
  EXPECT_EQ(sums[0], 2 * 200 * kMB + 100 * kMB);  // app now at 1/4, twice
  EXPECT_EQ(sums[1], 0);

  Pod elsewhere;
  elsewhere.containers = {{.name = "x", .image = "il-test/unknown"}};
  EXPECT_FALSE(ImageLocalitySums(elsewhere, KubeVersion{}, index, 4,
                                 sums.data(), &holders));
}

// Image volumes: summed from 1.36, counted in the threshold from 1.37.
// (Image names of their own: a name keeps the size first interned.)
TEST(ImageLocalitySumsTest, ImageVolumesByRelease) {
  std::vector<NodeInfo> nodes = {
      WithImages("a", {{"il-volumes/app:1", 500 * kMB},
                       {"il-volumes/model:2", 900 * kMB}}),
      WithImages("b", {{"il-volumes/app:1", 500 * kMB}})};
  ImageIndex index;
  index.Build(nodes);
  Pod pod;
  pod.containers = {{.name = "x", .image = "il-volumes/app:1"}};
  pod.image_volumes = {"il-volumes/model:2"};
  std::vector<int64_t> sums(2, 0);
  std::vector<uint32_t> holders;
  // 1.35: the volume's image is not read; one image in the threshold.
  ASSERT_TRUE(ImageLocalitySums(pod, KubeVersion{.minor = 35}, index, 2,
                                sums.data(), &holders));
  EXPECT_EQ(sums[0], 500 * kMB);
  EXPECT_EQ(ImageLocalityImages(pod, KubeVersion{.minor = 35}), 1u);
  // 1.36: summed (900 MB at 1/2), still one image in the threshold.
  ASSERT_TRUE(ImageLocalitySums(pod, KubeVersion{.minor = 36}, index, 2,
                                sums.data(), &holders));
  EXPECT_EQ(sums[0], 500 * kMB + 450 * kMB);
  EXPECT_EQ(sums[1], 500 * kMB);
  EXPECT_EQ(ImageLocalityImages(pod, KubeVersion{.minor = 36}), 1u);
  // 1.37: two images, so a threshold of 2000 MB.
  EXPECT_EQ(ImageLocalityImages(pod, KubeVersion{.minor = 37}), 2u);
  // 100 * (950 - 23) / (2000 - 23) = 46; 1.36's 100 * 927 / 977 = 94.
  EXPECT_EQ(ImageLocalityScore(950 * kMB, 2), 46);
  EXPECT_EQ(ImageLocalityScore(950 * kMB, 1), 94);
}

}  // namespace
}  // namespace ms
