// StatusServer: the scheduler's own HTTP endpoints.
//
//   /livez    200 "ok" while every loop makes progress; 500 naming the
//             stalled ones when one has held work past its bound (see
//             scheduler/liveness.h); the Deployment's liveness probe;
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
//                  bearer token the apiserver authenticates and authorises
//                  (scheduler/delegated_auth.h): 401 without one or with a
//                  bad one, 403 when the user may not, 503 when the
//                  apiserver cannot be asked; short plain-text bodies.
//
// Serves on its own threads (cpp-httplib); each Start returns once listening.
// Request bodies are capped at kMaxRequestBytes (every endpoint is a GET;
// cpp-httplib accepts any size by default), and a client that sends
// nothing for kReadTimeout is dropped. Thread-safe.
#ifndef METRICS_SCHEDULER_SCHEDULER_STATUS_SERVER_H_
#define METRICS_SCHEDULER_SCHEDULER_STATUS_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/delegated_auth.h"
#include "scheduler/self_metrics.h"
#include "scheduler/serving_cert.h"

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
// Unavailable when it cannot. The caller then runs listen_after_bind().
absl::StatusOr<int> Listen(httplib::Server& server, const std::string& address);

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
                            PlainPort plain = PlainPort::All());
  // The same endpoints over TLS with `certificate`, guarded by `auth`
  // (which must outlive this server). Returns the port; errors as Start's,
  // and InvalidArgument for a certificate OpenSSL refuses.
  absl::StatusOr<int> StartSecure(const std::string& address,
                                  const ServingCertificate& certificate,
                                  DelegatedAuth& auth);
  // Stops every server started; idempotent.
  void Stop();

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

#endif  // METRICS_SCHEDULER_SCHEDULER_STATUS_SERVER_H_
