#include "tests/testing/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace ms::testing {

absl::StatusOr<LoopbackListener> ListenOnLoopback(int backlog) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(fd, backlog) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::string err = std::strerror(errno);
    close(fd);
    return absl::InternalError(absl::StrCat("listen on 127.0.0.1: ", err));
  }
  return LoopbackListener{fd, ntohs(addr.sin_port)};
}

int FreeLoopbackPort() {
  absl::StatusOr<LoopbackListener> l = ListenOnLoopback(1);
  if (!l.ok()) return -1;
  close(l->fd);
  return l->port;
}

}  // namespace ms::testing
