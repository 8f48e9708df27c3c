#include "scheduler/status_server.h"

#include <httplib.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ms {

StatusServer::StatusServer(
    const Registry& registry, std::function<bool()> ready,
    std::function<std::vector<std::string>()> stalled)
    : registry_(registry),
      ready_(std::move(ready)),
      stalled_(std::move(stalled)) {}

StatusServer::~StatusServer() { Stop(); }

absl::StatusOr<int> StatusServer::Start(const std::string& address) {
  size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", address, "\": expected [host]:port"));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";

  server_ = std::make_unique<httplib::Server>();
  server_->set_payload_max_length(kMaxRequestBytes);
  server_->set_read_timeout(5, 0);
  auto live = [this](const httplib::Request&, httplib::Response& res) {
    std::vector<std::string> stalled = stalled_();
    if (stalled.empty()) {
      res.set_content("ok", "text/plain");
      return;
    }
    res.status = 500;
    res.set_content(absl::StrCat("no progress: ", absl::StrJoin(stalled, ", ")),
                    "text/plain");
  };
  server_->Get("/livez", live);
  server_->Get("/healthz", live);
  server_->Get("/readyz",
               [this](const httplib::Request&, httplib::Response& res) {
                 if (ready_()) {
                   res.set_content("ok", "text/plain");
                 } else {
                   res.status = 503;
                   res.set_content("informers not synced", "text/plain");
                 }
               });
  server_->Get("/metrics",
               [this](const httplib::Request&, httplib::Response& res) {
                 res.set_content(registry_.Render(),
                                 "text/plain; version=0.0.4");
               });
  int bound = port == 0 ? server_->bind_to_any_port(host)
                        : (server_->bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", address));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return bound;
}

void StatusServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace ms
