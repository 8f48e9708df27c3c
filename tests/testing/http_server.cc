#include "tests/testing/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/testing/loopback.h"

namespace ms::testing {
namespace {

bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t w = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (w <= 0) return false;
    data.remove_prefix(static_cast<size_t>(w));
  }
  return true;
}

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 422: return "Unprocessable Entity";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

}  // namespace

std::string RecordedRequest::Path() const {
  return std::string(target.substr(0, target.find('?')));
}

std::string RecordedRequest::Header(absl::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return "";
}

absl::StatusOr<std::unique_ptr<TestHttpServer>> TestHttpServer::Start() {
  absl::StatusOr<LoopbackListener> l = ListenOnLoopback(64);
  if (!l.ok()) return l.status();
  return std::unique_ptr<TestHttpServer>(new TestHttpServer(l->fd, l->port));
}

TestHttpServer::TestHttpServer(int listen_fd, int port)
    : listen_fd_(listen_fd), port_(port) {
  thread_ = std::thread([this] { Serve(); });
}

TestHttpServer::~TestHttpServer() {
  stopping_.store(true);
  shutdown(listen_fd_, SHUT_RDWR);
  thread_.join();
  close(listen_fd_);
}

std::string TestHttpServer::url() const {
  return absl::StrCat("http://127.0.0.1:", port_);
}

void TestHttpServer::SetHandler(Handler handler) {
  absl::MutexLock lock(&mu_);
  handler_ = std::move(handler);
}

void TestHttpServer::SetAnswer(int status, std::string body) {
  SetHandler([status, body = std::move(body)](const RecordedRequest&) {
    return HttpAnswer{status, body};
  });
}

std::vector<RecordedRequest> TestHttpServer::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

int TestHttpServer::request_count() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(requests_.size());
}

void TestHttpServer::ClearRequests() {
  absl::MutexLock lock(&mu_);
  requests_.clear();
}

void TestHttpServer::Serve() {
  while (!stopping_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    HandleConnection(fd);
    close(fd);
  }
}

void TestHttpServer::HandleConnection(int fd) {
  std::string data;
  char buf[16384];
  size_t header_end = std::string::npos;
  size_t content_length = 0;
  RecordedRequest request;
  // Reads until the headers and the whole body are in; gives up after 5 s
  // of silence.
  while (true) {
    if (header_end != std::string::npos &&
        data.size() >= header_end + 4 + content_length) {
      break;
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 5000) <= 0) return;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    data.append(buf, static_cast<size_t>(n));
    if (header_end == std::string::npos) {
      header_end = data.find("\r\n\r\n");
      if (header_end == std::string::npos) continue;
      std::vector<absl::string_view> lines = absl::StrSplit(
          absl::string_view(data).substr(0, header_end), "\r\n");
      std::vector<absl::string_view> first =
          absl::StrSplit(lines[0], absl::MaxSplits(' ', 2));
      if (first.size() < 2) return;
      request.method = std::string(first[0]);
      request.target = std::string(first[1]);
      for (size_t i = 1; i < lines.size(); ++i) {
        size_t colon = lines[i].find(':');
        if (colon == absl::string_view::npos) continue;
        std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
        std::string value(
            absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
        if (name == "content-length") {
          (void)absl::SimpleAtoi(value, &content_length);
        }
        request.headers.emplace_back(std::move(name), std::move(value));
      }
    }
  }
  request.body = data.substr(header_end + 4, content_length);

  Handler handler;
  {
    absl::MutexLock lock(&mu_);
    requests_.push_back(request);
    handler = handler_;
  }
  HttpAnswer answer = handler ? handler(request)
                              : HttpAnswer{404, "no handler set", "text/plain"};
  std::string head = absl::StrCat(
      "HTTP/1.1 ", answer.status, " ", Reason(answer.status),
      "\r\nContent-Type: ", answer.content_type,
      answer.unframed
          ? std::string()
          : absl::StrCat("\r\nContent-Length: ",
                         static_cast<int64_t>(answer.body.size()) *
                             answer.repeat),
      "\r\nConnection: close\r\n\r\n");
  bool open = WriteAll(fd, head);
  // Stops as soon as the client hangs up.
  for (int64_t i = 0; open && i < answer.repeat; ++i) {
    open = WriteAll(fd, answer.body);
  }
  shutdown(fd, SHUT_WR);
}

}  // namespace ms::testing
