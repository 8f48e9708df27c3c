// BackendClient: how requests reach a metrics backend, as its BackendConfig
// says: TLS (CA, client certificate), proxy, authentication and extra
// headers. Both sources (Prometheus, Sysdig) send through one.
//
// - Authentication: a bearer token (`tokenFile`) or basic auth
//   (`basicAuth`), each read from its file and re-read when it changes.
// - Headers: each of `headers` is added to every request; a value from a
//   file is re-read when the file changes.
// - Client certificate: `certFile` and `keyFile` are read at start and
//   checked about once a second; when either changed, new requests go out
//   on new connections that present the new pair (connections made with
//   the old one are dropped once their requests end).
// - Proxy: `proxyURL` only; the environment's proxy variables are ignored.
//
// Thread-safe: Do() may run on many threads at once.
#ifndef METRICS_SCHEDULER_METRICS_BACKEND_CLIENT_H_
#define METRICS_SCHEDULER_METRICS_BACKEND_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
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

  explicit BackendClient(const BackendConfig& backend) : backend_(backend) {}
  // The client whose connections present the current certificate pair.
  std::shared_ptr<HttpClient> Client();

  const BackendConfig backend_;
  std::unique_ptr<TokenFile> token_;
  std::unique_ptr<TokenFile> password_;
  std::unique_ptr<TokenFile> cert_;
  std::unique_ptr<TokenFile> key_;
  std::vector<Header> headers_;

  absl::Mutex mu_;
  std::shared_ptr<HttpClient> http_ ABSL_GUARDED_BY(mu_);
  std::string cert_pem_ ABSL_GUARDED_BY(mu_);  // what http_ presents
  std::string key_pem_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_BACKEND_CLIENT_H_
