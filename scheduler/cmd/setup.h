// What the daemon's flags make: its identity, the secure port's settings,
// the cluster to talk to, the apiserver's response limits, and the metrics
// source. Each returns InvalidArgument naming the flag when one is bad.
#ifndef METRICS_SCHEDULER_SCHEDULER_CMD_SETUP_H_
#define METRICS_SCHEDULER_SCHEDULER_CMD_SETUP_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "config/config.h"
#include "kube/client.h"
#include "kube/cluster_config.h"
#include "metrics/metrics_source.h"
#include "model/kube_version.h"
#include "scheduler/serve/status_server.h"  // TlsServing

namespace ms {

// host_XXXXXXXX: the host name and a random suffix (--identity's default).
std::string DefaultIdentity();

// The secure port's settings, from --secure-port, --bind-address,
// --tls-cert-file, --tls-private-key-file, --client-ca-file and
// --extender-secure. `port` 0: none asked for.
struct SecureServing {
  int port = 0;
  std::string address;  // "[ip]:port"
  // The certificate and client CA, for the secure port and a secure
  // extender port; the certificate is empty when neither is on.
  TlsServing tls;
  bool extender_secure = false;
};

// --secure-port, --bind-address, --tls-cert-file, --tls-private-key-file,
// --client-ca-file and --extender-secure; a self-signed certificate when
// no file is given. InvalidArgument also when a file is unreadable.
absl::StatusOr<SecureServing> SecureServingFromFlags();

// The cluster from the flags and $KUBECONFIG, in kubectl's order
// (kube/cluster_config.h: ResolveClusterConfig).
absl::StatusOr<kube::ClusterConfig> ClusterConfigFromFlags();

// --max-apiserver-response-bytes and --max-watch-event-bytes.
absl::StatusOr<kube::ResponseLimits> ResponseLimitsFromFlags();

// The configured backend's source; `client` must outlive it
// (metricsServer lists through it).
absl::StatusOr<std::unique_ptr<metrics::MetricsSource>> MakeSource(
    const Config& config, kube::KubeClient& client);

// The release whose kube-scheduler rules to follow: `told` (from
// --kube-version) when set, else the apiserver's /version gitVersion,
// asked again every few seconds while the apiserver does not answer
// (nothing can be scheduled before it does) until `stop` is notified (then
// Cancelled). A release outside the supported ones is logged and follows
// the nearest supported release's rules.
absl::StatusOr<KubeVersion> KubeVersionOf(std::optional<KubeVersion> told,
                                          kube::KubeClient& client,
                                          const absl::Notification& stop);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CMD_SETUP_H_
