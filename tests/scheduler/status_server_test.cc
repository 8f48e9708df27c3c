// StatusServer (scheduler/serve/status_server.h): what each port serves. The
// plain port serves every endpoint unless the secure port is on, when it
// keeps the probes and sends /metrics to the secure port with a 404; the
// secure port serves /metrics to a token or client certificate its
// reviewer allows. How connections are served under ConnectionLimits:
// slow clients cannot keep a probe from being answered, heads are bounded.
// Real servers on loopback ports, raw sockets for the slow clients, a fake
// AccessReviewer.
#include "scheduler/serve/status_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "common/http.h"
#include "common/token_file.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "scheduler/serve/delegated_auth.h"
#include "scheduler/serve/serving_cert.h"
#include "scheduler/telemetry/self_metrics.h"
#include "tests/testing/certificates.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::WaitFor;

// Authenticates "reader-token" as the user "reader", who may get /metrics,
// as may "client" (the CN of the test client certificate). Counts the
// TokenReviews.
class OneReaderReviewer final : public AccessReviewer {
 public:
  absl::StatusOr<kube::TokenReview> ReviewToken(
      const std::string& token) override {
    ++token_reviews;
    if (token != "reader-token") return kube::TokenReview{.error = "unknown"};
    return kube::TokenReview{.authenticated = true,
                             .user = {.username = "reader"}};
  }
  absl::StatusOr<kube::AccessReview> ReviewAccess(
      const kube::NonResourceAccess& access) override {
    return kube::AccessReview{
        .allowed = (access.user.username == "reader" ||
                    access.user.username == "client") &&
                   access.verb == "get" && access.path == "/metrics"};
  }
  std::atomic<int> token_reviews{0};
};

// A client that sends a request's head a byte at a time, never ending it,
// over a raw loopback connection.
class Trickler {
 public:
  explicit Trickler(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address),
                           sizeof address) == 0;
    Send("GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
  }
  ~Trickler() { ::close(fd_); }
  Trickler(const Trickler&) = delete;
  Trickler& operator=(const Trickler&) = delete;

  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Connected and unanswered: the server has neither answered nor closed
  // (nothing to read, no end), and a byte can still be sent.
  bool HeldOpen() {
    char byte;
    ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && Send("a");
  }
  // Whether the server has closed the connection, without an answer.
  bool Closed() {
    char byte;
    ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }
  // What the server sends until it closes the connection, waiting up to
  // `timeout` for each part; "(open)" at the end when it did not close.
  std::string ReadToClose(absl::Duration timeout) {
    std::string out;
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(
                            timeout))) <= 0) {
        return out + "(open)";
      }
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return out;
      if (n > 0) out.append(buf, n);
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// Tricklers that each send another header byte every 100 ms, from a thread
// of their own, until destroyed.
class Tricklers {
 public:
  Tricklers(int port, int count) {
    for (int i = 0; i < count; ++i) {
      all_.push_back(std::make_unique<Trickler>(port));
    }
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        for (auto& t : all_) t->Send("a");
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  ~Tricklers() { Pause(); }
  // Stops sending, so that the test may look at each.
  void Pause() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::vector<std::unique_ptr<Trickler>>& all() { return all_; }

 private:
  std::vector<std::unique_ptr<Trickler>> all_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The raw answer to `request` sent whole on a new connection, read until
// the server closes it (or 30 s pass).
std::string RawExchange(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) !=
      0) {
    ::close(fd);
    return "";
  }
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent,
                       MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += n;
  }
  std::string answer;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 30000) <= 0) break;
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    answer.append(buf, n);
  }
  ::close(fd);
  return answer;
}

// One server whose registry holds a counter, to recognise its rendering.
class StatusServerTest : public ::testing::Test {
 protected:
  StatusServerTest() {
    registry_.AddCounter("status_test_total", "A counter of the test.")
        .With({})
        .Inc();
  }

