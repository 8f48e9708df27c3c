// PrometheusSource against a loopback server with canned answers: request
// shape, authentication, error mapping and joins. The real Prometheus is in
// prometheus_source_integration_test.cc.
#include "metrics/prometheus_source.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/url.h"
#include "tests/metrics/source_test_util.h"
#include "tests/testing/http_server.h"
#include "tests/testing/testenv.h"

namespace ms::metrics {
namespace {

// Sanitizers reserve terabytes of address space: no address-space limit can
// be set under them.
// (GCC defines __SANITIZE_*__; clang answers __has_feature.)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MS_SANITIZED 1
#endif
#endif
#ifdef MS_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;
using ms::testing::HttpAnswer;
using ms::testing::RecordedRequest;
using ms::testing::TestHttpServer;

constexpr char kTwoNodes[] = R"({"status":"success","data":{"resultType":"vector","result":[
  {"metric":{"node":"n1"},"value":[1700000000.5,"0.25"]},
  {"metric":{"node":"n2"},"value":[1700000000.5,"0.75"]}]}})";

MetricConfig Metric(const std::string& query) {
  MetricConfig m;
  m.name = "cpu";
  m.query = query;
  m.join.label = "node";
  return m;
}

class PrometheusSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestHttpServer>> s = TestHttpServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    server_->SetAnswer(200, kTwoNodes);
    backend_.url = server_->url();
  }
  std::unique_ptr<PrometheusSource> Source() {
    absl::StatusOr<std::unique_ptr<PrometheusSource>> s =
        PrometheusSource::Create(backend_);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }

  std::unique_ptr<TestHttpServer> server_;
  BackendConfig backend_;
  NodeSet nodes_{{{"n1", {"10.0.0.7"}}, {"n2", {"10.0.0.8"}}}};
};

TEST_F(PrometheusSourceTest, SendsOneGetWithQueryAndServerTimeout) {
  backend_.timeout = absl::Milliseconds(1500);
  auto source = Source();
  absl::StatusOr<FetchResult> r =
      source->Fetch(Metric("avg by (node) (rate(x[1m]))"), nodes_, absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("n1", 0.25), Pair("n2", 0.75)));
  EXPECT_EQ(r->by_node.at("n1").time_ms, 1700000000500);
  EXPECT_EQ(r->series, 2);
  EXPECT_EQ(r->unmatched, 0);
  ASSERT_EQ(server_->request_count(), 1);
  RecordedRequest req = server_->requests()[0];
  EXPECT_EQ(req.method, "GET");
  EXPECT_EQ(req.target,
            "/api/v1/query?query=avg%20by%20%28node%29%20%28rate%28x%5B1m%5D%29%29"
            "&timeout=1.5");
  EXPECT_EQ(req.Header("authorization"), "");
  EXPECT_EQ(source->requests_sent(), 1);
}

TEST_F(PrometheusSourceTest, TheShorterTimeoutWins) {
  auto source = Source();  // backend timeout 2 s
  ASSERT_TRUE(source->Fetch(Metric("up"), nodes_, absl::Milliseconds(250)).ok());
  EXPECT_EQ(server_->requests()[0].target, "/api/v1/query?query=up&timeout=0.25");
}

TEST_F(PrometheusSourceTest, BaseUrlWithPathPrefix) {
  backend_.url = server_->url() + "/prometheus/";
  auto source = Source();
  ASSERT_TRUE(source->Fetch(Metric("up"), nodes_, absl::Seconds(5)).ok());
  EXPECT_EQ(server_->requests()[0].Path(), "/prometheus/api/v1/query");
}

