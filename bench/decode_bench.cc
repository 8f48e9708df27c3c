// Decoding pods from the apiserver's watch: what each watch event costs the
// informer threads before any handler runs, against a baseline that only
// walks the same JSON with simdjson (every field visited, nothing kept),
// measured in the same run. Each benchmark reports `vs_walk`: its CPU time
// per event divided by BM_WalkPodEvent's.
//
//   build/bench/decode_bench
//
// The pod is one of e2e_bench's, as the apiserver (v1.34) sent it: a
// Deployment-like pod with three labels, its managedFields, a container
// with requests, the service account's projected volume and the default
// tolerations, bound to a node. Per pod scheduled, metrics-scheduler reads
// three such events: pending ADDED, pending DELETED (the pod leaves the
// pending pods' field selector when bound) and assigned ADDED, which is
// charged to its node (BM_ChargeAssignedPod: decoding plus the accounting
// entry, model/node_info.h).
//
// What a kubelet adds (BM_PodStatusUpdate, BM_NodeHeartbeat): every bound
// pod's status is written several times as it starts, and every node's
// status is written again and again, as MODIFIED events that usually
// change nothing the scheduler reads. Each is timed as the informer thread
// pays for it: the event decoded and handed to the cluster state
// (scheduler/cycle/cluster_state.h), which already holds the object.
#include <time.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "benchmark/benchmark.h"
#include "common/clock.h"
#include "kube/decode.h"
#include "model/node_info.h"
#include "scheduler/cycle/cluster_state.h"
#include "simdjson.h"

namespace ms::kube {
namespace {

constexpr absl::string_view kPod =
    R"json({"kind":"Pod","apiVersion":"v1","metadata":{"name":"m-0","name)json"
    R"json(space":"bench-rss","uid":"61b8a309-9a46-43dd-8739-78d848b5433a)json"
    R"json(","resourceVersion":"19836","generation":1,"creationTimestamp")json"
    R"json(:"2026-11-26T15:17:37Z","labels":{"app":"app-0","pod-template-)json"
    R"json(hash":"h07f9c6d","tier":"frontend"},"managedFields":[{"manager)json"
    R"json(":"unknown","operation":"Update","apiVersion":"v1","time":"202)json"
    R"json(6-11-26T15:17:37Z","fieldsType":"FieldsV1","fieldsV1":{"f:meta)json"
    R"json(data":{"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{},)json"
    R"json("f:tier":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{)json"
    R"json(".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:reso)json"
    R"json(urces":{".":{},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}})json"
    R"json(,"f:terminationMessagePath":{},"f:terminationMessagePolicy":{})json"
    R"json(}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:nodeName":{},)json"
    R"json("f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":)json"
    R"json({},"f:terminationGracePeriodSeconds":{}}}}]},"spec":{"volumes")json"
    R"json(:[{"name":"kube-api-access-kc8pl","projected":{"sources":[{"se)json"
    R"json(rviceAccountToken":{"expirationSeconds":3607,"path":"token"}},)json"
    R"json({"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.cr)json"
    R"json(t","path":"ca.crt"}]}},{"downwardAPI":{"items":[{"path":"names)json"
    R"json(pace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name)json"
    R"json(space"}}]}}],"defaultMode":420}}],"containers":[{"name":"c","i)json"
    R"json(mage":"registry.k8s.io/pause:3.10","resources":{"requests":{"c)json"
    R"json(pu":"100m","memory":"64Mi"}},"volumeMounts":[{"name":"kube-api)json"
    R"json(-access-kc8pl","readOnly":true,"mountPath":"/var/run/secrets/k)json"
    R"json(ubernetes.io/serviceaccount"}],"terminationMessagePath":"/dev/)json"
    R"json(termination-log","terminationMessagePolicy":"File","imagePullP)json"
    R"json(olicy":"IfNotPresent"}],"restartPolicy":"Always","terminationG)json"
    R"json(racePeriodSeconds":0,"dnsPolicy":"ClusterFirst","serviceAccoun)json"
    R"json(tName":"default","serviceAccount":"default","nodeName":"node-0)json"
    R"json(","securityContext":{},"schedulerName":"default-scheduler","to)json"
    R"json(lerations":[{"key":"node.kubernetes.io/not-ready","operator":")json"
    R"json(Exists","effect":"NoExecute","tolerationSeconds":300},{"key":")json"
    R"json(node.kubernetes.io/unreachable","operator":"Exists","effect":")json"
    R"json(NoExecute","tolerationSeconds":300}],"priority":0,"enableServi)json"
    R"json(ceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},"stat)json"
    R"json(us":{"phase":"Pending","qosClass":"Burstable"}})json";

std::string Event(absl::string_view type, absl::string_view object = kPod) {
  return absl::StrCat(R"({"type":")", type, R"(","object":)", object, "}");
}

