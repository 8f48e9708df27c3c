// Informers over the real HTTP and decoding path (KubeClient's PodSource and
// NodeSource) against a loopback server that speaks the apiserver's list and
// watch wire format, so that it can send what a real apiserver of this
// version would refuse to store but a newer or differently configured one
// may send: an object our decoder refuses must not blind the informer to
// the others. Against the real kube-apiserver:
// tests/kube/client_integration_test.cc.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "tests/testing/http_server.h"
#include "tests/testing/testenv.h"

namespace ms::kube {
namespace {

using ::ms::testing::HttpAnswer;
using ::ms::testing::RecordedRequest;
using ::ms::testing::TestHttpServer;
using ::ms::testing::WaitFor;

// Answers each list with the next of `lists` (the last one again once they
// run out) and each watch with the next of `watches`, a stream of events
// (one JSON object per line) that then ends; once they run out, holds every
// watch open with nothing to say, as a quiet apiserver does, until
// destroyed.
class WireApiserver {
 public:
  WireApiserver(std::vector<std::string> lists,
                std::vector<std::vector<std::string>> watches)
      : lists_(std::move(lists)), watches_(std::move(watches)) {
    absl::StatusOr<std::unique_ptr<TestHttpServer>> server =
        TestHttpServer::Start();
    EXPECT_TRUE(server.ok()) << server.status();
    if (!server.ok()) return;
    server_ = std::move(*server);
    server_->SetHandler([this](const RecordedRequest& r) { return Answer(r); });
  }
  ~WireApiserver() {
    quiet_.Notify();
    server_.reset();
  }

  std::string url() const { return server_ ? server_->url() : ""; }

 private:
  HttpAnswer Answer(const RecordedRequest& r) {
    std::optional<std::string> body;
    {
      absl::MutexLock lock(&mu_);
      if (!absl::StrContains(r.target, "watch=1")) {
        body = lists_[std::min(lists_served_++, lists_.size() - 1)];
      } else if (watches_served_ < watches_.size()) {
        body = absl::StrCat(absl::StrJoin(watches_[watches_served_++], "\n"),
                            "\n");
      }
    }
    if (body) return {200, *body};
    quiet_.WaitForNotificationWithTimeout(absl::Seconds(60));
    return {200, ""};
  }

  const std::vector<std::string> lists_;
  const std::vector<std::vector<std::string>> watches_;
  absl::Notification quiet_;
  absl::Mutex mu_;
  size_t lists_served_ ABSL_GUARDED_BY(mu_) = 0;
  size_t watches_served_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<TestHttpServer> server_;
};

std::string List(const std::string& kind, const std::string& version,
                 const std::vector<std::string>& items) {
  return absl::StrCat(R"({"kind":")", kind,
                      R"(List","apiVersion":"v1","metadata":{"resourceVersion":")",
                      version, R"("},"items":[)", absl::StrJoin(items, ","),
                      "]}");
}

std::string Event(const std::string& type, const std::string& object) {
  return absl::StrCat(R"({"type":")", type, R"(","object":)", object, "}");
}

// A pod as the apiserver writes it. `tolerations` is spec.tolerations.
std::string PodObject(const std::string& name, const std::string& version,
                      const std::string& node,
                      const std::string& tolerations = "[]") {
  return absl::StrCat(
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")", name,
      R"(","namespace":"shop","uid":"uid-)", name, R"(","resourceVersion":")",
      version,
      R"(","creationTimestamp":"2026-11-21T22:10:00Z","labels":{"app":"web"}},)",
      R"("spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",)",
      R"("resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}],)",
      R"("schedulerName":"metrics-scheduler","nodeName":")", node,
      R"(","tolerations":)", tolerations, R"(,"priority":0},)",
      R"("status":{"phase":")", node.empty() ? "Pending" : "Running",
      R"(","qosClass":"Burstable"}})");
}

// A toleration operator this decoder does not know: Gt is what the
// TaintTolerationComparisonOperators feature of newer releases adds.
constexpr char kNewerToleration[] =
    R"([{"key":"example.com/tier","operator":"Gt","value":"2","effect":"NoSchedule"}])";

