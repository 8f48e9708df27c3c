// quality: the placement-quality benchmark (docs/quality.md).
//
//   build/bench/quality_bench [--traces=heterogeneous,identical,...] [--runs=3]
//                             [--policies=kube-scheduler,metrics-scheduler,...]
//                             [--duration=300] [--nodes=8]
//                             [--scrape_interval=15s] [--learning_lag=30s]
//                             [--variants=NAME=FILE,...]
//
// One run places every trace under every policy at once, each (trace,
// policy) pair on its own copy of the trace's nodes (a pool), on the local
// control plane: kube-scheduler (the testenv's, default profile),
// metrics-scheduler (this build's, with manifests/config.yaml, and one more
// process per --variants configuration), and the
// reference policies scheduled by the harness itself (policies.h). The load
// model (load_model.h) runs in this process: it learns of each binding from
// a watch, exports what the pods do for a real Prometheus to scrape
// (exporter.h), and keeps each pool's figures (figures.h). There are no
// kubelets: the harness marks each pod Running, with its startTime, when the
// model starts it (pod_status_writer.h). Pods end after their duration (the
// harness deletes them). After --runs runs it prints a table per trace and
// writes quality.json and quality.html to --out_dir.
//
// Exit codes: 0 done; 1 a part could not start or failed (one line says
// which); 2 bad flags or trace files.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/harness/control_plane.h"
#include "bench/harness/process.h"
#include "bench/quality/cluster_objects.h"
#include "bench/quality/pod_status_writer.h"
#include "bench/quality/policies.h"
#include "bench/quality/reference_scheduler.h"
#include "bench/quality/report.h"
#include "bench/quality/targets.h"
#include "bench/quality/trace.h"
#include "bench/quality/world.h"
#include "common/logging.h"
#include "glog/logging.h"
#include "httplib.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "metrics/prometheus_decode.h"
#include "tests/testing/prometheus.h"

ABSL_FLAG(std::vector<std::string>, traces,
          std::vector<std::string>({"heterogeneous", "identical", "bursts",
                                    "degrading", "other-scheduler",
                                    "far-from-requests"}),
          "The shipped traces to run (trace.h).");
ABSL_FLAG(std::vector<std::string>, trace_files, {},
          "Traces of your own, in JSON lines (docs/quality.md), run beside "
          "--traces.");
ABSL_FLAG(std::vector<std::string>, policies,
          std::vector<std::string>({"kube-scheduler", "metrics-scheduler",
                                    "target-load-packing",
                                    "load-variation-risk-balancing",
                                    "load-aware", "clairvoyant", "learning"}),
          "The policies to compare.");
ABSL_FLAG(int, runs, 3, "Runs; the report gives each figure's median.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the shipped traces (run r uses seed+r).");
ABSL_FLAG(double, duration, 300, "Seconds of each run (and of the traces).");
ABSL_FLAG(int, nodes, 8, "Nodes of each shipped trace's fleet.");
ABSL_FLAG(absl::Duration, scrape_interval, absl::Seconds(15),
          "How often Prometheus scrapes the load model.");
ABSL_FLAG(absl::Duration, learning_lag, absl::ZeroDuration(),
          "How long after a pod's warm-up the learning policy knows its "
          "usage; 0: two scrape intervals, the least a rate needs.");
ABSL_FLAG(double, hot_threshold, 0.8, "A node is hot above this utilisation.");
ABSL_FLAG(std::string, config, "",
          "metrics-scheduler's configuration; default "
          "SOURCE_DIR/manifests/config.yaml with its backend URL replaced.");
ABSL_FLAG(std::vector<std::string>, variants, {},
          "Other configurations of metrics-scheduler to run beside the "
          "policies, each NAME=FILE: policy metrics-scheduler:NAME, its own "
          "process and pools, its pods' schedulerName metrics-scheduler-NAME "
          "(NAME: 1-12 of a-z, 0-9 and -).");
ABSL_FLAG(int, ours_v, 0,
          "metrics-scheduler's -v; its logs are in --dir, one per policy and "
          "run.");
ABSL_FLAG(std::string, build_dir, "build", "The CMake build directory.");
ABSL_FLAG(std::string, source_dir, ".", "The source tree.");
ABSL_FLAG(std::string, out_dir, "",
          "Where quality.json and quality.html go; default BUILD_DIR/bench.");
ABSL_FLAG(std::string, dir, "",
          "The control plane's directory; default a temporary one, removed "
          "at the end.");
ABSL_FLAG(std::string, write_traces, "",
          "Write the shipped traces of the first run to this directory and "
          "exit.");

