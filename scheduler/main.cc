// metrics-scheduler: the daemon and its subcommands.
//
//   metrics-scheduler [flags]                  run the scheduler
//   metrics-scheduler validate-config FILE     check a configuration file
//   metrics-scheduler explain POD|FILE         where a pod would go, and why
//   metrics-scheduler --version                the version of this build
//
// Exit codes: 0 clean shutdown (or a valid configuration); 1 a runtime
// failure (leadership lost, the apiserver unusable at start); 2 bad usage
// (an unknown flag or a bad value, whatever the subcommand) or
// configuration.

#include <arpa/inet.h>
#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/token_file.h"
#include "config/config.h"
#include "glog/logging.h"
#include "kube/client.h"
#include "kube/cluster_config.h"
#include "kube/informer.h"
#include "metrics/cache.h"
#include "metrics/metrics_server_source.h"
#include "metrics/prometheus_source.h"
#include "metrics/sysdig_source.h"
#include "scheduler/api.h"
#include "scheduler/cache_metrics.h"
#include "scheduler/delegated_auth.h"
#include "scheduler/explain.h"
#include "scheduler/extender_server.h"
#include "scheduler/leader_election.h"
#include "scheduler/leadership.h"
#include "scheduler/liveness.h"
#include "scheduler/process_metrics.h"
#include "scheduler/scheduler.h"
#include "scheduler/self_metrics.h"
#include "scheduler/serving_cert.h"
#include "scheduler/shadow.h"
#include "scheduler/status_server.h"
#include "scheduler/version.h"

namespace ms {

// --logging-format's values.
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
          "Path of the YAML configuration (see README). Empty: every default, "
          "no metrics (fallback scoring only).");
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
ABSL_FLAG(uint64_t, seed, 0,
          "Seed of the tie-break between equal scores. 0: random.");
ABSL_FLAG(ms::LogFormat, logging_format, ms::LogFormat::kText,
          "How log lines are written to stderr: text (glog's format) or "
          "json (one JSON object per line, as Kubernetes components write "
          "them with --logging-format=json).");

namespace ms {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

constexpr char kUsage[] =
    "A Kubernetes scheduler that places pods by live node metrics.\n"
    "\n"
    "Usage:\n"
    "  metrics-scheduler [flags]                 run the scheduler\n"
    "  metrics-scheduler validate-config FILE    check a configuration\n"
    "  metrics-scheduler explain NS/NAME|FILE    where a pod would go, and\n"
    "      why: the score table per node, from the live cluster and metrics\n"
    "      (--config, --kubeconfig, --context or --master, --seed); binds\n"
    "      nothing. FILE is a pod or workload manifest (YAML or JSON; - for\n"
    "      stdin). Exit 0 printed, 1 the pod, cluster or backend cannot be\n"
    "      read, 2 bad usage or configuration.\n"
    "  metrics-scheduler --version               print the version\n"
    "\n"
    "The cluster, as kubectl finds it: --kubeconfig FILE; else $KUBECONFIG\n"
    "(files separated by ':', merged: the first to set a value wins); else\n"
    "--master URL alone, without credentials; else the in-cluster service\n"
    "account. --context picks a context of the kubeconfig; --master with a\n"
    "kubeconfig replaces its server. Users may authenticate by token, token\n"
    "file, client certificate or exec credential plugin\n"
    "(client.authentication.k8s.io/v1 or v1beta1).\n"
    "\n"
    "Flags may be written --leader-elect or --leader_elect.\n"
    "Logging: -v=N (or --v=N) sets the verbosity: 1 per-pod decisions, 2\n"
    "watch and cache details. Logs go to stderr, as text or, with\n"
    "--logging-format=json, one JSON object per line.\n"
    "Exit codes: 0 clean shutdown, 1 runtime failure, 2 bad usage (such\n"
    "as an unknown flag) or configuration.";

// The usage lines, printed with a usage error.
constexpr char kRunUsage[] =
    "usage: metrics-scheduler [flags]   (metrics-scheduler --help: every "
    "flag)";
constexpr char kValidateUsage[] =
    "usage: metrics-scheduler validate-config [--check-files=false] FILE";
constexpr char kExplainUsage[] =
    "usage: metrics-scheduler explain [--config FILE] [--kubeconfig FILE] "
    "[--context NAME] [--master URL] NAMESPACE/NAME|MANIFEST";

const char* UsageOf(absl::string_view command) {
  if (command == "validate-config") return kValidateUsage;
  if (command == "explain") return kExplainUsage;
  return kRunUsage;
}

// --version, -version: the version on stdout.
bool PrintVersionIfAsked(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") return false;
    if (arg == "--version" || arg == "-version") {
      std::cout << "metrics-scheduler " << kVersion << "\n";
      return true;
    }
  }
  return false;
}

