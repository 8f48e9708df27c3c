#include "scheduler/serve/status_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstring>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "glog/logging.h"

namespace ms {
namespace {

using Steady = std::chrono::steady_clock;

Steady::duration ToSteady(absl::Duration d) {
  return std::chrono::duration_cast<Steady::duration>(
      absl::ToChronoNanoseconds(d));
}

// Puts the certificate chain and key into a TLS server context, TLS 1.2 at
// least. The certificate was validated beforehand.
bool LoadIntoContext(const ServingCertificate& certificate, SSL_CTX& ctx) {
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  BIO* cert_bio = BIO_new_mem_buf(certificate.cert_pem.data(),
                                  static_cast<int>(certificate.cert_pem.size()));
  bool ok = false;
  if (X509* leaf = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr)) {
    ok = SSL_CTX_use_certificate(&ctx, leaf) == 1;
    X509_free(leaf);
    // The rest of the file: intermediates, sent with the leaf.
    while (ok) {
      X509* extra = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
      if (extra == nullptr) break;
      if (SSL_CTX_add_extra_chain_cert(&ctx, extra) != 1) {
        X509_free(extra);
        ok = false;
      }
    }
  }
  BIO_free(cert_bio);
  BIO* key_bio = BIO_new_mem_buf(certificate.key_pem.data(),
                                 static_cast<int>(certificate.key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  ok = ok && key != nullptr && SSL_CTX_use_PrivateKey(&ctx, key) == 1 &&
       SSL_CTX_check_private_key(&ctx) == 1;
  EVP_PKEY_free(key);
  ERR_clear_error();  // the end of the chain reads as an error
  return ok;
}

// The certificates of a PEM bundle, each passed to `use`; how many.
int ForEachCertificate(const std::string& pem,
                       const std::function<void(X509*)>& use) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    use(cert);
    X509_free(cert);
    ++count;
  }
  BIO_free(bio);
  ERR_clear_error();  // the end of the bundle reads as an error
  return count;
}

// Client certificates signed by `ca_pem` are asked for and verified, for
// client auth: a certificate sent that does not verify fails the
// handshake; none sent is let through (then a bearer token may do).
bool TrustClientCa(const std::string& ca_pem, SSL_CTX& ctx) {
  X509_STORE* store = SSL_CTX_get_cert_store(&ctx);
  STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
  bool ok = true;
  const int count = ForEachCertificate(ca_pem, [&](X509* ca) {
    ok = ok && X509_STORE_add_cert(store, ca) == 1;
    sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(ca)));
  });
  // The CAs named in the CertificateRequest, by which a client (Go's
  // crypto/tls among them) picks the certificate it sends.
  SSL_CTX_set_client_CA_list(&ctx, names);
  SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_purpose(&ctx, X509_PURPOSE_SSL_CLIENT);
  // Without one, a client resuming a session fails its handshake once
  // client certificates are verified.
  static constexpr unsigned char kContext[] = "metrics-scheduler";
  SSL_CTX_set_session_id_context(&ctx, kContext, sizeof(kContext) - 1);
  return ok && count > 0;
}

// The user of the client certificate verified on `ssl`, as kube's x509
// authenticator reads it: the subject's CN, its Os as groups, and
// system:authenticated as kube's delegating authenticator adds. None
// without a verified certificate or without a CN.
std::optional<kube::UserInfo> CertificateUser(const SSL* ssl) {
  if (ssl == nullptr) return std::nullopt;
  X509* peer = SSL_get0_peer_certificate(ssl);
  if (peer == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) {
    return std::nullopt;
  }
  X509_NAME* subject = X509_get_subject_name(peer);
  auto text = [&](int index) {
    ASN1_STRING* data =
        X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
    unsigned char* utf8 = nullptr;
    int size = ASN1_STRING_to_UTF8(&utf8, data);
    std::string out;
    if (size > 0) out.assign(reinterpret_cast<char*>(utf8), size);
    OPENSSL_free(utf8);
    return out;
  };
  kube::UserInfo user;
  // Go's pkix.Name keeps the last CN.
  for (int i = -1;
       (i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) >= 0;) {
    user.username = text(i);
  }
  if (user.username.empty()) return std::nullopt;
  for (int i = -1; (i = X509_NAME_get_index_by_NID(
                        subject, NID_organizationName, i)) >= 0;) {
    user.groups.push_back(text(i));
  }
  if (std::find(user.groups.begin(), user.groups.end(),
                "system:authenticated") == user.groups.end()) {
    user.groups.push_back("system:authenticated");
  }
  return user;
}