namespace ms::quality {
namespace {

using ::ms::bench::AwaitLogLine;
using ::ms::bench::ControlPlane;
using ::ms::bench::Die;
using ::ms::bench::ReadAll;
using ::ms::bench::Spawn;
using ::ms::bench::Terminate;
using ::ms::testing::PrometheusServer;

constexpr const char* kNamespace = kPodNamespace;
constexpr char kKube[] = "kube-scheduler";
constexpr char kOurs[] = "metrics-scheduler";
// Pods charged by the peers as recently bound: the last 60 s.
constexpr double kRecentSeconds = 60;
// How often the reference policies' view of Prometheus is refreshed.
constexpr absl::Duration kPollEvery = absl::Seconds(5);

// A policy as the harness runs it.
struct PolicyRun {
  std::string name;                 // as reported
  std::string short_name;           // in pool names
  std::string scheduler_name;       // its pods' spec.schedulerName
  std::optional<Policy> reference;  // scheduled by the harness
  // metrics-scheduler's: its configuration file, "" for --config's (or the
  // shipped one).
  bool ours = false;
  std::string config;
};

// How long after a pod's warm-up the learning policy knows its usage:
// --learning_lag, by default two scrapes of the warmed-up pod, the least a
// rate needs.
double LearningLag() {
  const absl::Duration lag = absl::GetFlag(FLAGS_learning_lag);
  return absl::ToDoubleSeconds(lag > absl::ZeroDuration()
                                   ? lag
                                   : 2 * absl::GetFlag(FLAGS_scrape_interval));
}

PolicyRun MakePolicyRun(const std::string& name) {
  if (name == kKube) return {name, "kube", "default-scheduler", std::nullopt};
  if (name == kOurs) {
    return {name, "ours", "metrics-scheduler", std::nullopt, true, ""};
  }
  absl::StatusOr<Policy> p = ParsePolicy(name);
  if (!p.ok()) {
    std::cerr << "quality: unknown policy " << name << "\n";
    std::exit(2);
  }
  static const std::map<Policy, std::string> kShort = {
      {Policy::kTargetLoadPacking, "tlp"},
      {Policy::kLoadVariationRiskBalancing, "lvrb"},
      {Policy::kLoadAware, "la"},
      {Policy::kClairvoyant, "cv"},
      {Policy::kLearning, "lrn"}};
  return {name, kShort.at(*p), absl::StrCat("quality-", name), *p};
}

// --variants' NAME=FILE: metrics-scheduler with FILE, as its own policy.
PolicyRun MakeVariantRun(const std::string& spec) {
  const size_t eq = spec.find('=');
  const std::string name = spec.substr(0, std::min(eq, spec.size()));
  const bool valid_name =
      !name.empty() && name.size() <= 12 &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      });
  if (eq == std::string::npos || !valid_name || eq + 1 == spec.size()) {
    std::cerr << "quality: --variants takes NAME=FILE, NAME 1-12 of a-z, 0-9 "
                 "and -; not "
              << spec << "\n";
    std::exit(2);
  }
  return {absl::StrCat(kOurs, ":", name),
          absl::StrCat("ms-", name),
          absl::StrCat(kOurs, "-", name),
          std::nullopt,
          true,
          spec.substr(eq + 1)};
}

std::vector<Trace> LoadTraces(uint64_t seed) {
  std::vector<Trace> traces;
  GenerateOptions options{.seed = seed,
                          .duration_s = absl::GetFlag(FLAGS_duration),
                          .nodes = absl::GetFlag(FLAGS_nodes)};
  for (const std::string& name : absl::GetFlag(FLAGS_traces)) {
    absl::StatusOr<TraceKind> kind = ParseTraceKind(name);
    if (!kind.ok()) {
      std::cerr << "quality: " << kind.status().message() << "\n";
      std::exit(2);
    }
    traces.push_back(GenerateTrace(*kind, options));
  }
  for (const std::string& file : absl::GetFlag(FLAGS_trace_files)) {
    std::string text = ReadAll(file);
    absl::StatusOr<Trace> t = ParseTrace(text, file);
    if (!t.ok()) {
      std::cerr << "quality: " << t.status().message() << "\n";
      std::exit(2);
    }
    traces.push_back(*std::move(t));
  }
  return traces;
}

// The pools of every trace and policy, their nodes named and addressed.
std::vector<PoolSpec> MakePools(const std::vector<Trace>& traces,
                                const std::vector<PolicyRun>& policies) {
  std::vector<PoolSpec> pools;
  int index = 0;
  for (const Trace& t : traces) {
    for (const PolicyRun& p : policies) {
      PoolSpec pool{.name = PoolName(t.name, p.short_name),
                    .trace = &t,
                    .policy = p.name};
      for (const NodeSpec& n : t.nodes) {
        pool.node_names.push_back(NodeName(pool.name, n));
        pool.node_addresses.push_back(NodeAddress(index++));
      }
      pools.push_back(std::move(pool));
    }
  }
  return pools;
}

