// KubeClient and Informer against the real kube-apiserver of tests/testenv.

#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "tests/testing/tcp_proxy.h"
#include "tests/testing/testenv.h"

namespace ms::kube {
namespace {

using ::ms::testing::Testenv;
using ::ms::testing::WaitFor;

std::string PodJson(const std::string& ns, const std::string& name,
                    const std::string& scheduler = "metrics-scheduler") {
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
      R"(","namespace":")", ns, R"("},"spec":{"schedulerName":")", scheduler,
      R"(","containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",)",
      R"("resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}})");
}

// Records what an informer delivered, in order, and the nodes it
// delivered as they are now.
class Recorder {
 public:
  InformerHandlers<Node> Handlers() {
    return {
        .on_add = [this](const Node& n) { Record("add ", n); },
        .on_update = [this](const Node& n) { Record("update ", n); },
        .on_delete = [this](const Node& n) { Record("delete ", n); },
    };
  }
  std::optional<Node> Latest(const std::string& name) {
    absl::MutexLock lock(&mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> Events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  int Count(const std::string& event) {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(std::count(events_.begin(), events_.end(), event));
  }

 private:
  void Record(const std::string& what, const Node& n) {
    absl::MutexLock lock(&mu_);
    events_.push_back(what + n.name);
    if (what == "delete ") {
      nodes_.erase(n.name);
    } else {
      nodes_[n.name] = n;
    }
  }
  absl::Mutex mu_;
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Node> nodes_ ABSL_GUARDED_BY(mu_);
};

class KubeClientIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env_.server().empty());
    env_.ApplySchedulerRbac();
    ns_ = absl::StrCat("kube-it-",
                       ::testing::UnitTest::GetInstance()->random_seed(), "-",
                       counter_++);
    env_.CreateNamespace(ns_);
  }
  void TearDown() override { env_.DeleteNamespace(ns_); }

  Testenv env_;
  std::string ns_;
  static inline int counter_ = 0;
};

TEST_F(KubeClientIntegrationTest, InformerSeesCreatesUpdatesAndDeletes) {
  KubeClient client(env_.SchedulerConfig());
  std::string label = absl::StrCat("informer-", ns_);
  Recorder recorder;
  Informer<Node> informer(
      "nodes", NodeSource(client, {.label_selector = "suite=" + label}),
      recorder.Handlers());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(30)));
  EXPECT_EQ(informer.Size(), 0u);

  std::string name = label + "-a";
  env_.CreateNode(name, "2", "4Gi", absl::StrCat(R"({"suite":")", label, R"("})"));
  ASSERT_TRUE(WaitFor([&] {
    std::optional<Node> n = recorder.Latest(name);
    return n && n->ready;  // created, then its status set
  }));
  EXPECT_EQ(recorder.Latest(name)->allocatable.milli_cpu, 2000);

  env_.AdminOk("PATCH", "/api/v1/nodes/" + name,
               R"({"spec":{"unschedulable":true}})",
               "application/strategic-merge-patch+json");
  ASSERT_TRUE(WaitFor([&] { return recorder.Latest(name)->unschedulable; }));

  env_.DeleteNode(name);
  ASSERT_TRUE(WaitFor([&] { return !recorder.Latest(name).has_value(); }));
  EXPECT_EQ(informer.Size(), 0u);
  informer.Stop();

  std::vector<std::string> events = recorder.Events();
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.front(), "add " + name);
  EXPECT_EQ(events.back(), "delete " + name);
  EXPECT_EQ(recorder.Count("add " + name), 1);
  EXPECT_GE(recorder.Count("update " + name), 2);  // status, then cordon
}