TEST_F(PrometheusSourceTest, LongQueriesArePosted) {
  std::string query = "sum by (node) (x{a=\"" + std::string(3000, 'y') + "\"})";
  auto source = Source();
  ASSERT_TRUE(source->Fetch(Metric(query), nodes_, absl::Seconds(5)).ok());
  RecordedRequest req = server_->requests()[0];
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.target, "/api/v1/query");
  EXPECT_EQ(req.Header("content-type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(req.body, absl::StrCat("query=", UrlEncode(query), "&timeout=2"));
}

TEST_F(PrometheusSourceTest, BearerTokenIsReadAgainWhenTheFileChanges) {
  TempFile token("old-token\n");
  backend_.token_file = token.path();
  auto source = Source();
  ASSERT_TRUE(source->Fetch(Metric("up"), nodes_, absl::Seconds(5)).ok());
  EXPECT_EQ(server_->requests()[0].Header("authorization"), "Bearer old-token");

  token.Write("rotated-token-2\n");
  EXPECT_TRUE(ms::testing::WaitFor([&] {
    EXPECT_TRUE(source->Fetch(Metric("up"), nodes_, absl::Seconds(5)).ok());
    return server_->requests().back().Header("authorization") ==
           "Bearer rotated-token-2";
  }));
}

TEST_F(PrometheusSourceTest, BasicAuth) {
  TempFile password("s3cret\n");
  backend_.basic_auth = {.username = "alice", .password_file = password.path()};
  auto source = Source();
  ASSERT_TRUE(source->Fetch(Metric("up"), nodes_, absl::Seconds(5)).ok());
  EXPECT_EQ(server_->requests()[0].Header("authorization"),
            "Basic " + absl::Base64Escape("alice:s3cret"));
}

// Extra headers (a tenant for Mimir, Cortex or Thanos) go with every
// request; one read from a file follows the file as it is rotated.
TEST_F(PrometheusSourceTest, ExtraHeadersAreSentAndAFileValueIsReadAgain) {
  TempFile tenant("tenant-a\n");
  backend_.headers = {{.name = "X-Scope-OrgID", .value_file = tenant.path()},
                      {.name = "X-Team", .value = "platform"}};
  auto source = Source();
  ASSERT_TRUE(source->Fetch(Metric("up"), nodes_, absl::Seconds(5)).ok());
  EXPECT_EQ(server_->requests()[0].Header("x-scope-orgid"), "tenant-a");
  EXPECT_EQ(server_->requests()[0].Header("x-team"), "platform");

  tenant.Write("tenant-b\n");
  EXPECT_TRUE(ms::testing::WaitFor([&] {
    EXPECT_TRUE(source->Fetch(Metric("up"), nodes_, absl::Seconds(5)).ok());
    return server_->requests().back().Header("x-scope-orgid") == "tenant-b";
  }));
  EXPECT_EQ(server_->requests().back().Header("x-team"), "platform");
}

// Restores an environment variable when the test ends.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// proxyURL carries the queries; the environment's http_proxy, which
// libcurl would follow by default, does not.
TEST_F(PrometheusSourceTest, OnlyAnExplicitProxyIsUsed) {
  absl::StatusOr<std::unique_ptr<TestHttpServer>> started =
      TestHttpServer::Start();
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<TestHttpServer> proxy = std::move(*started);
  proxy->SetAnswer(200, kTwoNodes);
  ScopedEnv env("http_proxy", proxy->url());
  ScopedEnv no_proxy("no_proxy", "");

  // The variable is in force: a client left to libcurl's default uses it.
  HttpClient plain;
  absl::StatusOr<HttpResponse> through =
      plain.Do({.url = server_->url() + "/api/v1/query?query=up"});
  ASSERT_TRUE(through.ok()) << through.status();
  ASSERT_EQ(proxy->requests().size(), 1u);
  EXPECT_EQ(server_->requests().size(), 0u);

  // The source ignores it...
  auto direct = Source();
  ASSERT_TRUE(direct->Fetch(Metric("up"), nodes_, absl::Seconds(5)).ok());
  EXPECT_EQ(server_->requests().size(), 1u);
  EXPECT_EQ(proxy->requests().size(), 1u);

  // ...and goes through the one it is given, asking it for the backend's
  // URL.
  backend_.proxy_url = proxy->url();
  auto proxied = Source();
  ASSERT_TRUE(proxied->Fetch(Metric("up"), nodes_, absl::Seconds(5)).ok());
  EXPECT_EQ(server_->requests().size(), 1u);
  ASSERT_EQ(proxy->requests().size(), 2u);
  EXPECT_THAT(proxy->requests()[1].target,
              StartsWith(server_->url() + "/api/v1/query?query=up"));
}

TEST_F(PrometheusSourceTest, MissingTokenFileFailsAtCreate) {
  backend_.token_file = "/nonexistent/token";
  EXPECT_EQ(PrometheusSource::Create(backend_).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(PrometheusSourceTest, ErrorsFollowTheSourceContract) {
  struct Case {
    int status;
    std::string body;
    absl::StatusCode code;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {401, "Unauthorized", absl::StatusCode::kPermissionDenied, "HTTP 401"},
      {403, R"({"message":"token expired"})", absl::StatusCode::kPermissionDenied,
       "token expired"},
      {400, R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})",
       absl::StatusCode::kInvalidArgument, "metric cpu: query failed (HTTP 400, "
       "bad_data): parse error at char 3"},
      {200, R"({"status":"success","data":{"resultType":"scalar","result":[1,"2"]}})",
       absl::StatusCode::kInvalidArgument,
       "metric cpu: the query returned a scalar result"},
      {503, "overloaded", absl::StatusCode::kUnavailable, "overloaded"},
      {404, "404 page not found", absl::StatusCode::kFailedPrecondition,
       "HTTP 404"},
  };
  auto source = Source();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    server_->SetAnswer(c.status, c.body);
    absl::StatusOr<FetchResult> r = source->Fetch(Metric("up"), nodes_, absl::Seconds(5));
    EXPECT_EQ(r.status().code(), c.code) << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message_part));
  }
}

