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

absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& address) {
  size_t colon = address.rfind(':');
  ListenAddress out;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &out.port) ||
      out.port < 0 || out.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", address, "\": expected [host]:port"));
  }
  out.host = address.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' &&
      out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (out.host.empty()) out.host = "0.0.0.0";
  return out;
}

absl::StatusOr<int> Listen(httplib::Server& server, const std::string& address) {
  absl::StatusOr<ListenAddress> parsed = ParseListenAddress(address);
  if (!parsed.ok()) return parsed.status();
  int bound = parsed->port == 0
                  ? server.bind_to_any_port(parsed->host)
                  : (server.bind_to_port(parsed->host, parsed->port)
                         ? parsed->port
                         : -1);
  if (bound < 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", address));
  }
  return bound;
}

absl::StatusOr<int> StatusServer::Start(const std::string& address) {
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
  absl::StatusOr<int> bound = Listen(*server_, address);
  if (!bound.ok()) return bound.status();
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return bound;
}

void StatusServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace ms
