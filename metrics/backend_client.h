// BackendClient: how requests reach a metrics backend, as its BackendConfig
// says: TLS (CA, client certificate), proxy, authentication and extra
// headers. Both sources (Prometheus, Sysdig) send through one.
//
// - Authentication: a bearer token (`tokenFile`) or basic auth
//   (`basicAuth`), each read from its file and re-read when it changes.
// - Headers: each of `headers` is added to every request; a value from a
//   file is re-read when the file changes.
// - Client certificate: `certFile` and `keyFile` are read at start and
//   checked about once a second; each request carries the current pair
//   (HttpRequest::client_cert_pem), so after a rotation requests go out
//   on new connections that present the new one.
// - Proxy: `proxyURL` only; the environment's proxy variables are ignored.
//
// Thread-safe: Do() may run on many threads at once.
#ifndef METRICS_SCHEDULER_METRICS_BACKEND_CLIENT_H_
#define METRICS_SCHEDULER_METRICS_BACKEND_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/http.h"
#include "common/token_file.h"
#include "config/config.h"

namespace ms::metrics {

class BackendClient {
 public:
  // Reads every file the configuration names once. NotFound,
  // PermissionDenied or InvalidArgument (an empty file) when one cannot be
  // used.
  static absl::StatusOr<std::unique_ptr<BackendClient>> Create(
      const BackendConfig& backend);

  // Sends `request` with the backend's authentication and headers added.
  // Errors as HttpClient::Do.
  absl::StatusOr<HttpResponse> Do(HttpRequest request);

 private:
  struct Header {
    std::string name;
    std::string value;                // when `file` is null
    std::unique_ptr<TokenFile> file;  // the value, re-read on change
  };

  explicit BackendClient(const BackendConfig& backend);

  const std::string username_;  // basic auth
  std::unique_ptr<TokenFile> token_;
  std::unique_ptr<TokenFile> password_;
  std::unique_ptr<TokenFile> cert_;
  std::unique_ptr<TokenFile> key_;
  std::vector<Header> headers_;
  HttpClient http_;
};

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_BACKEND_CLIENT_H_