// --help, -h: the usage text and this binary's flags, written with dashes,
// on stdout. (Abseil's own --help exits 1 and lists every library's flags.)
bool PrintHelpIfAsked(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg != "--help" && arg != "-h" && arg != "-help") continue;
    std::cout << kUsage << "\n\nFlags:\n";
    std::vector<std::pair<std::string, const absl::CommandLineFlag*>> flags;
    for (const auto& [name, flag] : absl::GetAllFlags()) {
      if (absl::EndsWith(flag->Filename(), "scheduler/main.cc")) {
        std::string dashed(name);
        std::replace(dashed.begin(), dashed.end(), '_', '-');
        flags.emplace_back(dashed, flag);
      }
    }
    std::sort(flags.begin(), flags.end());
    for (const auto& [name, flag] : flags) {
      std::string def = flag->DefaultValue();
      std::cout << "  --" << name << " (default: "
                << (def.empty() ? "\"\"" : def) << ")\n      " << flag->Help()
                << "\n";
    }
    std::cout << "  -v=N (default: 0)\n      Log verbosity.\n";
    return true;
  }
  return false;
}

// Flags are written with dashes, as kube-scheduler's are
// (--leader-elect); Abseil names them with underscores. Rewrites the name
// part of every --flag in place.
void DashesToUnderscores(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    char* arg = argv[i];
    if (arg[0] != '-' || arg[1] != '-') continue;
    for (char* c = arg + 2; *c != '\0' && *c != '='; ++c) {
      if (*c == '-') *c = '_';
    }
  }
}

// glog owns --v (gflags); Abseil's parser would reject it. Take -v=N,
// --v=N, -v N and --v N out of argv and give them to glog.
std::vector<char*> TakeVerbosity(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    if (arg == "-v" || arg == "--v") {
      if (i + 1 < argc) value = argv[++i];
    } else if (absl::StartsWith(arg, "-v=") || absl::StartsWith(arg, "--v=")) {
      value = arg.substr(arg.find('=') + 1);
    } else {
      rest.push_back(argv[i]);
      continue;
    }
    int v = 0;
    if (!absl::SimpleAtoi(value, &v) || v < 0) {
      std::cerr << "metrics-scheduler: -v wants a number >= 0, got \"" << value
                << "\"\n"
                << kRunUsage << "\n";
      std::exit(kExitUsage);
    }
    FLAGS_v = v;
  }
  return rest;
}

// What CheckFlags found.
struct FlagCheck {
  std::string error;    // "" when every flag is good
  std::string command;  // the first positional argument ("" for none)
};

// Abseil's parser exits 1, with a message of its own, on an unknown flag or
// a value it cannot parse; here that is a usage error, exit 2 with the
// usage line. So the flags of `args` (args[0] is the program; names
// already with underscores) are checked first, by Abseil's rules:
// --name=value or -name=value; --name value for any but a boolean;
// --name and --noname for a boolean; "--" ends the flags. The values are
// parsed into the flags, as Abseil then does again. Abseil's own
// --flagfile, --fromenv, --tryfromenv and --undefok are left to it, and so
// are the flags they bring (an error there still exits 1).
FlagCheck CheckFlags(const std::vector<char*>& args) {
  FlagCheck check;
  auto fail = [&check](absl::string_view name, absl::string_view why) {
    std::string dashed(name);
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    if (check.error.empty()) {
      check.error = absl::StrCat("--", dashed, ": ", why);
    }
  };
  for (size_t i = 1; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") {
      if (check.command.empty() && i + 1 < args.size()) {
        check.command = args[i + 1];
      }
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      if (check.command.empty()) check.command = std::string(arg);
      continue;
    }
    absl::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    size_t eq = body.find('=');
    absl::string_view name = body.substr(0, eq);
    std::optional<absl::string_view> value;
    if (eq != absl::string_view::npos) value = body.substr(eq + 1);
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && !value.has_value() &&
        absl::StartsWith(name, "no")) {
      absl::CommandLineFlag* negated =
          absl::FindCommandLineFlag(name.substr(2));
      if (negated != nullptr && negated->IsOfType<bool>()) continue;
    }
    if (flag == nullptr) {
      fail(name, "unknown flag");
      continue;
    }
    if (!value.has_value()) {
      if (flag->IsOfType<bool>()) continue;
      if (i + 1 >= args.size()) {
        fail(name, "needs a value");
        continue;
      }
      value = args[++i];
    }
    if (name == "flagfile" || name == "fromenv" || name == "tryfromenv" ||
        name == "undefok") {
      continue;
    }
    std::string error;
    if (!flag->ParseFrom(*value, &error)) {
      // Abseil says "Illegal value 'v' specified for flag 'f'[; why]".
      size_t why = error.find("; ");
      fail(name, absl::StrCat("bad value \"", *value, "\"",
                              why == std::string::npos
                                  ? ""
                                  : ": " + error.substr(why + 2)));
    }
  }
  return check;
}

// A configuration is loaded with its files checked (--check-files).
LoadOptions FileChecks() {
  return {.check_files = absl::GetFlag(FLAGS_check_files)};
}

