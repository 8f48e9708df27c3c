// WatchProxy: a plain-HTTP front of the apiserver that can expire a watch.
//
// Like `kubectl proxy`: listens on 127.0.0.1 (HTTP), forwards each request
// with its headers (the client's bearer token included) to the apiserver
// over TLS, and relays the answer, one request per connection. Watches are
// relayed line by line as they arrive. ExpireNextWatchEvent() arms a fault:
// the next watch whose target contains the given text, once it has relayed
// one event, gets an ERROR event with code 410 (what the apiserver sends
// when the resourceVersion is too old) and is closed. A correct informer
// relists then; Lists() counts the lists the proxy served, so a test can
// see that it did. HoldNextAnswer() arms another: the answer to a request
// (a binding, say) is kept from the client, then lost.
//
// Thread-safe. The destructor cancels the watches in flight.
#ifndef METRICS_SCHEDULER_TESTS_FAULTS_WATCH_PROXY_H_
#define METRICS_SCHEDULER_TESTS_FAULTS_WATCH_PROXY_H_

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/http.h"

namespace ms::testing {

class WatchProxy {
 public:
  // `server` is the apiserver's https URL; `ca_file` its CA.
  static absl::StatusOr<std::unique_ptr<WatchProxy>> Start(
      const std::string& server, const std::string& ca_file);
  ~WatchProxy();
  WatchProxy(const WatchProxy&) = delete;
  WatchProxy& operator=(const WatchProxy&) = delete;

  std::string url() const;  // "http://127.0.0.1:PORT"
  int port() const { return port_; }

  // Arms one 410 for the next watch whose request target contains `match`
  // (e.g. "schedulerName" for the scheduler's pending-pod watch).
  void ExpireNextWatchEvent(const std::string& match);
  // 410s sent so far.
  int Expired() const { return expired_.load(); }
  // Lists (GETs without watch=1, first pages only) whose target contains
  // `match`.
  int Lists(const std::string& match) const;

  // Arms a hold: the next request (not a watch) whose target contains
  // `match` (e.g. "/binding") is carried out by the apiserver, but its
  // answer is kept from the client until DropHeldAnswers(), which closes
  // the client's connection without it, as an apiserver that died before
  // answering would.
  void HoldNextAnswer(const std::string& match);
  // Answers held so far (dropped or not); a hold armed after
  // DropHeldAnswers() drops its answer at once.
  int HeldAnswers() const;
  void DropHeldAnswers();

 private:
  WatchProxy(int listen_fd, int port, const std::string& server,
             const std::string& ca_file);
  void AcceptLoop();
  void Serve(int fd);
  void ServeWatch(int fd, const HttpRequest& request,
                  const std::string& target);
  // Takes the armed fault matching `target`, if any.
  bool TakeFault(const std::string& target);
  // Takes the armed hold matching `target`, if any.
  bool TakeHold(const std::string& target);

  const int listen_fd_;
  const int port_;
  const std::string server_;
  HttpClient http_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> expired_{0};
  mutable absl::Mutex mu_;
  std::vector<std::string> armed_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> lists_ ABSL_GUARDED_BY(mu_);
  std::string hold_ ABSL_GUARDED_BY(mu_);  // "" when no hold is armed
  int held_answers_ ABSL_GUARDED_BY(mu_) = 0;
  // DropHeldAnswers() or the destructor.
  bool drop_held_ ABSL_GUARDED_BY(mu_) = false;
  std::set<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_FAULTS_WATCH_PROXY_H_