TEST_F(KubeClientIntegrationTest, BrokenWatchResumesWithNothingLost) {
  int api_port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(
      env_.server().substr(env_.server().rfind(':') + 1), &api_port));
  absl::StatusOr<std::unique_ptr<testing::TcpProxy>> proxy =
      testing::TcpProxy::Start(api_port);
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  ClusterConfig config = env_.SchedulerConfig();
  config.server = absl::StrCat("https://127.0.0.1:", (*proxy)->port());
  KubeClient client(config);

  std::string label = absl::StrCat("resume-", ns_);
  Recorder recorder;
  Informer<Node> informer(
      "nodes", NodeSource(client, {.label_selector = "suite=" + label}),
      recorder.Handlers());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(30)));

  std::string labels = absl::StrCat(R"({"suite":")", label, R"("})");
  for (int i = 0; i < 3; ++i) {
    env_.CreateNode(absl::StrCat(label, "-", i), "1", "1Gi", labels);
  }
  ASSERT_TRUE(WaitFor([&] { return informer.Size() == 3; }));

  // Break the watch and keep the informer out while more nodes arrive.
  (*proxy)->SetRefuse(true);
  (*proxy)->CutAll();
  for (int i = 3; i < 6; ++i) {
    env_.CreateNode(absl::StrCat(label, "-", i), "1", "1Gi", labels);
  }
  env_.DeleteNode(label + "-0");
  int accepted = (*proxy)->Accepted();
  ASSERT_TRUE(WaitFor([&] { return (*proxy)->Accepted() > accepted; }))
      << "the informer never tried to reconnect";
  (*proxy)->SetRefuse(false);

  // The store changes before the handlers are called: wait for both.
  ASSERT_TRUE(WaitFor(
      [&] {
        return informer.Size() == 5 &&
               recorder.Count(absl::StrCat("add ", label, "-5")) == 1 &&
               recorder.Count("delete " + label + "-0") == 1;
      },
      absl::Seconds(60)));
  EXPECT_EQ(informer.Lists(), 1) << "resumed by relisting, not by watching";
  for (int i = 1; i < 6; ++i) {
    EXPECT_EQ(recorder.Count(absl::StrCat("add ", label, "-", i)), 1) << i;
  }
  EXPECT_EQ(recorder.Count("delete " + label + "-0"), 1);
  informer.Stop();
  for (int i = 1; i < 6; ++i) env_.DeleteNode(absl::StrCat(label, "-", i));
}