  // GET http://127.0.0.1:port`path`: its status, and its body in *body.
  // A generous timeout: the tests bound no duration.
  static int Get(int port, const std::string& path, std::string* body) {
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(30);
    client.set_read_timeout(30);
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
  absl::StatusOr<int> secure = status_.StartSecure(
      "127.0.0.1:0", TlsServing{.certificate = *cert}, auth_);
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

// Slow clients cannot take the port: 32 connections trickling a header
// byte every 100 ms (cpp-httplib's pool of 8 threads, each held by one of
// them, left /livez unanswered for as long as they kept trickling). The
// probe is answered while every one of them is still connected and
// unanswered.
TEST_F(StatusServerTest, ProbeAnsweredWhileThirtyTwoClientsTrickleHeaders) {
  // The default limits but a header_timeout that cannot end the tricklers
  // before they are looked at, however loaded the machine.
  ConnectionLimits limits;
  limits.header_timeout = absl::Minutes(10);
  absl::StatusOr<int> port =
      status_.Start("127.0.0.1:0", PlainPort::All(), limits);
  ASSERT_TRUE(port.ok()) << port.status();
  Tricklers slow(*port, 32);
  for (auto& t : slow.all()) ASSERT_TRUE(t->connected());
  // Every trickler has been accepted and has a thread of the server's, not
  // just a place in the listen backlog.
  ASSERT_TRUE(WaitFor([&] { return status_.ServedConnections() == 32; }))
      << status_.ServedConnections() << " served";

  std::string body;
  const absl::Time start = absl::Now();
  EXPECT_EQ(Get(*port, "/livez", &body), 200);
  EXPECT_EQ(body, "ok");
  LOG(INFO) << "/livez answered in " << absl::Now() - start
            << " beside 32 trickling connections";
  slow.Pause();
  int held = 0;
  for (auto& t : slow.all()) held += t->HeldOpen() ? 1 : 0;
  EXPECT_EQ(held, 32) << "every trickler is still connected and unanswered";
}

// At the connection limit, a new connection takes the place of the one
// that has waited longest on its client: with room for 4, 32 tricklers
// leave at most 4 of them connected, and a probe that comes once they are
// all accepted is still answered (it displaces the oldest of those four).
TEST_F(StatusServerTest, AtTheConnectionLimitTheSlowestMakesRoom) {
  ConnectionLimits limits;
  limits.max_connections = 4;
  absl::StatusOr<int> port =
      status_.Start("127.0.0.1:0", PlainPort::All(), limits);
  ASSERT_TRUE(port.ok()) << port.status();
  Tricklers slow(*port, 32);
  // Every trickler is accepted: the displaced ones are closed without an
  // answer, at most 4 remain.
  int closed = 0;
  EXPECT_TRUE(WaitFor([&] {
    closed = 0;
    for (auto& t : slow.all()) closed += t->Closed() ? 1 : 0;
    return closed >= 28;
  })) << closed << " closed";
  std::string body;
  EXPECT_EQ(Get(*port, "/livez", &body), 200);
  EXPECT_EQ(body, "ok");
  slow.Pause();
}

// A head that does not arrive whole within header_timeout is answered 408
// and closed, however steadily its bytes come.
TEST_F(StatusServerTest, AHeadThatKeepsTricklingIsClosed) {
  ConnectionLimits limits;
  limits.header_timeout = absl::Milliseconds(300);
  absl::StatusOr<int> port =
      status_.Start("127.0.0.1:0", PlainPort::All(), limits);
  ASSERT_TRUE(port.ok()) << port.status();
  Tricklers slow(*port, 1);
  const std::string answer = slow.all()[0]->ReadToClose(absl::Seconds(30));
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 408 ")) << answer;
  EXPECT_TRUE(absl::EndsWith(
      answer, "the request line and headers did not arrive within 300ms\n"))
      << answer;
  std::string body;
  EXPECT_EQ(Get(*port, "/livez", &body), 200);
}

// The request line and headers together are capped at max_header_bytes
// (cpp-httplib caps each line only, not their number): one byte over is
// answered 431 naming the limit, in the headers or in the request line.
TEST_F(StatusServerTest, HeadsOverTheCapAreRefusedWith431) {
  absl::StatusOr<int> port = status_.Start("127.0.0.1:0");
  ASSERT_TRUE(port.ok()) << port.status();
  const size_t cap = ConnectionLimits().max_header_bytes;
  // Exactly cap + 1 bytes, all of which the server reads before it stops:
  // nothing left unread, so its close does not reset the answer away.
  std::string headers = "GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  while (headers.size() + 1000 < cap) {
    headers += "X-Pad: " + std::string(990, 'a') + "\r\n";
  }
  headers += std::string(cap + 1 - headers.size(), 'b');
  ASSERT_EQ(headers.size(), cap + 1);
  const std::string limit_line =
      absl::StrCat("request line and headers over ", cap, " bytes\n");
  std::string answer = RawExchange(*port, headers);
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 431 ")) << answer;
  EXPECT_TRUE(absl::EndsWith(answer, limit_line)) << answer;

  std::string line = "GET /" + std::string(cap - 4, 'a');
  ASSERT_EQ(line.size(), cap + 1);
  answer = RawExchange(*port, line);
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 431 ")) << answer;
  EXPECT_TRUE(absl::EndsWith(answer, limit_line)) << answer;

  // Under the cap, many headers are fine.
  std::string fine = "GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 20; ++i) {
    fine += "X-Pad: " + std::string(990, 'a') + "\r\n";
  }
  fine += "Connection: close\r\n\r\n";
  answer = RawExchange(*port, fine);
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 200 ")) << answer;
}

