#include "scheduler/cmd/flags.h"

#include "absl/flags/flag.h"

namespace ms {

bool AbslParseFlag(absl::string_view text, LogFormat* format,
                   std::string* error) {
  if (text == "text") {
    *format = LogFormat::kText;
  } else if (text == "json") {
    *format = LogFormat::kJson;
  } else {
    *error = "want text or json";
    return false;
  }
  return true;
}

std::string AbslUnparseFlag(LogFormat format) {
  return format == LogFormat::kJson ? "json" : "text";
}

}  // namespace ms

ABSL_FLAG(std::string, config, "",
          "Path of the YAML configuration (docs/configuration.md). Empty: "
          "every default, no metrics (fallback scoring only).");
ABSL_FLAG(std::string, kubeconfig, "",
          "Path of a kubeconfig. Empty: the files of $KUBECONFIG (':' "
          "between them, merged as kubectl merges them), else --master "
          "alone, else the in-cluster service account.");
ABSL_FLAG(std::string, context, "",
          "The kubeconfig context to use instead of its current-context.");
ABSL_FLAG(std::string, master, "",
          "URL of the apiserver, such as kubectl proxy's "
          "http://127.0.0.1:8001. Overrides the kubeconfig's server.");
ABSL_FLAG(bool, master_keeps_credentials, false,
          "With --kubeconfig and a --master on another host: send the "
          "kubeconfig's credentials to that host too. Off: they go only to "
          "the kubeconfig's own server, and --master gets none.");
ABSL_FLAG(bool, leader_elect, true,
          "Elect a leader through a Lease before scheduling (and only if "
          "leaderElection.enabled in the configuration is true too).");
ABSL_FLAG(std::string, lease_name, "",
          "Lease name for leader election; overrides "
          "leaderElection.leaseName.");
ABSL_FLAG(std::string, lease_namespace, "",
          "Lease namespace; overrides leaderElection.leaseNamespace.");
ABSL_FLAG(std::string, http_address, "",
          "Listen address of the plain HTTP endpoint: /healthz, /livez, "
          "/readyz and, unless --secure-port is set, /metrics (with "
          "--secure-port it answers 404 there); overrides "
          "http.listenAddress.");
ABSL_FLAG(int, secure_port, 0,
          "Port of the HTTPS endpoint (kube-scheduler uses 10259), then the "
          "only one serving /metrics, as kube-scheduler's: it needs a bearer "
          "token the apiserver authenticates (TokenReview), or a client "
          "certificate signed by --client-ca-file, whose user it authorises "
          "for GET /metrics (SubjectAccessReview); /healthz, /livez and "
          "/readyz stay open there and on --http-address. 0: no HTTPS "
          "endpoint, /metrics on --http-address.");
ABSL_FLAG(std::string, bind_address, "0.0.0.0",
          "IP address the --secure-port listens on (0.0.0.0 or :: for every "
          "interface; in a pod, its IP from the downward API).");
ABSL_FLAG(std::string, tls_cert_file, "",
          "PEM certificate (then any intermediates) of --secure-port, read at "
          "start. Empty: a self-signed one is made in memory at start for "
          "localhost, 127.0.0.1, the hostname and --bind-address.");
ABSL_FLAG(std::string, tls_private_key_file, "",
          "PEM private key of --tls-cert-file, read at start.");
ABSL_FLAG(std::string, client_ca_file, "",
          "PEM CA certificates, read at start. When set, --secure-port and a "
          "secure extender port (--extender-secure) ask for a client "
          "certificate: one signed by these authenticates its CN as the user "
          "and its Os as groups (as kube's --client-ca-file), who must still "
          "be authorised (SubjectAccessReview). Empty: bearer tokens only.");
ABSL_FLAG(bool, extender_secure, false,
          "Serve the extender port (extender.listenAddress) over HTTPS with "
          "--secure-port's certificate (--tls-cert-file, or a self-signed "
          "one), each call authenticated as --secure-port's are (a client "
          "certificate signed by --client-ca-file, which is what "
          "kube-scheduler's extender tlsConfig.certFile sends, or a bearer "
          "token) and authorised to `post` the non-resource URLs /filter and "
          "/prioritize. false: plain HTTP open to anyone who reaches the "
          "port, as before.");
