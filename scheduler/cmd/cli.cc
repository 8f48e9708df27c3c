#include "scheduler/cmd/cli.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"
#include "kube/client.h"
#include "scheduler/cmd/explain.h"
#include "scheduler/cmd/flags.h"
#include "scheduler/cmd/probe.h"
#include "scheduler/cmd/setup.h"
#include "scheduler/cmd/version.h"

namespace ms {

const char kUsage[] =
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
    "  metrics-scheduler explain --rebalance     what rebalancing would move\n"
    "      now and where, and what it would leave and why (--config with\n"
    "      rebalance.hot); evicts nothing. Exit codes as explain.\n"
    "  metrics-scheduler probe                   whether the configured\n"
    "      queries name the cluster's nodes: per metric, nodes with a fresh\n"
    "      value, series, series matching no node, stale values (--config,\n"
    "      --kubeconfig, --min-coverage=0.9). Exit 0 covered, 1 a metric\n"
    "      below --min-coverage or the cluster or backend cannot be read, 2\n"
    "      bad usage or configuration.\n"
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
const char kRunUsage[] =
    "usage: metrics-scheduler [flags]   (metrics-scheduler --help: every "
    "flag)";
constexpr char kValidateUsage[] =
    "usage: metrics-scheduler validate-config [--check-files=false] FILE";
constexpr char kProbeUsage[] =
    "usage: metrics-scheduler probe --config FILE [--kubeconfig FILE] "
    "[--context NAME] [--master URL] [--min-coverage 0-1]";
constexpr char kExplainUsage[] =
    "usage: metrics-scheduler explain [--config FILE] [--kubeconfig FILE] "
    "[--context NAME] [--master URL] NAMESPACE/NAME|MANIFEST\n"
    "       metrics-scheduler explain --rebalance --config FILE "
    "[--kubeconfig FILE] [--context NAME] [--master URL]";

const char* UsageOf(absl::string_view command) {
  if (command == "validate-config") return kValidateUsage;
  if (command == "explain") return kExplainUsage;
  if (command == "probe") return kProbeUsage;
  return kRunUsage;
}

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

bool PrintHelpIfAsked(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg != "--help" && arg != "-h" && arg != "-help") continue;
    std::cout << kUsage << "\n\nFlags:\n";
    std::vector<std::pair<std::string, const absl::CommandLineFlag*>> flags;
    for (const auto& [name, flag] : absl::GetAllFlags()) {
      if (absl::EndsWith(flag->Filename(), "scheduler/cmd/flags.cc")) {
        std::string dashed(name);
        std::replace(dashed.begin(), dashed.end(), '_', '-');
        flags.emplace_back(dashed, flag);
      }
    }
    std::sort(flags.begin(), flags.end());
    for (const auto& [name, flag] : flags) {
      std::string def = flag->DefaultValue();
      std::cout << "  --" << name
                << " (default: " << (def.empty() ? "\"\"" : def) << ")\n      "
                << flag->Help() << "\n";
    }
    std::cout << "  -v=N (default: 0)\n      Log verbosity.\n";
    return true;
  }
  return false;
}

void DashesToUnderscores(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    char* arg = argv[i];
    if (arg[0] != '-' || arg[1] != '-') continue;
    for (char* c = arg + 2; *c != '\0' && *c != '='; ++c) {
      if (*c == '-') *c = '_';
    }
  }
}

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
    if (flag == nullptr && !value.has_value() && absl::StartsWith(name, "no")) {
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
      fail(name,
           absl::StrCat(
               "bad value \"", *value, "\"",
               why == std::string::npos ? "" : ": " + error.substr(why + 2)));
    }
  }
  return check;
}

LoadOptions FileChecks() {
  return {.check_files = absl::GetFlag(FLAGS_check_files)};
}

