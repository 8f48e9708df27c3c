#include "scheduler/status_server.h"

#include <httplib.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"

namespace ms {
namespace {

// Puts the certificate chain and key into a TLS server context, TLS 1.2 at
// least. The certificate was validated beforehand.
bool LoadIntoContext(const ServingCertificate& certificate, SSL_CTX& ctx) {
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  BIO* cert_bio = BIO_new_mem_buf(certificate.cert_pem.data(),
                                  static_cast<int>(certificate.cert_pem.size()));
  bool ok = false;
  if (X509* leaf = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr)) {
    ok = SSL_CTX_use_certificate(&ctx, leaf) == 1;
    X509_free(leaf);
    // The rest of the file: intermediates, sent with the leaf.
    while (ok) {
      X509* extra = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
      if (extra == nullptr) break;
      if (SSL_CTX_add_extra_chain_cert(&ctx, extra) != 1) {
        X509_free(extra);
        ok = false;
      }
    }
  }
  BIO_free(cert_bio);
  BIO* key_bio = BIO_new_mem_buf(certificate.key_pem.data(),
                                 static_cast<int>(certificate.key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  ok = ok && key != nullptr && SSL_CTX_use_PrivateKey(&ctx, key) == 1 &&
       SSL_CTX_check_private_key(&ctx) == 1;
  EVP_PKEY_free(key);
  ERR_clear_error();  // the end of the chain reads as an error
  return ok;
}

}  // namespace

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

std::string MetricsMovedMessage(int secure_port) {
  return absl::StrCat(
      "/metrics is served only on the secure port ", secure_port,
      " (https, with a bearer token allowed to get /metrics)\n");
}

absl::StatusOr<int> StatusServer::Start(const std::string& address,
                                        PlainPort plain) {
  return Serve(std::make_unique<httplib::Server>(), address,
               plain.metrics_on_secure_port);
}

absl::StatusOr<int> StatusServer::StartSecure(
    const std::string& address, const ServingCertificate& certificate,
    DelegatedAuth& auth) {
  absl::Status valid = ValidateServingCertificate(certificate);
  if (!valid.ok()) return valid;
  auto server = std::make_unique<httplib::SSLServer>([&](SSL_CTX& ctx) {
    return LoadIntoContext(certificate, ctx);
  });
  if (!server->is_valid()) {
    return absl::InvalidArgumentError(
        "the serving certificate cannot be used for TLS");
  }
  server->set_pre_routing_handler(
      [&auth](const httplib::Request& req, httplib::Response& res) {
        AuthDecision decision = auth.Check(
            req.get_header_value("Authorization"), req.path, req.method);
        if (decision.verdict == AuthVerdict::kAllowed) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        VLOG(2) << "secure port: " << req.method << " " << req.path << ": "
                << decision.message;
        res.status = HttpStatusOf(decision.verdict);
        if (decision.verdict == AuthVerdict::kUnauthenticated) {
          res.set_header("WWW-Authenticate", "Bearer");
        }
        res.set_content(decision.message + "\n", "text/plain");
        return httplib::Server::HandlerResponse::Handled;
      });
  return Serve(std::move(server), address, /*metrics_on_secure_port=*/0);
}

absl::StatusOr<int> StatusServer::Serve(std::unique_ptr<httplib::Server> server,
                                        const std::string& address,
                                        int metrics_on_secure_port) {
  server->set_payload_max_length(kMaxRequestBytes);
  server->set_read_timeout(5, 0);
  // An idle keep-alive connection is kept 1 s, not cpp-httplib's 5: its
  // stop() waits for every open connection, so shutdown would wait too.
  server->set_keep_alive_timeout(1);
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
  server->Get("/livez", live);
  server->Get("/healthz", live);
  server->Get("/readyz",
              [this](const httplib::Request&, httplib::Response& res) {
                if (ready_()) {
                  res.set_content("ok", "text/plain");
                } else {
                  res.status = 503;
                  res.set_content("informers not synced", "text/plain");
                }
              });
  if (metrics_on_secure_port != 0) {
    const std::string moved = MetricsMovedMessage(metrics_on_secure_port);
    server->Get("/metrics",
                [moved](const httplib::Request&, httplib::Response& res) {
                  res.status = 404;
                  res.set_content(moved, "text/plain");
                });
  } else {
    server->Get("/metrics",
                [this](const httplib::Request&, httplib::Response& res) {
                  res.set_content(registry_.Render(),
                                  "text/plain; version=0.0.4");
                });
  }
  absl::StatusOr<int> bound = Listen(*server, address);
  if (!bound.ok()) return bound.status();
  httplib::Server* s = server.get();
  servers_.push_back(std::move(server));
  threads_.emplace_back([s] { s->listen_after_bind(); });
  return bound;
}

void StatusServer::Stop() {
  for (auto& server : servers_) server->stop();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

}  // namespace ms
