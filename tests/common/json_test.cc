#include "common/json.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "simdjson.h"

namespace ms {
namespace {

struct Case {
  std::string in;
  std::string want;  // between the quotes
};

TEST(JsonQuoteTest, EscapesAndReplacesInvalidUtf8) {
  const std::vector<Case> cases = {
      {"plain", "plain"},
      {"a\"b\\c", "a\\\"b\\\\c"},
      {"\n\r\t", "\\n\\r\\t"},
      {std::string("\x00\x01\x1f", 3), "\\u0000\\u0001\\u001f"},
      {"\x7f", "\x7f"},
      // Valid UTF-8 of 2, 3 and 4 bytes is copied.
      {"\xc3\xa9", "\xc3\xa9"},
      {"\xe2\x82\xac", "\xe2\x82\xac"},
      {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
      {"\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},  // U+10FFFF
      // Each byte outside a valid sequence is one U+FFFD.
      {"\xff", "\\ufffd"},
      {"\x80", "\\ufffd"},                          // stray continuation
      {"a\xc3", "a\\ufffd"},                        // truncated at the end
      {"\xe2\x82z", "\\ufffd\\ufffdz"},             // truncated
      {"\xc0\xaf", "\\ufffd\\ufffd"},               // overlong '/'
      {"\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd"},    // overlong
      {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},    // a surrogate
      {"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"},  // > U+10FFFF
      {"\xf5\x80", "\\ufffd\\ufffd"},
  };
  for (const Case& c : cases) {
    const std::string quoted = JsonQuote(c.in);
    EXPECT_EQ(quoted, "\"" + c.want + "\"") << c.in;
    std::string appended = "x";
    AppendJsonQuoted(appended, c.in);
    EXPECT_EQ(appended, "x" + quoted);
    // A JSON parser reads it back.
    simdjson::ondemand::parser parser;
    simdjson::padded_string padded(quoted);
    std::string_view value;
    ASSERT_EQ(parser.iterate(padded).get_string().get(value),
              simdjson::SUCCESS)
        << quoted;
  }
}

// What a JSON parser reads back is the input, for valid UTF-8.
TEST(JsonQuoteTest, ValidInputRoundTrips) {
  const std::string in = "pod \"web-1\"\tsur n\xc5\x93ud \xe2\x9c\x93\n\x01";
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(JsonQuote(in));
  std::string_view value;
  ASSERT_EQ(parser.iterate(padded).get_string().get(value), simdjson::SUCCESS);
  EXPECT_EQ(std::string(value), in);
}

}  // namespace
}  // namespace ms
