// SysdigSource against a loopback server speaking the data API's wire
// format (REFERENCE.md, "Sysdig data API").
#include "metrics/sysdig_source.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/metrics/source_test_util.h"
#include "tests/testing/http_server.h"

namespace ms::metrics {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ms::testing::HttpAnswer;
using ms::testing::RecordedRequest;
using ms::testing::TestHttpServer;

MetricConfig Metric() {
  MetricConfig m;
  m.name = "http_time";
  m.query = "net.http.request.time";
  m.join.label = "host.hostName";
  return m;
}

// The integer after `"key":` in a request body.
int IntField(const std::string& body, const std::string& key) {
  size_t at = body.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  size_t start = at + key.size() + 3;
  size_t end = body.find_first_of(",}", start);
  int v = -1;
  (void)absl::SimpleAtoi(body.substr(start, end - start), &v);
  return v;
}

class SysdigSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestHttpServer>> s = TestHttpServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    backend_.type = BackendType::kSysdig;
    backend_.url = server_->url();
    backend_.token_file = token_.path();
    backend_.sysdig = {.last = absl::Seconds(120), .sampling = absl::Seconds(60),
                       .data_source_type = "host"};
  }
  std::unique_ptr<SysdigSource> Source() {
    absl::StatusOr<std::unique_ptr<SysdigSource>> s = SysdigSource::Create(backend_);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }

  TempFile token_{"sysdig-token\n"};
  std::unique_ptr<TestHttpServer> server_;
  BackendConfig backend_;
};

TEST_F(SysdigSourceTest, OneGroupedPostJoinedByHostName) {
  server_->SetAnswer(200, R"({"start":1700000000,"end":1700000060,"data":[
    {"t":1700000060,"d":["kubeworker1",61664.877]},
    {"t":1700000060,"d":["kubeworker2.example.com",1200.5]},
    {"t":1700000060,"d":["kubeworker3",null]},
    {"t":1700000060,"d":["laptop",7]}]})");
  NodeSet nodes({{"kubeworker1", {}}, {"kubeworker2", {}}, {"kubeworker3", {}}});
  auto source = Source();
  absl::StatusOr<FetchResult> r = source->Fetch(Metric(), nodes, absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  // kubeworker3 has no value (null); laptop is not a node.
  EXPECT_THAT(ValuesOf(*r),
              ElementsAre(Pair("kubeworker1", 61664.877), Pair("kubeworker2", 1200.5)));
  EXPECT_EQ(r->by_node.at("kubeworker1").time_ms, 1700000060000);
  EXPECT_EQ(r->series, 4);
  EXPECT_EQ(r->unmatched, 1);
  EXPECT_THAT(r->unmatched_examples, ElementsAre("laptop"));

  ASSERT_EQ(server_->request_count(), 1);
  RecordedRequest req = server_->requests()[0];
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.target, "/api/data/");
  EXPECT_EQ(req.Header("authorization"), "Bearer sysdig-token");
  EXPECT_EQ(req.Header("content-type"), "application/json");
  EXPECT_EQ(req.body,
            R"({"metrics":[{"id":"host.hostName"},{"id":"net.http.request.time",)"
            R"("aggregations":{"time":"timeAvg","group":"avg"}}],)"
            R"("dataSourceType":"host","last":120,"sampling":60,)"
            R"("paging":{"from":0,"to":99}})");
}

TEST_F(SysdigSourceTest, PagesUntilAShortPage) {
  // 250 hosts, host-0 ... host-249; the server honours paging.
  server_->SetHandler([](const RecordedRequest& req) {
    int from = IntField(req.body, "from");
    int to = IntField(req.body, "to");
    std::string rows;
    for (int i = from; i <= to && i < 250; ++i) {
      if (!rows.empty()) rows += ",";
      absl::StrAppend(&rows, R"({"t":1700000060,"d":["host-)", i, R"(",)", i, "]}");
    }
    return HttpAnswer{200, absl::StrCat(R"({"start":1,"end":2,"data":[)", rows, "]}")};
  });
  NodeSet nodes({{"host-5", {}}, {"host-150", {}}, {"host-249", {}}});
  auto source = Source();
  absl::StatusOr<FetchResult> r = source->Fetch(Metric(), nodes, absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("host-150", 150), Pair("host-249", 249),
                                        Pair("host-5", 5)));
  EXPECT_EQ(r->series, 250);
  EXPECT_EQ(r->unmatched, 247);
  std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 3u);  // 0-99, 100-199, 200-299 (50 rows)
  EXPECT_EQ(IntField(requests[1].body, "from"), 100);
  EXPECT_EQ(IntField(requests[2].body, "to"), 299);
  EXPECT_EQ(source->requests_sent(), 3);
}

TEST_F(SysdigSourceTest, ErrorsAreDecodedFromTheBody) {
  struct Case {
    int status;
    std::string body;
    absl::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {401, R"({"errors":[{"message":"Bad credentials","reason":"Unauthorized"}]})",
       absl::StatusCode::kPermissionDenied,
       "metric http_time: query failed (HTTP 401): Bad credentials (Unauthorized)"},
      {400, R"({"message":"Metric 'net.http.request.tme' not found"})",
       absl::StatusCode::kInvalidArgument,
       "metric http_time: query failed (HTTP 400): Metric "
       "'net.http.request.tme' not found"},
      {422,
       R"({"errors":[{"message":"a","reason":"x"},{"message":"b"}]})",
       absl::StatusCode::kInvalidArgument,
       "metric http_time: query failed (HTTP 422): a (x); b"},
      {503, "<html>down</html>", absl::StatusCode::kUnavailable,
       "metric http_time: query failed (HTTP 503): <html>down</html>"},
      {200, "not json", absl::StatusCode::kUnavailable,
       "metric http_time: malformed response"},
      {200, R"({"start":1})", absl::StatusCode::kUnavailable,
       "metric http_time: response has no \"data\""},
  };
  auto source = Source();
  NodeSet nodes(std::vector<NodeAddresses>{{"n1", {}}});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    server_->SetAnswer(c.status, c.body);
    absl::StatusOr<FetchResult> r = source->Fetch(Metric(), nodes, absl::Seconds(5));
    EXPECT_EQ(r.status().code(), c.code) << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message));
  }
}

// An answer over backend.maxResponseBytes is refused, the error naming the
// setting.
TEST_F(SysdigSourceTest, AnswersOverMaxResponseBytesAreRefused) {
  backend_.max_response_bytes = 1 << 20;
  const std::string chunk(64 << 10, ' ');  // JSON whitespace: 4 MiB in all
  server_->SetHandler([chunk](const RecordedRequest&) {
    return HttpAnswer{.body = chunk, .repeat = 64};
  });
  NodeSet nodes(std::vector<NodeAddresses>{{"n1", {}}});
  absl::StatusOr<FetchResult> r =
      Source()->Fetch(Metric(), nodes, absl::Seconds(30));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted)
      << r.status();
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("metric http_time: the answer is larger than 1048576 "
                        "bytes, the most backend.maxResponseBytes allows"));
}

}  // namespace
}  // namespace ms::metrics
