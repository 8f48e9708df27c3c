#include "metrics/join.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "metrics/node_set.h"

namespace ms::metrics {
namespace {

NodeSet Nodes() {
  return NodeSet({
      {"n1", {"10.0.0.7", "n1.internal"}},
      {"n2", {"10.0.0.8", "fd00::8"}},
      {"worker-3.example.com", {"10.0.0.9"}},
      {"dup-a", {"10.0.0.100"}},
      {"dup-b", {"10.0.0.100"}},  // an address two nodes claim
  });
}

struct Case {
  std::string label_value;
  JoinMatch match;
  std::string regex;
  bool short_names;
  std::string want;  // "" = no node
};

TEST(JoinerTest, MatchesPerJoinConfig) {
  const std::vector<Case> cases = {
      // Label holds the node name.
      {"n1", JoinMatch::kName, "", false, "n1"},
      {"n9", JoinMatch::kName, "", false, ""},
      {"10.0.0.7", JoinMatch::kName, "", false, ""},
      // Address with port, port stripped, matched against addresses.
      {"10.0.0.7:9100", JoinMatch::kAddress, "", false, "n1"},
      {"10.0.0.8", JoinMatch::kAddress, "", false, "n2"},
      {"[fd00::8]:9100", JoinMatch::kAddress, "", false, "n2"},
      {"fd00::8", JoinMatch::kAddress, "", false, "n2"},
      {"n1.internal:9100", JoinMatch::kAddress, "", false, "n1"},
      // ...then against node names.
      {"n2:9100", JoinMatch::kAddress, "", false, "n2"},
      {"10.0.0.1:9100", JoinMatch::kAddress, "", false, ""},
      // An address claimed by two nodes matches neither.
      {"10.0.0.100:9100", JoinMatch::kAddress, "", false, ""},
      // Regex: the first capture group is matched.
      {"node-exporter-n1", JoinMatch::kName, "node-exporter-(.*)", false, "n1"},
      {"ip-10.0.0.8-x", JoinMatch::kAddress, "ip-([0-9.]+)-x", false, "n2"},
      // Without a group: the whole match, which must be the whole value.
      {"n1", JoinMatch::kName, "n[0-9]", false, "n1"},
      {"xn1", JoinMatch::kName, "n[0-9]", false, ""},
      // Short forms (Sysdig host names).
      {"worker-3", JoinMatch::kName, "", true, "worker-3.example.com"},
      {"n1.cluster.local", JoinMatch::kName, "", true, "n1"},
      {"worker-3", JoinMatch::kName, "", false, ""},
      {"n1.cluster.local", JoinMatch::kName, "", false, ""},
  };
  const NodeSet nodes = Nodes();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label_value + " regex=" + c.regex);
    JoinConfig join{.label = "x", .match = c.match, .regex = c.regex};
    absl::StatusOr<Joiner> joiner =
        Joiner::Create(join, {.short_names = c.short_names});
    ASSERT_TRUE(joiner.ok()) << joiner.status();
    const std::string* got = joiner->Match(c.label_value, nodes);
    EXPECT_EQ(got == nullptr ? "" : *got, c.want);
  }
}

TEST(JoinerTest, BadRegexIsInvalidArgument) {
  JoinConfig join{.label = "node", .match = JoinMatch::kName, .regex = "(a"};
  EXPECT_EQ(Joiner::Create(join, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Label values come from outside, of any length. std::regex recursed once
// per character and overflowed the stack on a 300 KB value; RE2 is linear
// and does not recurse.
TEST(JoinerTest, HugeLabelValuesAreMatchedWithoutRecursion) {
  const NodeSet nodes = Nodes();
  JoinConfig join{.label = "instance",
                  .match = JoinMatch::kAddress,
                  .regex = "(.*):[0-9]+"};
  absl::StatusOr<Joiner> joiner = Joiner::Create(join, {});
  ASSERT_TRUE(joiner.ok()) << joiner.status();
  for (size_t size : {size_t{300} << 10, size_t{10} << 20}) {
    std::string value(size, 'a');
    EXPECT_EQ(joiner->Match(value + ":9100", nodes), nullptr) << size;
    EXPECT_EQ(joiner->Match(value, nodes), nullptr) << size;
  }
  const std::string* n1 = joiner->Match("10.0.0.7:9100", nodes);
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(*n1, "n1");
}

TEST(JoinerTest, UnsupportedSyntaxIsNamed) {
  JoinConfig join{.label = "node", .match = JoinMatch::kName,
                  .regex = "(?=n)(.*)"};  // lookahead: not RE2
  absl::Status s = Joiner::Create(join, {}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "no lookaround")) << s;
}

TEST(NodeSetTest, DropsEmptyAndRepeatedNames) {
  NodeSet nodes({{"a", {"1.1.1.1"}}, {"", {"2.2.2.2"}}, {"a", {"3.3.3.3"}}});
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(*nodes.FindByAddress("1.1.1.1"), "a");
  EXPECT_EQ(nodes.FindByAddress("3.3.3.3"), nullptr);
}

TEST(StripPortTest, Table) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"10.0.0.7:9100", "10.0.0.7"}, {"10.0.0.7", "10.0.0.7"},
      {"[::1]:80", "::1"},           {"::1", "::1"},
      {"host:1", "host"},            {"", ""},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(StripPort(in), want) << in;
}

}  // namespace
}  // namespace ms::metrics