int ValidateConfig(const std::vector<char*>& args) {
  if (args.size() != 1) {
    std::cerr << kValidateUsage << "\n";
    return kExitUsage;
  }
  absl::StatusOr<Config> config =
      LoadConfigFile(args[0], FileChecks());
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return kExitUsage;
  }
  for (const std::string& warning : ConfigWarnings(*config)) {
    std::cerr << args[0] << ": warning: " << warning << "\n";
  }
  std::vector<std::string> profiles;
  for (const ProfileConfig& p : config->profiles) {
    profiles.push_back(config->profiles.size() == 1
                           ? absl::StrCat(p.metrics.size(), " metric(s)")
                           : absl::StrCat("profile ", p.scheduler_name,
                                          " with ", p.metrics.size(),
                                          " metric(s)"));
  }
  std::cout << args[0] << ": ok (" << absl::StrJoin(profiles, ", ") << ", "
            << (config->backend.url.empty() ? std::string("no backend")
                                            : "backend " + config->backend.url)
            << ")\n";
  return kExitOk;
}

std::string DefaultIdentity() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::random_device rd;
  return absl::StrCat(host, "_", absl::Hex(rd(), absl::kZeroPad8));
}

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

// InvalidArgument naming the flag when one is bad or a file unreadable.
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
    return absl::InvalidArgumentError(absl::StrCat(
        "--bind-address=", ip, ": not an IP address"));
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

// The cluster from the flags and $KUBECONFIG, in kubectl's order
// (kube/cluster_config.h: ResolveClusterConfig).
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

// --max-apiserver-response-bytes and --max-watch-event-bytes.
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

