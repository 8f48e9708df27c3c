#include "tests/faults/fault_fixture.h"

#include <unistd.h>

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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
  if (doc["items"].get(items)) return out;
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

BindingReport FaultTest::ExpectEveryPodBoundOnce(int want,
                                                 bool allow_lost_events) {
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
    by_uid[p.uid] = &p;
    if (p.node_name.empty()) {
      ADD_FAILURE() << p.Key() << " is not bound";
      continue;
    }
    ++report.bound;
    EXPECT_TRUE(allocatable.contains(p.node_name))
        << p.Key() << " is bound to " << p.node_name
        << ", which is not one of the suite's nodes";
  }

  // 2. Per node, the requests of its pods (any namespace) fit.
  absl::StatusOr<kube::ObjectList<Pod>> bound = admin.ListPods(
      {.field_selector =
           "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed",
       .page_size = 5000});
  EXPECT_TRUE(bound.ok()) << bound.status();
  if (bound.ok()) {
    std::map<std::string, Resources> used;
    for (const Pod& p : bound->items) {
      if (!allocatable.contains(p.node_name)) continue;
      Resources r = PodRequests(p);
      Resources& u = used[p.node_name];
      u.milli_cpu += r.milli_cpu;
      u.memory += r.memory;
      u.pods += 1;
    }
    for (const auto& [node, u] : used) {
      const Resources& a = allocatable[node];
      EXPECT_LE(u.milli_cpu, a.milli_cpu) << node << ": cpu over-committed";
      EXPECT_LE(u.memory, a.memory) << node << ": memory over-committed";
      EXPECT_LE(u.pods, a.pods) << node << ": too many pods";
    }
  }

  // 3. One Scheduled event per pod, naming its node. Events are written
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
    EXPECT_TRUE(by_uid.contains(uid))
        << "a Scheduled event for a pod that does not exist: "
        << list.front().pod_name;
  }
  return report;
}

}  // namespace ms::testing