// The extremes the apiserver accepts: it caps a binary quantity at 2^63-1
// (`memory: 100Ei`) but keeps a decimal one beyond int64 as it is (`cpu:
// 100E`, `memory: 100E`), and rounds `cpu: 500u` up to 1m. They decode and
// reach the informers' handlers, pending and assigned alike; none is
// refused.
TEST_F(KubeClientIntegrationTest, ExtremeQuantitiesDecodeAndFlow) {
  std::string scheduler = "extremes-" + ns_;
  std::string node = "extremes-" + ns_;
  env_.CreateNode(node);
  auto create = [&](const std::string& name, const std::string& requests) {
    return env_.AdminOk(
        "POST", "/api/v1/namespaces/" + ns_ + "/pods",
        absl::StrCat(
            R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
            R"(","namespace":")", ns_, R"("},"spec":{"schedulerName":")",
            scheduler,
            R"(","containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",)",
            R"("resources":{"requests":)", requests, "}}]}}"));
  };
  // What the apiserver answers is what the informers will read.
  std::string binary = create("binary", R"({"memory":"100Ei"})");
  EXPECT_NE(binary.find(R"("memory":"9223372036854775807")"), std::string::npos)
      << binary;
  std::string decimal = create("decimal", R"({"cpu":"100E","memory":"100E"})");
  EXPECT_NE(decimal.find(R"({"cpu":"100E","memory":"100E"})"), std::string::npos)
      << decimal;
  std::string tiny = create("tiny", R"({"cpu":"500u"})");
  EXPECT_NE(tiny.find(R"("cpu":"1m")"), std::string::npos) << tiny;
  auto expect_decoded = [](std::map<std::string, Pod>& pods) {
    ASSERT_EQ(pods.size(), 3u);
    EXPECT_EQ(pods["binary"].containers.at(0).requests.memory, kMaxQuantity);
    EXPECT_EQ(pods["decimal"].containers.at(0).requests.memory, kMaxQuantity);
    EXPECT_EQ(pods["decimal"].containers.at(0).requests.milli_cpu,
              kMaxQuantity);
    EXPECT_EQ(pods["tiny"].containers.at(0).requests.milli_cpu, 1);
  };

  KubeClient client(env_.SchedulerConfig());
  absl::Mutex mu;
  std::map<std::string, Pod> pods;
  std::vector<std::string> rejected;
  InformerHandlers<Pod> handlers{
      .on_add =
          [&](const Pod& p) {
            absl::MutexLock lock(&mu);
            pods[p.name] = p;
          },
      .on_update =
          [&](const Pod& p) {
            absl::MutexLock lock(&mu);
            pods[p.name] = p;
          },
      .on_reject =
          [&](const RejectedObject& r) {
            absl::MutexLock lock(&mu);
            rejected.push_back(r.name + ": " + r.error);
          }};
  Informer<Pod> pending(
      "pending pods",
      PodSource(client, {.field_selector = absl::StrCat(
                             "spec.schedulerName=", scheduler,
                             ",spec.nodeName=")}),
      handlers);
  pending.Start();
  ASSERT_TRUE(pending.WaitForSync(absl::Seconds(30)));
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(rejected.empty()) << rejected.front();
    expect_decoded(pods);
    pods.clear();
  }
  pending.Stop();

  // Bound, they flow through the assigned pods' informer too: one from its
  // list, the others from its watch.
  auto bind = [&](const std::string& name) {
    absl::StatusOr<Pod> pod = client.GetPod(ns_, name);
    ASSERT_TRUE(pod.ok()) << pod.status();
    absl::Status bound = client.Bind(*pod, node);
    ASSERT_TRUE(bound.ok()) << bound;
  };
  bind("binary");
  Informer<Pod> assigned(
      "assigned pods",
      PodSource(client, {.field_selector = absl::StrCat(
                             "metadata.namespace=", ns_, ",spec.nodeName!=")}),
      handlers);
  assigned.Start();
  ASSERT_TRUE(assigned.WaitForSync(absl::Seconds(30)));
  bind("decimal");
  bind("tiny");
  ASSERT_TRUE(WaitFor([&] {
    absl::MutexLock lock(&mu);
    return pods.size() == 3 && pods["decimal"].node_name == node &&
           pods["tiny"].node_name == node;
  }));
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(rejected.empty()) << rejected.front();
    expect_decoded(pods);
    EXPECT_EQ(pods["binary"].node_name, node);
  }
  assigned.Stop();
  env_.DeleteNode(node);
}

TEST_F(KubeClientIntegrationTest, ListPagesThroughEverything) {
  // A scheduler name of this test's own, selected the way the scheduler
  // selects its pods (cluster-wide, by field).
  std::string scheduler = "paging-" + ns_;
  for (int i = 0; i < 7; ++i) {
    env_.AdminOk("POST", "/api/v1/namespaces/" + ns_ + "/pods",
                 PodJson(ns_, absl::StrCat("p", i), scheduler));
  }
  KubeClient client(env_.SchedulerConfig());
  absl::StatusOr<ObjectList<Pod>> list = client.ListPods(
      {.field_selector = "spec.schedulerName=" + scheduler + ",spec.nodeName=",
       .page_size = 3});
  ASSERT_TRUE(list.ok()) << list.status();
  std::set<std::string> names;
  for (const Pod& p : list->items) names.insert(p.name);
  EXPECT_EQ(names.size(), 7u);
  EXPECT_FALSE(list->resource_version.empty());
  EXPECT_TRUE(list->continue_token.empty());

  // Page by page, as the informers list: each page handed over as it is
  // decoded, 3 + 3 + 1.
  std::vector<size_t> pages;
  std::set<std::string> paged;
  absl::StatusOr<std::string> version = client.ListPods(
      {.field_selector = "spec.schedulerName=" + scheduler + ",spec.nodeName=",
       .page_size = 3},
      [&](ObjectList<Pod>& page) {
        pages.push_back(page.items.size());
        for (const Pod& p : page.items) paged.insert(p.name);
      });
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(pages, (std::vector<size_t>{3, 3, 1}));
  EXPECT_EQ(paged, names);
  EXPECT_FALSE(version->empty());
}

