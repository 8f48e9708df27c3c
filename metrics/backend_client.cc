#include "metrics/backend_client.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ms::metrics {

absl::StatusOr<std::unique_ptr<BackendClient>> BackendClient::Create(
    const BackendConfig& backend) {
  std::unique_ptr<BackendClient> c(new BackendClient(backend));
  if (!backend.token_file.empty()) {
    ASSIGN_OR_RETURN(c->token_, TokenFile::Open(backend.token_file));
  }
  if (!backend.basic_auth.username.empty()) {
    ASSIGN_OR_RETURN(c->password_,
                     TokenFile::Open(backend.basic_auth.password_file));
  }
  if (!backend.cert_file.empty()) {
    ASSIGN_OR_RETURN(c->cert_, TokenFile::Open(backend.cert_file));
    ASSIGN_OR_RETURN(c->key_, TokenFile::Open(backend.key_file));
  }
  for (const HeaderConfig& h : backend.headers) {
    Header header{.name = h.name, .value = h.value};
    if (!h.value_file.empty()) {
      ASSIGN_OR_RETURN(header.file, TokenFile::Open(h.value_file));
    }
    c->headers_.push_back(std::move(header));
  }
  return c;
}

BackendClient::BackendClient(const BackendConfig& backend)
    : username_(backend.basic_auth.username),
      http_(TlsOptions{.ca_file = backend.ca_file,
                       .insecure_skip_verify = backend.insecure_skip_verify},
            ProxyOptions{.from_environment = false,
                         .url = backend.proxy_url}) {}

absl::StatusOr<HttpResponse> BackendClient::Do(HttpRequest request) {
  if (token_ != nullptr) {
    request.headers.emplace_back("Authorization",
                                 absl::StrCat("Bearer ", token_->Get()));
  } else if (password_ != nullptr) {
    request.headers.emplace_back(
        "Authorization",
        absl::StrCat("Basic ", absl::Base64Escape(absl::StrCat(
                                   username_, ":", password_->Get()))));
  }
  for (const Header& h : headers_) {
    request.headers.emplace_back(h.name, h.file ? h.file->Get() : h.value);
  }
  if (cert_ != nullptr) {
    // TokenFile trims the PEM's final newline; OpenSSL wants one.
    request.client_cert_pem = cert_->Get() + "\n";
    request.client_key_pem = key_->Get() + "\n";
  }
  return http_.Do(request);
}

}  // namespace ms::metrics