// Whether a request carries a body (which cpp-httplib reads only once the
// pre-routing handler let the request through).
bool HasBody(const httplib::Request& req) {
  const std::string length = req.get_header_value("Content-Length");
  return (!length.empty() && length != "0") ||
         req.has_header("Transfer-Encoding");
}

void AddressOf(const sockaddr_storage& address, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {0};
  port = 0;
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    port = ntohs(in->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    port = ntohs(in6->sin6_port);
  }
  ip = text;
}

// One accepted connection, as its server's table holds it.
struct Connection {
  int fd = -1;
  // When its current request began to be awaited: at accept, or when the
  // previous answer was sent. The oldest waiting one is displaced first.
  Steady::time_point since;
  // Blocked on its client: in a read, a write or the TLS handshake.
  bool waiting = false;
  // Awaiting or reading a request's head (or the TLS handshake): no
  // handler runs.
  bool in_head = true;
  // Shut down to make room for a new connection.
  bool displaced = false;
};

class ConnectionStream;

// The stream of the request the current thread serves, for the error
// handler (a thread serves one connection).
thread_local ConnectionStream* current_stream = nullptr;
// Set while a connection is handed to the accepting thread because no
// thread could be made for it: it is closed at once.
thread_local bool refuse_here = false;

class GuardedServer;

// cpp-httplib's TaskQueue, as a thread per connection: enqueue() gets
// "serve this accepted socket" and starts a thread for it; shutdown()
// closes every connection and waits for their threads.
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(GuardedServer& server)
      : server_(server), live_(std::make_shared<Live>()) {}

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  struct Live {
    absl::Mutex mu;
    int threads ABSL_GUARDED_BY(mu) = 0;
  };
  GuardedServer& server_;
  // Shared with the threads, which end after this queue may be gone.
  const std::shared_ptr<Live> live_;
};

// A cpp-httplib server whose connections are served by
// process_and_close_socket below (see "Connections" in the header).
class GuardedServer final : public httplib::Server {
 public:
  GuardedServer(const ConnectionLimits& limits, SSL_CTX* ctx);
  ~GuardedServer() override;

  const ConnectionLimits& limits() const { return limits_; }
  int served() {
    absl::MutexLock lock(&mu_);
    return active_;
  }

  // After the bind: a backlog of SOMAXCONN.
  void WidenBacklog() { ::listen(svr_sock_, SOMAXCONN); }
  // Returns once the accept loop runs.
  void WaitAccepting() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&accepting_));
  }

  // Whether `c` may be served: false when stopping, or at the limit with
  // no connection waiting on its client to displace.
  bool Open(Connection* c);
  void Close(Connection* c);
  void SetWaiting(Connection* c, bool waiting) {
    absl::MutexLock lock(&mu_);
    c->waiting = waiting;
  }
  void SetInHead(Connection* c, bool in_head) {
    absl::MutexLock lock(&mu_);
    c->in_head = in_head;
  }
  void Since(Connection* c, Steady::time_point since) {
    absl::MutexLock lock(&mu_);
    c->since = since;
  }
  bool stopping() {
    absl::MutexLock lock(&mu_);
    return stopping_;
  }
  // Stops opening connections and shuts down the open ones.
  void CloseAll();

 private:
  bool process_and_close_socket(socket_t sock) override;
  // Serves the requests of `c`; whether one was served.
  bool Serve(Connection& c);

  const ConnectionLimits limits_;
  SSL_CTX* const ctx_;  // owned; null: plain HTTP
  absl::Mutex mu_;
  bool accepting_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::set<Connection*> open_ ABSL_GUARDED_BY(mu_);
  int active_ ABSL_GUARDED_BY(mu_) = 0;  // open and not displaced
};

