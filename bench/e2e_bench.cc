// The end-to-end benchmark: metrics-scheduler against kube-scheduler on the
// same kube-apiserver, in the same run, and against the ceiling: a client
// that only binds (bench/bind_only.cc).
//
//   build/bench/e2e_bench [--nodes=1000,5000] [--pods=5000] [--runs=2]
//                         [--workloads=plain,anti-affinity,spread,affinity]
//                         [--rss_nodes=5000] [--rss_pods=20000] [--rss_runs=3]
//                         [--kubelets [--node_status_period=60s]]
//                         [--preload=LIB]
//
// What it does (docs/benchmarks.md explains the method and its limits):
//   1. starts its own control plane (build/testenv/testenv up
//      --with-scheduler) in a temporary directory, so kube-scheduler runs
//      throughout with client qps/burst 5000, and a real Prometheus;
//   2. for each node count: creates the nodes (testenv nodes), remote-writes
//      two metrics for every node, makes sure build/metrics-scheduler (started
//      once, before the first run, and idle while kube-scheduler runs) knows
//      them and that build/bench/bind_only (started once too) is ready, then,
//      for each workload (the pods' constraints: see Workload), alternates
//      runs (ours, theirs, bind-only, each streamed, then each backlog, ...):
//      each creates --pods pods in one namespace from the same template
//      (only spec.schedulerName differs) from --creators threads with a
//      connection each, watches them until every one is bound, and measures:
//        - pods bound per second in steady state (between the 10th and the
//          90th percentile of bound times),
//        - p50 and p99 from the moment the pod's POST was sent to the moment
//          the watch event showing it bound arrived,
//        - the scheduler's CPU seconds (utime + stime in /proc/PID/stat) per
//          1,000 pods, from the first POST to the last pod bound plus 1 s
//          (events written after binding count; for metrics-scheduler, to
//          its last Event written if that is later: its Events yield to
//          bindings while pods wait),
//        - its peak RSS (VmHWM) after the run;
//      then deletes the pods and their events before the next run;
//   3. memory: creates --rss_pods pods already bound to --rss_nodes nodes,
//      starts a fresh metrics-scheduler, and reads its RSS and peak RSS once
//      it is ready and has refreshed its metrics; --rss_runs times, one
//      process after another, reporting the largest;
//   4. prints the tables and the ratios, and writes build/bench/e2e.json.
//
// With --kubelets, simulated kubelets (bench/harness/kubelets.h) write each
// bound pod's status as it starts and every node's status periodically
// throughout, each run's CPU counts its pods' writes, and each node count
// first measures what a heartbeat costs each process while nothing is
// scheduled. --preload puts a library (an allocator) into ours and
// bind-only.
//
// Medians over the runs are reported. The machine's load is printed before
// and after: other work on the machine skews every figure.

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/harness/control_plane.h"
#include "bench/harness/kubelets.h"
#include "bench/harness/process.h"
#include "common/http.h"
#include "kube/client.h"
#include "kube/cluster_config.h"
#include "tests/testing/prometheus.h"

ABSL_FLAG(std::vector<std::string>, nodes,
          std::vector<std::string>({"1000", "5000"}),
          "Node counts to measure, in increasing order; none (--nodes=): "
          "the memory measurement alone.");
ABSL_FLAG(int, pods, 5000, "Pods per run.");
ABSL_FLAG(std::vector<std::string>, workloads,
          std::vector<std::string>({"plain"}),
          "What the pods carry, run in turn at each node count: plain, "
          "anti-affinity, spread, affinity.");
ABSL_FLAG(int, zones, 10,
          "Zones the nodes are labelled with (topology.kubernetes.io/zone).");
ABSL_FLAG(int, node_images, 30,
          "Images each node reports in status.images, each by two names "
          "(testenv nodes --images), as a kubelet reports them.");
ABSL_FLAG(int, runs, 2, "Runs per scheduler and node count (alternating).");
ABSL_FLAG(int, warmup_pods, 200,
          "Pods each scheduler places before the measured runs (not counted).");
ABSL_FLAG(int, creators, 16, "Threads creating pods, one connection each.");
ABSL_FLAG(int, rss_nodes, 5000, "Nodes known in the memory measurement.");
ABSL_FLAG(int, rss_pods, 20000,
          "Pods bound to nodes in the memory measurement (0: skip it).");
ABSL_FLAG(int, rss_runs, 3,
          "Fresh metrics-scheduler processes measured one after another in "
          "the memory measurement; the largest figures are reported.");
ABSL_FLAG(int, max_bindings_in_flight, 64,
          "metrics-scheduler's --max-bindings-in-flight, and the bind-only "
          "client's --in_flight.");
ABSL_FLAG(bool, kubelets, false,
          "Simulate the kubelets' status writes (bench/harness/kubelets.h): "
          "each bound pod's three as it starts, and every node's heartbeat "
          "every --node_status_period; the CPU per pod then counts them. "
          "Also measures, at each node count, what a heartbeat costs each "
          "scheduler while nothing is scheduled.");
ABSL_FLAG(absl::Duration, node_status_period, absl::Seconds(60),
          "With --kubelets: how often each node's status is written.");
ABSL_FLAG(absl::Duration, heartbeat_window, absl::Seconds(60),
          "With --kubelets: each of the two quiet windows (heartbeats off, "
          "then on) the per-heartbeat cost is taken from.");
ABSL_FLAG(std::string, preload, "",
          "A shared library preloaded (LD_PRELOAD) into metrics-scheduler and "
          "bind-only, as for an allocator trial: "
          "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2.");
ABSL_FLAG(std::string, build_dir, "build", "The CMake build directory.");
ABSL_FLAG(std::string, source_dir, ".", "The source tree (for manifests/).");
ABSL_FLAG(std::string, out, "", "JSON output; default BUILD_DIR/bench/e2e.json.");
ABSL_FLAG(std::string, dir, "",
          "State directory of the control plane; default a fresh temporary "
          "one, removed at the end.");

