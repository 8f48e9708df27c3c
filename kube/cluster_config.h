// ClusterConfig: where the apiserver is and how to authenticate to it.
//
// Three ways to get one, as kube-scheduler offers:
//   - InClusterConfig(): inside a pod, from the mounted service-account token
//     and CA and $KUBERNETES_SERVICE_HOST / $KUBERNETES_SERVICE_PORT;
//   - LoadKubeconfig(path): a kubeconfig file's current context (bearer
//     token or token file, client certificate and key, CA, each as a path or
//     an inline base64 `*-data` field);
//   - PlainUrl(url): no credentials at all, such as `kubectl proxy`'s
//     http://127.0.0.1:8001.
// A token read from a file is re-read when the file changes (service-account
// tokens rotate): see BearerToken().
//
// Failure contract: every loader returns InvalidArgument for a malformed
// file (naming the file and the field), NotFound for a missing file or
// context, FailedPrecondition when not running inside a cluster.
// ClusterConfig is thread-safe once built.
#ifndef METRICS_SCHEDULER_KUBE_CLUSTER_CONFIG_H_
#define METRICS_SCHEDULER_KUBE_CLUSTER_CONFIG_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/http.h"
#include "common/token_file.h"

namespace ms::kube {

struct ClusterConfig {
  std::string server;  // https://host:port or http://host:port, no trailing /
  TlsOptions tls;
  std::string token;  // a static bearer token; empty if none
  // A token file, re-read when it changes; null if none. Wins over `token`.
  std::shared_ptr<TokenFile> token_file;

  // The bearer token to send now ("" for none).
  std::string BearerToken() const;
};

absl::StatusOr<ClusterConfig> LoadKubeconfig(const std::string& path,
                                             const std::string& context = "");

// `root` replaces "/" for the service-account files and is for tests.
absl::StatusOr<ClusterConfig> InClusterConfig(const std::string& root = "");

absl::StatusOr<ClusterConfig> PlainUrl(const std::string& url);

// Points a loaded `config` (a kubeconfig's) at `url` instead of its server,
// as the scheduler's --master does when given with a kubeconfig.
//
// Credentials go only to the server they were issued for. When `url` has
// the same origin as config.server (scheme, host and port, the default
// port made explicit, the host compared without case; paths do not
// matter), the config is kept whole with only the server replaced. When
// the origin differs, the result is what PlainUrl(url) gives, no
// credentials (token, token file, client certificate and key, anything a
// kubeconfig may hold) and none of the kubeconfig's TLS trust (CA,
// insecure-skip-tls-verify), as if no kubeconfig had been given, and a
// warning is logged: a request sent there carries nothing of the
// kubeconfig, so a mistyped host or a proxy learns nothing, and an
// apiserver that wants the credentials answers 401. `keep_credentials`
// true keeps the whole config for another origin too: the caller says
// that `url` is the same cluster by another address. (kubectl's --server
// and client-go's BuildConfigFromFlags keep the credentials whatever the
// host; this is deliberately stricter.)
//
// InvalidArgument when `url` is not http:// or https:// with a host, or
// carries credentials of its own (user:password@).
absl::StatusOr<ClusterConfig> OverrideServer(ClusterConfig config,
                                             absl::string_view url,
                                             bool keep_credentials);

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_CLUSTER_CONFIG_H_