TEST_F(PrometheusSourceTest, ConnectionRefusedIsUnavailable) {
  std::string url = server_->url();
  server_.reset();
  backend_.url = url;
  auto source = Source();
  absl::StatusOr<FetchResult> r = source->Fetch(Metric("up"), nodes_, absl::Seconds(5));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_THAT(std::string(r.status().message()), StartsWith("metric cpu: "));
}

TEST_F(PrometheusSourceTest, JoinsByInstanceAddressAndReportsUnmatchedSeries) {
  server_->SetAnswer(200, R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"instance":"10.0.0.7:9100","job":"node"},"value":[1700000000,"1"]},
    {"metric":{"instance":"10.0.0.8:9100","job":"node"},"value":[1700000000,"2"]},
    {"metric":{"instance":"10.0.0.8:9101","job":"node"},"value":[1700000000,"3"]},
    {"metric":{"instance":"10.9.9.9:9100","job":"node"},"value":[1700000000,"4"]},
    {"metric":{"job":"node"},"value":[1700000000,"5"]}]}})");
  MetricConfig metric = Metric("x");
  metric.join = {.label = "instance", .match = JoinMatch::kAddress};
  auto source = Source();
  absl::StatusOr<FetchResult> r = source->Fetch(metric, nodes_, absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("n1", 1), Pair("n2", 2)));
  EXPECT_EQ(r->series, 5);
  EXPECT_EQ(r->duplicates, 1);
  EXPECT_EQ(r->unmatched, 2);
  EXPECT_THAT(r->unmatched_examples,
              ElementsAre(R"({instance="10.9.9.9:9100", job="node"})",
                          R"({job="node"})"));
}

// node-exporter-shaped series with a `node` label naming one node only.
constexpr char kInstanceSeries[] =
    R"({"status":"success","data":{"resultType":"vector","result":[
  {"metric":{"instance":"10.0.0.7:9100","node":"n1"},"value":[1700000000,"1"]},
  {"metric":{"instance":"10.0.0.8:9100","node":"elsewhere"},"value":[1700000000,"2"]}]}})";

// Without `join` the source joins by the candidate naming the most nodes,
// and says which.
TEST_F(PrometheusSourceTest, AutomaticJoinIsDetectedOnTheAnswer) {
  server_->SetAnswer(200, kInstanceSeries);
  MetricConfig metric = Metric("x");
  metric.join.automatic = true;
  absl::StatusOr<FetchResult> r =
      Source()->Fetch(metric, nodes_, absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->detected_join, "instance (address)");
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("n1", 1), Pair("n2", 2)));
  EXPECT_EQ(r->series, 2);
  EXPECT_EQ(r->unmatched, 0);
}

// A configured join is used as written, even where another would name
// more nodes.
TEST_F(PrometheusSourceTest, ConfiguredJoinIsNeverReplaced) {
  server_->SetAnswer(200, kInstanceSeries);
  absl::StatusOr<FetchResult> r =
      Source()->Fetch(Metric("x"), nodes_, absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->detected_join, "");
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("n1", 1)));
  EXPECT_EQ(r->unmatched, 1);
  EXPECT_THAT(r->unmatched_examples,
              ElementsAre(R"({instance="10.0.0.8:9100", node="elsewhere"})"));
}

}  // namespace
}  // namespace ms::metrics

