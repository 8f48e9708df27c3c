#include "model/label_set.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "model/node_info.h"

namespace ms {
namespace {

TEST(LabelSetTest, EqualLabelsShareOneMap) {
  const size_t before = LiveLabelSets();
  LabelSet a(Labels{{"app", "web"}, {"tier", "front"}});
  LabelSet b(Labels{{"tier", "front"}, {"app", "web"}});
  LabelSet c(Labels{{"app", "db"}});
  EXPECT_TRUE(a.SharesWith(b));
  EXPECT_FALSE(a.SharesWith(c));
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);
  EXPECT_EQ(a, (Labels{{"app", "web"}, {"tier", "front"}}));
  EXPECT_EQ(LiveLabelSets(), before + 2);
  ASSERT_NE(a.find("app"), a.end());
  EXPECT_EQ(a.find("app")->second, "web");
  EXPECT_EQ(a.size(), 2u);
  const Labels& map = a;
  EXPECT_EQ(map.at("tier"), "front");
}

TEST(LabelSetTest, NoLabelsIsOneEmptySetOutsideTheTable) {
  const size_t before = LiveLabelSets();
  LabelSet none;
  LabelSet empty{Labels{}};
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(none.SharesWith(empty));
  EXPECT_EQ(none.begin(), none.end());
  EXPECT_EQ(LiveLabelSets(), before);
}

TEST(LabelSetTest, AMapIsFreedWithItsLastHolderAndMadeAgainWhenNeeded) {
  const size_t before = LiveLabelSets();
  {
    LabelSet a(Labels{{"app", "gone"}});
    LabelSet copy = a;
    EXPECT_EQ(LiveLabelSets(), before + 1);
    a = LabelSet();
    EXPECT_EQ(LiveLabelSets(), before + 1);  // the copy holds it
  }
  EXPECT_EQ(LiveLabelSets(), before);
  LabelSet again(Labels{{"app", "gone"}});
  EXPECT_EQ(again, (Labels{{"app", "gone"}}));
  EXPECT_EQ(LiveLabelSets(), before + 1);
}

// Sets made and dropped on many threads at once: each reads what it was
// made from, and the table ends as it began.
TEST(LabelSetTest, ManyThreadsMakeAndDropSetsOfTheSameLabels) {
  const size_t before = LiveLabelSets();
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &wrong] {
      for (int i = 0; i < 2000; ++i) {
        Labels labels{{"app", absl::StrCat("app-", i % 7)},
                      {"tier", absl::StrCat(i % 3)}};
        std::vector<LabelSet> held;
        for (int k = 0; k < 1 + (i + t) % 3; ++k) held.emplace_back(labels);
        for (const LabelSet& s : held) {
          if (!(s == labels) || !s.SharesWith(held.front())) ++wrong[t];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
  EXPECT_EQ(LiveLabelSets(), before);
}

TEST(PodChargeTest, EqualPodsChargeAlikeAndShareTheirLabels) {
  Pod pod{.name = "p", .namespace_ = "ns", .uid = "u",
          .labels = {{"app", "web"}}};
  pod.pod_anti_affinity.required.push_back(
      {.label_selector = LabelSelector{.match_labels = {{"app", "web"}}},
       .topology_key = "kubernetes.io/hostname"});
  PodCharge a = PodCharge::Of(pod, KubeVersion{});
  PodCharge b = PodCharge::Of(pod, KubeVersion{});
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.pod->labels.SharesWith(b.pod->labels));
  EXPECT_TRUE(a.pod->has_required_anti_affinity());
  EXPECT_EQ(a.pod->anti_affinity(), pod.pod_anti_affinity);
  EXPECT_TRUE(a.pod->affinity().empty());

  pod.pod_anti_affinity.required[0].topology_key = "zone";
  EXPECT_FALSE(PodCharge::Of(pod, KubeVersion{}) == a);
  pod.pod_anti_affinity = {};
  PodCharge plain = PodCharge::Of(pod, KubeVersion{});
  EXPECT_FALSE(plain.pod->has_affinity());
  EXPECT_FALSE(plain == a);
}

}  // namespace
}  // namespace ms