TEST_F(KubeClientIntegrationTest, BindSetsNodeNameAndSecondBindConflicts) {
  std::string node = absl::StrCat("bind-", ns_);
  env_.CreateNode(node);
  env_.AdminOk("POST", "/api/v1/namespaces/" + ns_ + "/pods",
               PodJson(ns_, "web"));
  KubeClient client(env_.SchedulerConfig());
  absl::StatusOr<Pod> pod = client.GetPod(ns_, "web");
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_EQ(pod->node_name, "");

  ASSERT_TRUE(client.Bind(*pod, node).ok());
  absl::StatusOr<Pod> bound = client.GetPod(ns_, "web");
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(bound->node_name, node);

  absl::Status again = client.Bind(*pod, node);
  EXPECT_EQ(again.code(), absl::StatusCode::kAborted) << again;
  EXPECT_NE(again.message().find("already assigned"), std::string::npos)
      << again;

  Pod gone = *pod;
  gone.name = "does-not-exist";
  EXPECT_EQ(client.Bind(gone, node).code(), absl::StatusCode::kNotFound);

  // A pod recreated under the same name has another uid: the binding of the
  // old one must not land on the new one.
  env_.AdminOk("POST", "/api/v1/namespaces/" + ns_ + "/pods",
               PodJson(ns_, "web2"));
  absl::StatusOr<Pod> web2 = client.GetPod(ns_, "web2");
  ASSERT_TRUE(web2.ok());
  Pod stale = *web2;
  stale.uid = "00000000-0000-0000-0000-000000000000";
  absl::Status mismatch = client.Bind(stale, node);
  EXPECT_FALSE(mismatch.ok());
  EXPECT_EQ(client.GetPod(ns_, "web2")->node_name, "");
  env_.DeleteNode(node);
}

TEST_F(KubeClientIntegrationTest, EventIsListedForThePod) {
  env_.AdminOk("POST", "/api/v1/namespaces/" + ns_ + "/pods",
               PodJson(ns_, "ev"));
  KubeClient client(env_.SchedulerConfig());
  absl::StatusOr<Pod> pod = client.GetPod(ns_, "ev");
  ASSERT_TRUE(pod.ok());
  absl::Status s = client.CreateEvent({.pod_namespace = ns_,
                                       .pod_name = "ev",
                                       .pod_uid = pod->uid,
                                       .type = "Warning",
                                       .reason = "FailedScheduling",
                                       .action = "Scheduling",
                                       .message = "0/3 nodes are available: "
                                                  "3 Insufficient cpu.",
                                       .reporting_component =
                                           "metrics-scheduler",
                                       .reporting_instance = "replica-1"});
  ASSERT_TRUE(s.ok()) << s;
  std::string events = env_.AdminOk(
      "GET", "/api/v1/namespaces/" + ns_ +
                 "/events?fieldSelector=involvedObject.name%3Dev");
  EXPECT_NE(events.find("\"reason\":\"FailedScheduling\""), std::string::npos)
      << events;
  EXPECT_NE(events.find("0/3 nodes are available: 3 Insufficient cpu."),
            std::string::npos);
  EXPECT_NE(events.find(pod->uid), std::string::npos);
  // An Event about a node (cluster-scoped) goes to the default namespace.
  s = client.CreateEvent({.kind = "Node",
                          .pod_namespace = "default",
                          .pod_name = "node-" + ns_,
                          .type = "Normal",
                          .reason = "Rebalancing",
                          .action = "Rebalancing",
                          .message = "cpu 0.95 above 0.85 for 3 samples",
                          .reporting_component = "metrics-scheduler",
                          .reporting_instance = "replica-1"});
  ASSERT_TRUE(s.ok()) << s;
  events = env_.AdminOk("GET",
                        "/api/v1/namespaces/default/events?fieldSelector="
                        "involvedObject.name%3Dnode-" +
                            ns_);
  EXPECT_NE(events.find(R"("kind":"Node")"), std::string::npos) << events;
  EXPECT_NE(events.find("cpu 0.95 above 0.85 for 3 samples"),
            std::string::npos);
}