namespace ms::bench {
namespace {

using ::ms::testing::PrometheusServer;
using ::ms::testing::RemoteSeries;

constexpr char kOurs[] = "metrics-scheduler";
constexpr char kTheirs[] = "kube-scheduler";
// The bind-only client; also its pods' spec.schedulerName.
constexpr char kCeiling[] = "bind-only";
// The three measured, in the order each alternation runs them.
constexpr const char* kEveryone[] = {kOurs, kTheirs, kCeiling};
constexpr char kNamespace[] = "bench";

// The pods of a run, in the style of kube-scheduler's scheduler_perf
// workloads. Every pod is labelled app=bench and requests 100m and 64Mi.
enum class Workload {
  kPlain,         // nothing more
  kAntiAffinity,  // required hostname anti-affinity within its group
                  // (label group=g<i % groups>, at most half the nodes'
                  // count of pods per group)
  kSpread,        // a zone spread, maxSkew 1, DoNotSchedule, over app=bench
  kAffinity,      // a preferred (weight 1) zone affinity to app=bench
};

Workload ParseWorkload(const std::string& s) {
  if (s == "plain") return Workload::kPlain;
  if (s == "anti-affinity") return Workload::kAntiAffinity;
  if (s == "spread") return Workload::kSpread;
  if (s == "affinity") return Workload::kAffinity;
  std::cerr << "e2e_bench: unknown workload " << s
            << " (plain, anti-affinity, spread, affinity)" << std::endl;
  std::exit(2);
}

// Pod i of a run of `w`: its labels and the spec fields the workload adds.
struct PodShape {
  std::string labels = R"({"app":"bench"})";
  std::string spec;  // "" or JSON fields with a trailing comma
};

PodShape ShapeOf(Workload w, int i, int groups) {
  PodShape s;
  switch (w) {
    case Workload::kPlain:
      break;
    case Workload::kAntiAffinity: {
      const std::string group = absl::StrCat("g", i % groups);
      s.labels = absl::StrCat(R"({"app":"bench","group":")", group, R"("})");
      s.spec = absl::StrCat(
          R"("affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[)",
          R"({"labelSelector":{"matchLabels":{"group":")", group,
          R"("}},"topologyKey":"kubernetes.io/hostname"}]}},)");
      break;
    }
    case Workload::kSpread:
      s.spec =
          R"("topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone",)"
          R"("whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"bench"}}}],)";
      break;
    case Workload::kAffinity:
      s.spec =
          R"("affinity":{"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[)"
          R"({"weight":1,"podAffinityTerm":{"labelSelector":{"matchLabels":{"app":"bench"}},)"
          R"("topologyKey":"topology.kubernetes.io/zone"}}]}},)";
      break;
  }
  return s;
}

std::string PodJson(const std::string& name, const std::string& scheduler,
                    const std::string& node_name = "",
                    const PodShape& shape = {}) {
  std::string node =
      node_name.empty() ? "" : absl::StrCat(R"("nodeName":")", node_name, R"(",)");
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
      R"(","labels":)", shape.labels, R"(},"spec":{"schedulerName":")",
      scheduler, R"(",)", node, shape.spec,
      R"("terminationGracePeriodSeconds":0,)",
      R"("containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",)",
      R"("resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}})");
}