// `client` must outlive the source (metricsServer lists through it).
absl::StatusOr<std::unique_ptr<metrics::MetricsSource>> MakeSource(
    const Config& config, kube::KubeClient& client) {
  if (config.backend.type == BackendType::kMetricsServer) {
    return std::make_unique<metrics::MetricsServerSource>(
        config.backend, [&client](const std::string& path,
                                  absl::Duration timeout,
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

// `explain NS/NAME|FILE`: see scheduler/explain.h.
int ExplainCommand(const std::vector<char*>& args) {
  if (args.size() != 1) {
    std::cerr << kExplainUsage << "\n";
    return kExitUsage;
  }
  // The cache's warnings repeat what explain prints; -v=1 shows them.
  if (FLAGS_v == 0) FLAGS_minloglevel = google::GLOG_ERROR;
  Config config;
  if (!absl::GetFlag(FLAGS_config).empty()) {
    absl::StatusOr<Config> loaded =
        LoadConfigFile(absl::GetFlag(FLAGS_config), FileChecks());
    if (!loaded.ok()) {
      std::cerr << loaded.status().message() << "\n";
      return kExitUsage;
    }
    config = *std::move(loaded);
  }
  absl::StatusOr<ExplainTarget> target = ParseExplainTarget(args[0]);
  if (!target.ok()) {
    std::cerr << "metrics-scheduler explain: " << target.status().message()
              << "\n";
    return kExitUsage;
  }
  absl::StatusOr<kube::ClusterConfig> cluster = ClusterConfigFromFlags();
  if (!cluster.ok()) {
    std::cerr << "metrics-scheduler explain: " << cluster.status() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<kube::ResponseLimits> limits = ResponseLimitsFromFlags();
  if (!limits.ok()) {
    std::cerr << "metrics-scheduler explain: " << limits.status().message()
              << "\n";
    return kExitUsage;
  }
  kube::KubeClient client(*cluster, "metrics-scheduler/explain", *limits);
  std::unique_ptr<metrics::MetricsSource> source;
  if (!QueryMetrics(config).empty()) {
    absl::StatusOr<std::unique_ptr<metrics::MetricsSource>> s =
        MakeSource(config, client);
    if (!s.ok()) {
      std::cerr << "metrics-scheduler explain: metrics backend: " << s.status()
                << "\n";
      return kExitUsage;
    }
    source = std::move(*s);
  }
  absl::StatusOr<std::string> text = Explain(config, client, source.get(),
                                             *target, absl::GetFlag(FLAGS_seed));
  if (!text.ok()) {
    std::cerr << "metrics-scheduler explain: " << text.status() << "\n";
    return kExitFailure;
  }
  std::cout << *text;
  return kExitOk;
}

// An informer handler that marks its part of the liveness monitor busy
// while it runs.
template <typename T>
std::function<void(const T&)> Watched(LivenessMonitor& monitor,
                                      LivenessMonitor::Part& part,
                                      std::function<void(const T&)> handler) {
  return [&monitor, &part, handler = std::move(handler)](const T& object) {
    LivenessMonitor::Busy busy(monitor, part);
    handler(object);
  };
}

// An informer whose handlers, add and update alike, take (object,
// deleted), each a part of the liveness monitor.
template <typename T>
std::unique_ptr<kube::Informer<T>> MakeInformer(
    const std::string& resource, kube::InformerSource<T> source,
    LivenessMonitor& liveness, std::function<void(const T&, bool)> on_change,
    std::function<void(const kube::RejectedObject&)> on_reject) {
  LivenessMonitor::Part& part =
      liveness.Register(absl::StrCat(resource, " informer"));
  auto changed = Watched<T>(liveness, part, [on_change](const T& object) {
    on_change(object, false);
  });
  return std::make_unique<kube::Informer<T>>(
      resource, std::move(source),
      kube::InformerHandlers<T>{
          .on_add = changed,
          .on_update = changed,
          .on_delete = Watched<T>(
              liveness, part,
              [on_change](const T& object) { on_change(object, true); }),
          .on_reject = std::move(on_reject)});
}

// Informers of several kinds, started, synced and stopped together.
class InformerSet {
 public:
  template <typename T>
  void Add(std::unique_ptr<kube::Informer<T>> informer) {
    std::shared_ptr<kube::Informer<T>> shared = std::move(informer);
    start_.push_back([shared] { shared->Start(); });
    cancel_.push_back([shared] { shared->Cancel(); });
    stop_.push_back([shared] { shared->Stop(); });
    wait_.push_back([shared](absl::Duration d) {
      return shared->WaitForSync(d);
    });
  }
  void Start() {
    for (auto& f : start_) f();
  }
  // See kube::Informer::Cancel.
  void Cancel() {
    for (auto& f : cancel_) f();
  }
  void Stop() {
    Cancel();
    for (auto& f : stop_) f();
  }
  // Whether every one has synced, waiting up to `wait` for each.
  bool WaitForSync(absl::Duration wait) {
    for (auto& f : wait_) {
      if (!f(wait)) return false;
    }
    return true;
  }

 private:
  std::vector<std::function<void()>> start_, cancel_, stop_;
  std::vector<std::function<bool(absl::Duration)>> wait_;
};

// A binding must end before a standby may lead: well inside the write
// margin (scheduler/leadership.h), with room for the moments between the
// binder's check and the request leaving.
absl::Duration BindTimeout(const Leadership& leadership) {
  return std::min(absl::Seconds(30), leadership.WriteMargin() * 4 / 5);
}

// Bounds the shutdown that starts now: if the process has not exited after
// `bound` (a write held up by an apiserver that no longer answers, Events
// still queued), it exits with `code` there and then. Nothing is lost by
// that: a binding cut short is read back by whichever replica leads next,
// and Events are advisory. kube-scheduler exits at once on a lost lease.
void BoundShutdown(absl::Duration bound, int code) {
  std::thread([bound, code] {
    absl::SleepFor(bound);
    LOG(ERROR) << "shutdown did not finish within " << bound
               << " (--shutdown-timeout): exiting with what is in flight";
    google::FlushLogFiles(google::GLOG_INFO);
    std::_Exit(code);
  }).detach();
}

// SIGTERM and SIGINT notify `stop`; a dedicated thread waits for them.
void HandleSignals(absl::Notification& stop) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, &stop] {
    int sig = 0;
    sigwait(&set, &sig);
    LOG(INFO) << "received " << strsignal(sig) << ", shutting down";
    if (!stop.HasBeenNotified()) stop.Notify();
  }).detach();
}

int Run(Config config) {
  LOG(INFO) << "metrics-scheduler " << kVersion;
  for (absl::Duration d : {absl::GetFlag(FLAGS_shutdown_timeout),
                           absl::GetFlag(FLAGS_liveness_stall_timeout)}) {
    if (d <= absl::ZeroDuration()) {
      LOG(ERROR) << "--shutdown-timeout and --liveness-stall-timeout must be "
                    "positive, got "
                 << d;
      return kExitUsage;
    }
  }
  for (auto [flag, value] :
       {std::pair<const char*, int>{"--bind-workers",
                                    absl::GetFlag(FLAGS_bind_workers)},
        {"--max-bindings-in-flight",
         absl::GetFlag(FLAGS_max_bindings_in_flight)}}) {
    if (value < 1) {
      LOG(ERROR) << flag << " must be at least 1, got " << value;
      return kExitUsage;
    }
  }
  absl::StatusOr<kube::ResponseLimits> limits = ResponseLimitsFromFlags();
  if (!limits.ok()) {
    LOG(ERROR) << limits.status().message();
    return kExitUsage;
  }
  if (!absl::GetFlag(FLAGS_lease_name).empty()) {
    config.leader_election.lease_name = absl::GetFlag(FLAGS_lease_name);
  }
  if (!absl::GetFlag(FLAGS_lease_namespace).empty()) {
    config.leader_election.lease_namespace =
        absl::GetFlag(FLAGS_lease_namespace);
  }
  if (!absl::GetFlag(FLAGS_http_address).empty()) {
    config.http.listen_address = absl::GetFlag(FLAGS_http_address);
  }
  absl::StatusOr<SecureServing> secure = SecureServingFromFlags();
  if (!secure.ok()) {
    LOG(ERROR) << secure.status().message();
    return kExitUsage;
  }
  if (secure->extender_secure && config.extender.listen_address.empty()) {
    LOG(ERROR) << "--extender-secure is set but extender.listenAddress is "
                  "empty (no extender port)";
    return kExitUsage;
  }
  if (secure->extender_secure && secure->tls.client_ca_pem.empty()) {
    LOG(WARNING) << "--extender-secure without --client-ca-file: only bearer "
                    "tokens authenticate, and kube-scheduler's extender "
                    "client cannot send one (it sends a client certificate)";
  }
  if (absl::GetFlag(FLAGS_extender_max_node_names) < 1) {
    LOG(ERROR) << "--extender-max-node-names must be at least 1, got "
               << absl::GetFlag(FLAGS_extender_max_node_names);
    return kExitUsage;
  }
  const bool shadow = absl::GetFlag(FLAGS_shadow);
  bool leader_elect = absl::GetFlag(FLAGS_leader_elect) &&
                      config.leader_election.enabled && !shadow;
  std::string identity = absl::GetFlag(FLAGS_identity);
  if (identity.empty()) identity = DefaultIdentity();
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  if (seed == 0) seed = std::random_device()();

  absl::StatusOr<kube::ClusterConfig> cluster = ClusterConfigFromFlags();
  if (!cluster.ok()) {
    LOG(ERROR) << "cannot reach the cluster: " << cluster.status();
    return kExitUsage;
  }
  if (cluster->tls.insecure_skip_verify) {
    LOG(WARNING) << "insecure-skip-tls-verify is set in the kubeconfig: the "
                    "apiserver's TLS certificate is not verified";
  }
  kube::KubeClient client(*cluster, "metrics-scheduler/" + identity,
                          *limits);

  std::unique_ptr<metrics::MetricsSource> source;
  for (const std::string& warning : ConfigWarnings(config)) {
    LOG(WARNING) << warning;
  }
  Registry registry;
  registry.AddGauge("metrics_scheduler_build_info",
                    "Always 1: the version of the running scheduler.",
                    {"version"}, [] {
                      return Registry::GaugeSamples{{{kVersion}, 1}};
                    });
  AddProcessMetrics(registry);

  std::unique_ptr<BackendQueryMetrics> backend_queries;
  std::unique_ptr<metrics::MetricsCache> cache;
  if (!QueryMetrics(config).empty()) {
    absl::StatusOr<std::unique_ptr<metrics::MetricsSource>> s =
        MakeSource(config, client);
    if (!s.ok()) {
      LOG(ERROR) << "metrics backend: " << s.status();
      return kExitUsage;
    }
    source = std::move(*s);
    backend_queries =
        std::make_unique<BackendQueryMetrics>(registry, QueryMetrics(config));
    cache = std::make_unique<metrics::MetricsCache>(
        source.get(), QueryMetrics(config),
        metrics::CacheOptions{
            .refresh_timeout = config.cache.refresh_timeout,
            .on_fetch = [queries = backend_queries.get()](
                            const MetricConfig& metric,
                            absl::Duration duration,
                            const absl::Status& status) {
              queries->Observe(metric, duration, status);
            }});
    AddCacheMetrics(registry, *cache);
  }

  absl::Notification stop;
  HandleSignals(stop);
  absl::Notification scheduling_started;
  std::atomic<int> exit_code{kExitOk};

  KubeLeaseStore lease_store(client);
  KubeSchedulerApi api(client);
  // The elector exists from the start, so that /metrics may ask it; it
  // campaigns once the informers have synced.
  LeaderElector elector(
      lease_store, RealClock::Get(),
      LeaderElectionOptions{
          .lease_name = config.leader_election.lease_name,
          .lease_namespace = config.leader_election.lease_namespace,
          .identity = identity,
          .lease_duration = config.leader_election.lease_duration,
          .renew_deadline = config.leader_election.renew_deadline,
          .retry_period = config.leader_election.retry_period},
      LeaderElector::Callbacks{
          .on_started_leading = [&] { scheduling_started.Notify(); },
          .on_stopped_leading =
              [&] {
                exit_code.store(kExitFailure);
                if (!stop.HasBeenNotified()) stop.Notify();
              }});
  AlwaysLeader always;
  Leadership& leadership =
      leader_elect ? static_cast<Leadership&>(elector) : always;
  absl::Duration bind_timeout = BindTimeout(leadership);
  LOG(INFO) << "bindings time out after " << bind_timeout;
  LivenessMonitor liveness(RealClock::Get(),
                           absl::GetFlag(FLAGS_liveness_stall_timeout));
  Scheduler scheduler(config,
                      {.identity = identity,
                       .bind_workers = absl::GetFlag(FLAGS_bind_workers),
                       .max_bindings_in_flight =
                           absl::GetFlag(FLAGS_max_bindings_in_flight),
                       .bind_timeout = bind_timeout,
                       .volume_binding_timeout =
                           absl::GetFlag(FLAGS_volume_binding_timeout),
                       .seed = seed},
                      api, cache.get(), RealClock::Get(), registry, leadership,
                      &liveness);

  // Shadow mode: the pending pods are the watched scheduler's, judged when
  // they are seen bound; the scheduling loop never runs.
  std::optional<Shadow> shadowing;
  if (shadow) {
    shadowing.emplace(absl::GetFlag(FLAGS_shadow_of), scheduler.state(),
                      scheduler.scoring(), cache.get(), registry);
    LOG(INFO) << "shadow mode: judging the pods of "
              << shadowing->watched() << "; binding nothing";
  }

  // Objects our decoder refuses are counted, and a pod meant for us is told
  // why; everything else flows on (kube/informer.h).
  Family<Counter>& rejected = registry.AddCounter(
      "metrics_scheduler_objects_rejected_total",
      "Objects from the apiserver this scheduler could not decode, by "
      "resource (each version once).",
      {"resource"});
  // A series for each resource watched, from the start.
  for (const char* resource :
       {"pods", "nodes", "namespaces", "poddisruptionbudgets",
        "persistentvolumeclaims", "persistentvolumes", "storageclasses",
        "csinodes"}) {
    rejected.With({resource});
  }
  for (WorkloadKind kind : kWorkloadKinds) {
    rejected.With({kube::WorkloadResource(kind)});
  }
  auto count_rejected = [&rejected](const kube::RejectedObject& r) {
    rejected.With({r.resource}).Inc();
  };

  // Each informer's handlers are a part of the liveness monitor: one that
  // hangs (a lock never released) fails /livez.
  LivenessMonitor::Part& assigned_part =
      liveness.Register("assigned pods informer");
  LivenessMonitor::Part& nodes_part = liveness.Register("nodes informer");
  LivenessMonitor::Part& namespaces_part =
      liveness.Register("namespaces informer");
  auto on_pending = [&](const Pod& p) {
    shadow ? shadowing->OnPod(p) : scheduler.OnPendingPod(p);
  };
  // The pending pods of each profile, all into the one queue: a field
  // selector cannot say "one of", so one informer each. Shadow mode watches
  // the other scheduler's pods bound or not, so that a pod's binding
  // follows its creation in one stream.
  std::vector<std::string> pending_of =
      shadow ? std::vector<std::string>{shadowing->watched()}
             : SchedulerNames(config);
  InformerSet pending;
  for (const std::string& name : pending_of) {
    LivenessMonitor::Part& part = liveness.Register(
        pending_of.size() == 1
            ? std::string("pending pods informer")
            : absl::StrCat("pending pods informer (", name, ")"));
    pending.Add(std::make_unique<kube::Informer<Pod>>(
        "pending pods",
        kube::PodSource(client,
                        {.field_selector =
                             shadow ? absl::StrCat("spec.schedulerName=", name)
                                    : absl::StrCat("spec.schedulerName=", name,
                                                   ",spec.nodeName=")}),
        kube::InformerHandlers<Pod>{
            .on_add = Watched<Pod>(liveness, part, on_pending),
            .on_update = Watched<Pod>(liveness, part, on_pending),
            .on_delete = Watched<Pod>(liveness, part,
                                      [&](const Pod& p) {
                                        shadow
                                            ? shadowing->OnPodDeleted(p)
                                            : scheduler.OnPendingPodDeleted(p);
                                      }),
            .on_reject = [&](const kube::RejectedObject& r) {
              count_rejected(r);
              if (!shadow) scheduler.OnPendingPodRejected(r);
            }}));
  }
  kube::Informer<Pod> assigned(
      "assigned pods",
      kube::PodSource(client,
                      {.field_selector = "spec.nodeName!=,status.phase!="
                                         "Succeeded,status.phase!=Failed"}),
      {.on_add = Watched<Pod>(
           liveness, assigned_part,
           [&](const Pod& p) { scheduler.OnAssignedPod(p); }),
       .on_update = Watched<Pod>(
           liveness, assigned_part,
           [&](const Pod& p) { scheduler.OnAssignedPod(p); }),
       .on_delete = Watched<Pod>(
           liveness, assigned_part,
           [&](const Pod& p) { scheduler.OnAssignedPodDeleted(p); }),
       .on_reject = count_rejected});
  kube::Informer<Node> nodes(
      "nodes",
      kube::NodeSource(client,
                       {.node_annotations = NodeAnnotationKeys(config)}),
      {.on_add = Watched<Node>(liveness, nodes_part,
                               [&](const Node& n) { scheduler.OnNode(n); }),
       .on_update = Watched<Node>(liveness, nodes_part,
                                  [&](const Node& n) { scheduler.OnNode(n); }),
       .on_delete = Watched<Node>(
           liveness, nodes_part,
           [&](const Node& n) { scheduler.OnNodeDeleted(n); }),
       .on_reject = count_rejected});
  // Namespaces' labels, for pod affinity terms' namespaceSelector.
  kube::Informer<Namespace> namespaces(
      "namespaces", kube::NamespaceSource(client, {}),
      {.on_add = Watched<Namespace>(
           liveness, namespaces_part,
           [&](const Namespace& n) { scheduler.OnNamespace(n); }),
       .on_update = Watched<Namespace>(
           liveness, namespaces_part,
           [&](const Namespace& n) { scheduler.OnNamespace(n); }),
       .on_delete = Watched<Namespace>(
           liveness, namespaces_part,
           [&](const Namespace& n) { scheduler.OnNamespaceDeleted(n); }),
       .on_reject = count_rejected});
  // Services, ReplicaSets, StatefulSets, ReplicationControllers: their
  // selectors, for the pods that get the default topology spread.
  // PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes:
  // for the volume plugins.
  InformerSet secondary;
  for (WorkloadKind kind : kWorkloadKinds) {
    secondary.Add(MakeInformer<Workload>(
        kube::WorkloadResource(kind), kube::WorkloadSource(client, kind, {}),
        liveness,
        [&, kind](const Workload& w, bool deleted) {
          if (!deleted) return scheduler.OnWorkload(w);
          Workload gone = w;
          gone.kind = kind;  // tombstones have none
          scheduler.OnWorkloadDeleted(gone);
        },
        count_rejected));
  }
  // Any scheduler's pods waiting on the room a preemption freed for them.
  secondary.Add(MakeInformer<Pod>(
      "nominated pods",
      kube::PodSource(client, {.field_selector = kube::kNominatedPodsSelector}),
      liveness,
      [&](const Pod& p, bool deleted) { scheduler.OnNominatedPod(p, deleted); },
      count_rejected));
  // PodDisruptionBudgets, for preemption.
  secondary.Add(MakeInformer<PodDisruptionBudget>(
      "poddisruptionbudgets", kube::BudgetSource(client), liveness,
      [&](const PodDisruptionBudget& b, bool deleted) {
        scheduler.OnBudget(b, deleted);
      },
      count_rejected));
  auto on_storage = [&](const auto& object, bool deleted) {
    scheduler.OnStorage(object, deleted);
  };
  secondary.Add(MakeInformer<PersistentVolumeClaim>(
      "persistentvolumeclaims", kube::ClaimSource(client), liveness,
      on_storage, count_rejected));
  secondary.Add(MakeInformer<PersistentVolume>(
      "persistentvolumes", kube::VolumeSource(client), liveness, on_storage,
      count_rejected));
  secondary.Add(MakeInformer<StorageClass>(
      "storageclasses", kube::StorageClassSource(client), liveness,
      on_storage, count_rejected));
  secondary.Add(MakeInformer<CsiNode>("csinodes", kube::CsiNodeSource(client),
                                      liveness, on_storage, count_rejected));

  // Declared before the server that uses it, so it outlives it.
  KubeAccessReviewer reviewer(client);
  DelegatedAuth auth(reviewer, RealClock::Get());
  StatusServer status(
      registry,
      [&] {
        return pending.WaitForSync(absl::ZeroDuration()) &&
               assigned.HasSynced() && nodes.HasSynced() &&
               namespaces.HasSynced() &&
               secondary.WaitForSync(absl::ZeroDuration());
      },
      [&] { return liveness.Stalled(); });
  // With a secure port, /metrics is served there only (as kube-scheduler
  // does): the plain port keeps the probes the kubelet calls.
  const bool metrics_on_secure_port = secure->port != 0;
  absl::StatusOr<int> port =
      status.Start(config.http.listen_address,
                   metrics_on_secure_port ? PlainPort::ProbesOnly(secure->port)
                                          : PlainPort::All());
  if (!port.ok()) {
    LOG(ERROR) << port.status();
    return kExitFailure;
  }
  LOG(INFO) << "metrics-scheduler " << identity << ": serving /livez, "
            << "/healthz, /readyz"
            << (metrics_on_secure_port ? "" : " and /metrics") << " on port "
            << *port;

  // The HTTPS endpoint, its /metrics guarded by the apiserver's reviews.
  if (secure->port != 0) {
    absl::StatusOr<int> secure_port =
        status.StartSecure(secure->address, secure->tls, auth);
    if (!secure_port.ok()) {
      LOG(ERROR) << "--secure-port: " << secure_port.status();
      return kExitFailure;
    }
    LOG(INFO) << "serving HTTPS on " << secure->address
              << ": /metrics for identities allowed to get it, /livez, "
                 "/healthz and /readyz to anyone";
  }

  // kube-scheduler's extender calls, answered by every replica.
  std::unique_ptr<ExtenderServer> extender;
  if (!config.extender.listen_address.empty()) {
    extender = std::make_unique<ExtenderServer>(
        scheduler.state(), scheduler.scoring(), cache.get(), registry,
        static_cast<size_t>(absl::GetFlag(FLAGS_extender_max_node_names)));
    absl::StatusOr<int> extender_port =
        secure->extender_secure
            ? extender->StartSecure(config.extender.listen_address,
                                    secure->tls, auth)
            : extender->Start(config.extender.listen_address);
    if (!extender_port.ok()) {
      LOG(ERROR) << "extender: " << extender_port.status();
      return kExitFailure;
    }
    LOG(INFO) << "serving kube-scheduler's extender protocol (POST /filter, "
                 "/prioritize) on port "
              << *extender_port
              << (secure->extender_secure
                      ? " over HTTPS, for identities allowed to post them"
                      : "");
  }

  // Standbys keep their informers warm, so a takeover schedules at once.
  namespaces.Start();
  secondary.Start();
  nodes.Start();
  assigned.Start();
  pending.Start();
  if (cache) cache->Start();
  while (!(namespaces.WaitForSync(absl::Seconds(1)) &&
           secondary.WaitForSync(absl::Seconds(1)) &&
           nodes.WaitForSync(absl::Seconds(1)) &&
           assigned.WaitForSync(absl::Seconds(1)) &&
           pending.WaitForSync(absl::Seconds(1)))) {
    if (stop.HasBeenNotified()) break;
    LOG(INFO) << "waiting for informers to sync";
  }
  // The first lists held every object in full at once; give the pages
  // they left free back to the system.
  malloc_trim(0);

  std::thread scheduling;
  if (!stop.HasBeenNotified() && !shadow) {
    if (leader_elect) {
      LOG(INFO) << "campaigning for lease "
                << config.leader_election.lease_namespace << "/"
                << config.leader_election.lease_name;
      scheduling = std::thread([&] {
        scheduling_started.WaitForNotification();
        if (!stop.HasBeenNotified()) scheduler.Run();
      });
      elector.Run(stop);
    } else {
      scheduling = std::thread([&] { scheduler.Run(); });
    }
  }
  stop.WaitForNotification();
  BoundShutdown(absl::GetFlag(FLAGS_shutdown_timeout), exit_code.load());

  // Shut down: stop taking pods, let in-flight bindings finish, hand the
  // lease over, then stop watching.
  scheduler.Stop();
  if (!scheduling_started.HasBeenNotified()) scheduling_started.Notify();
  if (scheduling.joinable()) scheduling.join();
  if (leader_elect) elector.Release();
  if (cache) cache->Stop();
  // Every watch is told to end before any is waited for, so they end
  // together (kube::Informer::Cancel).
  pending.Cancel();
  assigned.Cancel();
  nodes.Cancel();
  namespaces.Cancel();
  secondary.Cancel();
  pending.Stop();
  assigned.Stop();
  nodes.Stop();
  namespaces.Stop();
  secondary.Stop();
  if (extender) extender->Stop();
  status.Stop();
  LOG(INFO) << "stopped";
  return exit_code.load();
}

}  // namespace
}  // namespace ms

