// ExecCredentialPlugin: a kubeconfig user's `exec` credential plugin, run
// as kubectl runs it (client.authentication.k8s.io/v1 and v1beta1).
//
// The plugin is a program the kubeconfig names (a cloud's CLI, kubelogin,
// a script) that prints an ExecCredential on stdout: a bearer token, or a
// client certificate and key (PEM), optionally with an expiry:
//
//   {"apiVersion": "client.authentication.k8s.io/v1",
//    "kind": "ExecCredential",
//    "status": {"token": "...",
//               "expirationTimestamp": "2030-01-01T00:00:00Z"}}
//
// KubeClient calls Get() before every request. The first call runs the
// plugin; later calls return the same credential until its
// expirationTimestamp passes (never, without one), and then run the plugin
// again. When the apiserver answers 401 to a request, KubeClient calls
// Reject() with the credential it sent, and the next Get() runs the plugin
// again: once, however many requests were refused with that credential.
//
// The plugin runs without a shell (common/subprocess.h): `command` is
// looked up in $PATH unless it holds a '/'; it gets `args`, our
// environment with `env` set over it, and KUBERNETES_EXEC_INFO, an
// ExecCredential whose spec says `"interactive": false` (and, with
// provideClusterInfo, carries the cluster); stdin is /dev/null. It is
// never interactive: the kubeconfig loader refuses interactiveMode Always.
//
// Failure contract of Get(), each message naming the command:
//   FailedPrecondition  the command does not exist or may not be run (the
//                       message ends with the kubeconfig's installHint);
//   Unavailable         it exited non-zero or was killed (the message ends
//                       with the last 4 KiB of its stderr);
//   DeadlineExceeded    it did not finish within `timeout` (killed);
//   InvalidArgument     its stdout is not an ExecCredential of the expected
//                       apiVersion with a token or a certificate and key.
// A failure is not cached: the next Get() runs the plugin again.
//
// Thread-safe. Concurrent Get()s run the plugin once; the others wait for
// it and share its credential. Current() never waits for a run: callers
// that must not block (KubeClient's I/O thread) take the cached credential
// with it and leave the run to a thread that may wait.
#ifndef METRICS_SCHEDULER_KUBE_EXEC_CREDENTIAL_H_
#define METRICS_SCHEDULER_KUBE_EXEC_CREDENTIAL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace ms::kube {

inline constexpr char kExecApiV1[] = "client.authentication.k8s.io/v1";
inline constexpr char kExecApiV1Beta1[] =
    "client.authentication.k8s.io/v1beta1";

// A kubeconfig user's `exec` section, checked by the loader.
struct ExecConfig {
  // kExecApiV1 or kExecApiV1Beta1: what KUBERNETES_EXEC_INFO says, and the
  // apiVersion the plugin must print.
  std::string api_version = kExecApiV1;
  // A path (a relative one already resolved against the kubeconfig's
  // folder) or, without a '/', a name looked up in $PATH.
  std::string command;
  std::vector<std::string> args;
  // Set in the plugin's environment, over ours.
  std::vector<std::pair<std::string, std::string>> env;
  // Told to the user when `command` cannot be found ("" for none).
  std::string install_hint;
  // provideClusterInfo: KUBERNETES_EXEC_INFO's spec.cluster tells the
  // plugin the cluster's server, CA and insecure-skip-tls-verify.
  bool provide_cluster_info = false;
  std::string cluster_server;
  std::string cluster_ca_pem;  // "" for the system's trust store
  bool cluster_insecure_skip_verify = false;
  // The longest one run may take.
  absl::Duration timeout = absl::Minutes(1);
};

// What a plugin printed: a bearer token or a client certificate and key
// (or both), good until `expiry`.
struct ExecCredential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  absl::Time expiry = absl::InfiniteFuture();  // none given: no expiry
};

// Decodes a plugin's stdout, which must be an ExecCredential of
// `api_version`. InvalidArgument, saying what is wrong, otherwise (the
// message does not name the plugin).
absl::StatusOr<ExecCredential> DecodeExecCredential(
    absl::string_view json, absl::string_view api_version);

// The JSON given to the plugin in $KUBERNETES_EXEC_INFO.
std::string ExecInfo(const ExecConfig& config);

class ExecCredentialPlugin {
 public:
  // `clock` decides when a credential has expired (its Now(): the expiry
  // is wall time); it must outlive the plugin.
  explicit ExecCredentialPlugin(ExecConfig config,
                                const Clock& clock = RealClock::Get());
  ExecCredentialPlugin(const ExecCredentialPlugin&) = delete;
  ExecCredentialPlugin& operator=(const ExecCredentialPlugin&) = delete;

  // The current credential: the cached one unless it has expired or was
  // rejected, else what a new run of the plugin prints. Never null when OK.
  absl::StatusOr<std::shared_ptr<const ExecCredential>> Get();

  // The cached credential when it is still good (not expired, not
  // rejected), else null. Never runs the plugin, nor waits for a run in
  // progress.
  std::shared_ptr<const ExecCredential> Current() const;

  // The apiserver refused `rejected` (HTTP 401). Unless a newer credential
  // has replaced it already, it is dropped: the next Get() runs the plugin.
  void Reject(const std::shared_ptr<const ExecCredential>& rejected);

  const ExecConfig& config() const { return config_; }

  // How many times the plugin was started, successfully or not.
  int runs() const;

 private:
  absl::StatusOr<ExecCredential> Run() const;

  const ExecConfig config_;
  const Clock& clock_;
  // Held for a whole run of the plugin, so that concurrent Get()s share
  // one; mu_ only for moments, so that Current() and Reject() never wait
  // for a run.
  absl::Mutex run_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::shared_ptr<const ExecCredential> cached_ ABSL_GUARDED_BY(mu_);
  int runs_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_EXEC_CREDENTIAL_H_
