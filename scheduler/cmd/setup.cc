#include "scheduler/cmd/setup.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/token_file.h"
#include "glog/logging.h"
#include "metrics/metrics_server_source.h"
#include "metrics/prometheus_source.h"
#include "metrics/sysdig_source.h"
#include "scheduler/cmd/flags.h"
#include "scheduler/serve/serving_cert.h"

namespace ms {

std::string DefaultIdentity() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::random_device rd;
  return absl::StrCat(host, "_", absl::Hex(rd(), absl::kZeroPad8));
}

absl::StatusOr<SecureServing> SecureServingFromFlags() {
  SecureServing out;
  out.port = absl::GetFlag(FLAGS_secure_port);
  if (out.port < 0 || out.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--secure-port=", out.port, ": must be in 0..65535"));
  }
  const std::string ip = absl::GetFlag(FLAGS_bind_address);
  unsigned char buf[16];
  const bool v4 = inet_pton(AF_INET, ip.c_str(), buf) == 1;
  if (!v4 && inet_pton(AF_INET6, ip.c_str(), buf) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bind-address=", ip, ": not an IP address"));
  }
  const std::string cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  const std::string key_file = absl::GetFlag(FLAGS_tls_private_key_file);
  if (cert_file.empty() != key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert-file and --tls-private-key-file go together");
  }
  out.extender_secure = absl::GetFlag(FLAGS_extender_secure);
  const std::string client_ca_file = absl::GetFlag(FLAGS_client_ca_file);
  if (out.port == 0 && !out.extender_secure) {
    if (!cert_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls-cert-file is set but --secure-port is 0 (off)");
    }
    if (!client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--client-ca-file is set but neither --secure-port nor "
          "--extender-secure is on");
    }
    return out;
  }
  if (!client_ca_file.empty()) {
    ASSIGN_OR_RETURN(out.tls.client_ca_pem, ReadFile(client_ca_file));
    RETURN_IF_ERROR(ValidateClientCa(out.tls.client_ca_pem,
                                     "--client-ca-file=" + client_ca_file));
  }
  if (out.port != 0) {
    out.address = v4 ? absl::StrCat(ip, ":", out.port)
                     : absl::StrCat("[", ip, "]:", out.port);
  }
  if (!cert_file.empty()) {
    ASSIGN_OR_RETURN(out.tls.certificate,
                     LoadServingCertificate(cert_file, key_file));
    return out;
  }
  std::vector<std::string> hosts = {"localhost", "127.0.0.1"};
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') {
    hosts.push_back(host);
  }
  if (ip != "0.0.0.0" && ip != "::" && ip != "127.0.0.1") hosts.push_back(ip);
  ASSIGN_OR_RETURN(out.tls.certificate,
                   SelfSignedCertificate(hosts, absl::Now()));
  return out;
}

absl::StatusOr<kube::ClusterConfig> ClusterConfigFromFlags() {
  const char* env = std::getenv("KUBECONFIG");
  return kube::ResolveClusterConfig(
      {.kubeconfig = absl::GetFlag(FLAGS_kubeconfig),
       .kubeconfig_env = env != nullptr ? env : "",
       .context = absl::GetFlag(FLAGS_context),
       .master = absl::GetFlag(FLAGS_master),
       .master_keeps_credentials =
           absl::GetFlag(FLAGS_master_keeps_credentials)});
}

absl::StatusOr<kube::ResponseLimits> ResponseLimitsFromFlags() {
  kube::ResponseLimits limits;
  for (auto [flag, value, out] :
       {std::tuple{kube::kMaxResponseBytesFlag,
                   absl::GetFlag(FLAGS_max_apiserver_response_bytes),
                   &limits.max_response_bytes},
        std::tuple{kube::kMaxWatchEventBytesFlag,
                   absl::GetFlag(FLAGS_max_watch_event_bytes),
                   &limits.max_watch_event_bytes}}) {
    if (value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " must be at least 1, got ", value));
    }
    *out = static_cast<size_t>(value);
  }
  return limits;
}

absl::StatusOr<std::unique_ptr<metrics::MetricsSource>> MakeSource(
    const Config& config, kube::KubeClient& client) {
  if (config.backend.type == BackendType::kMetricsServer) {
    return std::make_unique<metrics::MetricsServerSource>(
        config.backend,
        [&client](const std::string& path, absl::Duration timeout,
                  size_t max_response_bytes) {
          return client.Get(path, timeout, max_response_bytes);
        });
  }
  if (config.backend.type == BackendType::kSysdig) {
    absl::StatusOr<std::unique_ptr<metrics::SysdigSource>> s =
        metrics::SysdigSource::Create(config.backend);
    if (!s.ok()) return s.status();
    return std::unique_ptr<metrics::MetricsSource>(std::move(*s));
  }
  absl::StatusOr<std::unique_ptr<metrics::PrometheusSource>> s =
      metrics::PrometheusSource::Create(config.backend);
  if (!s.ok()) return s.status();
  return std::unique_ptr<metrics::MetricsSource>(std::move(*s));
}

absl::StatusOr<KubeVersion> KubeVersionOf(std::optional<KubeVersion> told,
                                          kube::KubeClient& client,
                                          const absl::Notification& stop) {
  if (told) {
    LOG(INFO) << "following kube-scheduler " << told->ToString()
              << "'s rules (--kube-version)";
    return *told;
  }
  absl::Duration pause = absl::Milliseconds(500);
  while (true) {
    absl::StatusOr<std::string> git_version = client.ServerVersion();
    absl::StatusOr<KubeVersion> v = git_version.ok()
                                        ? ParseKubeVersion(*git_version)
                                        : git_version.status();
    if (v.ok()) {
      if (IsSupportedKubeVersion(*git_version)) {
        LOG(INFO) << "the cluster runs Kubernetes " << *git_version
                  << ": following kube-scheduler " << v->ToString()
                  << "'s rules";
      } else {
        LOG(WARNING) << "the cluster runs Kubernetes " << *git_version
                     << ", which is not supported (1."
                     << KubeVersion::kOldestMinor << " to 1."
                     << KubeVersion::kNewestMinor
                     << "): following kube-scheduler " << v->ToString()
                     << "'s rules";
      }
      return v;
    }
    LOG(WARNING) << "cannot learn the cluster's Kubernetes version ("
                 << v.status().message() << "); asking again in " << pause;
    if (stop.WaitForNotificationWithTimeout(pause)) {
      return absl::CancelledError("stopped before the apiserver answered");
    }
    pause = std::min(pause * 2, absl::Seconds(5));
  }
}

}  // namespace ms