int ValidateConfig(const std::vector<char*>& args) {
  if (args.size() != 1) {
    std::cerr << kValidateUsage << "\n";
    return kExitUsage;
  }
  absl::StatusOr<Config> config = LoadConfigFile(args[0], FileChecks());
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

namespace {

// What explain and probe read the cluster and the metrics with.
struct Clients {
  std::unique_ptr<kube::KubeClient> kube;
  std::unique_ptr<metrics::MetricsSource> source;  // null: no query metric
};

// The clients of `command` from the flags and `config`; nullopt, with the
// reason on stderr, on a usage error.
std::optional<Clients> MakeClients(const std::string& command,
                                   const Config& config) {
  absl::StatusOr<kube::ClusterConfig> cluster = ClusterConfigFromFlags();
  if (!cluster.ok()) {
    std::cerr << "metrics-scheduler " << command << ": " << cluster.status()
              << "\n";
    return std::nullopt;
  }
  absl::StatusOr<kube::ResponseLimits> limits = ResponseLimitsFromFlags();
  if (!limits.ok()) {
    std::cerr << "metrics-scheduler " << command << ": "
              << limits.status().message() << "\n";
    return std::nullopt;
  }
  Clients clients;
  clients.kube = std::make_unique<kube::KubeClient>(
      *cluster, "metrics-scheduler/" + command, *limits);
  if (!QueryMetrics(config).empty()) {
    absl::StatusOr<std::unique_ptr<metrics::MetricsSource>> s =
        MakeSource(config, *clients.kube);
    if (!s.ok()) {
      std::cerr << "metrics-scheduler " << command
                << ": metrics backend: " << s.status() << "\n";
      return std::nullopt;
    }
    clients.source = std::move(*s);
  }
  return clients;
}

// --config's configuration (the defaults without one); nullopt, with the
// error on stderr, when it does not load.
std::optional<Config> ConfigFromFlag() {
  if (absl::GetFlag(FLAGS_config).empty()) return Config();
  absl::StatusOr<Config> loaded =
      LoadConfigFile(absl::GetFlag(FLAGS_config), FileChecks());
  if (!loaded.ok()) {
    std::cerr << loaded.status().message() << "\n";
    return std::nullopt;
  }
  return *std::move(loaded);
}

}  // namespace

// `explain NS/NAME|FILE`: see scheduler/cmd/explain.h.
int ExplainCommand(const std::vector<char*>& args) {
  const bool rebalance = absl::GetFlag(FLAGS_rebalance);
  if (args.size() != (rebalance ? 0u : 1u)) {
    std::cerr << kExplainUsage << "\n";
    return kExitUsage;
  }
  // The cache's warnings repeat what explain prints; -v=1 shows them.
  if (FLAGS_v == 0) FLAGS_minloglevel = google::GLOG_ERROR;
  std::optional<Config> config = ConfigFromFlag();
  if (!config) return kExitUsage;
  if (rebalance) {
    if (config->rebalance.hot.empty()) {
      std::cerr << "metrics-scheduler explain --rebalance: rebalance.hot of "
                   "--config is empty: nothing says when a node is hot\n";
      return kExitUsage;
    }
    std::optional<Clients> clients = MakeClients("explain", *config);
    if (!clients) return kExitUsage;
    absl::StatusOr<std::string> text =
        ExplainRebalance(*config, *clients->kube, clients->source.get(),
                         absl::GetFlag(FLAGS_seed));
    if (!text.ok()) {
      std::cerr << "metrics-scheduler explain --rebalance: " << text.status()
                << "\n";
      return kExitFailure;
    }
    std::cout << *text;
    return kExitOk;
  }
  absl::StatusOr<ExplainTarget> target = ParseExplainTarget(args[0]);
  if (!target.ok()) {
    std::cerr << "metrics-scheduler explain: " << target.status().message()
              << "\n";
    return kExitUsage;
  }
  std::optional<Clients> clients = MakeClients("explain", *config);
  if (!clients) return kExitUsage;
  absl::StatusOr<std::string> text =
      Explain(*config, *clients->kube, clients->source.get(), *target,
              absl::GetFlag(FLAGS_seed));
  if (!text.ok()) {
    std::cerr << "metrics-scheduler explain: " << text.status() << "\n";
    return kExitFailure;
  }
  std::cout << *text;
  return kExitOk;
}

// `probe`: see scheduler/cmd/probe.h.
int ProbeCommand(const std::vector<char*>& args) {
  const double min_coverage = absl::GetFlag(FLAGS_min_coverage);
  if (!args.empty() || absl::GetFlag(FLAGS_config).empty() ||
      !(min_coverage >= 0 && min_coverage <= 1)) {
    std::cerr << kProbeUsage << "\n";
    return kExitUsage;
  }
  // The cache's warnings repeat what the report says; -v=1 shows them.
  if (FLAGS_v == 0) FLAGS_minloglevel = google::GLOG_ERROR;
  std::optional<Config> config = ConfigFromFlag();
  if (!config) return kExitUsage;
  std::optional<Clients> clients = MakeClients("probe", *config);
  if (!clients) return kExitUsage;
  absl::StatusOr<ProbeReport> report =
      Probe(*config, *clients->kube, clients->source.get(), min_coverage);
  if (!report.ok()) {
    std::cerr << "metrics-scheduler probe: " << report.status() << "\n";
    return report.status().code() == absl::StatusCode::kFailedPrecondition
               ? kExitUsage
               : kExitFailure;
  }
  std::cout << report->text;
  return report->below.empty() ? kExitOk : kExitFailure;
}

}  // namespace ms
