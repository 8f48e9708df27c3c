#include "scoring/plugins/taint_toleration.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

TEST(ToleratesTaintTest, Table) {
  using Op = TolerationOperator;
  using E = TaintEffect;
  struct Case {
    Toleration toleration;
    Taint taint;
    bool want;
  };
  for (const Case& c : std::vector<Case>{
           {{"k", Op::kEqual, "v", E::kNoSchedule}, {"k", "v", E::kNoSchedule}, true},
           {{"k", Op::kEqual, "v", E::kNoSchedule}, {"k", "w", E::kNoSchedule}, false},
           {{"k", Op::kEqual, "v", E::kNoSchedule}, {"k", "v", E::kNoExecute}, false},
           {{"k", Op::kEqual, "v", std::nullopt}, {"k", "v", E::kNoExecute}, true},
           {{"k", Op::kExists, "", std::nullopt}, {"k", "any", E::kNoSchedule}, true},
           {{"k", Op::kExists, "", std::nullopt}, {"j", "any", E::kNoSchedule}, false},
           // Empty key with Exists tolerates every taint.
           {{"", Op::kExists, "", std::nullopt}, {"j", "x", E::kNoExecute}, true},
           // Empty key with Exists and an effect: only that effect.
           {{"", Op::kExists, "", E::kNoSchedule}, {"j", "x", E::kNoExecute}, false},
           // Empty key with Equal compares the value against every key.
           {{"", Op::kEqual, "x", std::nullopt}, {"j", "x", E::kNoSchedule}, true},
           {{"", Op::kEqual, "x", std::nullopt}, {"j", "y", E::kNoSchedule}, false},
       }) {
    EXPECT_EQ(ToleratesTaint(c.toleration, c.taint), c.want)
        << c.toleration.key << "/" << c.taint.key;
  }
}

// Only PreferNoSchedule taints count, and only those not tolerated.
TEST(TaintTolerationScoreTest, CountsIntolerablePreferNoScheduleTaints) {
  using E = TaintEffect;
  const std::vector<Taint> taints = {{"spot", "true", E::kPreferNoSchedule},
                                     {"scale-down", "", E::kPreferNoSchedule},
                                     {"dedicated", "gpu", E::kNoSchedule}};
  EXPECT_EQ(TaintTolerationScore({}, taints), 2);
  EXPECT_EQ(TaintTolerationScore(
                {{"spot", TolerationOperator::kEqual, "true",
                  E::kPreferNoSchedule}},
                taints),
            1);
  // A toleration of another effect does not tolerate PreferNoSchedule.
  EXPECT_EQ(TaintTolerationScore(
                {{"spot", TolerationOperator::kExists, "", E::kNoSchedule}},
                taints),
            2);
  // An empty effect tolerates every effect.
  EXPECT_EQ(TaintTolerationScore(
                {{"", TolerationOperator::kExists, "", std::nullopt}}, taints),
            0);
}

}  // namespace
}  // namespace ms
