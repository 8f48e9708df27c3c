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

// The releases whose rules differ (model/pod.h, PodRequests).
constexpr KubeVersion k134{.minor = 34};
constexpr KubeVersion k135{.minor = 35};
constexpr KubeVersion k136{.minor = 36};
constexpr KubeVersion k137{.minor = 37};
constexpr KubeVersion kEvery[] = {k134, k135, k136, k137};

TEST(PodRequestsTest, SumsContainersAndAddsOverhead) {
  Pod pod;
  pod.containers = {MakeContainer(100, 1000), MakeContainer(200, 2000)};
  pod.overhead.milli_cpu = 10;
  for (KubeVersion kube : kEvery) {
    Resources r = PodRequests(pod, kube);
    EXPECT_EQ(r.milli_cpu, 310) << kube.ToString();  // 100 + 200 + 10
    EXPECT_EQ(r.memory, 3000);
    EXPECT_EQ(r.pods, 1);
  }
}

TEST(PodRequestsTest, InitContainerMaxWins) {
  Pod pod;
  pod.containers = {MakeContainer(100, 1000)};
  pod.init_containers = {MakeContainer(500, 100), MakeContainer(50, 4000)};
  for (KubeVersion kube : kEvery) {
    Resources r = PodRequests(pod, kube);
    EXPECT_EQ(r.milli_cpu, 500) << kube.ToString();  // max(100, 500, 50)
    EXPECT_EQ(r.memory, 4000);                       // max(1000, 100, 4000)
  }
}

TEST(PodRequestsTest, SidecarsCountForTheWholeLife) {
  Pod pod;
  pod.containers = {MakeContainer(100, 0)};
  // sidecar 50m, then a regular init container 300m that runs beside it.
  pod.init_containers = {MakeContainer(50, 0, /*restart_always=*/true),
                         MakeContainer(300, 0)};
  // containers + sidecar = 150m; init phase = 300 + 50 = 350m; max = 350m.
  for (KubeVersion kube : kEvery) {
    EXPECT_EQ(PodRequests(pod, kube).milli_cpu, 350) << kube.ToString();
  }
}

TEST(PodRequestsTest, NonZeroDefaultsApplyPerContainer) {
  Pod pod;
  pod.containers = {MakeContainer(0, 0), MakeContainer(300, 0)};
  for (KubeVersion kube : kEvery) {
    Resources r = PodNonZeroRequests(pod, kube);
    EXPECT_EQ(r.milli_cpu, 400) << kube.ToString();  // 100 default + 300
    EXPECT_EQ(r.memory, 2 * 200 * kMi);              // two 200Mi defaults
    EXPECT_EQ(PodRequests(pod, kube).milli_cpu, 300);
  }
}

// In-place resize of one container `app`: spec, allocatedResources and
// resources.requests (its status reports resources only with the last).
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
  for (KubeVersion kube : kEvery) {
    // An upsize not yet allocated: the spec.
    EXPECT_EQ(PodRequests(Resized(2000, 1000, 1000), kube).milli_cpu, 2000)
        << kube.ToString();
    // Allocated, not yet actuated: the allocation.
    EXPECT_EQ(PodRequests(Resized(1000, 2000, 1000), kube).milli_cpu, 2000);
    // A downsize the kubelet has not actuated: what the container still has.
    EXPECT_EQ(PodRequests(Resized(500, 500, 1000), kube).milli_cpu, 1000);
    // Nothing reported: the spec alone.
    EXPECT_EQ(
        PodRequests(Resized(500, std::nullopt, std::nullopt), kube).milli_cpu,
        500);
  }
}