// Creates pods 0..n-1 named PREFIX<i> from `threads` threads; `sent[i]` gets
// the time the POST of pod i was first sent. Retries a refused create.
void CreatePods(const Admin& admin, const std::string& ns,
                const std::string& prefix, int n, int threads,
                const std::function<std::string(int)>& body,
                std::vector<absl::Time>* sent) {
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      std::unique_ptr<Admin> mine = admin.Clone();
      for (int i; (i = next.fetch_add(1)) < n;) {
        if (sent != nullptr) (*sent)[i] = absl::Now();
        for (int attempt = 0;; ++attempt) {
          absl::StatusOr<HttpResponse> r =
              mine->Call("POST", absl::StrCat("/api/v1/namespaces/", ns, "/pods"),
                         body(i));
          if (r.ok() && (r->status == 201 || r->status == 409)) break;
          if (attempt > 50) {
            Die(absl::StrCat("creating ", prefix, i, ": ",
                             r.ok() ? absl::StrCat("HTTP ", r->status, " ",
                                                   r->body.substr(0, 300))
                                    : r.status().ToString()));
          }
          absl::SleepFor(absl::Milliseconds(100));
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
}

int PodCount(Admin& admin, const std::string& ns) {
  // A list of at most one item still carries remainingItemCount.
  std::string body = admin.Ok(
      "GET", absl::StrCat("/api/v1/namespaces/", ns, "/pods?limit=1"));
  if (body.find("\"items\":[]") != std::string::npos) return 0;
  size_t at = body.find("\"remainingItemCount\":");
  if (at == std::string::npos) return 1;
  int64_t rest = 0;
  if (!absl::SimpleAtoi(
          body.substr(at + 21, body.find_first_of(",}", at) - at - 21),
          &rest)) {
    Die("unreadable remainingItemCount in " + body.substr(at, 40));
  }
  return static_cast<int>(rest) + 1;
}

void DeleteAllPods(Admin& admin, const std::string& ns) {
  admin.Ok("DELETE", absl::StrCat("/api/v1/namespaces/", ns, "/pods"),
           R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})");
  admin.Ok("DELETE", absl::StrCat("/api/v1/namespaces/", ns, "/events"));
  absl::Time deadline = absl::Now() + absl::Minutes(5);
  while (PodCount(admin, ns) > 0) {
    if (absl::Now() > deadline) Die("pods not deleted after 5 minutes");
    absl::SleepFor(absl::Milliseconds(200));
  }
}

struct RunResult {
  double pods_per_second = 0;   // steady state, p10..p90 of bound times
  // Backlog runs: the scheduler is stopped (SIGSTOP) while the pods are
  // created and resumed once all exist; bound per second from then on.
  double backlog_pods_per_second = 0;
  double backlog_cpu_per_1000 = 0;
  double p50_ms = 0, p99_ms = 0;
  double cpu_per_1000 = 0;      // scheduler CPU seconds per 1,000 pods
  double apiserver_cpu_per_1000 = 0;
  double peak_rss_mb = 0;       // VmHWM after the run
  double create_per_second = 0;  // how fast the pods were created
  double wall_seconds = 0;      // first POST to last bound
  // metrics-scheduler: from the last pod bound to its last Event written
  // (streamed, backlog); the CPU figures run to then.
  double events_lag_seconds = 0;
  double backlog_events_lag_seconds = 0;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// What --preload adds to the environment of ours and bind-only.
std::vector<std::string> Preload() {
  const std::string lib = absl::GetFlag(FLAGS_preload);
  if (lib.empty()) return {};
  return {"LD_PRELOAD=" + lib};
}

class Bench {
 public:
  int Run();

 private:
  void StartControlPlane();
  pid_t StartOurs(const std::string& name, int* port);
  pid_t StartCeiling();
  pid_t PidOf(const std::string& who) const;
  void AddNodes(int from, int to);
  void WriteMetrics(int nodes);
  double OurMetric(int port, const std::string& sample);
  bool OurReady(int port);
  RunResult OneRun(const std::string& who, int pods, bool backlog,
                   Workload workload = Workload::kPlain);
  void MeasureMemory();
  // With --kubelets: each scheduler's CPU per node heartbeat at the
  // current node count, while nothing is scheduled.
  std::string MeasureHeartbeats();
  void Finish();

  std::string build_dir_;
  std::unique_ptr<ControlPlane> plane_;
  std::string dir_;  // the plane's
  std::string testenv_bin_;
  pid_t ours_pid_ = -1;
  int ours_port_ = 0;
  pid_t theirs_pid_ = -1;
  pid_t ceiling_pid_ = -1;
  pid_t apiserver_pid_ = -1;
  Admin* admin_ = nullptr;  // the plane's
  std::unique_ptr<PrometheusServer> prom_;
  std::unique_ptr<Kubelets> kubelets_;  // with --kubelets
  HttpClient local_;
  int run_counter_ = 0;
  int nodes_ = 0;
  // JSON fragments.
  std::vector<std::string> node_json_;
  std::string memory_json_ = "null";
  std::string queries_json_ = "null";
};

void Bench::StartControlPlane() {
  plane_ = std::make_unique<ControlPlane>(
      testenv_bin_, absl::GetFlag(FLAGS_dir), absl::GetFlag(FLAGS_source_dir));
  dir_ = plane_->dir();
  admin_ = &plane_->admin();
  theirs_pid_ = plane_->kube_scheduler_pid();
  apiserver_pid_ = plane_->apiserver_pid();
  plane_->CreateNamespace(kNamespace);

  PrometheusServer::Options options;
  options.lookback_delta = absl::Hours(2);  // written once, read all along
  absl::StatusOr<std::unique_ptr<PrometheusServer>> prom =
      PrometheusServer::Start(options);
  if (!prom.ok()) Die(prom.status().ToString());
  prom_ = std::move(*prom);
}

pid_t Bench::StartOurs(const std::string& name, int* port) {
  std::string config = absl::StrFormat(R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: prometheus, url: "%s", timeout: 2s}
cache: {ttl: 5s, maxStaleness: 2h, refreshTimeout: 5s}
metrics:
  - name: http_latency
    query: 'bench_http_latency_seconds'
    weight: 2
    direction: lower
  - name: cpu
    query: 'bench_cpu_utilization'
    weight: 1
    direction: lower
builtins: {leastAllocated: 1, balancedAllocation: 1, recentPlacements: 1}
)",
                                       prom_->url());
  std::string path = absl::StrCat(dir_, "/", name, ".yaml");
  std::ofstream(path) << config;
  *port = 0;
  // Let the kernel pick: bind, read, close. (A race is possible but rare.)
  for (int p = 20260 + (getpid() % 1000) + run_counter_ * 7;; ++p) {
    absl::StatusOr<HttpResponse> probe = local_.Do(
        {.url = absl::StrCat("http://127.0.0.1:", p, "/"),
         .timeout = absl::Milliseconds(200)});
    if (!probe.ok()) {
      *port = p;
      break;
    }
  }
  ++run_counter_;
  pid_t pid =
      Spawn({absl::StrCat(build_dir_, "/metrics-scheduler"), "--config=" + path,
             "--kubeconfig=" + dir_ + "/scheduler.kubeconfig",
             absl::StrCat("--http-address=127.0.0.1:", *port),
             "--identity=" + name, "--leader-elect=false",
             absl::StrCat("--max-bindings-in-flight=",
                          absl::GetFlag(FLAGS_max_bindings_in_flight))},
            absl::StrCat(dir_, "/", name, ".log"), Preload());
  absl::Time deadline = absl::Now() + absl::Minutes(2);
  while (!OurReady(*port)) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      Die("metrics-scheduler exited:\n" + ReadAll(absl::StrCat(dir_, "/", name, ".log")));
    }
    if (absl::Now() > deadline) Die("metrics-scheduler not ready");
    absl::SleepFor(absl::Milliseconds(50));
  }
  return pid;
}

// bind_only with the scheduler identity, as metrics-scheduler, and as many
// workers as metrics-scheduler's binders; it lists the nodes there are now.
pid_t Bench::StartCeiling() {
  const std::string log = absl::StrCat(dir_, "/", kCeiling, ".log");
  pid_t pid = Spawn({absl::StrCat(build_dir_, "/bench/bind_only"),
                     "--kubeconfig=" + dir_ + "/scheduler.kubeconfig",
                     absl::StrCat("--scheduler_name=", kCeiling),
                     absl::StrCat("--in_flight=",
                                  absl::GetFlag(FLAGS_max_bindings_in_flight))},
                    log, Preload());
  AwaitLogLine(pid, "bind_only", log, "bind-only ready", absl::Minutes(2));
  return pid;
}

