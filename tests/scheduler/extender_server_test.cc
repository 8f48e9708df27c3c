// ExtenderServer over loopback HTTP, as kube-scheduler calls it, with a
// node-attribute metric (no backend): the same filters and scores as a
// decision's metric terms, on the extender's scale.
#include "scheduler/extender_server.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/http.h"
#include "gtest/gtest.h"

namespace ms {
namespace {

Node MakeNode(const std::string& name, const std::string& cost) {
  Node n;
  n.name = name;
  n.ready = true;
  n.allocatable.milli_cpu = 4000;
  n.allocatable.memory = int64_t{16} << 30;
  n.allocatable.pods = 110;
  n.annotations["example.com/cost"] = cost;
  return n;
}

class ExtenderServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scoring_.metrics.push_back(
        {.name = "price",
         .origin = {MetricOrigin::Kind::kNodeAnnotation, "example.com/cost"},
         .filter_max = 5});
    state_.UpsertNode(MakeNode("cheap", "1"));
    state_.UpsertNode(MakeNode("mid", "3"));
    state_.UpsertNode(MakeNode("dear", "9"));
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
  ClusterState state_{clock_, absl::Seconds(30)};
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
    state_.UpsertNode(MakeNode(name, "not a number"));
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

}  // namespace
}  // namespace ms