// allocatedResources without resources: up to 1.36 the status is not read
// at all (determineContainerReqs only runs with cs.Resources); 1.37 reads
// it (containerAllocatedRequests, and containerActuatedRequests falls back
// to it).
TEST(PodRequestsTest, AnAllocationAloneCountsFrom137) {
  const Pod pod = Resized(500, 1000, std::nullopt);
  EXPECT_EQ(PodRequests(pod, k134).milli_cpu, 500);
  EXPECT_EQ(PodRequests(pod, k136).milli_cpu, 500);
  EXPECT_EQ(PodRequests(pod, k137).milli_cpu, 1000);
  // status.resources with limits only: read up to 1.36 (as empty requests).
  Pod limits_only = Resized(500, std::nullopt, std::nullopt);
  limits_only.container_statuses = {{.name = "app",
                                     .allocated = Resources{.milli_cpu = 700},
                                     .resources_without_requests = true}};
  EXPECT_EQ(PodRequests(limits_only, k134).milli_cpu, 700);
  EXPECT_EQ(PodRequests(limits_only, k137).milli_cpu, 700);
}

TEST(PodRequestsTest, AnInfeasibleResizeChargesWhatTheKubeletHas) {
  Pod pod = Resized(8000, 1000, 1000);  // an upsize no node could take
  pod.resize_infeasible = true;
  for (KubeVersion kube : kEvery) {
    EXPECT_EQ(PodRequests(pod, kube).milli_cpu, 1000) << kube.ToString();
  }
  // A container that reports nothing: up to 1.36 its spec counts; 1.37
  // drops the whole spec sum, so it counts nothing.
  pod.containers.push_back(MakeContainer(300, 0));
  pod.containers.back().name = "quiet";
  EXPECT_EQ(PodRequests(pod, k134).milli_cpu, 1300);
  EXPECT_EQ(PodRequests(pod, k136).milli_cpu, 1300);
  EXPECT_EQ(PodRequests(pod, k137).milli_cpu, 1000);
  // ... but takes the 100m default in the non-zero figure: 1000 + 100.
  EXPECT_EQ(PodNonZeroRequests(pod, k137).milli_cpu, 1100);
}

// Up to 1.36 the largest amount is taken per container, then the
// containers are summed; 1.37 sums spec, actual and allocated apart and
// takes the largest sum.
TEST(PodRequestsTest, SumOfMaximaBecomesMaximumOfSums) {
  Pod pod;
  pod.containers = {MakeContainer(1000, 0), MakeContainer(2000, 0)};
  pod.containers[0].name = "a";
  pod.containers[1].name = "b";
  pod.container_statuses = {
      {.name = "a", .actual = Resources{.milli_cpu = 2000}},
      {.name = "b", .actual = Resources{.milli_cpu = 1000}}};
  // max(1000, 2000) + max(2000, 1000) = 4000.
  EXPECT_EQ(PodRequests(pod, k134).milli_cpu, 4000);
  EXPECT_EQ(PodRequests(pod, k135).milli_cpu, 4000);
  EXPECT_EQ(PodRequests(pod, k136).milli_cpu, 4000);
  // max(spec 1000 + 2000, actual 2000 + 1000, allocated = spec 3000).
  EXPECT_EQ(PodRequests(pod, k137).milli_cpu, 3000);
}

// Up to 1.36 a regular init container's status is never read, a sidecar's
// is; 1.37 reads every container's.
TEST(PodRequestsTest, InitContainerStatusesCountFrom137) {
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
  // max(app 100 + proxy max(300, 700), setup 200 before the sidecar).
  EXPECT_EQ(PodRequests(pod, k134).milli_cpu, 800);
  EXPECT_EQ(PodRequests(pod, k136).milli_cpu, 800);
  // The actuated sum: max(app 100 + proxy 700, setup 5000) = 5000.
  EXPECT_EQ(PodRequests(pod, k137).milli_cpu, 5000);
}

TEST(PodRequestsTest, PodLevelRequestsReplaceTheContainersSum) {
  Pod pod;
  pod.containers = {MakeContainer(500, 256 * kMi), MakeContainer(500, 0)};
  pod.overhead = Resources{.milli_cpu = 10};
  pod.pod_requests = Resources{.milli_cpu = 3000};
  pod.pod_requests->SetScalar("hugepages-2Mi", 4 * kMi);
  for (KubeVersion kube : kEvery) {
    Resources r = PodRequests(pod, kube);
    EXPECT_EQ(r.milli_cpu, 3010) << kube.ToString();  // pod level + overhead
    EXPECT_EQ(r.memory, 256 * kMi);  // not set at pod level: the sum
    EXPECT_EQ(r.Scalar("hugepages-2Mi"), 4 * kMi);
  }
  // An explicit pod-level 0 replaces the sum too.
  pod.pod_requests = Resources{};
  pod.pod_requests_named = {.memory = true};
  for (KubeVersion kube : kEvery) {
    EXPECT_EQ(PodRequests(pod, kube).memory, 0) << kube.ToString();
  }
}