// One connection's bytes, plain or TLS, under the limits: every wait is a
// poll() with a deadline, during which the connection counts as waiting
// on its client.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(GuardedServer& server, Connection& connection)
      : server_(server),
        limits_(server.limits()),
        connection_(connection),
        fd_(connection.fd) {}
  ~ConnectionStream() override {
    if (ssl_ != nullptr) SSL_free(ssl_);
  }

  // The TLS handshake, within the first request's head deadline.
  bool Handshake(SSL_CTX* ctx) {
    ssl_ = SSL_new(ctx);
    if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) return false;
    for (;;) {
      ERR_clear_error();
      int r = SSL_accept(ssl_);
      if (r == 1) return true;
      int error = SSL_get_error(ssl_, r);
      if ((error == SSL_ERROR_WANT_READ && Wait(POLLIN, head_deadline_)) ||
          (error == SSL_ERROR_WANT_WRITE && Wait(POLLOUT, head_deadline_))) {
        continue;
      }
      VLOG(2) << "TLS handshake failed: " << OpenSslErrors();
      return false;
    }
  }

  // A request is awaited from `start`: its head until header_timeout, the
  // rest until request_timeout.
  void BeginRequest(Steady::time_point start) {
    head_deadline_ = start + ToSteady(limits_.header_timeout);
    request_deadline_ = start + ToSteady(limits_.request_timeout);
    in_head_ = true;
    server_.SetInHead(&connection_, true);
    head_bytes_ = 0;
    head_too_large_ = false;
    head_timed_out_ = false;
    wrote_ = false;
    close_after_answer_ = false;
  }
  // The head has been read (cpp-httplib's setup_request).
  void EndHead() {
    in_head_ = false;
    server_.SetInHead(&connection_, false);
  }
  // Whether a next request begins before `deadline`.
  bool AwaitRequest(Steady::time_point deadline) {
    if (begin_ < end_ || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) {
      return true;
    }
    return Wait(POLLIN, deadline);
  }
  // Ends TLS with a close_notify, when the connection is in a state to.
  void Finish(bool clean) {
    if (ssl_ != nullptr && clean) {
      ERR_clear_error();
      SSL_shutdown(ssl_);
      ERR_clear_error();
    }
  }
  bool head_too_large() const { return head_too_large_; }
  // A wait for the head ran past header_timeout.
  bool head_timed_out() const { return head_timed_out_; }
  bool wrote() const { return wrote_; }
  // The connection ends after this answer: its request was answered
  // without its body having been read (refused first), or was malformed.
  void CloseAfterAnswer() { close_after_answer_ = true; }
  bool close_after_answer() const { return close_after_answer_; }
  SSL* ssl() const { return ssl_; }

  bool is_readable() const override {
    if (begin_ < end_ || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) {
      return true;
    }
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
  bool is_writable() const override {
    pollfd p{fd_, POLLOUT, 0};
    return ::poll(&p, 1, 0) > 0;
  }

  ssize_t read(char* ptr, size_t size) override {
    if (size == 0) return 0;
    if (begin_ == end_) {
      ssize_t got = Receive(buffer_.data(), buffer_.size());
      if (got <= 0) return got;
      begin_ = 0;
      end_ = static_cast<size_t>(got);
    }
    size_t n = std::min(size, end_ - begin_);
    if (in_head_) {
      // cpp-httplib reads a head a byte at a time: the count is exact.
      if (head_bytes_ + n > static_cast<size_t>(limits_.max_header_bytes)) {
        head_too_large_ = true;
        return -1;
      }
      head_bytes_ += n;
    }
    std::memcpy(ptr, buffer_.data() + begin_, n);
    begin_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    size_t sent = 0;
    while (sent < size) {
      const size_t chunk = std::min<size_t>(size - sent, INT_MAX);
      short wait = 0;  // NOLINT(runtime/int)
      if (ssl_ != nullptr) {
        ERR_clear_error();
        int n = SSL_write(ssl_, ptr + sent, static_cast<int>(chunk));
        if (n > 0) {
          sent += n;
          continue;
        }
        int error = SSL_get_error(ssl_, n);
        if (error == SSL_ERROR_WANT_WRITE) wait = POLLOUT;
        if (error == SSL_ERROR_WANT_READ) wait = POLLIN;
      } else {
        ssize_t n = ::send(fd_, ptr + sent, chunk, MSG_NOSIGNAL);
        if (n > 0) {
          sent += n;
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) wait = POLLOUT;
      }
      if (wait == 0 || !Wait(wait, IoDeadline())) return -1;
    }
    wrote_ = true;
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage address{};
    socklen_t size = sizeof address;
    if (getpeername(fd_, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
      AddressOf(address, ip, port);
    }
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage address{};
    socklen_t size = sizeof address;
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
      AddressOf(address, ip, port);
    }
  }
  // cpp-httplib asks only to answer 500 to a socket its select() cannot
  // wait on; this stream waits with poll(), which can.
  socket_t socket() const override {
    return fd_ < FD_SETSIZE ? fd_ : INVALID_SOCKET;
  }

 private:
  // The deadline of a read: the head's while it is read, else the
  // request's or io_timeout from now, whichever is first.
  Steady::time_point ReadDeadline() const {
    return in_head_ ? head_deadline_ : IoDeadline();
  }
  Steady::time_point IoDeadline() const {
    return std::min(Steady::now() + ToSteady(limits_.io_timeout),
                    request_deadline_);
  }

  // Up to `size` bytes from the connection: > 0 bytes, 0 at its end, -1
  // on an error or when the deadline passed.
  ssize_t Receive(char* ptr, size_t size) {
    const Steady::time_point deadline = ReadDeadline();
    for (;;) {
      short wait = 0;  // NOLINT(runtime/int)
      if (ssl_ != nullptr) {
        ERR_clear_error();
        int n = SSL_read(ssl_, ptr, static_cast<int>(std::min<size_t>(
                                        size, INT_MAX)));
        if (n > 0) return n;
        int error = SSL_get_error(ssl_, n);
        if (error == SSL_ERROR_ZERO_RETURN) return 0;
        if (error == SSL_ERROR_WANT_READ) wait = POLLIN;
        if (error == SSL_ERROR_WANT_WRITE) wait = POLLOUT;
      } else {
        ssize_t n = ::recv(fd_, ptr, size, 0);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) wait = POLLIN;
      }
      if (wait == 0) return -1;
      if (!Wait(wait, deadline)) {
        head_timed_out_ = in_head_;
        return -1;
      }
    }
  }

  // Waits for `events` until `deadline`; false when it passed. A shutdown
  // of the socket (displaced, or the server stopping) ends the wait.
  bool Wait(short events, Steady::time_point deadline) {  // NOLINT
    server_.SetWaiting(&connection_, true);
    pollfd p{fd_, events, 0};
    int ready = 0;
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
          deadline - Steady::now());
      if (left.count() <= 0) break;
      ready = ::poll(
          &p, 1, static_cast<int>(std::min<int64_t>(left.count(), INT_MAX)));
      if (ready > 0 || (ready < 0 && errno != EINTR)) break;
      ready = 0;
    }
    server_.SetWaiting(&connection_, false);
    return ready > 0;
  }

  GuardedServer& server_;
  const ConnectionLimits& limits_;
  Connection& connection_;
  const int fd_;
  SSL* ssl_ = nullptr;
  std::array<char, 16 * 1024> buffer_;
  size_t begin_ = 0;
  size_t end_ = 0;
  Steady::time_point head_deadline_;
  Steady::time_point request_deadline_;
  bool in_head_ = true;
  size_t head_bytes_ = 0;
  bool head_too_large_ = false;
  bool head_timed_out_ = false;
  bool wrote_ = false;
  bool close_after_answer_ = false;
};

