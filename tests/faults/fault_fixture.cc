#include "tests/faults/fault_fixture.h"

#include <unistd.h>

#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "kube/client.h"
#include "model/pod.h"
#include "simdjson.h"

namespace ms::testing {
namespace {

struct ScheduledEvent {
  std::string pod_uid;
  std::string pod_name;
  std::string message;
  std::string instance;
};

// The Scheduled events metrics-scheduler wrote in `ns`.
std::vector<ScheduledEvent> ScheduledEvents(Testenv& env,
                                            const std::string& ns) {
  std::vector<ScheduledEvent> out;
  absl::StatusOr<HttpResponse> r = env.Admin(
      "GET", "/api/v1/namespaces/" + ns + "/events?fieldSelector=reason%3DScheduled");
  if (!r.ok() || r->status != 200) {
    ADD_FAILURE() << "listing events: "
                  << (r.ok() ? r->body : r.status().ToString());
    return out;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(simdjson::padded_string(r->body)).get(doc)) {
    ADD_FAILURE() << "events: not JSON";
    return out;
  }
  simdjson::dom::array items;
  if (doc["items"].get(items)) {
    ADD_FAILURE() << "events: no items in " << r->body.substr(0, 500);
    return out;
  }
  auto str = [](simdjson::dom::element e, const char* key) {
    std::string_view v;
    if (e[key].get(v)) return std::string();
    return std::string(v);
  };
  for (simdjson::dom::element item : items) {
    if (str(item, "reportingComponent") != "metrics-scheduler") continue;
    simdjson::dom::element involved;
    if (item["involvedObject"].get(involved)) continue;
    out.push_back({str(involved, "uid"), str(involved, "name"),
                   str(item, "message"), str(item, "reportingInstance")});
  }
  return out;
}

// A cpu amount as the tests write it ("2", "150m") in millicores.
int64_t MilliCpu(const std::string& cpu) {
  int64_t n = 0;
  absl::string_view v = cpu;
  bool milli = absl::ConsumeSuffix(&v, "m");
  if (!absl::SimpleAtoi(v, &n)) {
    ADD_FAILURE() << "cannot read cpu " << cpu;
    return 0;
  }
  return milli ? n : n * 1000;
}

constexpr int64_t kPodMemory = int64_t{64} << 20;  // PodJson's request

// What the apiserver says of the pods in `path` (a list), read without the
// scheduler's decoder.
struct ListedPod {
  std::string namespace_, name, node;
  bool unschedulable = false;  // PodScheduled=False, reason Unschedulable
};

std::optional<std::vector<ListedPod>> ListPods(Testenv& env,
                                               const std::string& path) {
  absl::StatusOr<HttpResponse> r = env.Admin("GET", path);
  if (!r.ok() || r->status != 200) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(simdjson::padded_string(r->body)).get(doc)) {
    return std::nullopt;
  }
  simdjson::dom::array items;
  if (doc["items"].get(items)) return std::nullopt;
  auto str = [](simdjson::dom::element e, const char* key) {
    std::string_view v;
    if (e[key].get(v)) return std::string();
    return std::string(v);
  };
  std::vector<ListedPod> out;
  for (simdjson::dom::element item : items) {
    ListedPod pod;
    simdjson::dom::element part;
    if (!item["metadata"].get(part)) {
      pod.namespace_ = str(part, "namespace");
      pod.name = str(part, "name");
    }
    if (!item["spec"].get(part)) pod.node = str(part, "nodeName");
    simdjson::dom::array conditions;
    if (!item["status"]["conditions"].get(conditions)) {
      for (simdjson::dom::element c : conditions) {
        if (str(c, "type") == "PodScheduled" && str(c, "status") == "False" &&
            str(c, "reason") == "Unschedulable") {
          pod.unschedulable = true;
        }
      }
    }
    out.push_back(std::move(pod));
  }
  return out;
}

}  // namespace

void FaultTest::SetUp() {
  ASSERT_FALSE(env_.server().empty());
  env_.ApplySchedulerRbac();
  static int counter = 0;
  suite_ = absl::StrCat("fault-", getpid(), "-", counter++);
  env_.CreateNamespace(suite_);
}

void FaultTest::TearDown() {
  JoinCreator();
  schedulers_.StopAll(HasFailure());
  env_.DeleteNamespace(suite_);
  for (const std::string& n : nodes_) env_.DeleteNode(n);
}

std::string FaultTest::Node(int i) const { return absl::StrCat(suite_, "-n", i); }

void FaultTest::AddNodes(int count, const std::string& cpu,
                         const std::string& memory) {
  for (int i = 0; i < count; ++i) {
    env_.CreateNode(Node(i), cpu, memory,
                    absl::StrCat(R"({"fault-suite":")", suite_, R"("})"));
    nodes_.push_back(Node(i));
    node_milli_cpu_[Node(i)] = MilliCpu(cpu);
  }
}