// A pod with pod-level requests (cpu 1, memory 1Gi) whose kubelet reports
// the pod's status resources.
Pod PodLevelResized() {
  Pod pod;
  pod.containers = {MakeContainer(0, 0)};
  pod.containers[0].name = "app";
  pod.pod_requests = Resources{.milli_cpu = 1000, .memory = kGi};
  pod.pod_requests_named = {.cpu = true, .memory = true};
  return pod;
}

// From 1.36 (InPlacePodLevelResourcesVerticalScaling), once
// status.resources is set, each pod-level resource is the largest of the
// spec, status.resources.requests and status.allocatedResources.
TEST(PodRequestsTest, PodLevelStatusCountsFrom136) {
  Pod pod = PodLevelResized();
  // A downsize to 500m not yet actuated: the cgroup still has 2 cpu.
  pod.pod_requests->milli_cpu = 500;
  pod.resource_status = {.allocated = Resources{.milli_cpu = 500},
                         .actual = Resources{.milli_cpu = 2000},
                         .allocated_named = {.cpu = true},
                         .actual_named = {.cpu = true}};
  EXPECT_EQ(PodRequests(pod, k134).milli_cpu, 500);
  EXPECT_EQ(PodRequests(pod, k135).milli_cpu, 500);  // gate off in 1.35
  EXPECT_EQ(PodRequests(pod, k136).milli_cpu, 2000);
  EXPECT_EQ(PodRequests(pod, k137).milli_cpu, 2000);
  // Memory: named only by the spec, so 1Gi everywhere.
  EXPECT_EQ(PodRequests(pod, k136).memory, kGi);
  EXPECT_EQ(PodRequests(pod, k137).memory, kGi);

  // Without status.resources (allocatedResources alone) nothing changes.
  pod.resource_status.actual.reset();
  pod.resource_status.actual_named = {};
  pod.resource_status.allocated = Resources{.milli_cpu = 3000};
  EXPECT_EQ(PodRequests(pod, k136).milli_cpu, 500);
  // 1.37's container part reads the pod's two lists only when both are
  // there: here the container sum (app counts 0) is replaced by the spec.
  EXPECT_EQ(PodRequests(pod, k137).milli_cpu, 500);
}

// 1.36 sets only what the spec's pod-level requests name; 1.37 every
// pod-level resource any of the three lists names. With an infeasible
// resize the spec is left out: 1.36 then sets a resource only the spec
// names to 0, 1.37 leaves it to the containers' sum.
TEST(PodRequestsTest, PodLevelKeysPerRelease) {
  Pod pod = PodLevelResized();
  pod.containers[0].requests = {.milli_cpu = 300, .memory = 64 * kMi};
  pod.pod_requests = Resources{.memory = kGi};  // cpu not set at pod level
  pod.pod_requests_named = {.memory = true};
  pod.resource_status = {.actual = Resources{.milli_cpu = 250, .memory = kGi},
                         .actual_named = {.cpu = true, .memory = true}};
  EXPECT_EQ(PodRequests(pod, k136).milli_cpu, 300);  // the container's
  EXPECT_EQ(PodRequests(pod, k137).milli_cpu, 250);  // the status's
  EXPECT_EQ(PodRequests(pod, k137).memory, kGi);

  pod.resize_infeasible = true;
  pod.resource_status = {.actual = Resources{.milli_cpu = 250},
                         .actual_named = {.cpu = true}};
  // 1.36: memory is named by the spec, left out: max(status) has none: 0.
  EXPECT_EQ(PodRequests(pod, k136).memory, 0);
  // 1.37: memory is named by nothing read: the containers' part, which an
  // infeasible resize reduces to the statuses (here none for `app`: 0).
  EXPECT_EQ(PodRequests(pod, k137).memory, 0);
  EXPECT_EQ(PodRequests(pod, k137).milli_cpu, 250);
}

