// StatusServer (scheduler/status_server.h): what each port serves. The
// plain port serves every endpoint unless the secure port is on, when it
// keeps the probes and sends /metrics to the secure port with a 404; the
// secure port serves /metrics to a token its reviewer allows. Real
// servers on loopback ports, a fake AccessReviewer.
#include "scheduler/status_server.h"

#include <httplib.h>

#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "common/http.h"
#include "gtest/gtest.h"
#include "scheduler/delegated_auth.h"
#include "scheduler/self_metrics.h"
#include "scheduler/serving_cert.h"

namespace ms {
namespace {

// Authenticates "reader-token" as the user "reader", who may get /metrics.
class OneReaderReviewer final : public AccessReviewer {
 public:
  absl::StatusOr<kube::TokenReview> ReviewToken(
      const std::string& token) override {
    if (token != "reader-token") return kube::TokenReview{.error = "unknown"};
    return kube::TokenReview{.authenticated = true,
                             .user = {.username = "reader"}};
  }
  absl::StatusOr<kube::AccessReview> ReviewAccess(
      const kube::NonResourceAccess& access) override {
    return kube::AccessReview{.allowed = access.user.username == "reader" &&
                                         access.verb == "get" &&
                                         access.path == "/metrics"};
  }
};

// One server whose registry holds a counter, to recognise its rendering.
class StatusServerTest : public ::testing::Test {
 protected:
  StatusServerTest() {
    registry_.AddCounter("status_test_total", "A counter of the test.")
        .With({})
        .Inc();
  }

  // GET http://127.0.0.1:port`path`: its status, and its body in *body.
  static int Get(int port, const std::string& path, std::string* body) {
    httplib::Client client("127.0.0.1", port);
    httplib::Result res = client.Get(path);
    if (!res) return 0;
    *body = res->body;
    return res->status;
  }

  Registry registry_;
  std::atomic<bool> ready_{true};
  // Declared before the server, which uses them until it stops.
  OneReaderReviewer reviewer_;
  DelegatedAuth auth_{reviewer_, RealClock::Get()};
  StatusServer status_{registry_, [this] { return ready_.load(); },
                       [] { return std::vector<std::string>(); }};
};

TEST_F(StatusServerTest, PlainPortServesEveryEndpointByDefault) {
  absl::StatusOr<int> port = status_.Start("127.0.0.1:0");
  ASSERT_TRUE(port.ok()) << port.status();
  std::string body;
  for (const char* probe : {"/livez", "/healthz", "/readyz"}) {
    EXPECT_EQ(Get(*port, probe, &body), 200) << probe;
    EXPECT_EQ(body, "ok") << probe;
  }
  EXPECT_EQ(Get(*port, "/metrics", &body), 200);
  EXPECT_TRUE(absl::StrContains(body, "\nstatus_test_total 1\n")) << body;
}

// --secure-port on: the plain port is the kubelet's, for the probes, and
// /metrics says where it went.
TEST_F(StatusServerTest, ProbesOnlyPlainPortPointsMetricsAtTheSecurePort) {
  absl::StatusOr<int> port =
      status_.Start("127.0.0.1:0", PlainPort::ProbesOnly(10259));
  ASSERT_TRUE(port.ok()) << port.status();
  std::string body;
  for (const char* probe : {"/livez", "/healthz", "/readyz"}) {
    EXPECT_EQ(Get(*port, probe, &body), 200) << probe;
    EXPECT_EQ(body, "ok") << probe;
  }
  ready_ = false;
  EXPECT_EQ(Get(*port, "/readyz", &body), 503);
  EXPECT_EQ(Get(*port, "/metrics", &body), 404);
  EXPECT_EQ(body,
            "/metrics is served only on the secure port 10259 (https, with a "
            "bearer token allowed to get /metrics)\n");
  EXPECT_EQ(body, MetricsMovedMessage(10259));
  EXPECT_FALSE(absl::StrContains(body, "status_test_total"));
}

// Both ports of one server, as the scheduler runs them: the registry is
// served on the secure port only, to the token allowed.
TEST_F(StatusServerTest, MetricsOnTheSecurePortOnly) {
  absl::StatusOr<ServingCertificate> cert =
      SelfSignedCertificate({"127.0.0.1"}, absl::Now());
  ASSERT_TRUE(cert.ok()) << cert.status();
  absl::StatusOr<int> secure = status_.StartSecure("127.0.0.1:0", *cert, auth_);
  ASSERT_TRUE(secure.ok()) << secure.status();
  absl::StatusOr<int> plain =
      status_.Start("127.0.0.1:0", PlainPort::ProbesOnly(*secure));
  ASSERT_TRUE(plain.ok()) << plain.status();

  std::string body;
  EXPECT_EQ(Get(*plain, "/healthz", &body), 200);
  EXPECT_EQ(Get(*plain, "/metrics", &body), 404);
  EXPECT_EQ(body, MetricsMovedMessage(*secure));

  HttpClient https(TlsOptions{.ca_pem = cert->cert_pem});
  HttpRequest request{
      .url = absl::StrCat("https://127.0.0.1:", *secure, "/metrics"),
      .headers = {{"Authorization", "Bearer reader-token"}},
      .timeout = absl::Seconds(10)};
  absl::StatusOr<HttpResponse> allowed = https.Do(request);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_EQ(allowed->status, 200) << allowed->body;
  EXPECT_TRUE(absl::StrContains(allowed->body, "\nstatus_test_total 1\n"))
      << allowed->body;
  request.headers.clear();
  absl::StatusOr<HttpResponse> anonymous = https.Do(request);
  ASSERT_TRUE(anonymous.ok()) << anonymous.status();
  EXPECT_EQ(anonymous->status, 401);
}

// The status endpoints are GETs: a large request body is refused, not
// buffered.
TEST_F(StatusServerTest, RequestBodiesAreCapped) {
  absl::StatusOr<int> port = status_.Start("127.0.0.1:0");
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::Client client("127.0.0.1", *port);
  std::string big(StatusServer::kMaxRequestBytes + 1, 'x');
  httplib::Result res = client.Post("/metrics", big, "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
}

}  // namespace
}  // namespace ms