std::string FaultTest::ConfigYaml(const FaultConfig& c) const {
  return absl::StrFormat(R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: prometheus, url: "%s", timeout: %s}
cache: {ttl: %s, maxStaleness: %s, refreshTimeout: %s}
metrics:
  - name: http_latency
    query: 'http_latency_seconds{suite="%s"}'
    weight: 10
    direction: lower
    missing: neutral
builtins: {leastAllocated: 1, balancedAllocation: 1, recentPlacements: 2}
herd: {penaltyPerPlacement: 10, window: 60s}
fallback: {coldCacheDeadline: %s}
leaderElection: {leaseDuration: %s, renewDeadline: %s, retryPeriod: %s}
)",
                         c.backend_url, c.backend_timeout, c.ttl,
                         c.max_staleness, c.refresh_timeout, suite_,
                         c.cold_cache_deadline, c.lease_duration,
                         c.renew_deadline, c.retry_period);
}

SchedulerProcess* FaultTest::StartScheduler(const FaultConfig& config,
                                            const std::string& identity,
                                            std::vector<std::string> extra) {
  return schedulers_.Start({.config_yaml = ConfigYaml(config),
                            .kubeconfig = env_.dir() + "/scheduler.kubeconfig",
                            .identity = identity,
                            .extra_args = std::move(extra)});
}

void FaultTest::WaitForLeader(SchedulerProcess* s, absl::Duration timeout) {
  ASSERT_TRUE(WaitFor(
      [&] { return s->Metric("metrics_scheduler_leader") == 1; }, timeout))
      << s->identity() << " did not become leader";
}

std::string FaultTest::PodJson(const std::string& name,
                               const std::string& cpu) const {
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
      R"(","labels":{"app":"fault"}},"spec":{"schedulerName":"metrics-scheduler",)",
      R"("nodeSelector":{"fault-suite":")", suite_,
      R"("},"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",)",
      R"("resources":{"requests":{"cpu":")", cpu,
      R"(","memory":"64Mi"}}}]}})");
}

bool FaultTest::CreatePod(const std::string& name, const std::string& cpu,
                          absl::Duration timeout) {
  const std::string body = PodJson(name, cpu);
  {
    absl::MutexLock lock(&created_mu_);
    pod_milli_cpu_[name] = MilliCpu(cpu);
  }
  std::string last;
  bool created = WaitFor(
      [&] {
        absl::StatusOr<HttpResponse> r =
            env_.Admin("POST", "/api/v1/namespaces/" + suite_ + "/pods", body);
        if (!r.ok()) {
          last = r.status().ToString();
          return false;
        }
        last = r->body;
        return r->status == 201 || r->status == 409;
      },
      timeout);
  EXPECT_TRUE(created) << "creating pod " << name << ": " << last;
  return created;
}

void FaultTest::CreatePodsInBackground(const std::string& prefix, int count,
                                       const std::string& cpu) {
  JoinCreator();
  creator_ = std::thread([this, prefix, count, cpu] {
    for (int i = 0; i < count; ++i) CreatePod(absl::StrCat(prefix, "-", i), cpu);
  });
}

void FaultTest::JoinCreator() {
  if (creator_.joinable()) creator_.join();
}

std::map<std::string, std::string> FaultTest::Placements() {
  return env_.PodNodes(suite_);
}

int FaultTest::CountBound() {
  int n = 0;
  for (const auto& [pod, node] : Placements()) n += node.empty() ? 0 : 1;
  return n;
}

bool FaultTest::WaitForAllBound(int want, absl::Duration timeout) {
  return WaitFor(
      [&] {
        std::map<std::string, std::string> p = Placements();
        if (static_cast<int>(p.size()) != want) return false;
        for (const auto& [pod, node] : p) {
          if (node.empty()) return false;
        }
        return true;
      },
      timeout);
}

int FaultTest::CountScheduledEvents(const std::string& instance) {
  int n = 0;
  for (const ScheduledEvent& e : ScheduledEvents(env_, suite_)) {
    n += e.instance == instance ? 1 : 0;
  }
  return n;
}

void FaultTest::DeletePod(const std::string& name) {
  deleted_.insert(name);
  env_.AdminOk("DELETE", absl::StrCat("/api/v1/namespaces/", suite_, "/pods/",
                                      name, "?gracePeriodSeconds=0"));
}

void FaultTest::LabelPod(const std::string& name, const std::string& key,
                         const std::string& value) {
  env_.AdminOk("PATCH",
               absl::StrCat("/api/v1/namespaces/", suite_, "/pods/", name),
               absl::StrCat(R"({"metadata":{"labels":{")", key, R"(":")", value,
                            R"("}}})"),
               "application/merge-patch+json");
}

bool FaultTest::WaitForUnschedulable(int bound, absl::Duration timeout) {
  return WaitFor(
      [&] {
        std::optional<std::vector<ListedPod>> pods =
            ListPods(env_, "/api/v1/namespaces/" + suite_ + "/pods");
        if (!pods) return false;
        int n = 0;
        for (const ListedPod& p : *pods) {
          if (!p.node.empty()) {
            ++n;
          } else if (!p.unschedulable) {
            return false;
          }
        }
        return n == bound;
      },
      timeout);
}