// 1.37: the pod's status.allocatedResources and status.resources.requests
// stand for the allocated and actuated sums when both are set. The
// kubelet's allocatedResources includes the overhead, and PodRequests adds
// it again (as kube-scheduler 1.37 does).
TEST(PodRequestsTest, PodStatusSumsStandForTheContainersIn137) {
  Pod pod;
  pod.containers = {MakeContainer(1000, 0), MakeContainer(1000, 0)};
  pod.containers[0].name = "a";
  pod.containers[1].name = "b";
  pod.overhead = Resources{.milli_cpu = 100};
  // The kubelet admitted 2000 + 100 overhead; the cgroup has 2100 too.
  pod.resource_status = {.allocated = Resources{.milli_cpu = 2100},
                         .actual = Resources{.milli_cpu = 2100},
                         .allocated_named = {.cpu = true},
                         .actual_named = {.cpu = true}};
  // A container status the pod's lists override.
  pod.container_statuses = {
      {.name = "a", .actual = Resources{.milli_cpu = 4000}}};
  // 1.34: max(1000, 4000) + 1000 + 100 overhead.
  EXPECT_EQ(PodRequests(pod, k134).milli_cpu, 5100);
  // 1.37: max(spec 2000, 2100, 2100) + 100: the overhead twice.
  EXPECT_EQ(PodRequests(pod, k137).milli_cpu, 2200);
  // With only one of the two, the containers' statuses count:
  // max(2000, actual 4000 + 1000, allocated 2000) + 100.
  pod.resource_status.actual.reset();
  EXPECT_EQ(PodRequests(pod, k137).milli_cpu, 5100);
  // No default is added to the pod's lists: with both set and no container
  // naming cpu, the non-zero cpu is max(2 x 100m, 2100) + 100.
  pod.container_statuses.clear();
  pod.resource_status.actual = Resources{.milli_cpu = 2100};
  pod.containers = {MakeContainer(0, 0), MakeContainer(0, 0)};
  EXPECT_EQ(PodNonZeroRequests(pod, k137).milli_cpu, 2200);
  pod.resource_status = {.allocated = Resources{.milli_cpu = 50},
                         .actual = Resources{.milli_cpu = 50}};
  EXPECT_EQ(PodNonZeroRequests(pod, k137).milli_cpu, 300);  // 200 + 100
}

TEST(PodNonZeroRequestsTest, OnlyUnnamedAmountsGetTheDefaults) {
  constexpr int64_t k200Mi = 200 * kMi;
  Pod pod;
  pod.containers = {MakeContainer(0, 0), MakeContainer(0, 0)};
  pod.containers[0].named = {.cpu = true, .memory = true};  // explicit "0"s
  Resources nz = PodNonZeroRequests(pod, KubeVersion{});
  EXPECT_EQ(nz.milli_cpu, 100);  // the second container's default only
  EXPECT_EQ(nz.memory, k200Mi);
  EXPECT_EQ(PodScoringRequests(pod).milli_cpu, 100);

  // With pod-level requests, a default only for what nothing names; the
  // incoming pod's leastAllocated amounts ignore pod-level requests, as
  // kube-scheduler's NodeResourcesFit scorer does.
  Pod level;
  level.containers = {MakeContainer(200, 0), MakeContainer(0, 0)};
  level.pod_requests = Resources{.memory = kGi};
  Resources accounted = PodNonZeroRequests(level, KubeVersion{});
  EXPECT_EQ(accounted.milli_cpu, 200);  // cpu is named: no default
  EXPECT_EQ(accounted.memory, kGi);
  Resources scored = PodScoringRequests(level);
  EXPECT_EQ(scored.milli_cpu, 300);  // 200 + the second container's 100m
  EXPECT_EQ(scored.memory, 2 * k200Mi);  // not the pod-level 1Gi
}

