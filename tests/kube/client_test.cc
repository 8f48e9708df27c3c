// KubeClient's requests against a loopback server that answers as told:
// what is sent, and what a slow answer does. Against the real
// kube-apiserver: tests/kube/client_integration_test.cc.
#include "kube/client.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "common/http.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/http_server.h"

namespace ms::kube {
namespace {

using ::ms::testing::HttpAnswer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::ms::testing::RecordedRequest;
using ::ms::testing::TestHttpServer;

Pod MakePod() {
  Pod pod;
  pod.namespace_ = "shop";
  pod.name = "web-1";
  pod.uid = "u-1";
  return pod;
}

TEST(KubeClientTest, BindPostsTheBindingWithTheUid) {
  absl::StatusOr<std::unique_ptr<TestHttpServer>> server =
      TestHttpServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->SetAnswer(201, R"({"kind":"Status","status":"Success","code":201})");
  KubeClient client(PlainUrl((*server)->url()).value());
  absl::Status bound = client.Bind(MakePod(), "node-a");
  ASSERT_TRUE(bound.ok()) << bound;
  std::vector<RecordedRequest> requests = (*server)->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/api/v1/namespaces/shop/pods/web-1/binding");
  EXPECT_EQ(requests[0].body,
            R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"web-1",)"
            R"("namespace":"shop","uid":"u-1"},"target":{"apiVersion":"v1",)"
            R"("kind":"Node","name":"node-a"}})");
}

// A binding can be bounded shorter than the client's default timeout: an
// apiserver that does not answer in time costs the caller only that.
TEST(KubeClientTest, BindGivesUpAfterItsOwnTimeout) {
  absl::Notification release;  // outlives the server's thread
  absl::StatusOr<std::unique_ptr<TestHttpServer>> server =
      TestHttpServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->SetHandler([&](const RecordedRequest&) {
    // Holds the answer far beyond the bind's timeout, well inside the
    // client's default one.
    release.WaitForNotificationWithTimeout(kDefaultRequestTimeout / 2);
    return HttpAnswer{201, "{}"};
  });
  KubeClient client(PlainUrl((*server)->url()).value());
  absl::Status bound =
      client.Bind(MakePod(), "node-a", absl::Milliseconds(300));
  release.Notify();
  EXPECT_EQ(bound.code(), absl::StatusCode::kDeadlineExceeded) << bound;
  EXPECT_EQ((*server)->request_count(), 1);
}

// A pod as a list or a watch event carries it, `padding` bytes of an
// unknown field making it as large as a test needs.
std::string PodJson(const std::string& name, const std::string& version,
                    size_t padding = 0) {
  return absl::StrCat(
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")", name,
      R"(","namespace":"shop","uid":"uid-)", name, R"(","resourceVersion":")",
      version, R"("},"spec":{"schedulerName":"s","containers":[{"name":"c"}],)",
      R"("padding":")", std::string(padding, 'x'),
      R"("},"status":{"phase":"Pending"}})");
}

constexpr ResponseLimits kOneMiB = {.max_response_bytes = 1 << 20,
                                    .max_watch_event_bytes = 64 << 10};

// A list page over ResponseLimits::max_response_bytes is refused as it
// arrives, its size announced or not, naming the limit and its flag; one
// within it is read.
TEST(KubeClientTest, AListPageOverTheLimitIsRefused) {
  absl::StatusOr<std::unique_ptr<TestHttpServer>> server =
      TestHttpServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  KubeClient client(PlainUrl((*server)->url()).value(), "test", kOneMiB);
  // 40 pods of 32 KiB: 1.25 MiB.
  std::vector<std::string> pods;
  for (int i = 0; i < 40; ++i) {
    pods.push_back(PodJson(absl::StrCat("p", i), "1", 32 << 10));
  }
  const std::string big = absl::StrCat(
      R"({"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[)",
      absl::StrJoin(pods, ","), "]}");
  for (bool unframed : {false, true}) {
    SCOPED_TRACE(unframed ? "unframed" : "with Content-Length");
    (*server)->SetHandler([&big, unframed](const RecordedRequest&) {
      return HttpAnswer{.body = big, .unframed = unframed};
    });
    absl::StatusOr<ObjectList<Pod>> list = client.ListPods({});
    EXPECT_EQ(list.status().code(), absl::StatusCode::kResourceExhausted)
        << list.status();
    EXPECT_TRUE(IsResponseTooLarge(list.status())) << list.status();
    EXPECT_THAT(list.status().message(),
                HasSubstr("GET /api/v1/pods?limit=500 is larger than 1048576 "
                          "bytes, the most --max-apiserver-response-bytes "
                          "allows"));
  }
  (*server)->SetAnswer(
      200, absl::StrCat(
               R"({"kind":"PodList","metadata":{"resourceVersion":"9"},)",
               R"("items":[)", PodJson("a", "1", 32 << 10), "]}"));
  absl::StatusOr<ObjectList<Pod>> list = client.ListPods({});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->items.size(), 1u);
}

// One watch event over ResponseLimits::max_watch_event_bytes ends the
// watch with ResourceExhausted naming the limit and its flag; the events
// before it are delivered, none after it.
TEST(KubeClientTest, AWatchEventOverTheLimitEndsTheWatch) {
  absl::StatusOr<std::unique_ptr<TestHttpServer>> server =
      TestHttpServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  KubeClient client(PlainUrl((*server)->url()).value(), "test", kOneMiB);
  auto event = [](const std::string& pod) {
    return absl::StrCat(R"({"type":"MODIFIED","object":)", pod, "}\n");
  };
  // The large event's end, or all of it (the second time), comes in the
  // body's last bytes: held whole, it would be read.
  for (const std::string& large :
       {PodJson("big", "2", 96 << 10), PodJson("big", "2", 1 << 20)}) {
    (*server)->SetAnswer(
        200, absl::StrCat(event(PodJson("a", "1")), event(large),
                          event(PodJson("c", "3"))));
    std::vector<std::string> seen;
    absl::Status watched = client.WatchPods(
        {}, "0",
        [&](WatchEvent<Pod>& e) {
          seen.push_back(e.object.name);
          return true;
        },
        nullptr);
    EXPECT_EQ(watched.code(), absl::StatusCode::kResourceExhausted)
        << watched;
    EXPECT_TRUE(IsResponseTooLarge(watched)) << watched;
    EXPECT_THAT(watched.message(),
                HasSubstr("an event of the watch of /api/v1/pods is larger "
                          "than 65536 bytes, the most "
                          "--max-watch-event-bytes allows"));
    EXPECT_THAT(seen, ElementsAre("a"));
  }
}

}  // namespace
}  // namespace ms::kube
