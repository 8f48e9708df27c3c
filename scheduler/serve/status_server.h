// StatusServer: the scheduler's own HTTP endpoints.
//
//   /livez    200 "ok" while every loop makes progress; 500 naming the
//             stalled ones when one has held work past its bound (see
//             scheduler/telemetry/liveness.h); the Deployment's liveness probe;
//   /healthz  the same as /livez (kube components' older name);
//   /readyz   200 "ok" once the informers have synced, 503 before;
//   /metrics  the self-metrics registry, Prometheus text format 0.0.4.
//
// Served on two ports, each optional:
//   Start()        plain HTTP, open to anyone (--http-address): every
//                  endpoint, or with PlainPort::ProbesOnly() the three
//                  probes alone, /metrics answering 404 with a line that
//                  names the secure port (kube-scheduler serves its
//                  metrics on its secure port only; the scheduler's main
//                  asks for that whenever --secure-port is on);
//   StartSecure()  HTTPS with the given certificate (--secure-port), where
//                  every path but /livez, /healthz and /readyz needs a
//                  client certificate signed by --client-ca-file or a
//                  bearer token, whose user the apiserver authorises
//                  (scheduler/serve/delegated_auth.h): 401 without one or with
//                  a bad one, 403 when the user may not, 429 when too many
//                  unknown tokens came, 503 when the apiserver cannot be
//                  asked; short plain-text bodies.
// Request bodies are capped at kMaxRequestBytes (every endpoint is a GET).
//
// Connections. Every port of the scheduler (these two and the extender's,
// scheduler/serve/extender_server.h) is a NewGuardedServer(): cpp-httplib's
// request parsing and routing, with its connection handling replaced,
// because cpp-httplib's own lets a handful of slow clients take the port
// and with it the liveness probe: a fixed pool of max(8, cores - 1)
// threads, a connection holding its thread from accept to close, 5 s
// allowed per read with no bound on the whole request, and no bound on the
// number or total size of the header lines. Eight clients trickling a
// header byte every few seconds held all eight threads for ever; /livez
// queued behind them, the kubelet's probe timed out and the Deployment
// restarted a healthy leader.
//
// What a production server does about that (Go's net/http with
// ReadHeaderTimeout and MaxHeaderBytes, nginx's client_header_timeout and
// large_client_header_buffers, Apache's mod_reqtimeout) is done here,
// under ConnectionLimits:
//   - no pool to queue in: each connection gets a thread of its own when
//     accepted, so a new connection (a probe) never waits for another;
//   - a request's line and headers (and, over TLS, the handshake) must
//     arrive whole within header_timeout, and come to at most
//     max_header_bytes: past either the request is answered 408 or 431
//     and the connection closed;
//   - a request's body, handling and answer must end within
//     request_timeout, no read or write may wait longer than io_timeout,
//     and an idle keep-alive connection is closed after idle_timeout;
//   - at most max_connections are open at once. At the limit, a new
//     connection displaces, and so closes, the oldest of those waiting on
//     their client: awaiting or reading a request's head (the TLS
//     handshake included), blocked reading a body or writing an answer, or
//     idle between requests. A request being handled is never displaced;
//     only when every connection is in a handler is a new one refused
//     (closed at once).
// So a probe's connection is served at once while any number of slow
// clients are connected: below the limit it has a thread of its own; at
// the limit it takes the place of the oldest of them, and being the newest
// it is not displaced itself. The slow clients hold nothing but a thread
// each, and not past header_timeout. The listen backlog is SOMAXCONN, not
// cpp-httplib's 5, so that a burst of connections does not drop the
// probe's SYN. (An event loop reading the heads would hold slow clients
// more cheaply still, but would need an HTTP parser of its own; a thread
// per connection keeps cpp-httplib's.)
//
// A request answered before its body was read (refused by DelegatedAuth)
// or malformed (400, 413, 414, 416, 431) ends its connection with the
// answer: what follows on it could not be read as the next request.
//
// Serves on its own threads; each Start returns once accepting. Thread-safe.
#ifndef METRICS_SCHEDULER_SCHEDULER_SERVE_STATUS_SERVER_H_
#define METRICS_SCHEDULER_SCHEDULER_SERVE_STATUS_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/serve/delegated_auth.h"
#include "scheduler/serve/serving_cert.h"
#include "scheduler/telemetry/self_metrics.h"

namespace httplib {
class Server;
}

namespace ms {

struct ListenAddress {
  std::string host;  // "0.0.0.0" when the address has none
  int port = 0;
};
// "[host]:port", "host:port" or ":port"; InvalidArgument otherwise.
absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& address);
// Binds `server` to `address` (port 0: a free one) and returns the port;
// Unavailable when it cannot. The caller then runs Accept().
absl::StatusOr<int> Listen(httplib::Server& server, const std::string& address);
// Runs `server`'s accept loop (bound by Listen) on a new thread, returned,
// and returns once the loop runs, so that a stop() that follows is not
// lost. Join the thread after stop().
std::thread Accept(httplib::Server& server);