// 1.37: a status list that names cpu (even as 0) counts as naming it, so
// a pod-level pod whose containers name none gets no cpu default.
TEST(PodNonZeroRequestsTest, StatusNamesCountFrom137) {
  Pod pod;
  pod.containers = {MakeContainer(0, 0)};
  pod.containers[0].name = "app";
  pod.pod_requests = Resources{.memory = kGi};
  pod.container_statuses = {{.name = "app",
                             .allocated = Resources{},
                             .allocated_named = {.cpu = true}}};
  EXPECT_EQ(PodNonZeroRequests(pod, k134).milli_cpu, 100);  // not read
  EXPECT_EQ(PodNonZeroRequests(pod, k137).milli_cpu, 0);
}

// The leastAllocated amounts read no status (its scorer is built without
// in-place resize).
TEST(PodScoringRequestsTest, ReadsNoStatus) {
  EXPECT_EQ(PodScoringRequests(Resized(500, 1000, 1000)).milli_cpu, 500);
}

// A container with these limits and no requests.
Container Limited(int64_t milli_cpu, int64_t memory,
                  bool restart_always = false) {
  Container c = MakeContainer(0, 0, restart_always);
  c.limits = {.milli_cpu = milli_cpu, .memory = memory};
  return c;
}

// The pod's cgroup limit: the sidecar KEP's sum of the containers' limits
// when every container sets one, plus the overhead.
TEST(PodLimitsTest, SumsTheContainersLimitsWhenEverySetsOne) {
  Pod pod;
  pod.containers = {Limited(1000, 2 * kGi), Limited(500, kGi)};
  // sidecar 200m beside a regular init container of 2 cores:
  // max(1000 + 500 + 200, 2000 + 200) = 2200m.
  pod.init_containers = {Limited(200, kMi, /*restart_always=*/true),
                         Limited(2000, kMi)};
  pod.overhead = {.milli_cpu = 50, .memory = 10 * kMi};
  EXPECT_EQ(PodLimits(pod),
            (CpuMemoryLimits{.milli_cpu = 2250, .memory = 3 * kGi + 11 * kMi}));
}

// One container without a CPU limit may use the whole node: no CPU limit,
// and neither the overhead alone; the memory limit still stands.
TEST(PodLimitsTest, AContainerWithoutALimitLeavesThePodWithout) {
  Pod pod;
  pod.containers = {Limited(1000, kGi), Limited(0, kGi)};
  pod.overhead = {.milli_cpu = 50, .memory = kMi};
  EXPECT_EQ(PodLimits(pod),
            (CpuMemoryLimits{.milli_cpu = 0, .memory = 2 * kGi + kMi}));
  pod.init_containers = {Limited(100, 0)};  // an init container counts too
  EXPECT_EQ(PodLimits(pod).memory, 0);
  EXPECT_EQ(PodLimits(Pod()), CpuMemoryLimits());
}

// Pod-level limits (spec.resources.limits) stand for the containers'.
TEST(PodLimitsTest, PodLevelLimitsReplaceTheContainers) {
  Pod pod;
  pod.containers = {Limited(0, kGi)};
  pod.pod_limits = {.milli_cpu = 3000};
  pod.overhead.milli_cpu = 100;
  EXPECT_EQ(PodLimits(pod),
            (CpuMemoryLimits{.milli_cpu = 3100, .memory = kGi}));
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
  for (KubeVersion kube : kEvery) {
    Resources r = PodRequests(pod, kube);
    EXPECT_EQ(r.milli_cpu, INT64_MAX) << kube.ToString();
    EXPECT_EQ(r.memory, INT64_MAX);
    EXPECT_EQ(PodNonZeroRequests(pod, kube).memory, INT64_MAX);
  }
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
  info.AddPod(pod, KubeVersion{});
  EXPECT_EQ(info.requested.milli_cpu, 100);
  EXPECT_EQ(info.requested.pods, 1);
  EXPECT_EQ(info.used_host_ports.size(), 1u);
  info.RemovePod(pod, KubeVersion{});
  EXPECT_EQ(info.requested, Resources{});
  EXPECT_EQ(info.non_zero_requested, Resources{});
  EXPECT_TRUE(info.used_host_ports.empty());
}

}  // namespace
}  // namespace ms
