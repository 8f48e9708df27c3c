// Loopback sockets for test servers: a listening socket on 127.0.0.1 on a
// free port, and a port that was free a moment ago (for a child process to
// listen on). Thread-safe.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_LOOPBACK_H_
#define METRICS_SCHEDULER_TESTS_TESTING_LOOPBACK_H_

#include "absl/status/statusor.h"

namespace ms::testing {

struct LoopbackListener {
  int fd = -1;  // listening; the caller closes it
  int port = 0;
};

// socket, SO_REUSEADDR, bind 127.0.0.1:0, listen(backlog). InternalError
// naming what failed.
absl::StatusOr<LoopbackListener> ListenOnLoopback(int backlog);

// A port on 127.0.0.1 that was free when asked; -1 when none could be had.
int FreeLoopbackPort();

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_LOOPBACK_H_