// The same pod once its kubelet has started it: Running and Ready, with
// its start time and its container's status.
std::string RunningPod(absl::string_view resource_version) {
  std::string pod(kPod);
  pod.replace(pod.find("19836"), 5, std::string(resource_version));
  const std::string pending =
      R"("status":{"phase":"Pending","qosClass":"Burstable"})";
  pod.replace(
      pod.find(pending), pending.size(),
      R"("status":{"phase":"Running","conditions":[{"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-26T15:17:39Z"},)"
      R"({"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-26T15:17:37Z"},)"
      R"({"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-26T15:17:41Z"},)"
      R"({"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-26T15:17:41Z"},)"
      R"({"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-26T15:17:37Z"}],)"
      R"("hostIP":"10.0.0.1","hostIPs":[{"ip":"10.0.0.1"}],"podIP":"10.244.0.17","podIPs":[{"ip":"10.244.0.17"}],)"
      R"("startTime":"2026-11-26T15:17:37Z","containerStatuses":[{"name":"c","state":{"running":{"startedAt":"2026-11-26T15:17:40Z"}},)"
      R"("lastState":{},"ready":true,"restartCount":0,"image":"registry.k8s.io/pause:3.10",)"
      R"("imageID":"registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a",)"
      R"("containerID":"containerd://5f1c3b0b6a1e4c0d9c2f7a8e3b4d5c6e7f8091a2b3c4d5e6f708192a3b4c5d6e","started":true,)"
      R"("volumeMounts":[{"name":"kube-api-access-kc8pl","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true,"recursiveReadOnly":"Disabled"}]}],)"
      R"("qosClass":"Burstable"})");
  return pod;
}

// A node as a kubelet reports it (testenv nodes --images 30 writes the
// same shape): labels, capacity, conditions with their heartbeat times,
// addresses, and 30 images by a tag and a digest each.
std::string KubeletNode(absl::string_view resource_version,
                        absl::string_view heartbeat) {
  std::string conditions;
  for (const char* type :
       {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}) {
    const bool ready = absl::string_view(type) == "Ready";
    absl::StrAppend(
        &conditions, conditions.empty() ? "" : ",", R"({"type":")", type,
        R"(","status":")", ready ? "True" : "False",
        R"(","lastHeartbeatTime":")", heartbeat,
        R"(","lastTransitionTime":"2026-11-26T15:00:00Z","reason":"Kubelet)",
        type, R"(","message":"kubelet reports )", type, R"("})");
  }
  std::string images;
  for (int i = 0; i < 30; ++i) {
    const int image = (i * 7) % 120;
    absl::StrAppend(&images, i == 0 ? "" : ",",
                    R"({"names":["registry.example.com/team/app-)", image,
                    R"(@sha256:)", std::string(56, 'a' + image % 26), image,
                    R"(","registry.example.com/team/app-)", image,
                    R"(:v1.2.3"],"sizeBytes":)", 20000000 + image * 8000000,
                    "}");
  }
  return absl::StrCat(
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"node-0","uid":"0b7c6e3a-3f1e-4c4b-9d6a-2f9a8c1d5e70","resourceVersion":")",
      resource_version,
      R"(","creationTimestamp":"2026-11-26T15:00:00Z","labels":{"kubernetes.io/arch":"amd64","kubernetes.io/hostname":"node-0","kubernetes.io/os":"linux","topology.kubernetes.io/zone":"zone-0"},)"
      R"("annotations":{"node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true"}},)"
      R"("spec":{"podCIDR":"10.244.0.0/24","podCIDRs":["10.244.0.0/24"]},)"
      R"("status":{"capacity":{"cpu":"4","ephemeral-storage":"100Gi","memory":"16Gi","pods":"110"},)"
      R"("allocatable":{"cpu":"4","ephemeral-storage":"100Gi","memory":"16Gi","pods":"110"},"conditions":[)",
      conditions,
      R"(],"addresses":[{"type":"InternalIP","address":"10.0.0.1"},{"type":"Hostname","address":"node-0"}],)"
      R"("daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":"m","systemUUID":"s","bootID":"b","kernelVersion":"6.1.0","osImage":"Debian GNU/Linux 12","containerRuntimeVersion":"containerd://1.7.24","kubeletVersion":"v1.37.2","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"},)"
      R"("images":[)",
      images, "]}}");
}

// Visits every value of the document, keeping nothing.
size_t Walk(simdjson::ondemand::value v) {
  size_t n = 1;
  switch (v.type()) {
    case simdjson::ondemand::json_type::object:
      for (simdjson::ondemand::field f : v.get_object()) {
        n += Walk(f.value());
      }
      break;
    case simdjson::ondemand::json_type::array:
      for (simdjson::ondemand::value e : v.get_array()) n += Walk(e);
      break;
    default:
      v.raw_json_token();
      break;
  }
  return n;
}

double ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double g_walk_ns = 0;  // BM_WalkPodEvent's CPU time per event; runs first