pid_t Bench::PidOf(const std::string& who) const {
  if (who == kOurs) return ours_pid_;
  if (who == kTheirs) return theirs_pid_;
  return ceiling_pid_;
}

bool Bench::OurReady(int port) {
  absl::StatusOr<HttpResponse> r =
      local_.Do({.url = absl::StrCat("http://127.0.0.1:", port, "/readyz"),
                 .timeout = absl::Seconds(2)});
  return r.ok() && r->status == 200;
}

double Bench::OurMetric(int port, const std::string& sample) {
  absl::StatusOr<HttpResponse> r =
      local_.Do({.url = absl::StrCat("http://127.0.0.1:", port, "/metrics"),
                 .timeout = absl::Seconds(2)});
  if (!r.ok()) return -1;
  double sum = 0;
  bool found = false;
  for (absl::string_view line : absl::StrSplit(r->body, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    if (line.substr(0, sample.size()) != sample) continue;
    char next = line.size() > sample.size() ? line[sample.size()] : '\0';
    if (next != ' ' && next != '{') continue;
    size_t space = line.rfind(' ');
    double v = 0;
    if (absl::SimpleAtod(line.substr(space + 1), &v)) {
      sum += v;
      found = true;
    }
  }
  return found ? sum : -1;
}

void Bench::AddNodes(int from, int to) {
  if (to <= from) return;
  absl::Time start = absl::Now();
  if (RunCommand(absl::StrCat(testenv_bin_, " nodes --kubeconfig ", dir_,
                              "/admin.kubeconfig --start ", from, " --count ",
                              to - from, " --zones ", absl::GetFlag(FLAGS_zones),
                              " --images ", absl::GetFlag(FLAGS_node_images),
                              " --quiet --concurrency 32 2>/dev/null")) != 0) {
    Die("testenv nodes failed");
  }
  std::cerr << "created nodes " << from << ".." << to - 1 << " in "
            << absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(100)))
            << std::endl;
  WriteMetrics(to);
  nodes_ = to;
  if (kubelets_) kubelets_->SetNodes(to);
}

// Two metrics for every node, in one remote write each.
void Bench::WriteMetrics(int nodes) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> latency(0.005, 0.5), cpu(0.05, 0.95);
  std::vector<RemoteSeries> a, b;
  for (int i = 0; i < nodes; ++i) {
    std::string node = absl::StrCat("node-", i);
    a.push_back({"bench_http_latency_seconds", {{"node", node}}, latency(rng)});
    b.push_back({"bench_cpu_utilization", {{"node", node}}, cpu(rng)});
  }
  absl::Status s = prom_->Write(a);
  if (s.ok()) s = prom_->Write(b);
  if (!s.ok()) Die("remote write: " + s.ToString());
}