void CreateNodes(ControlPlane& plane, const std::vector<PoolSpec>& pools) {
  for (const PoolSpec& pool : pools) {
    for (size_t n = 0; n < pool.node_names.size(); ++n) {
      const std::string& name = pool.node_names[n];
      plane.admin().Ok("POST", "/api/v1/nodes", NodeJson(name, pool.name));
      absl::StatusOr<HttpResponse> r = plane.admin().Call(
          "PATCH", "/api/v1/nodes/" + name + "/status",
          NodeStatusPatch(pool.trace->nodes[n], name, pool.node_addresses[n]),
          "application/strategic-merge-patch+json");
      if (!r.ok() || r->status != 200) Die("cannot set the status of " + name);
    }
  }
}

// The load model's /metrics on a loopback port.
class Exporter {
 public:
  explicit Exporter(World& world) : world_(world) {
    server_.Get(
        "/metrics", [this](const httplib::Request&, httplib::Response& res) {
          res.set_content(world_.Exposition(), "text/plain; version=0.0.4");
        });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) Die("the load model's exporter cannot listen");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Exporter() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  World& world_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// The reference policies' view of Prometheus: each node's CPU utilisation,
// mean and standard deviation over five minutes, refreshed every 5 s.
class MetricsPoller {
 public:
  explicit MetricsPoller(PrometheusServer& prom) : prom_(prom) {
    thread_ = std::thread([this] {
      do {
        Poll();
      } while (!stop_.WaitForNotificationWithTimeout(kPollEvery));
    });
  }
  ~MetricsPoller() {
    stop_.Notify();
    thread_.join();
  }
  struct Value {
    double mean = std::numeric_limits<double>::quiet_NaN();
    double stddev = std::numeric_limits<double>::quiet_NaN();
  };
  Value Of(const std::string& node) const {
    absl::MutexLock lock(&mu_);
    auto it = values_.find(node);
    return it == values_.end() ? Value{} : it->second;
  }

 private:
  void Poll() {
    const std::string util =
        "rate(node_cpu_busy_seconds_total[1m]) / on(node) node_cpu_cores";
    std::map<std::string, Value> values;
    Query(absl::StrCat("avg_over_time((", util, ")[5m:15s])"),
          [&](const std::string& node, double v) { values[node].mean = v; });
    Query(absl::StrCat("stddev_over_time((", util, ")[5m:15s])"),
          [&](const std::string& node, double v) { values[node].stddev = v; });
    absl::MutexLock lock(&mu_);
    values_ = std::move(values);
  }
  template <typename F>
  void Query(const std::string& promql, F set) {
    absl::StatusOr<std::string> body = prom_.Query(promql);
    if (!body.ok()) {
      LOG(WARNING) << "prometheus: " << body.status();
      return;
    }
    absl::StatusOr<metrics::PromQueryInfo> info = metrics::DecodeInstantQuery(
        200, *body, {.metric_name = "utilisation", .join_label = "node"},
        [&](const metrics::PromSeries& s) {
          if (s.has_label) set(std::string(s.label_value), s.sample.value);
        });
    if (!info.ok()) LOG(WARNING) << "prometheus: " << info.status();
  }

