// TestHttpServer: a loopback HTTP/1.1 server with programmable answers.
//
// For tests of clients whose backend cannot run here (Sysdig's data API) or
// must misbehave on demand (a 401, a scalar result, a broken body). Listens
// on 127.0.0.1 on a free port; serves one request per connection
// (`Connection: close`, bodies framed by Content-Length), one connection at
// a time, on one thread. Every request is recorded so a test can assert the
// method, target, headers and body, and how many requests were made.
//
//   ASSERT_OK_AND_ASSIGN(auto server, TestHttpServer::Start());
//   server->SetHandler([](const RecordedRequest& r) {
//     return HttpAnswer{200, R"({"data":[]})"};
//   });
//   ... point a client at server->url() ...
//   EXPECT_EQ(server->requests()[0].Header("authorization"), "Bearer t");
//
// Thread-safe.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_HTTP_SERVER_H_
#define METRICS_SCHEDULER_TESTS_TESTING_HTTP_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace ms::testing {

struct RecordedRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, as sent: "/api/v1/query?query=up"
  std::vector<std::pair<std::string, std::string>> headers;  // names lowercased
  std::string body;

  // The path without the query string.
  std::string Path() const;
  // The value of header `name` (lowercase), or "" when absent.
  std::string Header(absl::string_view name) const;
};

struct HttpAnswer {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  // The body is sent this many times over, without being held whole.
  int64_t repeat = 1;
  // No Content-Length: the body ends when the connection closes, so the
  // client cannot know its size before reading it.
  bool unframed = false;
};

class TestHttpServer {
 public:
  using Handler = std::function<HttpAnswer(const RecordedRequest&)>;

  static absl::StatusOr<std::unique_ptr<TestHttpServer>> Start();
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  int port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:PORT"

  // Answers every request with `handler`'s result. Until set: 404.
  void SetHandler(Handler handler);
  // Answers every request with the same status and body.
  void SetAnswer(int status, std::string body);

  std::vector<RecordedRequest> requests() const;
  int request_count() const;
  void ClearRequests();

 private:
  TestHttpServer(int listen_fd, int port);
  void Serve();
  void HandleConnection(int fd);

  const int listen_fd_;
  const int port_;
  std::atomic<bool> stopping_{false};
  mutable absl::Mutex mu_;
  Handler handler_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_HTTP_SERVER_H_
