#include "model/pod.h"

#include <optional>

#include "gtest/gtest.h"
#include "model/node_info.h"

namespace ms {
namespace {

constexpr int64_t kMi = 1024 * 1024;
constexpr int64_t kGi = 1024 * kMi;

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

// In-place resize, as kube-scheduler v1.34 charges it
// (component-helpers' AggregateContainerRequests with status resources).
Pod Resized(int64_t spec_cpu, std::optional<int64_t> allocated_cpu,
            std::optional<int64_t> actual_cpu) {
  Pod pod;
  pod.containers = {MakeContainer(spec_cpu, 0)};
  pod.containers[0].name = "app";
  ContainerResourceStatus status{.name = "app"};
  if (allocated_cpu) status.allocated = Resources{.milli_cpu = *allocated_cpu};
  if (actual_cpu) status.actual = Resources{.milli_cpu = *actual_cpu};
  if (allocated_cpu || actual_cpu) pod.container_statuses = {status};
  return pod;
}

TEST(PodRequestsTest, AResizeChargesTheLargestOfSpecAllocatedAndActual) {
  // An upsize not yet allocated: the spec.
  EXPECT_EQ(PodRequests(Resized(2000, 1000, 1000)).milli_cpu, 2000);
  // Allocated, not yet actuated: the allocation.
  EXPECT_EQ(PodRequests(Resized(2000, 2000, 1000)).milli_cpu, 2000);
  // A downsize the kubelet has not actuated: what the container still has.
  EXPECT_EQ(PodRequests(Resized(500, 500, 1000)).milli_cpu, 1000);
  // Without status.resources kube-scheduler reads no status at all: the
  // spec, whatever is allocated.
  EXPECT_EQ(PodRequests(Resized(500, 1000, std::nullopt)).milli_cpu, 500);
  // Nothing reported: the spec alone.
  EXPECT_EQ(PodRequests(Resized(500, std::nullopt, std::nullopt)).milli_cpu,
            500);
}

TEST(PodRequestsTest, AnInfeasibleResizeChargesWhatTheKubeletHas) {
  Pod pod = Resized(8000, 1000, 1000);  // an upsize no node could take
  pod.resize_infeasible = true;
  EXPECT_EQ(PodRequests(pod).milli_cpu, 1000);
  // A container that reports nothing counts its spec.
  pod.containers.push_back(MakeContainer(300, 0));
  pod.containers.back().name = "quiet";
  EXPECT_EQ(PodRequests(pod).milli_cpu, 1300);
}

// determineContainerReqs takes the largest amount per container, then the
// containers are summed.
TEST(PodRequestsTest, TheLargestAmountIsTakenPerContainer) {
  Pod pod;
  pod.containers = {MakeContainer(1000, 0), MakeContainer(3000, 0)};
  pod.containers[0].name = "a";
  pod.containers[1].name = "b";
  pod.container_statuses = {
      {.name = "a", .actual = Resources{.milli_cpu = 3000}},
      {.name = "b", .actual = Resources{.milli_cpu = 1000}}};
  EXPECT_EQ(PodRequests(pod).milli_cpu, 6000);  // 3000 + 3000
}

// A regular init container's status is never read; a sidecar's is.
TEST(PodRequestsTest, OnlySidecarsStatusesCount) {
  Pod pod;
  pod.containers = {MakeContainer(100, 0)};
  pod.containers[0].name = "app";
  pod.init_containers = {MakeContainer(200, 0), MakeContainer(300, 0)};
  pod.init_containers[0].name = "setup";
  pod.init_containers[1].name = "proxy";
  pod.init_containers[1].restart_always = true;
  pod.container_statuses = {
      {.name = "setup", .actual = Resources{.milli_cpu = 5000}},
      {.name = "proxy", .actual = Resources{.milli_cpu = 700}}};
  // max(app 100 + proxy 700, setup 200 alone before the sidecar started).
  EXPECT_EQ(PodRequests(pod).milli_cpu, 800);
}

TEST(PodRequestsTest, PodLevelRequestsReplaceTheContainersSum) {
  Pod pod;
  pod.containers = {MakeContainer(500, 256 * kMi), MakeContainer(500, 0)};
  pod.overhead = Resources{.milli_cpu = 10};
  pod.pod_requests = Resources{.milli_cpu = 3000};
  pod.pod_requests->SetScalar("hugepages-2Mi", 4 * kMi);
  Resources r = PodRequests(pod);
  EXPECT_EQ(r.milli_cpu, 3010);       // pod level, plus the overhead
  EXPECT_EQ(r.memory, 256 * kMi);     // not set at pod level: the sum
  EXPECT_EQ(r.Scalar("hugepages-2Mi"), 4 * kMi);
  // An explicit pod-level 0 replaces the sum too.
  pod.pod_requests = Resources{};
  pod.pod_requests_named = {.memory = true};
  EXPECT_EQ(PodRequests(pod).memory, 0);
}

TEST(PodNonZeroRequestsTest, OnlyUnnamedAmountsGetTheDefaults) {
  constexpr int64_t k200Mi = 200 * kMi;
  Pod pod;
  pod.containers = {MakeContainer(0, 0), MakeContainer(0, 0)};
  pod.containers[0].named = {.cpu = true, .memory = true};  // explicit "0"s
  Resources nz = PodNonZeroRequests(pod);
  EXPECT_EQ(nz.milli_cpu, 100);  // the second container's default only
  EXPECT_EQ(nz.memory, k200Mi);
  EXPECT_EQ(PodScoringRequests(pod).milli_cpu, 100);

  // With pod-level requests, a default only for what nothing names; the
  // incoming pod's leastAllocated amounts ignore pod-level requests, as
  // kube-scheduler's NodeResourcesFit scorer does.
  Pod level;
  level.containers = {MakeContainer(200, 0), MakeContainer(0, 0)};
  level.pod_requests = Resources{.memory = kGi};
  Resources accounted = PodNonZeroRequests(level);
  EXPECT_EQ(accounted.milli_cpu, 200);  // cpu is named: no default
  EXPECT_EQ(accounted.memory, kGi);
  Resources scored = PodScoringRequests(level);
  EXPECT_EQ(scored.milli_cpu, 300);  // 200 + the second container's 100m
  EXPECT_EQ(scored.memory, 2 * k200Mi);  // not the pod-level 1Gi
}

TEST(PodHostPortsTest, RegularInitContainersReserveNone) {
  Pod pod;
  Container init = MakeContainer(0, 0);
  init.ports = {{.host_port = 9090}};
  Container sidecar = init;
  sidecar.ports = {{.host_port = 9091}};
  sidecar.restart_always = true;
  Container app = MakeContainer(0, 0);
  app.ports = {{.host_port = 8080}, {.host_port = 0}};
  pod.init_containers = {init, sidecar};
  pod.containers = {app};
  std::vector<ContainerPort> ports = PodHostPorts(pod);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].host_port, 9091);
  EXPECT_EQ(ports[1].host_port, 8080);
}

