#include "scoring/plugins/node_ports.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/builders.h"

namespace ms {
namespace {

TEST(HostPortsConflictTest, Table) {
  struct Case {
    ContainerPort want;
    ContainerPort used;
    bool conflict;
  };
  for (const Case& c : std::vector<Case>{
           {{80, "TCP", ""}, {80, "TCP", ""}, true},
           {{80, "TCP", ""}, {81, "TCP", ""}, false},
           {{80, "UDP", ""}, {80, "TCP", ""}, false},
           {{80, "TCP", "10.0.0.1"}, {80, "TCP", "10.0.0.2"}, false},
           {{80, "TCP", "10.0.0.1"}, {80, "TCP", "0.0.0.0"}, true},
           {{80, "TCP", ""}, {80, "TCP", "10.0.0.2"}, true},
           {{80, "", ""}, {80, "TCP", ""}, true},  // empty protocol is TCP
       }) {
    EXPECT_EQ(HostPortsConflict({c.want}, {c.used}), c.conflict)
        << c.want.host_port << c.want.protocol << c.want.host_ip;
  }
}

}  // namespace
}  // namespace ms