// The secure port under a flood of made-up bearer tokens: each one would
// cost a TokenReview; beyond the budget they are refused with 429 unasked,
// while a token already authenticated still reads /metrics.
TEST_F(StatusServerTest, MadeUpTokensCostABoundedNumberOfTokenReviews) {
  absl::StatusOr<ServingCertificate> cert =
      SelfSignedCertificate({"127.0.0.1"}, absl::Now());
  ASSERT_TRUE(cert.ok()) << cert.status();
  FakeClock clock;
  DelegatedAuth auth(reviewer_, clock);
  // Declared after the auth it uses, so stopped before it goes.
  StatusServer server(registry_, [] { return true; },
                      [] { return std::vector<std::string>(); });
  absl::StatusOr<int> secure = server.StartSecure(
      "127.0.0.1:0", TlsServing{.certificate = *cert}, auth);
  ASSERT_TRUE(secure.ok()) << secure.status();
  HttpClient https(TlsOptions{.ca_pem = cert->cert_pem});
  auto get = [&](const std::string& token) -> long {  // NOLINT
    absl::StatusOr<HttpResponse> r = https.Do(
        {.url = absl::StrCat("https://127.0.0.1:", *secure, "/metrics"),
         .headers = {{"Authorization", "Bearer " + token}},
         .timeout = absl::Seconds(30)});
    return r.ok() ? r->status : 0;
  };
  ASSERT_EQ(get("reader-token"), 200);
  ASSERT_EQ(reviewer_.token_reviews.load(), 1);
  // The reader's cache entry expires; the flood spends the budget.
  clock.Advance(absl::Seconds(11));
  int unauthenticated = 0, throttled = 0;
  for (int i = 0; i < 1000; ++i) {
    long status = get(absl::StrCat("made-up-", i, "-", std::rand()));  // NOLINT
    unauthenticated += status == 401;
    throttled += status == 429;
  }
  EXPECT_EQ(unauthenticated + throttled, 1000);
  const int burst = DelegatedAuthOptions().new_token_review_burst;
  EXPECT_EQ(reviewer_.token_reviews.load(), 1 + burst);
  EXPECT_EQ(throttled, 1000 - burst);
  // A known token is reviewed again outside the budget.
  EXPECT_EQ(get("reader-token"), 200);
  EXPECT_EQ(reviewer_.token_reviews.load(), 2 + burst);
}

// With a client CA, a client certificate it signed is an identity of its
// own (CN "client"), authorised like a token's user; one from another CA
// fails the handshake; no certificate leaves tokens working.
TEST_F(StatusServerTest, ClientCertificatesSignedByTheClientCa) {
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/status-server-certs-", getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  absl::StatusOr<testing::TestCertificates> certs =
      testing::MakeTestCertificates(dir);
  ASSERT_TRUE(certs.ok()) << certs.status();
  absl::StatusOr<std::string> cert = ReadFile(certs->server_cert);
  absl::StatusOr<std::string> key = ReadFile(certs->server_key);
  absl::StatusOr<std::string> ca = ReadFile(certs->ca);
  ASSERT_TRUE(cert.ok() && key.ok() && ca.ok());
  absl::StatusOr<int> secure = status_.StartSecure(
      "127.0.0.1:0",
      TlsServing{.certificate = {.cert_pem = *cert, .key_pem = *key},
                 .client_ca_pem = *ca},
      auth_);
  ASSERT_TRUE(secure.ok()) << secure.status();
  const std::string url =
      absl::StrCat("https://127.0.0.1:", *secure, "/metrics");

  HttpClient client(TlsOptions{.ca_file = certs->ca,
                               .client_cert_file = certs->client_cert,
                               .client_key_file = certs->client_key});
  absl::StatusOr<HttpResponse> r =
      client.Do({.url = url, .timeout = absl::Seconds(30)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(reviewer_.token_reviews.load(), 0);

  HttpClient stranger(TlsOptions{.ca_file = certs->ca,
                                 .client_cert_file = certs->stranger_cert,
                                 .client_key_file = certs->stranger_key});
  EXPECT_FALSE(stranger.Do({.url = url, .timeout = absl::Seconds(30)}).ok());

  HttpClient anonymous(TlsOptions{.ca_file = certs->ca});
  r = anonymous.Do({.url = url, .timeout = absl::Seconds(30)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 401);
  r = anonymous.Do({.url = url,
                    .headers = {{"Authorization", "Bearer reader-token"}},
                    .timeout = absl::Seconds(30)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
}

}  // namespace
}  // namespace ms