void ConnectionThreads::enqueue(std::function<void()> fn) {
  auto task = std::make_shared<std::function<void()>>(std::move(fn));
  {
    absl::MutexLock lock(&live_->mu);
    ++live_->threads;
  }
  try {
    std::thread([live = live_, task]() mutable {
      (*task)();
      task.reset();
      absl::MutexLock lock(&live->mu);
      --live->threads;
    }).detach();
  } catch (const std::system_error& e) {
    {
      absl::MutexLock lock(&live_->mu);
      --live_->threads;
    }
    LOG_EVERY_T(WARNING, 10)
        << "cannot start a thread for a connection, closing it: "
        << e.what();
    refuse_here = true;
    (*task)();
    refuse_here = false;
  }
}

void ConnectionThreads::shutdown() {
  server_.CloseAll();
  absl::MutexLock lock(&live_->mu);
  live_->mu.Await(absl::Condition(
      +[](int* threads) { return *threads == 0; }, &live_->threads));
}

GuardedServer::GuardedServer(const ConnectionLimits& limits, SSL_CTX* ctx)
    : limits_(limits), ctx_(ctx) {
  new_task_queue = [this] {
    absl::MutexLock lock(&mu_);
    accepting_ = true;
    return new ConnectionThreads(*this);
  };
  set_error_handler(HandlerWithResponse([this](const httplib::Request&,
                                               httplib::Response& res) {
    // A malformed request, or one whose body was not read: what follows
    // on the connection cannot be parsed, so it ends with the answer.
    const bool broken = res.status == 400 || res.status == 413 ||
                        res.status == 414 || res.status == 416;
    if (broken && current_stream != nullptr) {
      current_stream->CloseAfterAnswer();
      res.set_header("Connection", "close");
    }
    if (res.status == 400 && current_stream != nullptr &&
        current_stream->head_too_large()) {
      res.status = 431;
      res.set_content(absl::StrCat("request line and headers over ",
                                   limits_.max_header_bytes, " bytes\n"),
                      "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (res.status == 400 && current_stream != nullptr &&
        current_stream->head_timed_out()) {
      res.status = 408;
      res.set_content(
          absl::StrCat("the request line and headers did not arrive within ",
                       absl::FormatDuration(limits_.header_timeout), "\n"),
          "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (res.status == 413 && res.body.empty()) {
      res.set_content(absl::StrCat("request body over ", payload_max_length_,
                                   " bytes\n"),
                      "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }));
}

GuardedServer::~GuardedServer() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

bool GuardedServer::Open(Connection* c) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return false;
  if (active_ >= limits_.max_connections) {
    Connection* oldest = nullptr;
    for (Connection* other : open_) {
      if ((other->waiting || other->in_head) && !other->displaced &&
          (oldest == nullptr || other->since < oldest->since)) {
        oldest = other;
      }
    }
    if (oldest == nullptr) {
      LOG_EVERY_T(WARNING, 10)
          << "a connection refused: " << limits_.max_connections
          << " connections are open, each in a handler";
      return false;
    }
    LOG_EVERY_T(WARNING, 10)
        << limits_.max_connections << " connections open: the one waiting "
        << "longest on its client is closed to make room for a new one";
    oldest->displaced = true;
    --active_;
    // Its thread closes it, after taking it out of the table: the
    // descriptor cannot be another connection's by then.
    ::shutdown(oldest->fd, SHUT_RDWR);
  }
  open_.insert(c);
  ++active_;
  return true;
}

void GuardedServer::Close(Connection* c) {
  absl::MutexLock lock(&mu_);
  open_.erase(c);
  if (!c->displaced) --active_;
}

void GuardedServer::CloseAll() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  for (Connection* c : open_) ::shutdown(c->fd, SHUT_RDWR);
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  Connection connection{.fd = sock, .since = Steady::now()};
  bool served = false;
  if (!refuse_here && Open(&connection)) {
    served = Serve(connection);
    Close(&connection);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return served;
}

bool GuardedServer::Serve(Connection& c) {
  // Every wait is a poll() with a deadline.
  const int flags = fcntl(c.fd, F_GETFL, 0);
  if (flags < 0 || fcntl(c.fd, F_SETFL, flags | O_NONBLOCK) < 0) return false;
  // cpp-httplib writes an answer's head and body apart: without this,
  // Nagle's algorithm holds the body until the client's delayed ACK.
  const int one = 1;
  setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ConnectionStream stream(*this, c);
  stream.BeginRequest(c.since);
  if (ctx_ != nullptr && !stream.Handshake(ctx_)) return false;
  bool served = false;
  bool ok = true;
  for (int n = 0; n < limits_.max_requests_per_connection; ++n) {
    if (n > 0) {
      const Steady::time_point idle = Steady::now();
      Since(&c, idle);
      if (!stream.AwaitRequest(idle + ToSteady(limits_.idle_timeout))) break;
      stream.BeginRequest(Steady::now());
    }
    const bool last =
        n + 1 == limits_.max_requests_per_connection || stopping();
    bool closed = false;
    current_stream = &stream;
    ok = process_request(stream, last, closed, [&](httplib::Request& req) {
      stream.EndHead();
      req.ssl = stream.ssl();
    });
    current_stream = nullptr;
    if (!ok && stream.head_too_large() && !stream.wrote()) {
      // Over the cap within the request line: cpp-httplib gave up
      // without an answer.
      const std::string body = absl::StrCat("request line and headers over ",
                                            limits_.max_header_bytes,
                                            " bytes\n");
      const std::string answer = absl::StrCat(
          "HTTP/1.1 431 Request Header Fields Too Large\r\n"
          "Content-Type: text/plain\r\nContent-Length: ",
          body.size(), "\r\nConnection: close\r\n\r\n", body);
      stream.write(answer.data(), answer.size());
    }
    served = served || ok;
    if (!ok || closed || stream.head_too_large() ||
        stream.close_after_answer()) {
      break;
    }
  }
  stream.Finish(ok);
  return served;
}

}  // namespace

absl::Status ValidateClientCa(const std::string& pem, const std::string& what) {
  if (ForEachCertificate(pem, [](X509*) {}) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": no PEM certificate in it"));
  }
  return absl::OkStatus();
}

int ServedConnections(httplib::Server& server) {
  auto* guarded = dynamic_cast<GuardedServer*>(&server);
  return guarded != nullptr ? guarded->served() : 0;
}

absl::StatusOr<std::unique_ptr<httplib::Server>> NewGuardedServer(
    const ConnectionLimits& limits, const TlsServing* tls) {
  SSL_CTX* ctx = nullptr;
  if (tls != nullptr) {
    absl::Status valid = ValidateServingCertificate(tls->certificate);
    if (!valid.ok()) return valid;
    ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == nullptr || !LoadIntoContext(tls->certificate, *ctx)) {
      SSL_CTX_free(ctx);
      return absl::InvalidArgumentError(
          "the serving certificate cannot be used for TLS");
    }
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (!tls->client_ca_pem.empty() &&
        !TrustClientCa(tls->client_ca_pem, *ctx)) {
      SSL_CTX_free(ctx);
      return absl::InvalidArgumentError(absl::StrCat(
          "the client CA cannot be used: ", OpenSslErrors()));
    }
  }
  return std::make_unique<GuardedServer>(limits, ctx);
}

void RequireDelegatedAuth(httplib::Server& server, DelegatedAuth& auth,
                          const std::string& port) {
  server.set_pre_routing_handler(
      [&auth, port](const httplib::Request& req, httplib::Response& res) {
        std::optional<kube::UserInfo> certificate = CertificateUser(req.ssl);
        AuthDecision decision =
            auth.Check(req.get_header_value("Authorization"), req.path,
                       req.method, certificate ? &*certificate : nullptr);
        if (decision.verdict == AuthVerdict::kAllowed) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        VLOG(2) << port << ": " << req.method << " " << req.path << ": "
                << decision.message;
        // Answered before its body is read: what follows on the
        // connection is that body, so the connection ends with the answer.
        if (HasBody(req)) {
          if (current_stream != nullptr) current_stream->CloseAfterAnswer();
          res.set_header("Connection", "close");
        }
        res.status = HttpStatusOf(decision.verdict);
        if (decision.verdict == AuthVerdict::kUnauthenticated) {
          res.set_header("WWW-Authenticate", "Bearer");
        }
        if (decision.verdict == AuthVerdict::kThrottled) {
          res.set_header("Retry-After", "1");
        }
        res.set_content(decision.message + "\n", "text/plain");
        return httplib::Server::HandlerResponse::Handled;
      });
}

std::thread Accept(httplib::Server& server) {
  std::thread thread([&server] { server.listen_after_bind(); });
  if (auto* guarded = dynamic_cast<GuardedServer*>(&server)) {
    guarded->WaitAccepting();
  }
  return thread;
}

StatusServer::StatusServer(
    const Registry& registry, std::function<bool()> ready,
    std::function<std::vector<std::string>()> stalled)
    : registry_(registry),
      ready_(std::move(ready)),
      stalled_(std::move(stalled)) {}

StatusServer::~StatusServer() { Stop(); }

absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& address) {
  size_t colon = address.rfind(':');
  ListenAddress out;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &out.port) ||
      out.port < 0 || out.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", address, "\": expected [host]:port"));
  }
  out.host = address.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' &&
      out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (out.host.empty()) out.host = "0.0.0.0";
  return out;
}

