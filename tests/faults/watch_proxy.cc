#include "tests/faults/watch_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/testing/loopback.h"

namespace ms::testing {
namespace {

constexpr char kGone[] =
    R"j({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1",)j"
    R"j("metadata":{},"status":"Failure","message":"too old resource version)j"
    R"j( (injected by the test proxy)","reason":"Expired","code":410}})j"
    "\n";

bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t w = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (w <= 0) return false;
    data.remove_prefix(static_cast<size_t>(w));
  }
  return true;
}

std::string Head(long status, size_t length, bool with_length) {  // NOLINT
  std::string head = absl::StrCat("HTTP/1.1 ", status, " Proxied\r\n",
                                  "Content-Type: application/json\r\n",
                                  "Connection: close\r\n");
  if (with_length) absl::StrAppend(&head, "Content-Length: ", length, "\r\n");
  return head + "\r\n";
}

}  // namespace

absl::StatusOr<std::unique_ptr<WatchProxy>> WatchProxy::Start(
    const std::string& server, const std::string& ca_file) {
  absl::StatusOr<testing::LoopbackListener> l = testing::ListenOnLoopback(128);
  if (!l.ok()) return l.status();
  return std::unique_ptr<WatchProxy>(
      new WatchProxy(l->fd, l->port, server, ca_file));
}

WatchProxy::WatchProxy(int listen_fd, int port, const std::string& server,
                       const std::string& ca_file)
    : listen_fd_(listen_fd),
      port_(port),
      server_(server),
      http_(TlsOptions{.ca_file = ca_file}) {
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

WatchProxy::~WatchProxy() {
  stopping_.store(true);
  DropHeldAnswers();
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

std::string WatchProxy::url() const {
  return absl::StrCat("http://127.0.0.1:", port_);
}

void WatchProxy::ExpireNextWatchEvent(const std::string& match) {
  absl::MutexLock lock(&mu_);
  armed_.push_back(match);
}

int WatchProxy::Lists(const std::string& match) const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const std::string& target : lists_) {
    // A list of many pages is one list.
    if (absl::StrContains(target, match) &&
        !absl::StrContains(target, "continue=")) {
      ++n;
    }
  }
  return n;
}

void WatchProxy::HoldNextAnswer(const std::string& match) {
  absl::MutexLock lock(&mu_);
  hold_ = match;
}

int WatchProxy::HeldAnswers() const {
  absl::MutexLock lock(&mu_);
  return held_answers_;
}

void WatchProxy::DropHeldAnswers() {
  absl::MutexLock lock(&mu_);
  drop_held_ = true;
}

bool WatchProxy::TakeHold(const std::string& target) {
  absl::MutexLock lock(&mu_);
  if (hold_.empty() || !absl::StrContains(target, hold_)) return false;
  hold_.clear();
  ++held_answers_;
  return true;
}

bool WatchProxy::TakeFault(const std::string& target) {
  absl::MutexLock lock(&mu_);
  for (auto it = armed_.begin(); it != armed_.end(); ++it) {
    if (absl::StrContains(target, *it)) {
      armed_.erase(it);
      return true;
    }
  }
  return false;
}

void WatchProxy::AcceptLoop() {
  while (!stopping_.load()) {
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) {
      if (stopping_.load()) return;
      continue;
    }
    absl::MutexLock lock(&mu_);
    open_fds_.insert(fd);
    threads_.emplace_back([this, fd] {
      Serve(fd);
      absl::MutexLock lock(&mu_);
      open_fds_.erase(fd);
      close(fd);
    });
  }
}

void WatchProxy::Serve(int fd) {
  // The request: head, then a body of Content-Length bytes.
  std::string data;
  size_t head_end;
  char buf[16384];
  while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    data.append(buf, static_cast<size_t>(n));
  }
  std::vector<std::string> lines =
      absl::StrSplit(data.substr(0, head_end), "\r\n");
  std::vector<std::string> request_line = absl::StrSplit(lines[0], ' ');
  if (request_line.size() < 2) return;
  HttpRequest request;
  request.method = request_line[0];
  const std::string target = request_line[1];
  request.url = server_ + target;
  size_t length = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
    std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    if (name == "content-length") {
      (void)absl::SimpleAtoi(value, &length);
    } else if (name == "authorization" || name == "content-type" ||
               name == "accept" || name == "user-agent") {
      request.headers.emplace_back(lines[i].substr(0, colon), value);
    }
  }
  request.body = data.substr(head_end + 4);
  while (request.body.size() < length) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    request.body.append(buf, static_cast<size_t>(n));
  }

  if (request.method == "GET" && absl::StrContains(target, "watch=1")) {
    ServeWatch(fd, request, target);
    return;
  }
  if (request.method == "GET") {
    absl::MutexLock lock(&mu_);
    lists_.push_back(target);
  }
  absl::StatusOr<HttpResponse> response = http_.Do(request);
  if (response.ok() && TakeHold(target)) {
    // The answer is lost: the connection closes without it.
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&drop_held_));
    return;
  }
  if (!response.ok()) {
    std::string body = absl::StrCat(
        R"({"kind":"Status","status":"Failure","code":503,"message":"proxy: )",
        response.status().code() == absl::StatusCode::kDeadlineExceeded
            ? "timeout"
            : "upstream unavailable",
        R"("})");
    WriteAll(fd, Head(503, body.size(), true) + body);
    return;
  }
  WriteAll(fd, Head(response->status, response->body.size(), true) +
                   response->body);
}

void WatchProxy::ServeWatch(int fd, const HttpRequest& original,
                            const std::string& target) {
  HttpRequest request = original;
  request.timeout = absl::Minutes(10);
  bool head_sent = false;
  bool failed_write = false;
  bool expired = false;
  std::string buffer;
  auto on_data = [&](absl::string_view chunk) {
    if (!head_sent) {
      if (!WriteAll(fd, Head(200, 0, false))) {
        failed_write = true;
        return false;
      }
      head_sent = true;
    }
    buffer.append(chunk.data(), chunk.size());
    size_t start = 0;
    for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      if (!WriteAll(fd, absl::string_view(buffer).substr(start, nl + 1 - start))) {
        failed_write = true;
        return false;
      }
      if (TakeFault(target)) {
        WriteAll(fd, kGone);
        expired_.fetch_add(1);
        expired = true;
        return false;
      }
    }
    buffer.erase(0, start);
    return true;
  };
  absl::StatusOr<long> status =  // NOLINT(runtime/int)
      http_.Stream(request, on_data, &stopping_);
  if (!head_sent && !expired && !failed_write && status.ok()) {
    WriteAll(fd, Head(*status, 0, true));  // ended before any event
    return;
  }
  if (!head_sent && !expired && !failed_write) {
    std::string body =
        R"({"kind":"Status","status":"Failure","code":503,"message":"proxy: watch failed"})";
    WriteAll(fd, Head(503, body.size(), true) + body);
    return;
  }
  // The rest of a partial line, if the upstream ended on one.
  if (head_sent && !expired && !failed_write && !buffer.empty()) {
    WriteAll(fd, buffer);
  }
}

}  // namespace ms::testing
