#include "scoring/plugins/default_normalize.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(DefaultNormalizeScoreTest, ScalesToTheFeasibleMaximum) {
  const std::vector<int64_t> raw = {0, 3, 2, 9};
  const std::vector<int64_t> feasible = {-1, -1, -1, 0};  // 9 is infeasible
  std::vector<double> out(4, -5);
  DefaultNormalizeScore(raw.data(), feasible.data(), 4, false, out.data());
  EXPECT_EQ(out, (std::vector<double>{0, 100, 66, -5}));  // integer division
  DefaultNormalizeScore(raw.data(), feasible.data(), 4, true, out.data());
  EXPECT_EQ(out, (std::vector<double>{100, 0, 34, -5}));
}

TEST(DefaultNormalizeScoreTest, AllZero) {
  const std::vector<int64_t> raw = {0, 0};
  const std::vector<int64_t> feasible = {-1, -1};
  std::vector<double> out(2);
  DefaultNormalizeScore(raw.data(), feasible.data(), 2, false, out.data());
  EXPECT_EQ(out, (std::vector<double>{0, 0}));
  DefaultNormalizeScore(raw.data(), feasible.data(), 2, true, out.data());
  EXPECT_EQ(out, (std::vector<double>{100, 100}));
}

}  // namespace
}  // namespace ms
