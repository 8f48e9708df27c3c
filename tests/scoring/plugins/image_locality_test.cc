#include "scoring/plugins/image_locality.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

// The per-node pass gives each holder ImageLocalityScore of its sum (one
// division per run of a sum): the same score for every sum, at and around
// each point's boundary, for one to many images.
TEST(ImageLocalityScoresTest, MatchTheScalarScore) {
  std::vector<int64_t> sums;
  for (size_t images : {1u, 2u, 3u, 7u, 40u}) {
    sums.clear();
    const int64_t lo = 23 * kMB, hi = 1000 * kMB * static_cast<int64_t>(images);
    for (int point = 0; point <= 100; ++point) {
      // The smallest sum that reaches `point`, and its neighbours, each
      // twice in a row.
      const int64_t at = lo + ((hi - lo) * point + 99) / 100;
      for (int64_t d : {-1, 0, 1}) sums.insert(sums.end(), 2, at + d);
    }
    for (int64_t s : {int64_t{0}, lo - 1, lo, hi + 1, int64_t{1} << 50}) {
      sums.push_back(s);
    }
    std::vector<int64_t> feasible(sums.size(), -1);
    std::vector<uint32_t> holders(sums.size());
    for (size_t i = 0; i < holders.size(); ++i) holders[i] = i;
    std::vector<double> out;
    EXPECT_TRUE(
        ImageLocalityScores(holders, sums, feasible.data(), images, &out));
    ASSERT_EQ(out.size(), sums.size());
    for (size_t i = 0; i < sums.size(); ++i) {
      const int64_t want =
          sums[i] > lo ? ImageLocalityScore(sums[i], images) : 0;
      EXPECT_EQ(out[i], static_cast<double>(want))
          << "sum " << sums[i] << ", " << images << " images";
    }
  }
}

// The term counts only when a feasible holder scores above 0; an
// infeasible holder keeps its score (it is never read).
TEST(ImageLocalityScoresTest, CountOnlyWithAFeasibleHolderAboveZero) {
  const std::vector<uint32_t> holders = {0, 2};
  std::vector<double> out;
  const int64_t feasible[] = {0, -1, -1};
  EXPECT_TRUE(
      ImageLocalityScores(holders, {900 * kMB, 900 * kMB}, feasible, 1, &out));
  const double score = static_cast<double>(ImageLocalityScore(900 * kMB, 1));
  EXPECT_EQ(out, (std::vector<double>{score, score}));
  // The only holder above 0 is infeasible.
  EXPECT_FALSE(
      ImageLocalityScores(holders, {900 * kMB, 10 * kMB}, feasible, 1, &out));
  // Every holder below the threshold.
  EXPECT_FALSE(
      ImageLocalityScores(holders, {10 * kMB, 10 * kMB}, feasible, 1, &out));
  EXPECT_EQ(out, (std::vector<double>{0, 0}));
}

// The size scaled by the share of nodes that hold the image, summed over
// the containers (twice for an image two containers run), the holders
// ascending, each once.
TEST(ImageLocalityHoldersTest, ScalesBySpread) {
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
  std::vector<uint32_t> holders;
  std::vector<int64_t> sums;
  ASSERT_TRUE(
      ImageLocalityHolders(pod, KubeVersion{}, index, 4, &holders, &sums));
  EXPECT_EQ(holders, (std::vector<uint32_t>{0, 1}));
  // a: app twice at 2/4, db at 1/4; b: app twice.
  EXPECT_EQ(sums, (std::vector<int64_t>{400 * kMB + 100 * kMB + 400 * kMB,
                                        800 * kMB}));

  // The index follows a node that drops an image.
  nodes[1] = WithImages("b", {});
  index.Update(1, nodes[1].node);
  ASSERT_TRUE(
      ImageLocalityHolders(pod, KubeVersion{}, index, 4, &holders, &sums));
  EXPECT_EQ(holders, (std::vector<uint32_t>{0}));
  EXPECT_EQ(sums, (std::vector<int64_t>{2 * 200 * kMB + 100 * kMB}));

  Pod elsewhere;
  elsewhere.containers = {{.name = "x", .image = "il-test/unknown"}};
  EXPECT_FALSE(ImageLocalityHolders(elsewhere, KubeVersion{}, index, 4,
                                    &holders, &sums));
  EXPECT_TRUE(holders.empty());
}

