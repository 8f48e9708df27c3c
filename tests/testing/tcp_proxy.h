// TcpProxy: a loopback TCP proxy that tests use to break connections.
//
// Listens on 127.0.0.1 on a free port and forwards each connection to a
// target. A test points a client at the proxy, then cuts every open
// connection (CutAll), refuses new ones for a while (SetRefuse), delays
// everything the target sends (SetDelay), or silently drops everything
// (SetBlackhole), to exercise reconnects, timeouts and fallbacks against a
// real server. Thread-safe.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_TCP_PROXY_H_
#define METRICS_SCHEDULER_TESTS_TESTING_TCP_PROXY_H_

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
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
  void SetBlackhole(bool on) { blackhole_.store(on); }
  // Bytes held back so far.
  int64_t Held() const { return held_.load(); }
  // Connections accepted so far.
  int Accepted() const { return accepted_.load(); }

 private:
  TcpProxy(int listen_fd, int port, int target_port);
  void AcceptLoop();
  void Pump(int client_fd);

  const int listen_fd_;
  const int port_;
  const int target_port_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> refuse_{false};
  std::atomic<int64_t> delay_ms_{0};
  std::atomic<bool> blackhole_{false};
  std::atomic<int64_t> held_{0};
  std::atomic<int> accepted_{0};
  absl::Mutex mu_;
  std::set<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_TCP_PROXY_H_