// Runs `op` (false: it failed) as the benchmark, then times it apart for
// the ratio to the walk, so the counter does not depend on the framework's
// iteration bookkeeping; returns that time per call.
template <typename Op>
double Run(benchmark::State& state, size_t bytes, Op op,
           bool baseline = false) {
  for (auto _ : state) {
    if (!op()) {
      state.SkipWithError("the event did not decode as it should");
      return 0;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * bytes);
  constexpr int kReps = 20000;
  const double start = ThreadCpuNs();
  for (int r = 0; r < kReps; ++r) op();
  const double ns = (ThreadCpuNs() - start) / kReps;
  state.counters["cpu_ns"] = ns;
  if (!baseline && g_walk_ns > 0) state.counters["vs_walk"] = ns / g_walk_ns;
  return ns;
}

// The baseline: the event parsed as the decoder parses it (a padded copy,
// one parser kept) and every value visited.
void BM_WalkPodEvent(benchmark::State& state) {
  const std::string line = Event("ADDED");
  simdjson::ondemand::parser parser;
  size_t values = 0;
  g_walk_ns = Run(state, line.size(), [&] {
    simdjson::padded_string padded(line.data(), line.size());
    simdjson::ondemand::document doc = parser.iterate(padded);
    values = Walk(doc.get_value());
    benchmark::DoNotOptimize(values);
    return values > 100;
  }, /*baseline=*/true);
  state.counters["values"] = static_cast<double>(values);
}
BENCHMARK(BM_WalkPodEvent);

void BM_DecodePodAdded(benchmark::State& state) {
  const std::string line = Event("ADDED");
  Run(state, line.size(), [&] {
    absl::StatusOr<WatchEvent<Pod>> event = DecodeWatchEvent<Pod>(line);
    benchmark::DoNotOptimize(event);
    return event.ok() && event->object.labels.size() == 3 &&
           event->object.containers.size() == 1;
  });
}
BENCHMARK(BM_DecodePodAdded);

void BM_DecodePodDeleted(benchmark::State& state) {
  const std::string line = Event("DELETED");
  Run(state, line.size(), [&] {
    absl::StatusOr<WatchEvent<Pod>> event = DecodeWatchEvent<Pod>(line);
    benchmark::DoNotOptimize(event);
    return event.ok() && !event->object.uid.empty();
  });
}
BENCHMARK(BM_DecodePodDeleted);

void BM_ChargeAssignedPod(benchmark::State& state) {
  const std::string line = Event("ADDED");
  // Other pods of its workload are placed: its labels are held already.
  const PodCharge placed =
      PodCharge::Of(DecodeWatchEvent<Pod>(line)->object, KubeVersion{});
  Run(state, line.size(), [&] {
    absl::StatusOr<WatchEvent<Pod>> event = DecodeWatchEvent<Pod>(line);
    if (!event.ok()) return false;
    PodCharge charge = PodCharge::Of(event->object, KubeVersion{});
    benchmark::DoNotOptimize(charge);
    return charge.pod->labels.SharesWith(placed.pod->labels);
  });
}
BENCHMARK(BM_ChargeAssignedPod);

// A status write of a pod already placed that changes nothing the
// scheduler reads (a readiness flip, a probe's time): decoded and handed to
// the cluster state, which holds the pod as it was.
void BM_PodStatusUpdate(benchmark::State& state) {
  RealClock clock;
  ClusterState cluster(clock, KubeVersion{}, absl::ZeroDuration());
  cluster.UpsertNode(*DecodeNode(KubeletNode("1", "2026-11-26T15:17:00Z")));
  cluster.UpsertAssignedPod(
      DecodeWatchEvent<Pod>(Event("MODIFIED", RunningPod("20000")))->object);
  const std::string line = Event("MODIFIED", RunningPod("20001"));
  Run(state, line.size(), [&] {
    absl::StatusOr<WatchEvent<Pod>> event = DecodeWatchEvent<Pod>(line);
    if (!event.ok()) return false;
    return !cluster.UpsertAssignedPod(event->object);
  });
}
BENCHMARK(BM_PodStatusUpdate);

// A node's status written again with only its heartbeat times changed:
// decoded (a node is several times a pod's size, most of it the images,
// which the cluster state's copy spares from being read again) and handed
// to the cluster state.
void BM_NodeHeartbeat(benchmark::State& state) {
  RealClock clock;
  ClusterState cluster(clock, KubeVersion{}, absl::ZeroDuration());
  cluster.UpsertNode(*DecodeNode(KubeletNode("1", "2026-11-26T15:17:00Z")));
  const std::string line =
      Event("MODIFIED", KubeletNode("2", "2026-11-26T15:17:10Z"));
  // As the scheduler's nodes informer decodes: a node's images reused when
  // their text is unchanged.
  const DecodeContext<Node> context{
      .known_images = [&cluster](std::string_view name, uint64_t digest,
                                 std::vector<uint32_t>& images) {
        return cluster.KnownImages(name, digest, images);
      }};
  Run(state, line.size(), [&] {
    absl::StatusOr<WatchEvent<Node>> event =
        DecodeWatchEvent<Node>(line, context);
    if (!event.ok() || event->object.images.size() != 60) return false;
    return !cluster.UpsertNode(event->object);
  });
}
BENCHMARK(BM_NodeHeartbeat);

}  // namespace
}  // namespace ms::kube

// As the scheduler's binary runs: without absl::Mutex deadlock detection,
// which Debian's Abseil turns on, and which would otherwise weigh on every
// lock the cluster state and the image names take.
int main(int argc, char** argv) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