absl::StatusOr<int> Listen(httplib::Server& server, const std::string& address) {
  absl::StatusOr<ListenAddress> parsed = ParseListenAddress(address);
  if (!parsed.ok()) return parsed.status();
  int bound = parsed->port == 0
                  ? server.bind_to_any_port(parsed->host)
                  : (server.bind_to_port(parsed->host, parsed->port)
                         ? parsed->port
                         : -1);
  if (bound < 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", address));
  }
  if (auto* guarded = dynamic_cast<GuardedServer*>(&server)) {
    guarded->WidenBacklog();
  }
  return bound;
}

std::string MetricsMovedMessage(int secure_port) {
  return absl::StrCat(
      "/metrics is served only on the secure port ", secure_port,
      " (https, with a bearer token allowed to get /metrics)\n");
}

absl::StatusOr<int> StatusServer::Start(const std::string& address,
                                        PlainPort plain,
                                        const ConnectionLimits& limits) {
  absl::StatusOr<std::unique_ptr<httplib::Server>> server =
      NewGuardedServer(limits);
  if (!server.ok()) return server.status();
  return Serve(*std::move(server), address, plain.metrics_on_secure_port);
}

absl::StatusOr<int> StatusServer::StartSecure(const std::string& address,
                                              const TlsServing& tls,
                                              DelegatedAuth& auth,
                                              const ConnectionLimits& limits) {
  absl::StatusOr<std::unique_ptr<httplib::Server>> server =
      NewGuardedServer(limits, &tls);
  if (!server.ok()) return server.status();
  RequireDelegatedAuth(**server, auth, "secure port");
  return Serve(*std::move(server), address, /*metrics_on_secure_port=*/0);
}

