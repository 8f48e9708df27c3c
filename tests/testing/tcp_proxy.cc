#include "tests/testing/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/testing/loopback.h"

namespace ms::testing {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

bool WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::Start(int target_port) {
  absl::StatusOr<LoopbackListener> l = ListenOnLoopback(128);
  if (!l.ok()) return l.status();
  return std::unique_ptr<TcpProxy>(new TcpProxy(l->fd, l->port, target_port));
}

TcpProxy::TcpProxy(int listen_fd, int port, int target_port)
    : listen_fd_(listen_fd), port_(port), target_port_(target_port) {
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TcpProxy::~TcpProxy() {
  stopping_.store(true);
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  CutAll();
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

void TcpProxy::CutAll() {
  absl::MutexLock lock(&mu_);
  for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
}

void TcpProxy::BlackholeOnClientBytes(const std::string& match) {
  absl::MutexLock lock(&mu_);
  trigger_ = match;
  armed_.store(true);
}

std::string TcpProxy::HeldFromClients() const {
  absl::MutexLock lock(&mu_);
  return held_from_clients_;
}

std::string TcpProxy::DeliveredAfterHeal() const {
  absl::MutexLock lock(&mu_);
  return delivered_after_heal_;
}

void TcpProxy::MaybeTrigger(absl::string_view chunk) {
  if (!armed_.load()) return;
  absl::MutexLock lock(&mu_);
  if (!armed_.load() || !absl::StrContains(chunk, trigger_)) return;
  armed_.store(false);
  blackhole_.store(true);
}

bool TcpProxy::Deliver(int fd, const char* data, size_t n) {
  if (healed_.load()) {
    absl::MutexLock lock(&mu_);
    delivered_after_heal_.append(data, n);
  }
  return WriteAll(fd, data, n);
}

void TcpProxy::AcceptLoop() {
  while (!stopping_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    int client = accept(listen_fd_, nullptr, nullptr);
    if (client < 0) continue;
    accepted_.fetch_add(1);
    if (refuse_.load()) {
      close(client);
      continue;
    }
    absl::MutexLock lock(&mu_);
    threads_.emplace_back([this, client] { Pump(client); });
  }
}

void TcpProxy::Pump(int client) {
  int upstream = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = Loopback(target_port_);
  if (connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(upstream);
    close(client);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    open_fds_.insert(client);
    open_fds_.insert(upstream);
  }
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  char buffer[64 * 1024];
  std::string held[2];  // bytes read from side i, held back by a blackhole
  bool open = true;
  while (open && !stopping_.load()) {
    if (!blackhole_.load()) {
      for (int i = 0; i < 2 && open; ++i) {
        open = held[i].empty() ||
               (i == 0 ? Deliver(fds[1].fd, held[0].data(), held[0].size())
                       : WriteAll(fds[0].fd, held[1].data(), held[1].size()));
        held[i].clear();
      }
    }
    if (!open || poll(fds, 2, 100) < 0) break;
    for (int i = 0; i < 2 && open; ++i) {
      if (fds[i].revents == 0) continue;
      ssize_t n = recv(fds[i].fd, buffer, sizeof buffer, 0);
      if (n <= 0) {
        open = false;
        break;
      }
      if (i == 1) {
        int64_t delay = delay_ms_.load();
        if (delay > 0) absl::SleepFor(absl::Milliseconds(delay));
      } else {
        MaybeTrigger(absl::string_view(buffer, static_cast<size_t>(n)));
      }
      // Checked after the delay: a chunk held up by it is caught too.
      if (blackhole_.load() || !held[i].empty()) {
        held[i].append(buffer, static_cast<size_t>(n));
        held_.fetch_add(n);
        if (i == 0) {
          absl::MutexLock lock(&mu_);
          held_from_clients_.append(buffer, static_cast<size_t>(n));
        }
        continue;
      }
      open = i == 0 ? Deliver(fds[1].fd, buffer, static_cast<size_t>(n))
                    : WriteAll(fds[0].fd, buffer, static_cast<size_t>(n));
    }
  }
  absl::MutexLock lock(&mu_);
  open_fds_.erase(client);
  open_fds_.erase(upstream);
  close(client);
  close(upstream);
}

}  // namespace ms::testing
