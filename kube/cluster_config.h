// ClusterConfig: where the apiserver is and how to authenticate to it.
//
// Ways to get one, as kubectl and kube-scheduler offer:
//   - LoadKubeconfig(path): a kubeconfig file's current context, or the
//     context named (bearer token or token file, client certificate and
//     key, CA, each as a path or an inline base64 `*-data` field, or an
//     `exec` credential plugin: kube/exec_credential.h);
//   - LoadKubeconfigFiles(paths): several kubeconfigs merged as kubectl
//     merges the files of $KUBECONFIG;
//   - InClusterConfig(): inside a pod, from the mounted service-account token
//     and CA and $KUBERNETES_SERVICE_HOST / $KUBERNETES_SERVICE_PORT;
//   - PlainUrl(url): no credentials at all, such as `kubectl proxy`'s
//     http://127.0.0.1:8001;
//   - ResolveClusterConfig(sources): one of the above, chosen from the
//     command line and the environment in kubectl's order.
// A token read from a file is re-read when the file changes (service-account
// tokens rotate): see BearerToken(). An exec plugin's credential is cached
// until it expires or the apiserver refuses it: KubeClient asks `exec`.
//
// Failure contract: every loader returns InvalidArgument for a malformed
// file (naming the file and the field), NotFound for a missing file or
// context, FailedPrecondition when not running inside a cluster.
// Loading never runs an exec plugin; the first request does.
// ClusterConfig is thread-safe once built.
#ifndef METRICS_SCHEDULER_KUBE_CLUSTER_CONFIG_H_
#define METRICS_SCHEDULER_KUBE_CLUSTER_CONFIG_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/http.h"
#include "common/token_file.h"
#include "kube/exec_credential.h"

namespace ms::kube {

struct ClusterConfig {
  std::string server;  // https://host:port or http://host:port, no trailing /
  TlsOptions tls;
  std::string token;  // a static bearer token; empty if none
  // A token file, re-read when it changes; null if none. Wins over `token`.
  std::shared_ptr<TokenFile> token_file;
  // An exec credential plugin; null if none. A kubeconfig user has it only
  // when it has neither `token` nor `tokenFile` (as kubectl, which sends
  // a static token rather than run the plugin). Its client certificate
  // and key, if it prints any, replace `tls`'s. Copies of the config
  // share it, and so its cached credential.
  std::shared_ptr<ExecCredentialPlugin> exec;

  // The static bearer token to send now: the token file's, else `token`
  // ("" for none). Not the exec plugin's: ask `exec`.
  std::string BearerToken() const;
};

// `context` "" means the kubeconfig's current-context. Relative paths
// (certificates, keys, token files, an exec command holding a '/') are
// relative to the kubeconfig's folder.
absl::StatusOr<ClusterConfig> LoadKubeconfig(const std::string& path,
                                             const std::string& context = "");

// Several kubeconfigs merged as kubectl merges $KUBECONFIG's files: the
// first file to set current-context wins; clusters, users and contexts are
// merged by name, the first file to define a name wins (the entry whole,
// never field by field); each entry's relative paths are relative to the
// file that defined it. Files that do not exist are skipped, as kubectl
// skips them; NotFound when none exists. A file that exists but cannot be
// read or parsed fails the whole load.
absl::StatusOr<ClusterConfig> LoadKubeconfigFiles(
    const std::vector<std::string>& paths, const std::string& context = "");

// $KUBECONFIG's list, split at ':' ; empty items and repeats dropped.
std::vector<std::string> SplitKubeconfigList(absl::string_view list);

// What the command line and the environment say about the cluster.
struct ConfigSources {
  std::string kubeconfig;      // --kubeconfig: one file
  std::string kubeconfig_env;  // $KUBECONFIG: files separated by ':'
  std::string context;         // --context: "" for current-context
  std::string master;          // --master: the apiserver's URL
  bool master_keeps_credentials = false;  // --master-keeps-credentials
  std::string in_cluster_root;  // InClusterConfig's `root`, for tests
};

// Picks the cluster as kubectl (client-go's loading rules) does:
//   1. --kubeconfig FILE, which must exist;
//   2. else the files of $KUBECONFIG, merged (LoadKubeconfigFiles); when
//      none of them exists, a warning and on to 3 and 4;
//   3. else --master alone: that URL, without credentials (PlainUrl);
//   4. else the in-cluster service account (InClusterConfig).
// --master with 1 or 2 replaces the kubeconfig's server (OverrideServer).
// --context selects a context of 1 or 2; with 3 or 4 it is
// InvalidArgument. (kubectl would also read ~/.kube/config between 2 and 4;
// a scheduler must not pick up a user's file by accident.)
absl::StatusOr<ClusterConfig> ResolveClusterConfig(
    const ConfigSources& sources);

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
// credentials (token, token file, client certificate and key, exec plugin,
// anything a kubeconfig may hold) and none of the kubeconfig's TLS trust (CA,
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