// The Eviction API: it deletes the pod it names, unless the uid changed or
// a PodDisruptionBudget forbids it (429, ResourceExhausted).
TEST_F(KubeClientIntegrationTest, EvictPodHonoursUidAndDisruptionBudgets) {
  const std::string pods = "/api/v1/namespaces/" + ns_ + "/pods";
  env_.AdminOk("POST", pods, PodJson(ns_, "free"));
  KubeClient client(env_.AdminConfig());
  absl::StatusOr<Pod> free = client.GetPod(ns_, "free");
  ASSERT_TRUE(free.ok()) << free.status();
  EXPECT_EQ(client.EvictPod(ns_, "free", "00000000-0000-0000-0000-000000000000")
                .code(),
            absl::StatusCode::kAborted);
  ASSERT_TRUE(client.EvictPod(ns_, "free", free->uid).ok());
  EXPECT_EQ(client.GetPod(ns_, "free").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(client.EvictPod(ns_, "free", free->uid).code(),
            absl::StatusCode::kNotFound);

  // A budget that allows no disruption of pods labelled app=kept.
  env_.AdminOk("POST",
               "/apis/policy/v1/namespaces/" + ns_ + "/poddisruptionbudgets",
               R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",)"
               R"("metadata":{"name":"keep"},"spec":{"maxUnavailable":0,)"
               R"("selector":{"matchLabels":{"app":"kept"}}}})");
  std::string kept = PodJson(ns_, "kept");
  kept.replace(kept.find(R"("namespace")"), 0, R"("labels":{"app":"kept"},)");
  env_.AdminOk("POST", pods, kept);
  // A pod not Running yet is evicted whatever its budget says.
  env_.AdminOk("PATCH", pods + "/kept/status",
               R"({"status":{"phase":"Running"}})",
               "application/merge-patch+json");
  absl::StatusOr<Pod> pod = client.GetPod(ns_, "kept");
  ASSERT_TRUE(pod.ok()) << pod.status();
  absl::Status refused = client.EvictPod(ns_, "kept", pod->uid);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_TRUE(client.GetPod(ns_, "kept").ok());
}

TEST_F(KubeClientIntegrationTest, PatchPodConditionSetsUnschedulable) {
  env_.AdminOk("POST", "/api/v1/namespaces/" + ns_ + "/pods",
               PodJson(ns_, "cond"));
  KubeClient client(env_.SchedulerConfig());
  absl::Status s = client.PatchPodCondition(
      ns_, "cond",
      {.status = "False", .reason = "Unschedulable", .message = "no fit"});
  ASSERT_TRUE(s.ok()) << s;
  std::string pod = env_.AdminOk("GET", "/api/v1/namespaces/" + ns_ + "/pods/cond");
  EXPECT_NE(pod.find(R"("type":"PodScheduled")"), std::string::npos) << pod;
  EXPECT_NE(pod.find(R"("reason":"Unschedulable")"), std::string::npos) << pod;
}

TEST_F(KubeClientIntegrationTest, LeaseCreateGetUpdateWithPreconditions) {
  KubeClient client(env_.SchedulerConfig());
  // The scheduler identity may touch only its own lease.
  (void)env_.Admin("DELETE",
                   "/apis/coordination.k8s.io/v1/namespaces/metrics-scheduler/"
                   "leases/metrics-scheduler");
  Lease lease{.name = "metrics-scheduler",
              .namespace_ = "metrics-scheduler",
              .holder_identity = "replica-a",
              .lease_duration_seconds = 15,
              .acquire_time = absl::FromUnixSeconds(1700000000),
              .renew_time = absl::FromUnixSeconds(1700000000)};
  absl::StatusOr<Lease> created = client.CreateLease(lease);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->holder_identity, "replica-a");
  EXPECT_FALSE(created->resource_version.empty());
  EXPECT_EQ(client.CreateLease(lease).status().code(),
            absl::StatusCode::kAlreadyExists);

  absl::StatusOr<Lease> got = client.GetLease("metrics-scheduler",
                                              "metrics-scheduler");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->renew_time, absl::FromUnixSeconds(1700000000));
  EXPECT_EQ(got->lease_duration_seconds, 15);

  Lease renewed = *got;
  renewed.renew_time = absl::FromUnixSeconds(1700000010);
  absl::StatusOr<Lease> updated = client.UpdateLease(renewed);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_NE(updated->resource_version, got->resource_version);

  // Writing with the old resourceVersion loses: two replicas cannot both win.
  Lease stale = *got;
  stale.holder_identity = "replica-b";
  EXPECT_EQ(client.UpdateLease(stale).status().code(),
            absl::StatusCode::kAborted);
}

