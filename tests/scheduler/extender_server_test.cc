// ExtenderServer over loopback HTTP, as kube-scheduler calls it, with a
// node-attribute metric (no backend): the same filters and scores as a
// decision's metric terms, on the extender's scale. The names per call are
// bounded; over HTTPS, calls are authenticated (client certificate or
// token) and authorised by a fake reviewer.
#include "scheduler/serve/extender_server.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/http.h"
#include "common/token_file.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "tests/testing/builders.h"
#include "tests/testing/certificates.h"

namespace ms {
namespace {

using ::ms::testing::MakeNode;

class ExtenderServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scoring_.metrics.push_back(
        {.name = "price",
         .origin = {MetricOrigin::Kind::kNodeAnnotation, "example.com/cost"},
         .filter_max = 5});
    state_.UpsertNode(MakeNode("cheap").Annotation("example.com/cost", "1"));
    state_.UpsertNode(MakeNode("mid").Annotation("example.com/cost", "3"));
    state_.UpsertNode(MakeNode("dear").Annotation("example.com/cost", "9"));
    absl::StatusOr<int> port = server_.Start("127.0.0.1:0");
    ASSERT_TRUE(port.ok()) << port.status();
    url_ = absl::StrCat("http://127.0.0.1:", *port);
  }

  HttpResponse Post(const std::string& verb, const std::string& body) {
    HttpRequest r{.method = "POST", .url = url_ + "/" + verb, .body = body};
    r.headers = {{"Content-Type", "application/json"}};
    absl::StatusOr<HttpResponse> answer = http_.Do(r);
    EXPECT_TRUE(answer.ok()) << answer.status();
    return answer.ok() ? *answer : HttpResponse{};
  }

  FakeClock clock_;
  ClusterState state_{clock_, KubeVersion{}, absl::Seconds(30)};
  ScoringConfig scoring_;
  Registry registry_;
  ExtenderServer server_{state_, scoring_, nullptr, registry_};
  // Destroyed before the server, closing its kept-alive connections, so
  // that the server stops at once.
  HttpClient http_;
  std::string url_;
};

constexpr char kArgs[] =
    R"({"Pod":{"metadata":{"name":"p","namespace":"ns"}},"Nodes":null,)"
    R"("NodeNames":["dear","mid","cheap","unknown"]})";

TEST_F(ExtenderServerTest, FilterFailsNodesBeyondABound) {
  HttpResponse r = Post("filter", kArgs);
  EXPECT_EQ(r.status, 200);
  // A node this scheduler does not know has no value: it passes.
  EXPECT_EQ(r.body,
            R"({"NodeNames":["mid","cheap","unknown"],"FailedNodes":{},)"
            R"("FailedAndUnresolvableNodes":)"
            R"({"dear":"node(s) had price above 5"},"Error":""})");
}

TEST_F(ExtenderServerTest, PrioritizeScoresOnTheExtenderScale) {
  HttpResponse r = Post("prioritize", kArgs);
  EXPECT_EQ(r.status, 200);
  // Lower is better, min-max over the nodes that pass (1 .. 3); the node
  // over the bound gets 0, the one without a value the neutral 50.
  EXPECT_EQ(r.body,
            R"([{"Host":"dear","Score":0},{"Host":"mid","Score":0},)"
            R"({"Host":"cheap","Score":10},{"Host":"unknown","Score":5}])");
  EXPECT_NE(registry_.Render().find(
                "metrics_scheduler_extender_requests_total{verb=\"prioritize\","
                "result=\"metrics\"} 1"),
            std::string::npos)
      << registry_.Render();
}

TEST_F(ExtenderServerTest, WholeNodesAndMalformedCallsAreRefused) {
  HttpResponse r = Post("filter", R"({"Pod":{},"Nodes":{"items":[]}})");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("nodeCacheCapable: true"), std::string::npos)
      << r.body;
  r = Post("prioritize", "{not json");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(registry_.Render().find(
                "metrics_scheduler_extender_requests_total{verb=\"filter\","
                "result=\"refused\"} 1"),
            std::string::npos);
}