TEST(PodRequestsTest, SumsSaturate) {
  Pod pod;
  constexpr int64_t kMaxQuantity = int64_t{1} << 56;  // decoder's ceiling
  for (int i = 0; i < 200; ++i) {
    pod.containers.push_back(MakeContainer(kMaxQuantity, kMaxQuantity));
  }
  pod.overhead.memory = kMaxQuantity;
  Resources r = PodRequests(pod);
  EXPECT_EQ(r.milli_cpu, INT64_MAX);
  EXPECT_EQ(r.memory, INT64_MAX);
  EXPECT_EQ(PodNonZeroRequests(pod).memory, INT64_MAX);
}

TEST(ResourcesTest, ASaturatedSumStaysSaturated) {
  Resources sum;
  Resources big{.milli_cpu = INT64_MAX / 2 + 1, .memory = 1};
  big.SetScalar("example.com/gpu", INT64_MAX);
  sum.Add(big);
  sum.Add(big);
  EXPECT_EQ(sum.milli_cpu, INT64_MAX);
  EXPECT_EQ(sum.Scalar("example.com/gpu"), INT64_MAX);
  EXPECT_EQ(sum.memory, 2);
  // The true sum is lost: it stays at the top, never below the truth.
  sum.Sub(big);
  EXPECT_EQ(sum.milli_cpu, INT64_MAX);
  EXPECT_EQ(sum.Scalar("example.com/gpu"), INT64_MAX);
  EXPECT_EQ(sum.memory, 1);
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