// How a port's connections are served (see "Connections" above). The
// defaults are the scheduler's.
struct ConnectionLimits {
  // Connections open at once; at the limit a new one displaces the oldest
  // of those waiting on their client. Probes, scrapes and kube-scheduler's
  // extender calls need a few; each costs a thread.
  int max_connections = 128;
  // For a request's line and headers (and a new connection's TLS
  // handshake) to arrive whole: Go's ReadHeaderTimeout. A client sends
  // them in one packet; 10 s is generous for any network.
  absl::Duration header_timeout = absl::Seconds(10);
  // The request line and headers together: nginx's default
  // (large_client_header_buffers 4 8k). A service account token is about
  // 1 KiB; each header line is also capped at 8 KiB by cpp-httplib.
  int max_header_bytes = 32 * 1024;
  // The longest any one read or write may wait.
  absl::Duration io_timeout = absl::Seconds(5);
  // From a request's head to the end of its answer: no read or write of
  // it waits past that (a handler is not interrupted).
  absl::Duration request_timeout = absl::Seconds(60);
  // An idle keep-alive connection is kept this long (not cpp-httplib's
  // 5 s: a client reconnects cheaply, and stop() waits for no one).
  absl::Duration idle_timeout = absl::Seconds(1);
  // Requests per connection before it is closed.
  int max_requests_per_connection = 100;
};

// TLS for a port.
struct TlsServing {
  ServingCertificate certificate;
  // PEM CA certificates (kube's --client-ca-file). When set, the handshake
  // asks for a client certificate; one that is sent must be signed by
  // these (and be for client auth), and its user (CN; groups: O) is
  // handed to DelegatedAuth. "": none asked for.
  std::string client_ca_pem;
};

// Checks that `pem` holds at least one CA certificate; InvalidArgument
// naming `what` otherwise.
absl::Status ValidateClientCa(const std::string& pem, const std::string& what);

// A cpp-httplib server whose connections are served under `limits`: plain
// HTTP, or TLS with `tls` when it is not null. Add its routes, Listen(),
// then Accept(). Its error handler is its own (it words 408, 431 and 413,
// and ends the connection after a malformed request): do not set another.
// InvalidArgument when the certificate or the CA cannot be used.
absl::StatusOr<std::unique_ptr<httplib::Server>> NewGuardedServer(
    const ConnectionLimits& limits, const TlsServing* tls = nullptr);

// How many connections `server` (a NewGuardedServer) serves now: accepted,
// each on its thread, and not displaced.
int ServedConnections(httplib::Server& server);

// Makes every request to `server` (a NewGuardedServer) pass `auth` first,
// with the verified client certificate's user if any; a refusal is
// answered with its status and message, and logged at -v=2 with `port`.
void RequireDelegatedAuth(httplib::Server& server, DelegatedAuth& auth,
                          const std::string& port);

// What the plain port serves.
struct PlainPort {
  // Every endpoint, /metrics included.
  static PlainPort All() { return PlainPort(); }
  // /livez, /healthz and /readyz; /metrics answers 404 with
  // MetricsMovedMessage(secure_port).
  static PlainPort ProbesOnly(int secure_port) {
    return PlainPort{.metrics_on_secure_port = secure_port};
  }
  // The secure port /metrics is served on instead; 0: served here.
  int metrics_on_secure_port = 0;
};

// The one-line body of /metrics on a probes-only plain port.
std::string MetricsMovedMessage(int secure_port);

class StatusServer {
 public:
  static constexpr size_t kMaxRequestBytes = 64 * 1024;

  // `ready`: whether /readyz passes. `stalled`: the parts that made no
  // progress past their bound (empty: live).
  StatusServer(const Registry& registry, std::function<bool()> ready,
               std::function<std::vector<std::string>()> stalled);
  ~StatusServer();

  // Listens on `address` ("[host]:port"; an empty host means every
  // interface; port 0 picks a free one) over plain HTTP, serving what
  // `plain` says. Returns the port. InvalidArgument for a malformed
  // address, Unavailable when it cannot listen.
  absl::StatusOr<int> Start(const std::string& address,
                            PlainPort plain = PlainPort::All(),
                            const ConnectionLimits& limits = {});
  // The same endpoints over TLS with `tls`, guarded by `auth` (which must
  // outlive this server). Returns the port; errors as Start's, and
  // InvalidArgument for a certificate or CA OpenSSL refuses.
  absl::StatusOr<int> StartSecure(const std::string& address,
                                  const TlsServing& tls, DelegatedAuth& auth,
                                  const ConnectionLimits& limits = {});
  // Stops every server started; idempotent.
  void Stop();

  // The connections its ports serve now (ServedConnections), summed. Not
  // concurrently with Start.
  int ServedConnections() const;

 private:
  // Adds the endpoints to `server` and listens on `address`. /metrics is
  // the registry, or the 404 naming `metrics_on_secure_port` when that is
  // not 0.
  absl::StatusOr<int> Serve(std::unique_ptr<httplib::Server> server,
                            const std::string& address,
                            int metrics_on_secure_port);

  const Registry& registry_;
  const std::function<bool()> ready_;
  const std::function<std::vector<std::string>()> stalled_;
  std::vector<std::unique_ptr<httplib::Server>> servers_;
  std::vector<std::thread> threads_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_SERVE_STATUS_SERVER_H_