std::string NodeObject(const std::string& name, const std::string& version,
                       const std::string& taint_effect = "NoSchedule") {
  return absl::StrCat(
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":")", name,
      R"(","uid":"uid-)", name, R"(","resourceVersion":")", version,
      R"(","creationTimestamp":"2026-11-21T22:10:00Z","labels":{"zone":"a"}},)",
      R"("spec":{"taints":[{"key":"dedicated","value":"web","effect":")",
      taint_effect,
      R"("}]},"status":{"allocatable":{"cpu":"4","memory":"16Gi","pods":"110"},)",
      R"("conditions":[{"type":"Ready","status":"True"}]}})");
}

std::string Expired() {
  return Event("ERROR",
               R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
               R"("status":"Failure","message":"too old resource version",)"
               R"("reason":"Expired","code":410})");
}

// What the handlers were given, in order, as "add NAME@VERSION", and the
// refused objects as "RESOURCE KEY@VERSION UID: ERROR".
template <typename T>
class Delivered {
 public:
  InformerHandlers<T> Handlers() {
    return {.on_add = [this](const T& o) { Record("add", o); },
            .on_update = [this](const T& o) { Record("update", o); },
            .on_delete = [this](const T& o) { Record("delete", o); },
            .on_reject = [this](const RejectedObject& r) {
              absl::MutexLock lock(&mu_);
              rejected_.push_back(absl::StrCat(r.resource, " ", r.Key(), "@",
                                               r.resource_version, " ", r.uid,
                                               ": ", r.error));
            }};
  }
  std::vector<std::string> Events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  std::vector<std::string> Rejected() {
    absl::MutexLock lock(&mu_);
    return rejected_;
  }

 private:
  void Record(const std::string& what, const T& o) {
    absl::MutexLock lock(&mu_);
    events_.push_back(absl::StrCat(what, " ", o.name, "@", o.resource_version));
  }
  absl::Mutex mu_;
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> rejected_ ABSL_GUARDED_BY(mu_);
};

using Events = std::vector<std::string>;

// No waiting between attempts: the scripted server needs none.
InformerOptions NoWait() {
  return {.sleep = [](absl::Duration) {}};
}

// Refused pods in lists and watches, among good ones, for the pending and
// the assigned pod informers alike. The watch ends with a 410, and the
// relist finds the refused versions again: they are reported once.
void ExpectRefusedPodsDoNotBlind(const std::string& node,
                                 const ListOptions& options) {
  WireApiserver server(
      {List("Pod", "100",
            {PodObject("a", "10", node),
             PodObject("bad", "11", node, kNewerToleration),
             PodObject("b", "12", node)}),
       List("Pod", "200",
            {PodObject("a", "103", node),
             PodObject("bad", "11", node, kNewerToleration),
             PodObject("bad2", "102", node, kNewerToleration),
             // Refused now: what was delivered of c stays.
             PodObject("c", "105", node, kNewerToleration)})},
      {{Event("ADDED", PodObject("c", "101", node)),
        Event("MODIFIED", PodObject("bad2", "102", node, kNewerToleration)),
        Event("MODIFIED", PodObject("a", "103", node)),
        Event("DELETED", PodObject("b", "104", node)), Expired()},
       // bad is fixed.
       {Event("MODIFIED", PodObject("bad", "201", node))}});
  ASSERT_FALSE(server.url().empty());
  KubeClient client(PlainUrl(server.url()).value());
  Delivered<Pod> delivered;
  Informer<Pod> informer("pods", PodSource(client, options),
                         delivered.Handlers(), NoWait());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(30)));
  ASSERT_TRUE(WaitFor([&] { return delivered.Events().size() == 6; }));
  EXPECT_EQ(delivered.Events(),
            (Events{"add a@10", "add b@12", "add c@101", "update a@103",
                    "delete b@104", "add bad@201"}));
  const std::string why = R"(: unknown toleration operator "Gt")";
  EXPECT_EQ(delivered.Rejected(),
            (Events{"pods shop/bad@11 uid-bad" + why,
                    "pods shop/bad2@102 uid-bad2" + why,
                    "pods shop/c@105 uid-c" + why}));
  EXPECT_EQ(informer.Lists(), 2);
  EXPECT_EQ(informer.Size(), 3u);  // a, c as delivered, bad
  informer.Stop();
}

