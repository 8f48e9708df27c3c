// StatusServer: the scheduler's own HTTP endpoints.
//
//   /healthz  200 "ok" while the process runs;
//   /readyz   200 "ok" once the informers have synced, 503 before;
//   /metrics  the self-metrics registry, Prometheus text format 0.0.4.
//
// Serves on its own threads (cpp-httplib); Start() returns once listening.
// Thread-safe.
#ifndef METRICS_SCHEDULER_SCHEDULER_STATUS_SERVER_H_
#define METRICS_SCHEDULER_SCHEDULER_STATUS_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "scheduler/self_metrics.h"

namespace httplib {
class Server;
}

namespace ms {

class StatusServer {
 public:
  StatusServer(const Registry& registry, std::function<bool()> ready);
  ~StatusServer();

  // Listens on `address` ("[host]:port"; an empty host means every
  // interface; port 0 picks a free one). Returns the port. InvalidArgument
  // for a malformed address, Unavailable when it cannot listen.
  absl::StatusOr<int> Start(const std::string& address);
  void Stop();

 private:
  const Registry& registry_;
  const std::function<bool()> ready_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_STATUS_SERVER_H_