namespace ms::metrics {
namespace {

// An answer over backend.maxResponseBytes is refused as it arrives, whether
// its size is announced (Content-Length) or not: the metric falls back
// instead of the scheduler holding it.
TEST_F(PrometheusSourceTest, AnswersOverMaxResponseBytesAreRefused) {
  backend_.max_response_bytes = 1 << 20;
  const std::string chunk(64 << 10, ' ');  // JSON whitespace: 4 MiB in all
  for (bool unframed : {false, true}) {
    SCOPED_TRACE(unframed ? "unframed" : "with Content-Length");
    server_->SetHandler([chunk, unframed](const RecordedRequest&) {
      return HttpAnswer{.body = chunk, .repeat = 64, .unframed = unframed};
    });
    absl::StatusOr<FetchResult> r =
        Source()->Fetch(Metric("up"), nodes_, absl::Seconds(30));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted)
        << r.status();
    EXPECT_THAT(r.status().message(),
                HasSubstr("larger than 1048576 bytes, the most "
                          "backend.maxResponseBytes allows"));
  }
  // An answer within the cap is read as before.
  server_->SetHandler([](const RecordedRequest&) {
    return HttpAnswer{.body = kTwoNodes, .unframed = true};
  });
  absl::StatusOr<FetchResult> r =
      Source()->Fetch(Metric("up"), nodes_, absl::Seconds(30));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ValuesOf(*r).size(), 2u);
}

// The process's address space now, in bytes.
int64_t AddressSpaceBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmSize:", 0) == 0) {
      return std::stoll(line.substr(7)) * 1024;  // "VmSize:  1234 kB"
    }
  }
  return -1;
}

// Fetches an endless answer in a child process whose address space may
// grow by no more than the Deployment's memory limit (256Mi); returns the
// child's wait status. The child exits 0 when the fetch failed with
// ResourceExhausted, 1 on any other result, kOutOfMemory when it ran out.
constexpr int kOutOfMemory = 4;
int FetchInLimitedChild(const BackendConfig& backend, const NodeSet& nodes) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!kSanitized) {
      const rlim_t limit = AddressSpaceBytes() + (int64_t{256} << 20);
      struct rlimit rl = {limit, limit};
      if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(2);
    }
    try {
      absl::StatusOr<std::unique_ptr<PrometheusSource>> source =
          PrometheusSource::Create(backend);
      if (!source.ok()) _exit(3);
      MetricConfig metric = Metric("up");
      absl::StatusOr<FetchResult> r =
          (*source)->Fetch(metric, nodes, absl::Seconds(120));
      _exit(absl::IsResourceExhausted(r.status()) ? 0 : 1);
    } catch (const std::bad_alloc&) {
      _exit(kOutOfMemory);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// Under a memory limit like the manifests', an answer far larger than the
// limit costs the scheduler no more than backend.maxResponseBytes; without
// the cap the same answer kills the process (the control, where the limit
// can be set).
TEST_F(PrometheusSourceTest, AHugeAnswerFitsInTheMemoryLimit) {
  const std::string chunk(1 << 20, ' ');
  // The handler owns its copy: the server thread may still be writing when
  // the child has gone and this body returns.
  server_->SetHandler([chunk](const RecordedRequest&) {
    return HttpAnswer{.body = chunk, .repeat = 2048, .unframed = true};
  });
  ASSERT_EQ(backend_.max_response_bytes, int64_t{64} << 20);  // the default
  int status = FetchInLimitedChild(backend_, nodes_);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal "
                                 << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);

  if (kSanitized) return;  // the limit could not be set: no control
  backend_.max_response_bytes = int64_t{1} << 40;  // in effect none
  status = FetchInLimitedChild(backend_, nodes_);
  EXPECT_TRUE(WIFSIGNALED(status) ||
              (WIFEXITED(status) && WEXITSTATUS(status) == kOutOfMemory))
      << "the control did not run out of memory: status " << status;
}

}  // namespace
}  // namespace ms::metrics
