#include "metrics/backend_client.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "glog/logging.h"

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

std::shared_ptr<HttpClient> BackendClient::Client() {
  // TokenFile trims the PEM's final newline; OpenSSL wants one.
  std::string cert = cert_ ? cert_->Get() + "\n" : "";
  std::string key = key_ ? key_->Get() + "\n" : "";
  absl::MutexLock lock(&mu_);
  if (http_ != nullptr && cert == cert_pem_ && key == key_pem_) return http_;
  if (http_ != nullptr) {
    LOG(INFO) << "metrics backend: client certificate " << backend_.cert_file
              << " changed; new connections present the new one";
  }
  cert_pem_ = std::move(cert);
  key_pem_ = std::move(key);
  http_ = std::make_shared<HttpClient>(
      TlsOptions{.ca_file = backend_.ca_file,
                 .client_cert_pem = cert_pem_,
                 .client_key_pem = key_pem_,
                 .insecure_skip_verify = backend_.insecure_skip_verify},
      ProxyOptions{.from_environment = false, .url = backend_.proxy_url});
  return http_;
}

absl::StatusOr<HttpResponse> BackendClient::Do(HttpRequest request) {
  if (token_ != nullptr) {
    request.headers.emplace_back("Authorization",
                                 absl::StrCat("Bearer ", token_->Get()));
  } else if (password_ != nullptr) {
    request.headers.emplace_back(
        "Authorization",
        absl::StrCat("Basic ",
                     absl::Base64Escape(absl::StrCat(
                         backend_.basic_auth.username, ":", password_->Get()))));
  }
  for (const Header& h : headers_) {
    request.headers.emplace_back(h.name, h.file ? h.file->Get() : h.value);
  }
  return Client()->Do(request);
}

}  // namespace ms::metrics
