#include "scoring/topology_index.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

using ::ms::testing::MakeNode;
constexpr char kZone[] = "topology.kubernetes.io/zone";

// Node i's value of `key` as the index says it, "-" when it lacks it.
std::string ValueAt(const TopologyIndex& index, const std::string& key,
                    size_t i) {
  const TopologyIndex::Column* column = index.Find(key);
  const int32_t id = DomainOf(column, i);
  if (id == TopologyIndex::kNone) return "-";
  for (const auto& [value, value_id] : column->by_value) {
    if (value_id == id) return value;
  }
  return "?";
}

TEST(TopologyIndexTest, GivesEachValueOneIdAndFollowsUpdates) {
  std::vector<NodeInfo> nodes = {MakeNode("a").Label(kZone, "z1"),
                                 MakeNode("b").Label(kZone, "z2"),
                                 MakeNode("c").Label(kZone, "z1"),
                                 MakeNode("d")};
  TopologyIndex index;
  index.Build(nodes);
  const TopologyIndex::Column* zone = index.Find(kZone);
  ASSERT_NE(zone, nullptr);
  EXPECT_EQ(zone->num_values(), 2u);
  EXPECT_EQ(zone->ids[0], zone->ids[2]);
  EXPECT_NE(zone->ids[0], zone->ids[1]);
  EXPECT_EQ(zone->ids[3], TopologyIndex::kNone);
  EXPECT_EQ(index.Find("rack"), nullptr);
  EXPECT_EQ(DomainOf(index.Find("rack"), 0), TopologyIndex::kNone);

  // d joins a new zone and gains a rack; a loses its zone.
  nodes[3].node.labels[kZone] = "z3";
  nodes[3].node.labels["rack"] = "r1";
  index.Update(3, nodes[3].node);
  nodes[0].node.labels.erase(kZone);
  index.Update(0, nodes[0].node);
  EXPECT_EQ(ValueAt(index, kZone, 0), "-");
  EXPECT_EQ(ValueAt(index, kZone, 1), "z2");
  EXPECT_EQ(ValueAt(index, kZone, 2), "z1");
  EXPECT_EQ(ValueAt(index, kZone, 3), "z3");
  EXPECT_EQ(ValueAt(index, "rack", 3), "r1");
  EXPECT_EQ(ValueAt(index, "rack", 2), "-");
  // Ids stay dense: z1 stays interned until the next Build.
  EXPECT_EQ(index.Find(kZone)->num_values(), 3u);
  index.Build(nodes);
  EXPECT_EQ(index.Find(kZone)->num_values(), 3u);  // z2, z1, z3
  nodes[2].node.labels[kZone] = "z2";
  index.Build(nodes);
  EXPECT_EQ(index.Find(kZone)->num_values(), 2u);  // z2, z3
}

}  // namespace
}  // namespace ms