ABSL_FLAG(int64_t, extender_max_node_names, 15000,
          "The most node names an extender call may carry; a call with more "
          "is refused (HTTP 400) before the cluster state's lock is taken. "
          "Default 15000, three times Kubernetes' 5000-node scalability "
          "target.");
ABSL_FLAG(std::string, identity, "",
          "This replica's identity in the Lease and in Events. Default: "
          "hostname and a random suffix.");
ABSL_FLAG(int, bind_workers, 8,
          "Threads for the bindings that must wait: for volumes to be bound, "
          "for a late lease renewal, or to read a pod back after a lost "
          "answer. The others need no thread of their own.");
ABSL_FLAG(int, max_bindings_in_flight, 64,
          "The most bindings sent to the apiserver at once. Below it, how "
          "many are follows the apiserver's answers (fewer after 429s, "
          "timeouts and slow answers).");
ABSL_FLAG(int64_t, max_apiserver_response_bytes, int64_t{256} << 20,
          "The largest answer of the apiserver read, in bytes: a page of a "
          "list (500 objects) or any other answer but a watch's; a larger "
          "one is refused and the informer retries. Default 256 MiB, far "
          "above any real page (500 pods are a few MB).");
ABSL_FLAG(int64_t, max_watch_event_bytes, int64_t{16} << 20,
          "The largest event of a watch read, in bytes (one object); a "
          "larger one ends the watch and the informer retries. Default "
          "16 MiB; kube-apiserver stores objects of at most 1.5 MiB unless "
          "etcd's --max-request-bytes is raised.");
ABSL_FLAG(absl::Duration, volume_binding_timeout, absl::Minutes(10),
          "How long the PersistentVolumeClaims of a pod may take to be bound "
          "(by the PV controller or a provisioner) once this scheduler has "
          "chosen their volumes or node; the pod is then retried "
          "(kube-scheduler's bindTimeoutSeconds).");
ABSL_FLAG(bool, check_files, true,
          "Fail on a backend.tokenFile, caFile or basicAuth.passwordFile that "
          "cannot be read, as at start. false: validate-config checks the "
          "YAML alone (a file written for the cluster, on a workstation).");
ABSL_FLAG(absl::Duration, liveness_stall_timeout, absl::Seconds(60),
          "/livez fails once the scheduling loop or an informer handler has "
          "held one piece of work this long (e.g. 60s).");
ABSL_FLAG(absl::Duration, shutdown_timeout, absl::Seconds(10),
          "After SIGTERM or a lost lease, the longest the replica takes to "
          "exit: in-flight bindings and queued Events get this long, then it "
          "exits anyway (keep it under terminationGracePeriodSeconds).");
ABSL_FLAG(bool, shadow, false,
          "Shadow mode: bind nothing, write nothing; for each pod of "
          "--shadow-of seen pending then bound, compute where this scheduler "
          "would have placed it and export the agreement "
          "(metrics_scheduler_shadow_*). No leader election.");
ABSL_FLAG(std::string, shadow_of, "default-scheduler",
          "The schedulerName whose pods --shadow judges.");
ABSL_FLAG(double, min_coverage, 0,
          "probe: the share of nodes (0-1) each query metric must have a "
          "fresh value for; below it the probe exits 1.");
ABSL_FLAG(bool, rebalance, false,
          "explain: instead of a pod, what a rebalancing round would move "
          "now, and where (rebalance.hot of --config).");
ABSL_FLAG(std::string, kube_version, "",
          "The Kubernetes release (e.g. 1.36) whose kube-scheduler rules "
          "to follow where releases differ. Empty: the apiserver's, from "
          "its /version at start.");
ABSL_FLAG(uint64_t, seed, 0,
          "Seed of the tie-break between equal scores. 0: random.");
ABSL_FLAG(ms::LogFormat, logging_format, ms::LogFormat::kText,
          "How log lines are written to stderr: text (glog's format) or "
          "json (one JSON object per line, as Kubernetes components write "
          "them with --logging-format=json).");
