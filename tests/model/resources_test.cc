#include "model/resources.h"

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(ResourcesTest, ScalarsMergeByName) {
  Resources a;
  a.SetScalar("nvidia.com/gpu", 2);
  Resources b;
  b.SetScalar("example.com/foo", 1);
  b.SetScalar("nvidia.com/gpu", 1);
  a.Add(b);
  EXPECT_EQ(a.Scalar("nvidia.com/gpu"), 3);
  EXPECT_EQ(a.Scalar("example.com/foo"), 1);
  EXPECT_EQ(a.Scalar("absent"), 0);
  ASSERT_EQ(a.scalar.size(), 2u);
  EXPECT_EQ(a.scalar[0].first, "example.com/foo");  // kept sorted
  a.Sub(b);
  EXPECT_EQ(a.Scalar("nvidia.com/gpu"), 2);
  EXPECT_EQ(a.Scalar("example.com/foo"), 0);
}

TEST(ResourcesTest, SetMaxTakesEachFieldsMaximum) {
  Resources a{.milli_cpu = 100, .memory = 50};
  Resources b{.milli_cpu = 10, .memory = 500};
  a.SetMax(b);
  EXPECT_EQ(a.milli_cpu, 100);
  EXPECT_EQ(a.memory, 500);
}

}  // namespace
}  // namespace ms