TEST(InformerHttpTest, RefusedPendingPodsDoNotBlindTheInformer) {
  ExpectRefusedPodsDoNotBlind(
      "", {.field_selector = "spec.schedulerName=metrics-scheduler,spec.nodeName="});
}

TEST(InformerHttpTest, RefusedAssignedPodsDoNotBlindTheInformer) {
  ExpectRefusedPodsDoNotBlind(
      "node-1", {.field_selector = "spec.nodeName!=,status.phase!=Succeeded,"
                                   "status.phase!=Failed"});
}

TEST(InformerHttpTest, RefusedNodesDoNotBlindTheInformer) {
  WireApiserver server(
      {List("Node", "100",
            {NodeObject("n1", "10"), NodeObject("bad", "11", "NoScheduleSoon"),
             NodeObject("n2", "12")})},
      {{Event("MODIFIED", NodeObject("bad", "101", "NoScheduleSoon")),
        Event("ADDED", NodeObject("n3", "102")),
        // Refused: n1 stays as delivered.
        Event("MODIFIED", NodeObject("n1", "103", "NoScheduleSoon")),
        Event("MODIFIED", NodeObject("n2", "104"))}});
  ASSERT_FALSE(server.url().empty());
  KubeClient client(PlainUrl(server.url()).value());
  Delivered<Node> delivered;
  Informer<Node> informer("nodes", NodeSource(client, {}), delivered.Handlers(),
                          NoWait());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(30)));
  ASSERT_TRUE(WaitFor([&] { return delivered.Events().size() == 4; }));
  EXPECT_EQ(delivered.Events(),
            (Events{"add n1@10", "add n2@12", "add n3@102", "update n2@104"}));
  const std::string why = R"(: unknown taint effect "NoScheduleSoon")";
  EXPECT_EQ(delivered.Rejected(),
            (Events{"nodes bad@11 uid-bad" + why, "nodes bad@101 uid-bad" + why,
                    "nodes n1@103 uid-n1" + why}));
  EXPECT_EQ(informer.Size(), 3u);
  informer.Stop();
}

// An answer over the client's limits (ResponseLimits) does not stop the
// informer: a list page too large fails the list, an event too large the
// watch; each is retried after a backoff, and the informer carries on with
// what comes next (the apiserver's next list, the watch resumed from the
// last event delivered).
TEST(InformerHttpTest, AnswersOverTheLimitsAreRetriedAfterABackoff) {
  const std::string padding(96 << 10, 'x');  // over 64 KiB in an object
  std::string large_pod = PodObject("a", "102", "");
  large_pod.insert(large_pod.size() - 1,
                   absl::StrCat(R"(,"padding":")", padding, R"(")"));
  std::vector<std::string> many;  // 40 pods of 96 KiB: over 1 MiB
  for (int i = 0; i < 40; ++i) many.push_back(large_pod);
  WireApiserver server(
      {List("Pod", "90", many), List("Pod", "100", {PodObject("a", "10", "")})},
      {{Event("ADDED", PodObject("b", "101", "")),
        Event("MODIFIED", large_pod)},
       {Event("MODIFIED", PodObject("a", "103", ""))}});
  ASSERT_FALSE(server.url().empty());
  KubeClient client(PlainUrl(server.url()).value(), "test",
                    {.max_response_bytes = 1 << 20,
                     .max_watch_event_bytes = 64 << 10});
  Delivered<Pod> delivered;
  absl::Mutex mu;
  int backoffs = 0;
  InformerOptions options{.sleep = [&](absl::Duration) {
    absl::MutexLock lock(&mu);
    ++backoffs;
  }};
  Informer<Pod> informer("pods", PodSource(client, {}), delivered.Handlers(),
                         options);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(30)));
  ASSERT_TRUE(WaitFor([&] { return delivered.Events().size() == 3; }));
  EXPECT_EQ(delivered.Events(),
            (Events{"add a@10", "add b@101", "update a@103"}));
  EXPECT_EQ(informer.Lists(), 1);
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(backoffs, 2);  // the list, then the watch
  }
  informer.Stop();
}

}  // namespace
}  // namespace ms::kube