int main(int argc, char** argv) {
  // The process holds the apiserver and metrics tokens in memory: no core
  // dump may write them to disk, and no other process of the same user may
  // attach to read them.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  // glibc gives each busy thread an arena of its own (up to 8 per core);
  // with ~25 threads that is tens of megabytes of fragmentation for no
  // gain: two arenas serve the binders and informers as fast.
  mallopt(M_ARENA_MAX, 2);
  // Blocks of 256 KiB and more (a list page's body and parser buffers,
  // megabytes each) come from mmap and go back to the system when freed.
  // Left to itself glibc raises this bound to the largest block freed, and
  // serves the next large blocks from the heap, where they stay as
  // fragmentation: with 5,000 nodes and 20,000 pods, 6 MB of RSS.
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  // Debian's Abseil is built with absl::Mutex's deadlock detection on: a
  // lock-order graph updated on every lock, a few per cent of the CPU per
  // pod. The tests keep it; the scheduler does without.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (ms::PrintHelpIfAsked(argc, argv)) return ms::kExitOk;
  if (ms::PrintVersionIfAsked(argc, argv)) return ms::kExitOk;
  ms::DashesToUnderscores(argc, argv);
  std::vector<char*> args = ms::TakeVerbosity(argc, argv);
  if (ms::FlagCheck check = ms::CheckFlags(args); !check.error.empty()) {
    std::cerr << "metrics-scheduler: " << check.error << "\n"
              << ms::UsageOf(check.command) << "\n";
    return ms::kExitUsage;
  }
  absl::SetProgramUsageMessage(ms::kUsage);
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "main.cc");
  };
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  ms::InitLogging(argv[0], absl::GetFlag(FLAGS_logging_format));

  std::vector<char*> rest(positional.begin() + 1, positional.end());
  if (!rest.empty()) {
    std::string command = rest[0];
    rest.erase(rest.begin());
    if (command == "validate-config") return ms::ValidateConfig(rest);
    if (command == "explain") return ms::ExplainCommand(rest);
    std::cerr << "metrics-scheduler: unknown command \"" << command
              << "\"\n"
              << ms::kRunUsage << "\n";
    return ms::kExitUsage;
  }

  ms::Config config;
  std::string path = absl::GetFlag(FLAGS_config);
  if (!path.empty()) {
    absl::StatusOr<ms::Config> loaded =
        ms::LoadConfigFile(path, ms::FileChecks());
    if (!loaded.ok()) {
      std::cerr << loaded.status().message() << "\n";
      return ms::kExitUsage;
    }
    config = *std::move(loaded);
  }
  return ms::Run(std::move(config));
}