BindingReport FaultTest::ExpectEveryPodBoundOnce(int want,
                                                 bool allow_lost_events,
                                                 int want_bound) {
  BindingReport report;
  kube::KubeClient admin(env_.AdminConfig());

  // 1. Every pod bound, to one of the suite's nodes.
  absl::StatusOr<kube::ObjectList<ms::Node>> nodes =
      admin.ListNodes({.label_selector = "fault-suite=" + suite_});
  EXPECT_TRUE(nodes.ok()) << nodes.status();
  if (!nodes.ok()) return report;
  std::map<std::string, Resources> allocatable;
  for (const ms::Node& n : nodes->items) allocatable[n.name] = n.allocatable;

  absl::StatusOr<kube::ObjectList<Pod>> ours = admin.ListPods(
      {.field_selector = "metadata.namespace=" + suite_, .page_size = 5000});
  EXPECT_TRUE(ours.ok()) << ours.status();
  if (!ours.ok()) return report;
  report.pods = static_cast<int>(ours->items.size());
  EXPECT_EQ(report.pods, want);
  std::map<std::string, const Pod*> by_uid;
  for (const Pod& p : ours->items) {
    if (p.node_name.empty()) {
      if (want_bound < 0) ADD_FAILURE() << p.Key() << " is not bound";
      continue;
    }
    by_uid[p.uid] = &p;  // the bound ones
    ++report.bound;
    EXPECT_TRUE(allocatable.contains(p.node_name))
        << p.Key() << " is bound to " << p.node_name
        << ", which is not one of the suite's nodes";
  }

  // 2. Per node, the requests of its pods fit: the test's own accounts.
  std::optional<std::vector<ListedPod>> on_nodes =
      ListPods(env_, "/api/v1/pods?fieldSelector=spec.nodeName!%3D");
  EXPECT_TRUE(on_nodes.has_value()) << "cannot list the pods on nodes";
  if (on_nodes) {
    absl::MutexLock lock(&created_mu_);
    std::map<std::string, Resources> used;
    for (const ListedPod& p : *on_nodes) {
      if (!node_milli_cpu_.contains(p.node)) continue;
      if (p.namespace_ != suite_ || !pod_milli_cpu_.contains(p.name)) {
        ADD_FAILURE() << p.namespace_ << "/" << p.name << " is on " << p.node
                      << " but this test did not create it";
        continue;
      }
      Resources& u = used[p.node];
      u.milli_cpu += pod_milli_cpu_[p.name];
      u.memory += kPodMemory;
      u.pods += 1;
    }
    for (const auto& [node, u] : used) {
      EXPECT_LE(u.milli_cpu, node_milli_cpu_[node])
          << node << ": cpu over-committed";
      EXPECT_LE(u.memory, allocatable[node].memory)
          << node << ": memory over-committed";
      EXPECT_LE(u.pods, allocatable[node].pods) << node << ": too many pods";
    }
  }

  if (want_bound >= 0) {
    EXPECT_EQ(report.bound, want_bound);
  }

  // 3. One Scheduled event per bound pod, naming its node. Events are written
  // after binding, asynchronously: wait for them (bounded).
  std::map<std::string, std::vector<ScheduledEvent>> events;
  auto collect = [&] {
    events.clear();
    for (ScheduledEvent& e : ScheduledEvents(env_, suite_)) {
      events[e.pod_uid].push_back(std::move(e));
    }
    for (const auto& [uid, pod] : by_uid) {
      if (!events.contains(uid)) return false;
    }
    return true;
  };
  WaitFor(collect, allow_lost_events ? absl::Seconds(10) : absl::Seconds(30));
  for (const auto& [uid, pod] : by_uid) {
    auto it = events.find(uid);
    if (it == events.end()) {
      ++report.pods_without_event;
      if (!allow_lost_events) {
        ADD_FAILURE() << pod->Key() << " has no Scheduled event";
      }
      continue;
    }
    EXPECT_EQ(it->second.size(), 1u)
        << pod->Key() << " has " << it->second.size()
        << " Scheduled events: bound more than once?";
    for (const ScheduledEvent& e : it->second) {
      EXPECT_TRUE(absl::StrContains(
          e.message, absl::StrCat("Successfully assigned ", pod->Key(), " to ",
                                  pod->node_name, ";")))
          << pod->Key() << " is on " << pod->node_name
          << " but its event says: " << e.message;
      if (absl::StrContains(e.message, "(fallback)")) ++report.fallback_events;
      if (absl::StrContains(e.message, "(metrics)")) ++report.metrics_events;
      report.events_by_instance[e.instance]++;
    }
  }
  for (const auto& [uid, list] : events) {
    if (deleted_.contains(list.front().pod_name)) continue;
    EXPECT_TRUE(by_uid.contains(uid))
        << "a Scheduled event for a pod that does not exist or is not bound: "
        << list.front().pod_name;
  }
  return report;
}

}  // namespace ms::testing
