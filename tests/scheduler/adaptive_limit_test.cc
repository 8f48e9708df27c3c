#include "scheduler/cycle/adaptive_limit.h"

#include "gtest/gtest.h"

namespace ms {
namespace {

constexpr absl::Duration kFast = absl::Milliseconds(5);

// `n` answers of `latency`, each while bindings waited.
void Answer(AdaptiveLimit& limit, int n, absl::Duration latency,
            bool overloaded = false) {
  for (int i = 0; i < n; ++i) limit.Observe(latency, overloaded, true);
}

TEST(AdaptiveLimitTest, GrowsByOnePerRoundWhileBindingsWait) {
  AdaptiveLimit limit({.min = 4, .max = 64, .initial = 10});
  Answer(limit, 10, kFast);  // one round of 10 answers
  EXPECT_EQ(limit.limit(), 11);
  Answer(limit, 11, kFast);
  EXPECT_EQ(limit.limit(), 12);
}

TEST(AdaptiveLimitTest, DoesNotGrowWhenNothingWaits) {
  AdaptiveLimit limit({.min = 4, .max = 64, .initial = 10});
  for (int i = 0; i < 100; ++i) limit.Observe(kFast, false, false);
  EXPECT_EQ(limit.limit(), 10);
}

TEST(AdaptiveLimitTest, StopsAtItsBounds) {
  AdaptiveLimit up({.min = 4, .max = 12, .initial = 10});
  Answer(up, 1000, kFast);
  EXPECT_EQ(up.limit(), 12);
  AdaptiveLimit down({.min = 4, .max = 64, .initial = 10});
  Answer(down, 1000, kFast, /*overloaded=*/true);
  EXPECT_EQ(down.limit(), 4);
  // A ceiling below the default floor wins.
  EXPECT_EQ(AdaptiveLimit({.min = 4, .max = 2, .initial = 32}).limit(), 2);
}

TEST(AdaptiveLimitTest, ABurstOfRefusalsHalvesItOnce) {
  AdaptiveLimit limit({.min = 4, .max = 64, .initial = 32});
  // Every binding in flight comes back 429: one halving, not 32.
  Answer(limit, 32, kFast, /*overloaded=*/true);
  EXPECT_EQ(limit.limit(), 16);
  // The next round's refusals halve it again.
  Answer(limit, 16, kFast, /*overloaded=*/true);
  EXPECT_EQ(limit.limit(), 8);
}

TEST(AdaptiveLimitTest, AnswersFarSlowerThanUsualShrinkIt) {
  AdaptiveLimit limit({.min = 4, .max = 64, .initial = 20});
  Answer(limit, 20, kFast);
  EXPECT_EQ(limit.limit(), 21);
  // 1.5 s against 5 ms: the apiserver is queueing them.
  Answer(limit, 21, absl::Milliseconds(1500));
  EXPECT_EQ(limit.limit(), 18);  // 21 * 0.9
}

TEST(AdaptiveLimitTest, SlowerWithinTheSlackIsNotQueueing) {
  // 5 ms to 400 ms is 80x the baseline but within 1 s of it: an
  // apiserver busy with a burst answers so, its CPUs shared with etcd;
  // taking bindings off it then only slows the burst.
  AdaptiveLimit limit({.min = 4, .max = 64, .initial = 20});
  Answer(limit, 20, kFast);
  Answer(limit, 21, absl::Milliseconds(400));
  EXPECT_EQ(limit.limit(), 22);
}

TEST(AdaptiveLimitTest, TheBaselineFollowsASlowerServer) {
  AdaptiveLimit limit(
      {.min = 4, .max = 64, .initial = 10, .window = 20});
  Answer(limit, 20, kFast);
  // The server is 1.5 s slower for good: first it shrinks the limit;
  // after a window without a fast answer, 1.505 s is the baseline.
  Answer(limit, 20, absl::Milliseconds(1505));
  const int shrunk = limit.limit();
  EXPECT_LT(shrunk, 10);
  Answer(limit, 3 * shrunk, absl::Milliseconds(1505));
  EXPECT_GT(limit.limit(), shrunk);
}

}  // namespace
}  // namespace ms