RunResult Bench::OneRun(const std::string& who, int pods, bool backlog,
                        Workload workload) {
  const std::string tag = absl::StrCat("r", run_counter_++);
  const std::string scheduler =
      who == kTheirs ? std::string("default-scheduler") : who;
  const pid_t pid = PidOf(who);

  kube::KubeClient watcher(admin_->Config(), "e2e-bench");
  kube::ListOptions options{.field_selector =
                                absl::StrCat("metadata.namespace=", kNamespace)};
  absl::StatusOr<kube::ObjectList<Pod>> list = watcher.ListPods(options);
  if (!list.ok()) Die(list.status().ToString());
  if (!list->items.empty()) Die("namespace bench is not empty");

  std::vector<absl::Time> sent(pods, absl::InfinitePast());
  std::vector<absl::Time> bound(pods, absl::InfinitePast());
  std::atomic<int> num_bound{0};
  std::atomic<bool> cancel{false};
  std::string rv = list->resource_version;
  absl::Notification watching;
  std::thread watch([&] {
    bool first = true;
    while (num_bound.load() < pods && !cancel.load()) {
      if (first) {
        watching.Notify();
        first = false;
      }
      absl::Status s = watcher.WatchPods(
          options, rv,
          [&](kube::WatchEvent<Pod>& e) {
            if (!e.resource_version.empty()) rv = e.resource_version;
            if (e.type == kube::WatchEventType::kBookmark) return true;
            const Pod& p = e.object;
            if (p.node_name.empty()) return true;
            int i = -1;
            if (p.name.rfind(tag + "-", 0) != 0 ||
                !absl::SimpleAtoi(p.name.substr(tag.size() + 1), &i) ||
                i < 0 || i >= pods) {
              return true;
            }
            if (bound[i] == absl::InfinitePast()) {
              bound[i] = absl::Now();
              if (kubelets_) kubelets_->Bound(p.name, p.node_name);
              if (num_bound.fetch_add(1) + 1 == pods) return false;
            }
            return true;
          },
          &cancel, absl::Minutes(10));
      if (!s.ok() && !absl::IsCancelled(s)) {
        std::cerr << "watch: " << s << "; resuming" << std::endl;
        absl::SleepFor(absl::Milliseconds(200));
      }
    }
  });
  watching.WaitForNotification();
  absl::SleepFor(absl::Milliseconds(200));  // let the watch connect

  // Anti-affinity groups of at most half the nodes' count of pods each.
  const int groups = std::max(1, (2 * pods + nodes_ - 1) / nodes_);
  if (backlog) kill(pid, SIGSTOP);
  const double cpu0 = CpuSeconds(pid);
  const double api0 = CpuSeconds(apiserver_pid_);
  absl::Time t0 = absl::Now();
  CreatePods(*admin_, kNamespace, tag, pods, absl::GetFlag(FLAGS_creators),
             [&](int i) {
               return PodJson(absl::StrCat(tag, "-", i), scheduler, "",
                              ShapeOf(workload, i, groups));
             },
             &sent);
  const absl::Time created = absl::Now();
  const double create_per_second = pods / absl::ToDoubleSeconds(created - t0);
  if (backlog) {
    t0 = absl::Now();
    kill(pid, SIGCONT);
  }
  absl::Time deadline = absl::Now() + absl::Minutes(10);
  while (num_bound.load() < pods) {
    if (absl::Now() > deadline) {
      cancel.store(true);
      watch.join();
      Die(absl::StrCat(who, ": only ", num_bound.load(), " of ", pods,
                       " pods bound after 10 minutes"));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  const absl::Time t1 = absl::Now();
  watch.join();
  RunResult r;
  // The kubelets' writes for these pods, and what each scheduler does with
  // them, count.
  if (kubelets_ && !kubelets_->AwaitPodWrites(absl::Minutes(2))) {
    Die("the kubelets' pod status writes are not done after 2 minutes");
  }
  absl::SleepFor(absl::Seconds(1));  // events written after the last binding
  if (who == kOurs) {
    // Its Events yield to the bindings while pods wait (a backlog): the
    // CPU of writing them counts, however late they go out.
    const absl::Time events_deadline = absl::Now() + absl::Seconds(120);
    while (OurMetric(ours_port_, "metrics_scheduler_events_pending") != 0 &&
           absl::Now() < events_deadline) {
      absl::SleepFor(absl::Milliseconds(50));
    }
    r.events_lag_seconds = absl::ToDoubleSeconds(absl::Now() - t1);
  }
  const double cpu1 = CpuSeconds(pid);
  const double api1 = CpuSeconds(apiserver_pid_);

  std::vector<double> latency_ms, bound_s;
  for (int i = 0; i < pods; ++i) {
    latency_ms.push_back(absl::ToDoubleMilliseconds(bound[i] - sent[i]));
    bound_s.push_back(absl::ToDoubleSeconds(bound[i] - t0));
  }
  std::sort(bound_s.begin(), bound_s.end());
  size_t lo = pods / 10, hi = pods * 9 / 10;
  if (hi > lo && bound_s[hi] > bound_s[lo]) {
    r.pods_per_second = static_cast<double>(hi - lo) / (bound_s[hi] - bound_s[lo]);
  }
  r.p50_ms = Percentile(latency_ms, 0.50);
  r.p99_ms = Percentile(latency_ms, 0.99);
  r.cpu_per_1000 = (cpu1 - cpu0) * 1000.0 / pods;
  r.apiserver_cpu_per_1000 = (api1 - api0) * 1000.0 / pods;
  r.peak_rss_mb = StatusMb(pid, "VmHWM");
  r.create_per_second = create_per_second;
  r.wall_seconds = absl::ToDoubleSeconds(t1 - t0);

  DeleteAllPods(*admin_, kNamespace);
  absl::SleepFor(absl::Seconds(2));  // everyone digests the deletions
  return r;
}

std::string Bench::MeasureHeartbeats() {
  const absl::Duration window = absl::GetFlag(FLAGS_heartbeat_window);
  struct Window {
    double cpu[3] = {0, 0, 0};  // kEveryone's
    double apiserver = 0;
    int64_t writes = 0;
  };
  auto measure = [&](bool heartbeats) {
    kubelets_->SetHeartbeats(heartbeats);
    Window w;
    const int64_t writes0 = kubelets_->counts().node_writes;
    double cpu0[3];
    for (int i = 0; i < 3; ++i) cpu0[i] = CpuSeconds(PidOf(kEveryone[i]));
    const double api0 = CpuSeconds(apiserver_pid_);
    absl::SleepFor(window);
    for (int i = 0; i < 3; ++i) {
      w.cpu[i] = CpuSeconds(PidOf(kEveryone[i])) - cpu0[i];
    }
    w.apiserver = CpuSeconds(apiserver_pid_) - api0;
    w.writes = kubelets_->counts().node_writes - writes0;
    return w;
  };
  const Window quiet = measure(false);
  const Window beating = measure(true);
  const double seconds = absl::ToDoubleSeconds(window);
  std::printf(
      "\nNode heartbeats at %d nodes, nothing scheduled: %lld writes "
      "in %.0f s (%.1f/s); CPU per heartbeat (with them less without, "
      "per write):\n",
      nodes_, static_cast<long long>(beating.writes), seconds,
      beating.writes / seconds);
  std::vector<std::string> json;
  for (int i = 0; i < 3; ++i) {
    const double us = beating.writes > 0 ? (beating.cpu[i] - quiet.cpu[i]) *
                                               1e6 / beating.writes
                                         : 0;
    std::printf("  %-18s %7.1f us (quiet %.3f s, with heartbeats %.3f s)\n",
                kEveryone[i], us, quiet.cpu[i], beating.cpu[i]);
    json.push_back(absl::StrFormat(
        R"("%s": {"us_per_heartbeat": %.1f, "quiet_cpu_seconds": %.3f, "cpu_seconds": %.3f})",
        kEveryone[i], us, quiet.cpu[i], beating.cpu[i]));
  }
  const double apiserver_us =
      beating.writes > 0
          ? (beating.apiserver - quiet.apiserver) * 1e6 / beating.writes
          : 0;
  std::printf("  %-18s %7.1f us\n", "kube-apiserver", apiserver_us);
  std::fflush(stdout);
  return absl::StrFormat(
      R"({"window_seconds": %.0f, "heartbeats": %lld, %s, "kube-apiserver": {"us_per_heartbeat": %.1f}})",
      seconds, static_cast<long long>(beating.writes),
      absl::StrJoin(json, ", "), apiserver_us);
}

void Bench::MeasureMemory() {
  const int nodes = absl::GetFlag(FLAGS_rss_nodes);
  const int pods = absl::GetFlag(FLAGS_rss_pods);
  if (pods <= 0) return;
  AddNodes(nodes_, nodes);
  std::cerr << "memory: creating " << pods << " pods bound to " << nodes
            << " nodes" << std::endl;
  const std::string ns = "bench-rss";
  plane_->CreateNamespace(ns);
  CreatePods(*admin_, ns, "m", pods, absl::GetFlag(FLAGS_creators),
             [&](int i) {
               // Labelled as a Deployment's pods are: 100 apps.
               PodShape shape{.labels = absl::StrCat(
                                  R"({"app":"app-)", i % 100,
                                  R"(","pod-template-hash":"h)", i % 100,
                                  R"(7f9c6d","tier":")",
                                  i % 2 ? "backend" : "frontend", R"("})")};
               return PodJson(absl::StrCat("m-", i), "default-scheduler",
                              absl::StrCat("node-", i % nodes), shape);
             },
             nullptr);
  // A fresh process: its RSS is what 5,000 nodes and 20,000 pods cost,
  // not what the throughput runs left behind. Several, because the peak
  // while the first list is read varies with how the informers' pages
  // interleave: the target holds only if it holds in every one.
  Terminate(ours_pid_);
  ours_pid_ = -1;
  const int runs = std::max(1, absl::GetFlag(FLAGS_rss_runs));
  double rss = 0, hwm = 0, sync_s = 0, known_nodes = 0;
  std::vector<std::string> runs_json;
  for (int run = 1; run <= runs; ++run) {
    int port = 0;
    absl::Time start = absl::Now();
    pid_t pid = StartOurs("metrics-scheduler-rss", &port);
    double ready_s = absl::ToDoubleSeconds(absl::Now() - start);
    // Two metric refreshes with every node joined.
    absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (OurMetric(port, "metrics_scheduler_metric_refreshes_total") < 4 &&
           absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(200));
    }
    absl::SleepFor(absl::Seconds(6));
    double run_rss = StatusMb(pid, "VmRSS"), run_hwm = StatusMb(pid, "VmHWM");
    known_nodes = OurMetric(port, "metrics_scheduler_nodes");
    Terminate(pid);
    std::fprintf(stderr,
                 "memory: run %d of %d: RSS %.1f MB, peak %.1f MB, ready "
                 "after %.1f s\n",
                 run, runs, run_rss, run_hwm, ready_s);
    runs_json.push_back(absl::StrFormat(
        R"({"rss_mb": %.1f, "peak_rss_mb": %.1f, "ready_seconds": %.2f})",
        run_rss, run_hwm, ready_s));
    rss = std::max(rss, run_rss);
    hwm = std::max(hwm, run_hwm);
    sync_s = std::max(sync_s, ready_s);
  }
  double theirs_rss = StatusMb(theirs_pid_, "VmRSS");
  double theirs_hwm = StatusMb(theirs_pid_, "VmHWM");
  std::printf(
      "\nMemory with %d nodes and %d pods known (fresh process, after sync and "
      "two metric refreshes; the largest of %d processes):\n"
      "  metrics-scheduler: RSS %.1f MB, peak %.1f MB (ready after %.1f s, %g "
      "nodes known)\n"
      "  kube-scheduler (running since the start): RSS %.1f MB, peak %.1f MB\n",
      nodes, pods, runs, rss, hwm, sync_s, known_nodes, theirs_rss, theirs_hwm);
  memory_json_ = absl::StrFormat(
      R"({"nodes": %d, "pods": %d, "metrics-scheduler": {"rss_mb": %.1f, "peak_rss_mb": %.1f, "ready_seconds": %.2f, "runs": [%s]}, "kube-scheduler": {"rss_mb": %.1f, "peak_rss_mb": %.1f}})",
      nodes, pods, rss, hwm, sync_s, absl::StrJoin(runs_json, ", "),
      theirs_rss, theirs_hwm);
}