TEST_F(KubeClientIntegrationTest, SchedulerIdentityIsRefusedWhatRbacDenies) {
  KubeClient scheduler(env_.SchedulerConfig());
  // Granted: list pods and nodes.
  EXPECT_TRUE(scheduler.ListPods({}).ok());
  EXPECT_TRUE(scheduler.ListNodes({}).ok());
  // Not granted: another lease than its own.
  Lease other{.name = "kube-scheduler", .namespace_ = "kube-system",
              .holder_identity = "x", .lease_duration_seconds = 15};
  EXPECT_EQ(scheduler.CreateLease(other).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(scheduler.GetLease("metrics-scheduler", "someone-else")
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);

  // Not granted: secrets, changing pods (deleting them is: preemption),
  // creating nodes.
  HttpClient http(TlsOptions{.ca_file = env_.dir() + "/pki/ca.crt"});
  auto as_scheduler = [&](const std::string& method, const std::string& path,
                          const std::string& body = "") {
    HttpRequest r{.method = method, .url = env_.server() + path, .body = body};
    r.headers = {{"Authorization",
                  "Bearer " + env_.SchedulerConfig().BearerToken()},
                 {"Content-Type", "application/json"}};
    absl::StatusOr<HttpResponse> response = http.Do(r);
    return response.ok() ? response->status : -1;
  };
  EXPECT_EQ(as_scheduler("GET", "/api/v1/secrets"), 403);
  EXPECT_EQ(as_scheduler("GET", "/api/v1/namespaces/" + ns_ + "/configmaps"),
            403);
  EXPECT_EQ(as_scheduler("PATCH", "/api/v1/namespaces/" + ns_ + "/pods/x",
                         "{}"),
            403);
  EXPECT_EQ(as_scheduler("DELETE", "/api/v1/namespaces/" + ns_ + "/pods/x"),
            404);
  EXPECT_EQ(as_scheduler("POST", "/api/v1/nodes",
                         R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"evil"}})"),
            403);
  EXPECT_EQ(as_scheduler("POST", "/api/v1/namespaces/" + ns_ + "/pods",
                         PodJson(ns_, "evil")),
            403);

  // No token at all is Unauthenticated... (anonymous is refused too).
  ClusterConfig anonymous = env_.SchedulerConfig();
  anonymous.token = "not-a-valid-token";
  EXPECT_EQ(KubeClient(anonymous).ListNodes({}).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(KubeClientIntegrationTest, TlsIsVerified) {
  ClusterConfig config = env_.SchedulerConfig();
  config.tls.ca_file = "/etc/ssl/certs/ca-certificates.crt";  // not our CA
  absl::Status s = KubeClient(config).ListNodes({}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;

  config.tls.insecure_skip_verify = true;
  EXPECT_TRUE(KubeClient(config).ListNodes({}).ok());
}

}  // namespace
}  // namespace ms::kube
