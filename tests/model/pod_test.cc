#include "model/pod.h"

#include "gtest/gtest.h"
#include "model/node_info.h"

namespace ms {
namespace {

Container MakeContainer(int64_t milli_cpu, int64_t memory,
                        bool restart_always = false) {
  Container c;
  c.requests.milli_cpu = milli_cpu;
  c.requests.memory = memory;
  c.restart_always = restart_always;
  return c;
}

TEST(PodRequestsTest, SumsContainersAndAddsOverhead) {
  Pod pod;
  pod.containers = {MakeContainer(100, 1000), MakeContainer(200, 2000)};
  pod.overhead.milli_cpu = 10;
  Resources r = PodRequests(pod);
  EXPECT_EQ(r.milli_cpu, 310);  // 100 + 200 + 10 overhead
  EXPECT_EQ(r.memory, 3000);
  EXPECT_EQ(r.pods, 1);
}

TEST(PodRequestsTest, InitContainerMaxWins) {
  Pod pod;
  pod.containers = {MakeContainer(100, 1000)};
  pod.init_containers = {MakeContainer(500, 100), MakeContainer(50, 4000)};
  Resources r = PodRequests(pod);
  EXPECT_EQ(r.milli_cpu, 500);  // max(100, 500, 50)
  EXPECT_EQ(r.memory, 4000);    // max(1000, 100, 4000)
}

TEST(PodRequestsTest, SidecarsCountForTheWholeLife) {
  Pod pod;
  pod.containers = {MakeContainer(100, 0)};
  // sidecar 50m, then a regular init container 300m that runs beside it.
  pod.init_containers = {MakeContainer(50, 0, /*restart_always=*/true),
                         MakeContainer(300, 0)};
  // containers + sidecar = 150m; init phase = 300 + 50 = 350m; max = 350m.
  EXPECT_EQ(PodRequests(pod).milli_cpu, 350);
}

TEST(PodRequestsTest, NonZeroDefaultsApplyPerContainer) {
  Pod pod;
  pod.containers = {MakeContainer(0, 0), MakeContainer(300, 0)};
  Resources r = PodNonZeroRequests(pod);
  EXPECT_EQ(r.milli_cpu, 400);                 // 100 default + 300
  EXPECT_EQ(r.memory, 2 * 200 * 1024 * 1024);  // two 200Mi defaults
  EXPECT_EQ(PodRequests(pod).milli_cpu, 300);
}

TEST(PodHostPortsTest, CollectsOnlyHostPorts) {
  Pod pod;
  Container c;
  c.ports = {{.host_port = 0}, {.host_port = 8080, .protocol = "UDP"}};
  pod.containers = {c};
  std::vector<ContainerPort> ports = PodHostPorts(pod);
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].host_port, 8080);
  EXPECT_EQ(ports[0].protocol, "UDP");
}

TEST(NodeInfoTest, AddThenRemoveRestoresEverything) {
  Pod pod;
  pod.containers = {MakeContainer(100, 1000)};
  pod.containers[0].ports = {{.host_port = 80}};
  NodeInfo info;
  info.AddPod(pod);
  EXPECT_EQ(info.requested.milli_cpu, 100);
  EXPECT_EQ(info.requested.pods, 1);
  EXPECT_EQ(info.used_host_ports.size(), 1u);
  info.RemovePod(pod);
  EXPECT_EQ(info.requested, Resources{});
  EXPECT_EQ(info.non_zero_requested, Resources{});
  EXPECT_TRUE(info.used_host_ports.empty());
}

}  // namespace
}  // namespace ms
