// TcpProxy: a loopback TCP proxy that tests use to break connections.
//
// Listens on 127.0.0.1 on a free port and forwards each connection to a
// target. A test points a client at the proxy, then cuts every open
// connection (CutAll), refuses new ones for a while (SetRefuse), delays
// everything the target sends (SetDelay), or silently drops everything
// (SetBlackhole), to exercise reconnects, timeouts and fallbacks against a
// real server. A blackhole can be armed to start on a given request
// (BlackholeOnClientBytes), and the proxy keeps what clients sent into it
// and what it delivered after healing, so a test over plain HTTP can tell
// which requests were held and which reached the server late.
// Thread-safe.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_TCP_PROXY_H_
#define METRICS_SCHEDULER_TESTS_TESTING_TCP_PROXY_H_

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ms::testing {

class TcpProxy {
 public:
  static absl::StatusOr<std::unique_ptr<TcpProxy>> Start(int target_port);
  ~TcpProxy();

  int port() const { return port_; }
  // Closes every open connection; clients see the connection break.
  void CutAll();
  // While true, new connections are accepted and closed at once.
  void SetRefuse(bool refuse) { refuse_.store(refuse); }
  // Holds back each chunk the target sends for `delay`.
  void SetDelay(absl::Duration delay) {
    delay_ms_.store(absl::ToInt64Milliseconds(delay));
  }
  // While true, the proxy goes silent, as a network partition does:
  // nothing is forwarded, reset or answered, on open and new connections.
  // Bytes either side sends are held back and delivered in order when the
  // partition heals, as TCP retransmits them, unless a side closes its
  // connection first: then the other side's connection is closed and the
  // held bytes are lost.
  void SetBlackhole(bool on) {
    if (!on && blackhole_.load()) healed_.store(true);
    blackhole_.store(on);
  }
  // Arms the blackhole to start (as SetBlackhole(true)) the moment a
  // client sends a chunk containing `match`, e.g. "/binding HTTP/1.1" for
  // a Kubernetes binding over plain HTTP: that chunk is the first held
  // back, so the partition provably begins with that request unanswered.
  // Once.
  void BlackholeOnClientBytes(const std::string& match);
  // Bytes held back so far.
  int64_t Held() const { return held_.load(); }
  // Every byte the clients sent that a blackhole held back, in the order
  // held, whether delivered since or lost with its connection.
  std::string HeldFromClients() const;
  // The clients' bytes written to the target since a blackhole was first
  // lifted: those held back and delivered on healing, then any sent since.
  std::string DeliveredAfterHeal() const;
  // Connections accepted so far.
  int Accepted() const { return accepted_.load(); }

 private:
  TcpProxy(int listen_fd, int port, int target_port);
  void AcceptLoop();
  void Pump(int client_fd);
  // Starts the blackhole if armed and `chunk` (from a client) matches.
  void MaybeTrigger(absl::string_view chunk);
  // Writes a client's bytes to the target, recording them after a heal.
  bool Deliver(int fd, const char* data, size_t n);

  const int listen_fd_;
  const int port_;
  const int target_port_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> refuse_{false};
  std::atomic<int64_t> delay_ms_{0};
  std::atomic<bool> blackhole_{false};
  std::atomic<bool> healed_{false};  // a blackhole was lifted
  std::atomic<bool> armed_{false};   // BlackholeOnClientBytes
  std::atomic<int64_t> held_{0};
  std::atomic<int> accepted_{0};
  mutable absl::Mutex mu_;
  std::set<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::string trigger_ ABSL_GUARDED_BY(mu_);  // BlackholeOnClientBytes
  std::string held_from_clients_ ABSL_GUARDED_BY(mu_);
  std::string delivered_after_heal_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_TCP_PROXY_H_