int StatusServer::ServedConnections() const {
  int served = 0;
  for (const auto& server : servers_) served += ms::ServedConnections(*server);
  return served;
}

absl::StatusOr<int> StatusServer::Serve(std::unique_ptr<httplib::Server> server,
                                        const std::string& address,
                                        int metrics_on_secure_port) {
  server->set_payload_max_length(kMaxRequestBytes);
  auto live = [this](const httplib::Request&, httplib::Response& res) {
    std::vector<std::string> stalled = stalled_();
    if (stalled.empty()) {
      res.set_content("ok", "text/plain");
      return;
    }
    res.status = 500;
    res.set_content(absl::StrCat("no progress: ", absl::StrJoin(stalled, ", ")),
                    "text/plain");
  };
  server->Get("/livez", live);
  server->Get("/healthz", live);
  server->Get("/readyz",
              [this](const httplib::Request&, httplib::Response& res) {
                if (ready_()) {
                  res.set_content("ok", "text/plain");
                } else {
                  res.status = 503;
                  res.set_content("informers not synced", "text/plain");
                }
              });
  if (metrics_on_secure_port != 0) {
    const std::string moved = MetricsMovedMessage(metrics_on_secure_port);
    server->Get("/metrics",
                [moved](const httplib::Request&, httplib::Response& res) {
                  res.status = 404;
                  res.set_content(moved, "text/plain");
                });
  } else {
    server->Get("/metrics",
                [this](const httplib::Request&, httplib::Response& res) {
                  res.set_content(registry_.Render(),
                                  "text/plain; version=0.0.4");
                });
  }
  absl::StatusOr<int> bound = Listen(*server, address);
  if (!bound.ok()) return bound.status();
  threads_.push_back(Accept(*server));
  servers_.push_back(std::move(server));
  return bound;
}

void StatusServer::Stop() {
  for (auto& server : servers_) server->stop();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

}  // namespace ms