TEST_F(ExtenderServerTest, NoUsableMetricMeansNoOpinion) {
  for (const char* name : {"cheap", "mid", "dear"}) {
    state_.UpsertNode(
        MakeNode(name).Annotation("example.com/cost", "not a number"));
  }
  HttpResponse r = Post("filter", kArgs);
  EXPECT_NE(r.body.find(R"("NodeNames":["dear","mid","cheap","unknown"])"),
            std::string::npos)
      << r.body;
  r = Post("prioritize", kArgs);
  EXPECT_EQ(r.body,
            R"([{"Host":"dear","Score":0},{"Host":"mid","Score":0},)"
            R"({"Host":"cheap","Score":0},{"Host":"unknown","Score":0}])");
}

// The body of a call naming `names`.
std::string ArgsWith(const std::vector<std::string>& names) {
  return absl::StrCat(
      R"({"Pod":{"metadata":{"name":"p","namespace":"ns"}},"Nodes":null,)",
      R"("NodeNames":[")", absl::StrJoin(names, "\",\""), R"("]})");
}

// More names than the limit: refused with 400 naming the limit and its
// flag, before JudgeNodes takes the cluster state's lock; the limit
// itself is fine.
TEST(ExtenderServerLimitTest, TooManyNodeNamesAreRefusedNamingTheLimit) {
  FakeClock clock;
  ClusterState state(clock, KubeVersion{}, absl::Seconds(30));
  ScoringConfig scoring;
  Registry registry;
  ExtenderServer server(state, scoring, nullptr, registry,
                        /*max_node_names=*/3);
  int status = 0;
  std::string body = server.Filter(ArgsWith({"a", "b", "c", "d"}), &status);
  EXPECT_EQ(status, 400);
  EXPECT_TRUE(absl::StrContains(
      body,
      "\"Error\":\"too many node names in one call: 4, the most is 3 "
      "(--extender-max-node-names)\""))
      << body;
  body = server.Prioritize(ArgsWith({"a", "b", "c", "d"}), &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(body,
            "too many node names in one call: 4, the most is 3 "
            "(--extender-max-node-names)");
  EXPECT_NE(registry.Render().find(
                "metrics_scheduler_extender_requests_total{verb=\"filter\","
                "result=\"refused\"} 1"),
            std::string::npos);

  server.Filter(ArgsWith({"a", "b", "c"}), &status);
  EXPECT_EQ(status, 200);
  server.Prioritize(ArgsWith({"a", "b", "c"}), &status);
  EXPECT_EQ(status, 200);
}

// The default limit, kDefaultMaxNodeNames, against a cluster of that many
// nodes: accepted, and how long the call takes (JudgeNodes holds the
// cluster state's lock for most of it) is logged to support the figure in
// extender_server.h. No duration is asserted.
TEST(ExtenderServerLimitTest, TheDefaultLimitFitsTheLargestClusters) {
  FakeClock clock;
  ClusterState state(clock, KubeVersion{}, absl::Seconds(30));
  ScoringConfig scoring;
  scoring.metrics.push_back(
      {.name = "price",
       .origin = {MetricOrigin::Kind::kNodeAnnotation, "example.com/cost"},
       .filter_max = 5});
  Registry registry;
  ExtenderServer server(state, scoring, nullptr, registry);
  std::vector<std::string> names;
  for (size_t i = 0; i < ExtenderServer::kDefaultMaxNodeNames; ++i) {
    names.push_back(absl::StrCat("node-", i));
    state.UpsertNode(MakeNode(names.back())
                         .Annotation("example.com/cost", absl::StrCat(i % 10)));
  }
  const std::string body = ArgsWith(names);
  EXPECT_LT(body.size(), ExtenderServer::kMaxRequestBytes);
  int status = 0;
  const absl::Time start = absl::Now();
  server.Filter(body, &status);
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(status, 200);
  LOG(INFO) << "a filter call with " << names.size() << " node names took "
            << took << " (" << took / names.size() << " a name)";
  names.push_back("one-more");
  server.Filter(ArgsWith(names), &status);
  EXPECT_EQ(status, 400);
}

// Allows "client" (the test client certificate's CN) to post /filter
// only, and "caller-token" as user "caller" to post both. Counts reviews.
class ExtenderReviewer final : public AccessReviewer {
 public:
  absl::StatusOr<kube::TokenReview> ReviewToken(
      const std::string& token) override {
    ++token_reviews;
    if (token != "caller-token") return kube::TokenReview{};
    return kube::TokenReview{.authenticated = true,
                             .user = {.username = "caller"}};
  }
  absl::StatusOr<kube::AccessReview> ReviewAccess(
      const kube::NonResourceAccess& access) override {
    ++access_reviews;
    const bool post = access.verb == "post";
    return kube::AccessReview{
        .allowed = post && ((access.user.username == "client" &&
                             access.path == "/filter") ||
                            access.user.username == "caller")};
  }
  std::atomic<int> token_reviews{0};
  std::atomic<int> access_reviews{0};
};

// --extender-secure: HTTPS, and a call must come from an identity the
// apiserver allows to post the path: a client certificate signed by the
// client CA (what kube-scheduler's extender tlsConfig sends) or a bearer
// token. 401 with neither, 403 when not allowed; a certificate from
// another CA fails the handshake.
TEST(SecureExtenderTest, CallsNeedAnAuthorisedIdentity) {
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/secure-extender-", getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  absl::StatusOr<testing::TestCertificates> certs =
      testing::MakeTestCertificates(dir);
  ASSERT_TRUE(certs.ok()) << certs.status();
  absl::StatusOr<std::string> cert = ReadFile(certs->server_cert);
  absl::StatusOr<std::string> key = ReadFile(certs->server_key);
  absl::StatusOr<std::string> ca = ReadFile(certs->ca);
  ASSERT_TRUE(cert.ok() && key.ok() && ca.ok());

  FakeClock clock;
  ClusterState state(clock, KubeVersion{}, absl::Seconds(30));
  state.UpsertNode(MakeNode("cheap").Annotation("example.com/cost", "1"));
  ScoringConfig scoring;
  Registry registry;
  ExtenderReviewer reviewer;
  DelegatedAuth auth(reviewer, clock);
  ExtenderServer server(state, scoring, nullptr, registry);
  absl::StatusOr<int> port = server.StartSecure(
      "127.0.0.1:0",
      TlsServing{.certificate = {.cert_pem = *cert, .key_pem = *key},
                 .client_ca_pem = *ca},
      auth);
  ASSERT_TRUE(port.ok()) << port.status();
  using Code = absl::StatusOr<long>;  // NOLINT(runtime/int): libcurl's
  auto post = [&](HttpClient& client, const std::string& verb,
                  const std::string& token = "") -> Code {
    HttpRequest r{.method = "POST",
                  .url = absl::StrCat("https://127.0.0.1:", *port, "/", verb),
                  .body = kArgs,
                  .timeout = absl::Seconds(30)};
    r.headers = {{"Content-Type", "application/json"}};
    if (!token.empty()) {
      r.headers.emplace_back("Authorization", "Bearer " + token);
    }
    absl::StatusOr<HttpResponse> answer = client.Do(r);
    if (!answer.ok()) return answer.status();
    return answer->status;
  };

  HttpClient kube_scheduler(TlsOptions{.ca_file = certs->ca,
                                       .client_cert_file = certs->client_cert,
                                       .client_key_file = certs->client_key});
  EXPECT_EQ(post(kube_scheduler, "filter").value_or(0), 200);
  EXPECT_EQ(post(kube_scheduler, "prioritize").value_or(0), 403);
  EXPECT_EQ(reviewer.token_reviews.load(), 0);

  HttpClient anonymous(TlsOptions{.ca_file = certs->ca});
  EXPECT_EQ(post(anonymous, "filter").value_or(0), 401);
  EXPECT_EQ(post(anonymous, "filter", "not-a-token").value_or(0), 401);
  EXPECT_EQ(post(anonymous, "prioritize", "caller-token").value_or(0), 200);

  HttpClient stranger(TlsOptions{.ca_file = certs->ca,
                                 .client_cert_file = certs->stranger_cert,
                                 .client_key_file = certs->stranger_key});
  EXPECT_FALSE(post(stranger, "filter").ok());

  // Plain HTTP to the TLS port is not served.
  HttpClient plain;
  absl::StatusOr<HttpResponse> r = plain.Do(
      {.method = "POST",
       .url = absl::StrCat("http://127.0.0.1:", *port, "/filter"),
       .body = kArgs,
       .timeout = absl::Seconds(30)});
  EXPECT_TRUE(!r.ok() || r->status != 200);
  server.Stop();
}

}  // namespace
}  // namespace ms