std::string ResultJson(const RunResult& r) {
  return absl::StrFormat(
      R"({"pods_per_second": %.1f, "backlog_pods_per_second": %.1f, "backlog_cpu_seconds_per_1000_pods": %.3f, "p50_ms": %.0f, "p99_ms": %.0f, "cpu_seconds_per_1000_pods": %.3f, "peak_rss_mb": %.1f, "apiserver_cpu_seconds_per_1000_pods": %.3f, "create_per_second": %.1f, "wall_seconds": %.2f})",
      r.pods_per_second, r.backlog_pods_per_second, r.backlog_cpu_per_1000,
      r.p50_ms, r.p99_ms, r.cpu_per_1000, r.peak_rss_mb, r.apiserver_cpu_per_1000, r.create_per_second, r.wall_seconds);
}

// a / b, field by field: the ratios the table and e2e.json give.
std::string RatioJson(const RunResult& a, const RunResult& b) {
  return absl::StrFormat(
      R"({"pods_per_second": %.2f, "backlog_pods_per_second": %.2f, "p50": %.2f, "p99": %.2f, "cpu_per_pod": %.3f, "peak_rss": %.3f})",
      a.pods_per_second / b.pods_per_second,
      a.backlog_pods_per_second / b.backlog_pods_per_second,
      a.p50_ms / b.p50_ms, a.p99_ms / b.p99_ms, a.cpu_per_1000 / b.cpu_per_1000,
      a.peak_rss_mb / b.peak_rss_mb);
}

void PrintRow(int nodes, const std::string& workload, const std::string& who,
              const RunResult& r) {
  std::printf("| %d | %s | %s | %.0f | %.0f | %.0f | %.0f | %.3f | %.1f |\n",
              nodes, workload.c_str(), who.c_str(), r.backlog_pods_per_second,
              r.pods_per_second, r.p50_ms, r.p99_ms, r.cpu_per_1000,
              r.peak_rss_mb);
}