  PrometheusServer& prom_;
  mutable absl::Mutex mu_;
  std::map<std::string, Value> values_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  std::thread thread_;
};

// metrics-scheduler's configuration for `policy`: its file (the shipped one
// by default), the backend URL pointed at this run's Prometheus, and the
// top-level schedulerName set to the policy's.
std::string OurConfig(const PolicyRun& policy, const std::string& prom_url) {
  std::string path =
      policy.config.empty() ? absl::GetFlag(FLAGS_config) : policy.config;
  const bool given = !path.empty();
  if (!given) path = absl::GetFlag(FLAGS_source_dir) + "/manifests/config.yaml";
  std::string text = ReadAll(path);
  if (text.empty()) {
    Die("cannot read metrics-scheduler's configuration " + path);
  }
  const std::string shipped =
      "url: http://prometheus-server.monitoring.svc:9090";
  if (text.find(shipped) != std::string::npos) {
    text = absl::StrReplaceAll(text, {{shipped, "url: " + prom_url}});
  } else if (!given) {
    Die("manifests/config.yaml no longer has the backend URL " + shipped);
  }
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  bool named = false;
  for (std::string& line : lines) {
    if (absl::StartsWith(line, "schedulerName:")) {
      line = "schedulerName: " + policy.scheduler_name;
      named = true;
    }
  }
  if (!named) lines.push_back("schedulerName: " + policy.scheduler_name);
  return absl::StrJoin(lines, "\n") + "\n";
}

// A metrics-scheduler process of the run: its pid and its log.
struct OurProcess {
  pid_t pid = 0;
  std::string log;
};

// Starts metrics-scheduler for `policy`, without waiting for it
// (AwaitReady).
OurProcess StartOurs(ControlPlane& plane, const PolicyRun& policy,
                     const std::string& prom_url, int run) {
  const std::string stem =
      absl::StrCat(plane.dir(), "/", policy.short_name, "-", run);
  const std::string config = stem + ".yaml";
  std::ofstream(config) << OurConfig(policy, prom_url);
  const std::string log = stem + ".log";
  return {Spawn({absl::GetFlag(FLAGS_build_dir) + "/metrics-scheduler",
                 "--config=" + config,
                 "--kubeconfig=" + plane.dir() + "/scheduler.kubeconfig",
                 "--http-address=127.0.0.1:0", "--leader-elect=false",
                 absl::StrCat("-v=", absl::GetFlag(FLAGS_ours_v))},
                log),
          log};
}

// Returns once `process` answers /readyz.
void AwaitReady(const OurProcess& process) {
  AwaitLogLine(process.pid, "metrics-scheduler", process.log, "serving /livez",
               absl::Minutes(1));
  std::string text = ReadAll(process.log);
  size_t at = text.find(" on port ");
  int port = 0;
  if (at == std::string::npos ||
      !absl::SimpleAtoi(text.substr(at + 9, text.find('\n', at) - at - 9),
                        &port)) {
    Die("metrics-scheduler did not say its port:\n" + text);
  }
  HttpClient http;
  const absl::Time deadline = absl::Now() + absl::Minutes(1);
  while (true) {
    absl::StatusOr<HttpResponse> r =
        http.Do({.url = absl::StrCat("http://127.0.0.1:", port, "/readyz"),
                 .timeout = absl::Seconds(2)});
    if (r.ok() && r->status == 200) return;
    if (absl::Now() > deadline)
      Die("metrics-scheduler not ready:\n" + ReadAll(process.log));
    absl::SleepFor(absl::Milliseconds(100));
  }
}

// Where every pod of the benchmark is: pool and index by name.
class PodIndex {
 public:
  explicit PodIndex(const std::vector<PoolSpec>& pools) {
    for (size_t p = 0; p < pools.size(); ++p) {
      for (size_t i = 0; i < pools[p].trace->pods.size(); ++i) {
        by_name_[PodName(pools[p].name, pools[p].trace->pods[i])] = {p, i};
      }
      for (size_t n = 0; n < pools[p].node_names.size(); ++n) {
        node_[pools[p].node_names[n]] = n;
      }
    }
  }
  // The pod `name` is, or replaces: "<pod>-r<N>" is the Nth replacement of
  // <pod> (rebalancing evicted it).
  std::optional<ReferenceScheduler::PodRef> Pod(const std::string& name) const {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      const size_t r = name.rfind("-r");
      int n = 0;
      if (r == std::string::npos ||
          !absl::SimpleAtoi(absl::string_view(name).substr(r + 2), &n)) {
        return std::nullopt;
      }
      it = by_name_.find(name.substr(0, r));
      if (it == by_name_.end()) return std::nullopt;
    }
    return it->second;
  }
  std::optional<size_t> Node(const std::string& name) const {
    auto it = node_.find(name);
    if (it == node_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::map<std::string, ReferenceScheduler::PodRef> by_name_;
  std::map<std::string, size_t> node_;
};

// One run: every pool's trace placed by its policy; each pool's figures.
class Run {
 public:
  Run(ControlPlane& plane, const std::vector<PoolSpec>& pools,
      const std::vector<PolicyRun>& policies, int number)
      : plane_(plane),
        pools_(pools),
        policies_(policies),
        number_(number),
        index_(pools),
        world_(pools, ModelParams(), absl::GetFlag(FLAGS_hot_threshold)),
        client_(plane.admin().Config(), "quality"),
        statuses_(plane.admin(), kNamespace),
        replacer_(plane.admin().Clone()) {}

  void Go();
  std::vector<Figures> Results() const;
  const World& world() const { return world_; }

 private:
  double Now() const { return absl::ToDoubleSeconds(absl::Now() - start_); }
  std::vector<NodeView> Views(size_t pool, const MetricsPoller& poller) const;
  void CreateOwners();
  std::optional<OwnerRef> OwnerOf(size_t pool, const PodSpec& pod) const;
  void Drive(const std::atomic<bool>& stop);
  // The schedulerName of the pool's pod `pod`.
  std::string SchedulerOf(size_t pool, const PodSpec& pod) const;
  // `name`: the object that was bound; "" the trace's pod itself.
  void Start(const ReferenceScheduler::PodRef& pod, size_t node,
             const std::string& name = "");
  // A pod deleted before its end (an eviction): its controller's part,
  // its replacement.
  void Replace(const ReferenceScheduler::PodRef& pod,
               const std::string& deleted);
  void ReportStatuses();
  void Reap();
  void Clean();

  ControlPlane& plane_;
  const std::vector<PoolSpec>& pools_;
  const std::vector<PolicyRun>& policies_;
  const int number_;
  const PodIndex index_;
  World world_;
  kube::KubeClient client_;
  // The kubelet's part: each started pod's status.
  PodStatusWriter statuses_;
  // The controller's part: evicted pods' replacements (the pod informer's
  // thread only).
  std::unique_ptr<bench::Admin> replacer_;
  absl::Time start_;
  // Each owner object's uid by its name, set before any pod is created.
  std::map<std::string, std::string> owner_uids_;
  // Each bound pod's uid, for its deletion's precondition.
  mutable absl::Mutex uids_mu_;
  std::map<std::string, std::string> uids_ ABSL_GUARDED_BY(uids_mu_);
  // Replacements made of each evicted pod, by the trace pod's name.
  std::map<std::string, int> replacements_ ABSL_GUARDED_BY(uids_mu_);
};

std::vector<NodeView> Run::Views(size_t pool,
                                 const MetricsPoller& poller) const {
  const PoolSpec& spec = pools_[pool];
  std::vector<World::Requested> requested =
      world_.RequestedOf(pool, kRecentSeconds);
  std::vector<World::TrueNode> truth;
  if (spec.policy == PolicyName(Policy::kClairvoyant)) {
    truth = world_.TrueLoad(pool);
  } else if (spec.policy == PolicyName(Policy::kLearning)) {
    truth = world_.KnownLoad(pool, LearningLag());
  }
  std::vector<NodeView> views;
  for (size_t n = 0; n < spec.node_names.size(); ++n) {
    const NodeSpec& node = spec.trace->nodes[n];
    MetricsPoller::Value m = poller.Of(spec.node_names[n]);
    NodeView v{.cpu_allocatable = node.cores,
               .cpu_requested = requested[n].cpu,
               .memory_allocatable_gib = node.memory_gib,
               .memory_requested_gib = requested[n].memory_gib,
               .utilisation_mean = m.mean,
               .utilisation_stddev = m.stddev,
               .recent_cpu_requested = requested[n].recent_cpu,
               .pods = requested[n].pods};
    if (!truth.empty()) {
      v.true_demand = truth[n].demand_cores;
      v.true_capacity = truth[n].capacity_cores;
    }
    views.push_back(v);
  }
  return views;
}

// Creates the owner objects of every pool's pods, or finds those an
// earlier run created, before any pod names one: a pod whose owner does not
// exist is deleted by the garbage collector.
void Run::CreateOwners() {
  const std::string path =
      absl::StrCat("/api/v1/namespaces/", kNamespace, "/configmaps");
  for (const PoolSpec& pool : pools_) {
    for (const PodSpec& pod : pool.trace->pods) {
      if (pod.owner.empty()) continue;
      const std::string name = OwnerName(pool.name, pod.owner);
      if (owner_uids_.count(name)) continue;
      absl::StatusOr<HttpResponse> r =
          plane_.admin().Call("POST", path, OwnerJson(name, pool.name));
      if (r.ok() && r->status == 409) {  // an earlier run's
        r = plane_.admin().Call("GET", path + "/" + name);
      }
      if (!r.ok() || r->status / 100 != 2) {
        Die("cannot create the owner " + name + ": " +
            (r.ok() ? r->body : r.status().ToString()));
      }
      absl::StatusOr<std::string> uid = ObjectUid(r->body);
      if (!uid.ok()) Die("the owner " + name + " has no uid: " + r->body);
      owner_uids_[name] = *uid;
    }
  }
}

std::optional<OwnerRef> Run::OwnerOf(size_t pool, const PodSpec& pod) const {
  if (pod.owner.empty()) return std::nullopt;
  const std::string name = OwnerName(pools_[pool].name, pod.owner);
  return OwnerRef{.name = name, .uid = owner_uids_.at(name)};
}

// Creates each pod of every pool at its arrival time.
void Run::Drive(const std::atomic<bool>& stop) {
  struct Arrival {
    double at;
    size_t pool, pod;
  };
  std::vector<Arrival> arrivals;
  for (size_t p = 0; p < pools_.size(); ++p) {
    for (size_t i = 0; i < pools_[p].trace->pods.size(); ++i) {
      arrivals.push_back({pools_[p].trace->pods[i].arrival_s, p, i});
    }
  }
  std::stable_sort(
      arrivals.begin(), arrivals.end(),
      [](const Arrival& a, const Arrival& b) { return a.at < b.at; });
  std::unique_ptr<bench::Admin> admin = plane_.admin().Clone();
  double late = 0;
  for (const Arrival& a : arrivals) {
    while (!stop.load() && Now() < a.at) absl::SleepFor(absl::Milliseconds(10));
    if (stop.load()) return;
    late = std::max(late, Now() - a.at);
    const PoolSpec& pool = pools_[a.pool];
    const PodSpec& pod = pool.trace->pods[a.pod];
    absl::StatusOr<HttpResponse> r = admin->Call(
        "POST", absl::StrCat("/api/v1/namespaces/", kNamespace, "/pods"),
        PodJson(PodName(pool.name, pod), pool.name, SchedulerOf(a.pool, pod),
                pod, OwnerOf(a.pool, pod)));
    if (!r.ok() || r->status != 201) {
      LOG(WARNING) << "creating " << PodName(pool.name, pod) << ": "
                   << (r.ok() ? absl::StrCat("HTTP ", r->status, " ", r->body)
                              : r.status().ToString());
    }
  }
  if (late > 1) {
    LOG(WARNING) << "pods were created up to " << late
                 << " s after their arrival time";
  }
}

// Starts the pod in the model, once, whoever bound it, and has its status
// written as a kubelet would (phase Running, startTime this moment): the
// same for every policy's pods, so the comparison stays fair.
void Run::Start(const ReferenceScheduler::PodRef& pod, size_t node,
                const std::string& name) {
  const double t = Now();
  const std::string object =
      !name.empty() ? name
                    : PodName(pools_[pod.pool].name,
                              pools_[pod.pool].trace->pods[pod.pod]);
  if (!world_.Bound(pod.pool, pod.pod, node, t, object)) return;
  statuses_.Started(object, start_ + absl::Seconds(t));
}

std::string Run::SchedulerOf(size_t pool, const PodSpec& pod) const {
  if (!pod.scheduler.empty()) return pod.scheduler;
  for (const PolicyRun& p : policies_) {
    if (p.name == pools_[pool].policy) return p.scheduler_name;
  }
  return "";
}

// As a ReplicaSet would: a pod evicted before its end is replaced by
// another, "<pod>-r<N>", for the rest of its duration, placed by the same
// scheduler. (Pods that end are deleted by Reap, which ends them in the
// model first.)
void Run::Replace(const ReferenceScheduler::PodRef& ref,
                  const std::string& deleted) {
  if (world_.NameOf(ref.pool, ref.pod) != deleted ||
      !world_.Evicted(ref.pool, ref.pod, Now())) {
    return;
  }
  const PoolSpec& pool = pools_[ref.pool];
  const PodSpec& pod = pool.trace->pods[ref.pod];
  const std::string base = PodName(pool.name, pod);
  int n = 0;
  {
    absl::MutexLock lock(&uids_mu_);
    n = ++replacements_[base];
  }
  absl::StatusOr<HttpResponse> r = replacer_->Call(
      "POST", absl::StrCat("/api/v1/namespaces/", kNamespace, "/pods"),
      PodJson(absl::StrCat(base, "-r", n), pool.name,
              SchedulerOf(ref.pool, pod), pod, OwnerOf(ref.pool, pod)));
  if (!r.ok() || r->status != 201) {
    LOG(WARNING) << "replacing " << deleted << ": "
                 << (r.ok() ? absl::StrCat("HTTP ", r->status, " ", r->body)
                            : r.status().ToString());
  }
}

// Stops the status writes and says how they went: a pod without its
// status is one metrics-scheduler could not learn from.
void Run::ReportStatuses() {
  const PodStatusWriter::Counts c = statuses_.Stop();
  std::cerr << "run " << number_ + 1 << ": pods marked Running: " << c.written
            << " (" << c.gone << " gone first, " << c.failed << " failed, "
            << c.dropped << " still queued at the end; the longest wait "
            << absl::FormatDuration(
                   absl::Trunc(c.longest_wait, absl::Milliseconds(1)))
            << ")" << std::endl;
}

// Deletes the pods that have run their course.
void Run::Reap() {
  const double now = Now();
  for (size_t p = 0; p < pools_.size(); ++p) {
    for (size_t i : world_.DuePods(p, now)) {
      const std::string name = world_.NameOf(p, i);
      world_.Ended(p, i);
      std::string uid;
      {
        absl::MutexLock lock(&uids_mu_);
        uid = uids_[name];
      }
      absl::Status s =
          client_.DeletePod(kNamespace, name, uid, absl::Seconds(10));
      if (!s.ok() && !absl::IsNotFound(s)) {
        LOG(WARNING) << "deleting a finished pod: " << s;
      }
    }
  }
}

void Run::Go() {
  std::cerr << "run " << number_ + 1 << ": starting Prometheus and the "
            << "schedulers" << std::endl;
  CreateOwners();
  Exporter exporter(world_);
  PrometheusServer::Options options;
  options.scrape_interval = absl::GetFlag(FLAGS_scrape_interval);
  options.die_with_parent = true;
  // The disk series name their node by `instance`, as node-exporter's do:
  // kept as scraped.
  options.scrape_jobs = {
      {.job = "load-model",
       .targets = {absl::StrCat("127.0.0.1:", exporter.port())},
       .honor_labels = true}};
  absl::StatusOr<std::unique_ptr<PrometheusServer>> prom =
      PrometheusServer::Start(options);
  if (!prom.ok()) Die("cannot start Prometheus: " + prom.status().ToString());
  bench::InterruptCleanup stop_prometheus([&server = **prom] {
    (void)server.Stop();
    bench::RunCommand("rm -rf '" + server.dir() + "'");
  });
  MetricsPoller poller(**prom);

  // Every metrics-scheduler process starts before any is awaited, so that
  // all of them query Prometheus at nearly the same moments of each ttl
  // (each refreshes every ttl from its start): started one after another's
  // readiness, a configuration would refresh a second or more after the
  // one before it all run long, and read samples of another age whenever
  // a scrape fell between.
  std::vector<OurProcess> ours;
  for (const PolicyRun& p : policies_) {
    if (p.ours) ours.push_back(StartOurs(plane_, p, (*prom)->url(), number_));
  }
  for (const OurProcess& process : ours) AwaitReady(process);
  std::vector<std::unique_ptr<ReferenceScheduler>> reference;
  for (const PolicyRun& p : policies_) {
    if (!p.reference) continue;
    ReferenceScheduler::Hooks hooks{
        .locate = [this](const std::string& name) { return index_.Pod(name); },
        .pod_view =
            [this, learning = *p.reference == Policy::kLearning](
                const ReferenceScheduler::PodRef& r) {
              const PodSpec& pod = pools_[r.pool].trace->pods[r.pod];
              const bool known =
                  !learning ||
                  world_.UsageKnown(r.pool, r.pod, LearningLag());
              return PodView{
                  .cpu_request = pod.cpu_request,
                  .true_usage = known ? pod.usage : pod.cpu_request};
            },
        .views = [this, &poller](size_t pool) { return Views(pool, poller); },
        .node_names = [this](size_t pool) -> const std::vector<std::string>& {
          return pools_[pool].node_names;
        },
        .bound = [this](const ReferenceScheduler::PodRef& r,
                        size_t node) { Start(r, node); }};
    reference.push_back(std::make_unique<ReferenceScheduler>(
        p.scheduler_name, *p.reference, client_, std::move(hooks)));
  }

  // Every binding, whoever made it, starts the pod in the model.
  auto seen = [this](const Pod& pod) {
    if (pod.node_name.empty()) return;
    {
      absl::MutexLock lock(&uids_mu_);
      uids_[pod.name] = pod.uid;
    }
    std::optional<ReferenceScheduler::PodRef> ref = index_.Pod(pod.name);
    std::optional<size_t> node = index_.Node(pod.node_name);
    if (ref && node) Start(*ref, *node, pod.name);
  };
  // A pod deleted that the model still runs was evicted: replaced.
  auto gone = [this](const Pod& pod) {
    if (std::optional<ReferenceScheduler::PodRef> ref = index_.Pod(pod.name)) {
      Replace(*ref, pod.name);
    }
  };
  kube::Informer<Pod> watch(
      "quality pods",
      kube::PodSource(client_, {.field_selector = absl::StrCat(
                                    "metadata.namespace=", kNamespace)}),
      {.on_add = seen, .on_update = seen, .on_delete = gone});
  // The clock starts before any thread that reads it.
  start_ = absl::Now();
  watch.Start();
  watch.WaitForSync(absl::Minutes(1));
  for (auto& r : reference) r->Start();

  std::atomic<bool> stop{false};
  std::thread driver([&] { Drive(stop); });
  const double duration = absl::GetFlag(FLAGS_duration);
  int reported = 0;
  for (double t = 1; t <= duration; t += 1) {
    while (Now() < t) absl::SleepFor(absl::Milliseconds(20));
    world_.Advance(Now());
    Reap();
    if (static_cast<int>(t) / 60 > reported) {
      reported = static_cast<int>(t) / 60;
      std::cerr << "run " << number_ + 1 << ": " << reported << " min of "
                << duration / 60 << std::endl;
    }
  }
  stop.store(true);
  driver.join();
  for (auto& r : reference) r->Stop();
  watch.Stop();
  ReportStatuses();
  for (const OurProcess& process : ours) Terminate(process.pid);
  Clean();
}

// Deletes every pod of the run and waits until they are gone.
void Run::Clean() {
  plane_.admin().Ok("DELETE",
                    absl::StrCat("/api/v1/namespaces/", kNamespace, "/pods"));
  const absl::Time deadline = absl::Now() + absl::Minutes(5);
  while (true) {
    absl::StatusOr<kube::ObjectList<Pod>> list = client_.ListPods(
        {.field_selector = absl::StrCat("metadata.namespace=", kNamespace),
         .page_size = 1});
    if (list.ok() && list->items.empty()) return;
    if (absl::Now() > deadline) Die("the run's pods were not deleted");
    absl::SleepFor(absl::Milliseconds(500));
  }
}

std::vector<Figures> Run::Results() const {
  std::vector<Figures> out;
  const double duration = absl::GetFlag(FLAGS_duration);
  for (size_t p = 0; p < pools_.size(); ++p) {
    int pending = 0;
    const Trace& trace = *pools_[p].trace;
    for (size_t i = 0; i < trace.pods.size(); ++i) {
      if (trace.pods[i].scheduler.empty() &&
          trace.pods[i].arrival_s < duration && !world_.IsBound(p, i)) {
        ++pending;
      }
    }
    out.push_back(world_.FiguresOf(p, pending));
  }
  return out;
}

int Main() {
  std::vector<PolicyRun> policies;
  for (const std::string& name : absl::GetFlag(FLAGS_policies)) {
    policies.push_back(MakePolicyRun(name));
  }
  for (const std::string& spec : absl::GetFlag(FLAGS_variants)) {
    policies.push_back(MakeVariantRun(spec));
  }
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  if (!absl::GetFlag(FLAGS_write_traces).empty()) {
    const std::string dir = absl::GetFlag(FLAGS_write_traces);
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    for (const Trace& t : LoadTraces(seed)) {
      const std::string path = absl::StrCat(dir, "/", t.name, ".jsonl");
      std::ofstream out(path);
      out << WriteTrace(t);
      if (!out.flush()) Die("cannot write " + path);
    }
    return 0;
  }
  const absl::Time started = absl::Now();
  const std::string build = absl::GetFlag(FLAGS_build_dir);
  ControlPlane plane(build + "/testenv/testenv", absl::GetFlag(FLAGS_dir),
                     absl::GetFlag(FLAGS_source_dir));
  plane.CreateNamespace(kNamespace);

  // Each run draws its own traces (seed + run), on the same pools of nodes.
  std::vector<TraceResult> results;
  std::vector<Trace> first = LoadTraces(seed);
  std::vector<PoolSpec> node_pools = MakePools(first, policies);
  CreateNodes(plane, node_pools);
  for (const Trace& t : first) {
    TraceResult r{.trace = t.name,
                  .hot_threshold = absl::GetFlag(FLAGS_hot_threshold)};
    for (const PolicyRun& p : policies)
      r.policies.push_back({.policy = p.name});
    results.push_back(std::move(r));
  }
  for (int run = 0; run < absl::GetFlag(FLAGS_runs); ++run) {
    std::vector<Trace> traces = LoadTraces(seed + run);
    std::vector<PoolSpec> pools = MakePools(traces, policies);
    Run r(plane, pools, policies, run);
    r.Go();
    std::vector<Figures> figures = r.Results();
    for (size_t p = 0; p < pools.size(); ++p) {
      PolicyResult& out =
          results[p / policies.size()].policies[p % policies.size()];
      out.runs.push_back(figures[p]);
      out.series = r.world().SeriesOf(p);
      out.latency_samples = r.world().LatencySamplesOf(p);
    }
  }

  const std::vector<TargetCheck> targets = CheckTargets(results, kOurs);
  const std::string targets_text = RenderTargets(targets, kOurs);
  std::cout << RenderTable(results) << targets_text;
  std::string out_dir = absl::GetFlag(FLAGS_out_dir);
  if (out_dir.empty()) out_dir = build + "/bench";
  bench::RunCommand("mkdir -p '" + out_dir + "'");
  const std::string meta = absl::StrCat(
      R"("runs":)", absl::GetFlag(FLAGS_runs), R"(,"seed":)", seed,
      R"(,"duration_s":)", absl::GetFlag(FLAGS_duration), R"(,"nodes":)",
      absl::GetFlag(FLAGS_nodes), R"(,"scrape_interval_s":)",
      absl::ToInt64Seconds(absl::GetFlag(FLAGS_scrape_interval)),
      R"(,"learning_lag_s":)", LearningLag(),
      R"(,"elapsed_s":)", absl::ToInt64Seconds(absl::Now() - started),
      R"(,"targets":)", TargetsJson(targets));
  std::ofstream(out_dir + "/quality.json") << RenderJson(results, meta);
  std::ofstream(out_dir + "/quality.html") << RenderHtml(
      results, "metrics-scheduler: placement quality", targets_text);
  std::cerr << "wrote " << out_dir << "/quality.json and " << out_dir
            << "/quality.html after "
            << absl::FormatDuration(
                   absl::Trunc(absl::Now() - started, absl::Seconds(1)))
            << std::endl;
  return 0;
}

}  // namespace
}  // namespace ms::quality

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "The placement-quality benchmark (docs/quality.md).");
  absl::ParseCommandLine(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  ms::InitLogging(argv[0], ms::LogFormat::kText);
  return ms::quality::Main();
}