// Holders of several images, added and removed in any order, come out
// ascending with the right sums; only the first num_nodes count.
TEST(ImageLocalityHoldersTest, MergesAscending) {
  std::vector<NodeInfo> nodes;
  for (int i = 0; i < 9; ++i) {
    std::vector<std::pair<std::string, int64_t>> images;
    if (i % 2 == 0) images.push_back({"il-merge/even:1", 90 * kMB});
    if (i % 3 == 0) images.push_back({"il-merge/third:1", 90 * kMB});
    nodes.push_back(WithImages(absl::StrCat("n", i), images));
  }
  ImageIndex index;
  index.Build(nodes);
  // Node 4 drops its image and takes it back: the index stays ascending.
  index.Update(4, WithImages("n4", {}).node);
  index.Update(4, nodes[4].node);
  Pod pod;
  pod.containers = {{.name = "x", .image = "il-merge/even:1"},
                    {.name = "y", .image = "il-merge/third:1"}};
  std::vector<uint32_t> holders;
  std::vector<int64_t> sums;
  ASSERT_TRUE(
      ImageLocalityHolders(pod, KubeVersion{}, index, 8, &holders, &sums));
  // even on 0 2 4 6 8 (5 of 8), third on 0 3 6 (3 of 8); node 8 is
  // beyond num_nodes.
  const int64_t even = static_cast<int64_t>(90.0 * kMB * 5 / 8);
  const int64_t third = static_cast<int64_t>(90.0 * kMB * 3 / 8);
  EXPECT_EQ(holders, (std::vector<uint32_t>{0, 2, 3, 4, 6}));
  EXPECT_EQ(sums, (std::vector<int64_t>{even + third, even, third, even,
                                        even + third}));
}

// Image volumes: summed from 1.36, counted in the threshold from 1.37.
// (Image names of their own: a name keeps the size first interned.)
TEST(ImageLocalityHoldersTest, ImageVolumesByRelease) {
  std::vector<NodeInfo> nodes = {
      WithImages("a", {{"il-volumes/app:1", 500 * kMB},
                       {"il-volumes/model:2", 900 * kMB}}),
      WithImages("b", {{"il-volumes/app:1", 500 * kMB}})};
  ImageIndex index;
  index.Build(nodes);
  Pod pod;
  pod.containers = {{.name = "x", .image = "il-volumes/app:1"}};
  pod.image_volumes = {"il-volumes/model:2"};
  std::vector<uint32_t> holders;
  std::vector<int64_t> sums;
  // 1.35: the volume's image is not read; one image in the threshold.
  ASSERT_TRUE(ImageLocalityHolders(pod, KubeVersion{.minor = 35}, index, 2,
                                   &holders, &sums));
  EXPECT_EQ(sums, (std::vector<int64_t>{500 * kMB, 500 * kMB}));
  EXPECT_EQ(ImageLocalityImages(pod, KubeVersion{.minor = 35}), 1u);
  // 1.36: summed (900 MB at 1/2), still one image in the threshold.
  ASSERT_TRUE(ImageLocalityHolders(pod, KubeVersion{.minor = 36}, index, 2,
                                   &holders, &sums));
  EXPECT_EQ(sums, (std::vector<int64_t>{500 * kMB + 450 * kMB, 500 * kMB}));
  EXPECT_EQ(ImageLocalityImages(pod, KubeVersion{.minor = 36}), 1u);
  // 1.37: two images, so a threshold of 2000 MB.
  EXPECT_EQ(ImageLocalityImages(pod, KubeVersion{.minor = 37}), 2u);
  // 100 * (950 - 23) / (2000 - 23) = 46; 1.36's 100 * 927 / 977 = 94.
  EXPECT_EQ(ImageLocalityScore(950 * kMB, 2), 46);
  EXPECT_EQ(ImageLocalityScore(950 * kMB, 1), 94);
}

}  // namespace
}  // namespace ms
