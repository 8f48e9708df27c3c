// KubeClient's requests against a loopback server that answers as told:
// what is sent, and what a slow answer does. Against the real
// kube-apiserver: tests/kube/client_integration_test.cc.
#include "kube/client.h"

#include <memory>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/testing/http_server.h"

namespace ms::kube {
namespace {

using ::ms::testing::HttpAnswer;
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

}  // namespace
}  // namespace ms::kube