void PrintRatioRow(int nodes, const std::string& workload,
                   const std::string& label, const RunResult& a,
                   const RunResult& b) {
  std::printf(
      "| %d | %s | **%s** | **%.2f×** | %.2f× | %.2f× | %.2f× | **%.3f×** | "
      "%.2f× |\n",
      nodes, workload.c_str(), label.c_str(),
      a.backlog_pods_per_second / b.backlog_pods_per_second,
      a.pods_per_second / b.pods_per_second, a.p50_ms / b.p50_ms,
      a.p99_ms / b.p99_ms, a.cpu_per_1000 / b.cpu_per_1000,
      a.peak_rss_mb / b.peak_rss_mb);
}

RunResult MedianOf(const std::vector<RunResult>& runs) {
  auto med = [&](double RunResult::*field) {
    std::vector<double> v;
    for (const RunResult& r : runs) v.push_back(r.*field);
    return Median(v);
  };
  RunResult m;
  m.pods_per_second = med(&RunResult::pods_per_second);
  m.backlog_pods_per_second = med(&RunResult::backlog_pods_per_second);
  m.backlog_cpu_per_1000 = med(&RunResult::backlog_cpu_per_1000);
  m.p50_ms = med(&RunResult::p50_ms);
  m.p99_ms = med(&RunResult::p99_ms);
  m.cpu_per_1000 = med(&RunResult::cpu_per_1000);
  m.apiserver_cpu_per_1000 = med(&RunResult::apiserver_cpu_per_1000);
  m.peak_rss_mb = 0;
  for (const RunResult& r : runs) m.peak_rss_mb = std::max(m.peak_rss_mb, r.peak_rss_mb);
  m.create_per_second = med(&RunResult::create_per_second);
  m.wall_seconds = med(&RunResult::wall_seconds);
  return m;
}

void PrintRun(const std::string& who, int run, const RunResult& r) {
  std::printf(
      "  %-18s run %d: streamed %6.1f pods/s  p50 %5.0f ms  p99 %5.0f ms  cpu "
      "%5.3f s/1000  rss %5.1f MB | backlog %6.1f pods/s cpu %5.3f s/1000  "
      "(created %.0f/s, apiserver cpu %.2f s/1000, %.1f s)%s\n",
      who.c_str(), run, r.pods_per_second, r.p50_ms, r.p99_ms, r.cpu_per_1000,
      r.peak_rss_mb, r.backlog_pods_per_second, r.backlog_cpu_per_1000,
      r.create_per_second, r.apiserver_cpu_per_1000,
      r.wall_seconds,
      who == kOurs ? absl::StrFormat("; last Event %.1f/%.1f s after the last "
                                     "binding",
                                     r.events_lag_seconds,
                                     r.backlog_events_lag_seconds)
                         .c_str()
                   : "");
  std::fflush(stdout);
}

