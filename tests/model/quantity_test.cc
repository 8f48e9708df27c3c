#include "model/quantity.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace ms {
namespace {

struct Case {
  std::string text;
  int64_t milli;
  int64_t value;
};

class QuantityTest : public ::testing::TestWithParam<Case> {};

TEST_P(QuantityTest, ParsesExactly) {
  const Case& c = GetParam();
  absl::StatusOr<int64_t> milli = ParseQuantityMilli(c.text);
  ASSERT_TRUE(milli.ok()) << milli.status();
  EXPECT_EQ(*milli, c.milli);
  absl::StatusOr<int64_t> value = ParseQuantityValue(c.text);
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, c.value);
}

INSTANTIATE_TEST_SUITE_P(
    All, QuantityTest,
    ::testing::Values(
        Case{"0", 0, 0}, Case{"1", 1000, 1}, Case{"100m", 100, 1},
        Case{"1500m", 1500, 2},  // Value() rounds up: 1.5 -> 2
        Case{"0.5", 500, 1}, Case{".5", 500, 1}, Case{"2.", 2000, 2},
        Case{"1.5Gi", 1610612736000, 1610612736},  // 1.5 * 2^30
        Case{"2Ki", 2048000, 2048}, Case{"128Mi", 134217728000, 134217728},
        Case{"1G", 1000000000000, 1000000000}, Case{"1k", 1000000, 1000},
        Case{"1e3", 1000000, 1000}, Case{"1E3", 1000000, 1000},
        Case{"1e-3", 1, 1},  // 0.001 -> 1m; Value() rounds 0.001 up to 1
        Case{"1.0001m", 2, 1},  // 1.0001m rounds up to 2m
        Case{"+3", 3000, 3}, Case{"-2", -2000, -2},
        Case{"1Ti", 1099511627776000, 1099511627776},
        // Micro and nano: the apiserver accepts and keeps them (`500u`).
        Case{"500u", 1, 1}, Case{"1500000u", 1500, 2}, Case{"1n", 1, 1},
        Case{"2000000n", 2, 1}));

TEST(QuantityTest, HugeValuesOverflowMilliButNotValue) {
  // 4Ei = 2^62 fits in int64 as a value, not in thousandths.
  EXPECT_EQ(ParseQuantityValue("4Ei").value(), int64_t{1} << 62);
  EXPECT_EQ(ParseQuantityMilli("4Ei").status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ParseQuantityValue("16Ei").status().code(),
            absl::StatusCode::kOutOfRange);
}

// 30 significant digits times 2^50 overflowed int128 before the range
// check (undefined behaviour; found by tests/fuzz/quantity_fuzz).
TEST(QuantityTest, ManyDigitsWithABinarySuffixAreOutOfRange) {
  EXPECT_EQ(ParseQuantityMilli("17777777777777777777777777Pi").status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ParseQuantityValue("999999999999999999999999999999Ei")
                .status()
                .code(),
            absl::StatusCode::kOutOfRange);
  // Trailing zeros of a fraction are not significant.
  EXPECT_EQ(ParseQuantityValue("1.00000000000000000000000000000Ei").value(),
            int64_t{1} << 60);
}

TEST(QuantityTest, RejectsMalformed) {
  for (const char* bad :
       {"", "m", "abc", "1.2.3", "1x", "1Ki2", "1KiB", "1e", "1e+", "1 m",
        "1ki", "1mi", "--1", "1e1000", "0x10", "1,5"}) {
    absl::StatusOr<int64_t> q = ParseQuantityMilli(bad);
    EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument)
        << "\"" << bad << "\" gave " << q.status();
  }
}

TEST(QuantityTest, ErrorNamesTheQuantity) {
  EXPECT_EQ(ParseQuantityMilli("12q").status().message(),
            "invalid quantity \"12q\": unknown suffix");
}

}  // namespace
}  // namespace ms