int Bench::Run() {
  build_dir_ = absl::GetFlag(FLAGS_build_dir);
  testenv_bin_ = build_dir_ + "/testenv/testenv";
  const int pods = absl::GetFlag(FLAGS_pods);
  const int runs = absl::GetFlag(FLAGS_runs);
  std::vector<int> node_counts;
  for (const std::string& s : absl::GetFlag(FLAGS_nodes)) {
    int n = 0;
    if (!absl::SimpleAtoi(s, &n) || n <= 0) Die("bad --nodes value " + s);
    node_counts.push_back(n);
  }
  std::sort(node_counts.begin(), node_counts.end());
  const std::string load_before = LoadAverage();
  std::printf(
      "End to end: metrics-scheduler vs kube-scheduler vs bind-only, "
      "%d pods per run, %d runs each, alternating; load average "
      "before: %s\n",
      pods, runs, load_before.c_str());

  StartControlPlane();
  if (absl::GetFlag(FLAGS_kubelets)) {
    kubelets_ = std::make_unique<Kubelets>(
        *admin_, kNamespace,
        Kubelets::Options{.node_period =
                              absl::GetFlag(FLAGS_node_status_period)});
  }
  struct Medians {
    int nodes;
    std::string workload;
    RunResult ours, theirs, ceiling;
  };
  std::vector<Medians> medians;
  const std::vector<std::string> workload_names = absl::GetFlag(FLAGS_workloads);
  for (const std::string& w : workload_names) ParseWorkload(w);  // exits if bad
  for (int n : node_counts) {
    AddNodes(nodes_, n);
    if (ours_pid_ < 0) {
      ours_pid_ = StartOurs("metrics-scheduler", &ours_port_);
    }
    if (ceiling_pid_ < 0) ceiling_pid_ = StartCeiling();
    // Both schedulers know every node, and ours has refreshed its metrics
    // with all of them joined.
    absl::Time deadline = absl::Now() + absl::Seconds(120);
    while (OurMetric(ours_port_, "metrics_scheduler_nodes") < n) {
      if (absl::Now() > deadline) Die("metrics-scheduler does not see the nodes");
      absl::SleepFor(absl::Milliseconds(200));
    }
    deadline = absl::Now() + absl::Seconds(60);
    while (OurMetric(ours_port_, "metrics_scheduler_metric_nodes_with_data") < 2.0 * n) {
      if (absl::Now() > deadline) Die("metrics-scheduler has no metrics for the nodes");
      absl::SleepFor(absl::Milliseconds(200));
    }
    int warmup = absl::GetFlag(FLAGS_warmup_pods);
    if (warmup > 0 && n == node_counts.front()) {
      for (const char* who : kEveryone) OneRun(who, warmup, false);
    }
    std::vector<std::string> workload_json;
    if (kubelets_) {
      workload_json.push_back(
          absl::StrCat(R"("heartbeats": )", MeasureHeartbeats()));
    }
    for (const std::string& workload_name : workload_names) {
      const Workload workload = ParseWorkload(workload_name);
      std::printf("\n%d nodes, %s:\n", n, workload_name.c_str());
      // Each run's streamed and backlog figures, by who.
      std::map<std::string, std::vector<RunResult>> results;
      for (int i = 0; i < runs; ++i) {
        for (const char* who : kEveryone) {
          results[who].push_back(OneRun(who, pods, false, workload));
        }
        for (const char* who : kEveryone) {
          RunResult b = OneRun(who, pods, true, workload);
          RunResult& r = results[who].back();
          r.backlog_pods_per_second = b.pods_per_second;
          r.backlog_cpu_per_1000 = b.cpu_per_1000;
          r.backlog_events_lag_seconds = b.events_lag_seconds;
          r.peak_rss_mb = std::max(r.peak_rss_mb, b.peak_rss_mb);
        }
        for (const char* who : kEveryone) {
          PrintRun(who, i + 1, results[who].back());
        }
      }
      RunResult a = MedianOf(results[kOurs]), b = MedianOf(results[kTheirs]),
                c = MedianOf(results[kCeiling]);
      medians.push_back({n, workload_name, a, b, c});
      std::map<std::string, std::string> runs_json;
      for (const char* who : kEveryone) {
        std::vector<std::string> each;
        for (const RunResult& r : results[who]) each.push_back(ResultJson(r));
        runs_json[who] = absl::StrJoin(each, ", ");
      }
      workload_json.push_back(absl::StrFormat(
          R"("%s": {"metrics-scheduler": %s, "kube-scheduler": %s, "bind-only": %s, "ratio": %s, "ratio_to_bind_only": %s, "runs": {"metrics-scheduler": [%s], "kube-scheduler": [%s], "bind-only": [%s]}})",
          workload_name, ResultJson(a), ResultJson(b), ResultJson(c),
          RatioJson(a, b), RatioJson(a, c), runs_json[kOurs],
          runs_json[kTheirs], runs_json[kCeiling]));
    }
    node_json_.push_back(absl::StrFormat(R"("%d": {%s})", n,
                                         absl::StrJoin(workload_json, ", ")));
  }

  // One query per metric per refresh: Prometheus's count of instant queries
  // against our refresh count (none without throughput runs, as with
  // --nodes= for the memory measurement alone).
  if (!node_counts.empty()) {
    double refreshes = OurMetric(ours_port_, "metrics_scheduler_metric_refreshes_total");
    absl::StatusOr<HttpResponse> r =
        local_.Do({.url = prom_->url() + "/metrics", .timeout = absl::Seconds(5)});
    double queries = -1;
    if (r.ok()) {
      for (absl::string_view line : absl::StrSplit(r->body, '\n')) {
        if (absl::StartsWith(line, "prometheus_http_requests_total{") &&
            absl::StrContains(line, "handler=\"/api/v1/query\"")) {
          double v = 0;
          if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) {
            queries = std::max(queries, 0.0) + v;
          }
        }
      }
    }
    std::printf("\nMetrics refresh: %g queries answered by Prometheus for %g "
                "metric refreshes (2 metrics, up to %d nodes)\n",
                queries, refreshes, nodes_);
    queries_json_ = absl::StrFormat(
        R"({"prometheus_queries": %g, "metric_refreshes": %g, "nodes": %d})",
        queries, refreshes, nodes_);
  }

  MeasureMemory();

  std::printf("\nSide by side (medians of %d runs, %d pods each):\n", runs, pods);
  std::printf("| nodes | workload | scheduler | pods/s (backlog) | pods/s (streamed) | p50 ms | p99 ms | CPU s / 1000 pods | peak RSS MB |\n");
  std::printf("|---:|---|---|---:|---:|---:|---:|---:|---:|\n");
  // "ratio": metrics-scheduler / kube-scheduler; "ratio to bind-only":
  // metrics-scheduler / bind-only.
  for (const auto& [n, workload, a, b, c] : medians) {
    PrintRow(n, workload, kOurs, a);
    PrintRow(n, workload, kTheirs, b);
    PrintRow(n, workload, kCeiling, c);
    PrintRatioRow(n, workload, "ratio", a, b);
    PrintRatioRow(n, workload, "ratio to bind-only", a, c);
  }
  const std::string load_after = LoadAverage();
  std::printf("load average before: %s, after: %s\n", load_before.c_str(),
              load_after.c_str());

  std::string kubelets_json = "null";
  if (kubelets_) {
    const Kubelets::Counts k = kubelets_->counts();
    std::printf(
        "kubelets: %lld pod and %lld node status writes, %lld pods "
        "gone first, %lld failed\n",
        static_cast<long long>(k.pod_writes),
        static_cast<long long>(k.node_writes), static_cast<long long>(k.gone),
        static_cast<long long>(k.failed));
    kubelets_json = absl::StrFormat(
        R"({"node_status_period_seconds": %.0f, "pod_writes": %d, "node_writes": %d, "gone": %d, "failed": %d})",
        absl::ToDoubleSeconds(absl::GetFlag(FLAGS_node_status_period)),
        k.pod_writes, k.node_writes, k.gone, k.failed);
  }
  utsname u{};
  uname(&u);
  std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) out = build_dir_ + "/bench/e2e.json";
  std::ofstream json(out);
  json << absl::StrFormat(
      R"({"time": "%s", "host": {"kernel": "%s %s", "cpus": %d, "load_before": "%s", "load_after": "%s"}, "pods_per_run": %d, "runs": %d, "creators": %d, "max_bindings_in_flight": %d,)"
      "\n \"kubelets\": %s,\n \"nodes\": {%s},\n \"memory\": %s,\n "
      "\"metrics_refresh\": %s}\n",
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone()),
      u.sysname, u.release, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)),
      load_before, load_after, pods, runs, absl::GetFlag(FLAGS_creators),
      absl::GetFlag(FLAGS_max_bindings_in_flight), kubelets_json,
      absl::StrJoin(node_json_, ",\n  "), memory_json_, queries_json_);
  json.close();
  std::printf("figures written to %s\n", out.c_str());
  Finish();
  return 0;
}

void Bench::Finish() {
  if (kubelets_) kubelets_->Stop();
  Terminate(ours_pid_);
  Terminate(ceiling_pid_);
  prom_.reset();
  plane_.reset();
}

}  // namespace
}  // namespace ms::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  ms::bench::Bench bench;
  return bench.Run();
}
